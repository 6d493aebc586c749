/**
 * Load script: how long the worst inputs we can build hold the server's
 * event loop, seen from outside. A real `cfgtool serve` (temp-dir KV, free
 * loopback port) gets, one at a time, requests built to be slow for the
 * code that reads them, while a second loop asks `GET /healthz` one request
 * after another; the slowest `/healthz` answer during each is what every
 * other client of the installation would have waited. The yardstick printed
 * first is the same probe against the idle server in the same run.
 *
 * The inputs (each anonymous, or with the least credential that reaches the
 * code):
 * - SAML: 256 KiB responses posted to `/auth/saml/acs` with the `RelayState`
 *   of an anonymous `/auth/login?tenant=…`: `<a` repeated with no `>`, one
 *   element with 20,000 attributes, 40,000 processing instructions, 35,000
 *   comments, 9,000 sibling elements;
 * - TOML: a manifest whose `namespace.toml` repeats a quoted key of 120,000
 *   spaces (and the same as a table header), through `…/lint` and `PUT
 *   …/manifest` with a `namespace-write` token;
 * - email: a sign-in start whose address is 254 characters of `@`-less
 *   dots and spaces.
 *
 *     deno run -A bench/hostile_inputs.ts [rounds=3]
 *
 * `CFGTOOL_CLI=/path/to/cli.ts` runs another checkout's server (to measure
 * a tree before a fix in the same run).
 *
 * @module
 */
import { probed } from "./healthz_probe.ts";
import { api, bootstrapSuperadmin } from "./bootstrap.ts";
import { startChild, stopChild } from "./processes.ts";
import { idpMetadataXml, makeCertificate } from "../tests/login/saml_fixtures.ts";

const CLI = Deno.env.get("CFGTOOL_CLI") ?? new URL("../cli.ts", import.meta.url).pathname;
const rounds = Number(Deno.args[0] ?? 3);
const dir = await Deno.makeTempDir({ prefix: "cfgtool-hostile-" });
const kv = `${dir}/kv.sqlite3`;
const admin = await bootstrapSuperadmin(kv);
const { child, url } = await startChild(
  Deno.execPath(),
  ["run", "-A", "--unstable-kv", "--unstable-net", CLI, "serve", "--kv", kv, "--port", "0"],
  /listening on (\S+)/,
);

await api(url, admin, "POST", "/api/v1/tenants", { slug: "acme" });
await api(url, admin, "POST", "/api/v1/tenants/acme/namespaces", { slug: "web" });
await api(url, admin, "POST", "/api/v1/tenants", { slug: "mail" });
await api(url, admin, "PUT", "/api/v1/tenants/mail/login", {
  method: "email",
  domains: ["a.test"],
});
const cert = await makeCertificate();
await api(url, admin, "PUT", "/api/v1/tenants/acme/login", {
  method: "saml",
  idp_metadata_xml: idpMetadataXml({ keys: [{ use: "signing", certificate: cert.certificate }] }),
});
const writer = (await api(url, admin, "POST", "/api/v1/tokens", {
  type: "namespace-write",
  name: "bench",
  tenant_slug: "acme",
  namespace_slug: "web",
})).secret as string;

/** The `RelayState`, flow cookie and request id of an anonymous SAML sign-in start. */
async function samlStart(): Promise<{ relay: string; cookie: string; requestId: string }> {
  const res = await fetch(`${url}/auth/login?tenant=acme`, { redirect: "manual" });
  await res.body?.cancel();
  const to = new URL(res.headers.get("location") ?? "");
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  // The request (deflated, base64) names the id a response must answer.
  const deflated = Uint8Array.from(
    atob(to.searchParams.get("SAMLRequest") ?? ""),
    (c) => c.charCodeAt(0),
  );
  const request = await new Response(
    new Blob([deflated]).stream().pipeThrough(new DecompressionStream("deflate-raw")),
  ).text();
  const requestId = /ID="([^"]+)"/.exec(request)?.[1] ?? "";
  return { relay: to.searchParams.get("RelayState") ?? "", cookie, requestId };
}

const NAMESPACES = 'xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ' +
  'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"';
/** A signature's shape (its values are not valid): the library's XPath searches run on it. */
const signature = (id: string) =>
  `<ds:Signature><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>` +
  `<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>` +
  `<ds:Reference URI="#${id}"><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>` +
  `<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo>` +
  `<ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>`;

/**
 * Posts a response to the assertion consumer service as a browser would:
 * `body` inside a signed-looking response that answers this sign-in's
 * request (so the library's checks run on it), or `raw` as it is.
 */
async function postSaml(body: string, raw = false): Promise<void> {
  const { relay, cookie, requestId } = await samlStart();
  const xml = raw ? body : `<samlp:Response ${NAMESPACES} ID="r1" InResponseTo="${requestId}" ` +
    `Version="2.0">${signature("r1")}${body}<saml:Assertion ID="a1">${signature("a1")}` +
    `</saml:Assertion></samlp:Response>`;
  const bytes = new TextEncoder().encode(xml);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  const res = await fetch(`${url}/auth/saml/acs`, {
    method: "POST",
    headers: { cookie, origin: "https://idp.acme.test" },
    body: new URLSearchParams({ SAMLResponse: btoa(binary), RelayState: relay }),
    redirect: "manual",
  });
  await res.body?.cancel();
}

const spaces = " ".repeat(120_000);
const duplicatedKey = `schema_version = 1\n"${spaces}" = 1\n"${spaces}" = 2\n`;
const duplicatedTable = `schema_version = 1\n["${spaces}"]\n["${spaces}"]\n`;
const nsPath = `${url}/api/v1/tenants/acme/namespaces/web`;
const send = async (method: string, path: string, text: string) =>
  await (await fetch(`${nsPath}${path}`, {
    method,
    headers: { authorization: `Bearer ${writer}`, "content-type": "application/json" },
    body: JSON.stringify({ files: { "namespace.toml": text } }),
  })).body?.cancel();

const CASES: Record<string, () => Promise<unknown>> = {
  "SAML: `<a` ×131,072, no `>` (256 KiB)": () => postSaml("<a".repeat(131_072), true),
  "SAML: one element, 20,000 attributes": () =>
    postSaml(`<a ${Array.from({ length: 20_000 }, (_, i) => `a${i}=""`).join(" ")}/>`),
  "SAML: 40,000 processing instructions": () => postSaml(`<a>${"<?x ?>".repeat(40_000)}</a>`),
  "SAML: 35,000 comments": () => postSaml(`<a>${"<!---->".repeat(35_000)}</a>`),
  "SAML: 9,000 sibling elements": () => postSaml(`<r>${"<b/>".repeat(9_000)}</r>`),
  // Just within the shape limits: what the signature check itself costs (on its worker).
  "SAML: 300 children of one element (limit 300)": () => postSaml(`<r>${"<b/>".repeat(300)}</r>`),
  "SAML: 480 elements in two groups (limit 500)": () =>
    postSaml(`<r>${`<g>${"<b/>".repeat(230)}</g>`.repeat(2)}</r>`),
  "SAML: 2,900 attributes on 290 elements": () =>
    postSaml(
      `<r>${`<b ${Array.from({ length: 10 }, (_, i) => `a${i}="v"`).join(" ")}/>`.repeat(299)}</r>`,
    ),
  "SAML: 999 comments (limit 1,000)": () => postSaml(`<a>${"<!---->".repeat(999)}</a>`),
  "SAML: a 250 KB StatusCode value (node-saml's regex)": () =>
    postSaml(
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><samlp:Status>` +
        `<samlp:StatusCode Value="${"a".repeat(250_000)}:"/></samlp:Status></samlp:Response>`,
      true,
    ),
  "SAML: 20,000 elements named <é/> (were not counted)": () => postSaml("<\u00e9/>".repeat(20_000)),
  "TOML lint: duplicated 120,000-space key": () => send("POST", "/lint", duplicatedKey),
  "TOML push: duplicated 120,000-space key": () => send("PUT", "/manifest", duplicatedKey),
  "TOML lint: duplicated 120,000-space table": () => send("POST", "/lint", duplicatedTable),
  "email start: 254-character address": () =>
    fetch(`${url}/auth/email/start`, {
      method: "POST",
      headers: { origin: url },
      body: new URLSearchParams({
        tenant: "mail",
        email: `a@${". ".repeat(126)}`,
        next: "/ui",
      }),
    }).then((r) => r.body?.cancel()),
};

// Warm-up: the first SAML start makes the installation's signing key.
await samlStart();

const fmt = (ms: number) => ms.toFixed(1).padStart(9);
console.log(`server: ${CLI}`);
console.log(`${"case".padEnd(46)} ${"work ms".padStart(9)} ${"healthz max".padStart(12)}`);
const idle = await probed(url, () => new Promise((r) => setTimeout(r, 2000)));
console.log(`${"idle server, 2 s (yardstick)".padEnd(46)} ${fmt(idle.took)} ${fmt(idle.slowest)}`);
for (const [name, work] of Object.entries(CASES)) {
  let took = 0;
  let slowest = 0;
  for (let i = 0; i < rounds; i++) {
    const r = await probed(url, work);
    took = Math.max(took, r.took);
    slowest = Math.max(slowest, r.slowest);
  }
  console.log(`${name.padEnd(46)} ${fmt(took)} ${fmt(slowest)}`);
}

await stopChild(child);
await Deno.remove(dir, { recursive: true });
