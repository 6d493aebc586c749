/**
 * The start of a SAML sign-in, in process (lib/login/saml_flow.ts):
 * the signed HTTP-Redirect URL to the identity provider, read as the
 * identity provider reads it (the request inflated and parsed, the
 * signature checked over the query as sent), and a finish step that knows
 * no such sign-in. Accepting a response is covered end to end against a
 * real identity provider.
 */
import { createVerify } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { DOMParser } from "@xmldom/xmldom";
import { assert, assertEquals, assertNotEquals, assertRejects } from "../assert.ts";
import { LoginError, UnavailableError } from "../../lib/errors.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  finishSamlFlow,
  type SamlFacts,
  samlTenantOfState,
  startSamlFlow,
} from "../../lib/login/saml_flow.ts";
import { samlSigningPair } from "../../lib/login/saml_sp_key.ts";
import type { SamlLoginPolicy } from "../../lib/protocol/login_policy.ts";
import { IDP_ENTITY_ID, idpMetadataXml, makeCertificate } from "./saml_fixtures.ts";

const ORIGIN = "https://flags.acme.test";
const SSO = `${IDP_ENTITY_ID}/protocol/saml/redirect`;
const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";

const idp = await makeCertificate("idp.acme.test");
const POLICY: SamlLoginPolicy = {
  method: "saml",
  idp_metadata_xml: idpMetadataXml({ keys: [{ use: "signing", certificate: idp.certificate }] }),
};

/** A fresh store and token key. */
async function world() {
  const kv = await Deno.openKv(":memory:");
  const deps = { kv, key: await randomTokenKey() };
  return {
    deps,
    start: (policy = POLICY, next = "/auth/signed-in") =>
      startSamlFlow(deps, "acme", policy, { origin: ORIGIN, next }),
    [Symbol.dispose]: () => kv.close(),
  };
}

/** The query parameters of `url` as sent: name → the raw `name=value` text. */
function rawParams(url: URL): Map<string, string> {
  return new Map(url.search.slice(1).split("&").map((p) => [p.split("=")[0]!, p]));
}

/** The AuthnRequest a redirect URL carries, inflated and parsed. */
function authnRequest(url: URL): Element {
  const deflated = Uint8Array.from(
    atob(url.searchParams.get("SAMLRequest")!),
    (c) => c.charCodeAt(0),
  );
  const xml = inflateRawSync(deflated).toString("utf8");
  const doc = new DOMParser().parseFromString(xml, "text/xml") as unknown as Document;
  const root = doc.documentElement!;
  assertEquals([root.namespaceURI, root.localName], [SAMLP, "AuthnRequest"]);
  return root;
}

Deno.test("a sign-in starts with a redirect to the identity provider's sign-on URL carrying an AuthnRequest for this tenant", async () => {
  using w = await world();
  const { url, state } = await w.start();
  assertEquals(`${url.origin}${url.pathname}`, SSO);
  assertEquals(url.searchParams.get("RelayState"), state);
  const request = authnRequest(url);
  assert(/^_[0-9a-f]{40}$/.test(request.getAttribute("ID") ?? ""), request.getAttribute("ID")!);
  assertEquals(request.getAttribute("AssertionConsumerServiceURL"), `${ORIGIN}/auth/saml/acs`);
  assertEquals(request.getAttribute("Destination"), SSO);
  assertEquals(
    request.getAttribute("ProtocolBinding"),
    "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
  );
  const issuer = request.getElementsByTagNameNS(SAML, "Issuer")[0];
  assertEquals(issuer?.textContent, `${ORIGIN}/auth/saml/metadata?tenant=acme`);
  const nameIdPolicy = request.getElementsByTagNameNS(SAMLP, "NameIDPolicy")[0];
  assertEquals(
    nameIdPolicy?.getAttribute("Format"),
    "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
    "the email is asked for as the NameID",
  );
  assertEquals(await samlTenantOfState(w.deps, state), "acme");
  const again = await w.start();
  assertNotEquals(again.state, state);
  assertNotEquals(authnRequest(again.url).getAttribute("ID"), request.getAttribute("ID"));
});

Deno.test("the request is signed with the installation's key over the query as sent", async () => {
  using w = await world();
  const { url } = await w.start();
  assertEquals(url.searchParams.get("SigAlg"), RSA_SHA256);
  const raw = rawParams(url);
  assertEquals([...raw.keys()], ["SAMLRequest", "RelayState", "SigAlg", "Signature"]);
  const signed = [raw.get("SAMLRequest"), raw.get("RelayState"), raw.get("SigAlg")].join("&");
  const signature = url.searchParams.get("Signature")!;
  const { certificate } = await samlSigningPair(w.deps);
  assert(createVerify("RSA-SHA256").update(signed).verify(certificate, signature, "base64"));
  assert(
    !createVerify("RSA-SHA256").update(signed).verify(idp.certificate, signature, "base64"),
    "and not with any other key",
  );
});

Deno.test("with an email attribute, the request asks for no particular NameID format", async () => {
  using w = await world();
  const { url } = await w.start({ ...POLICY, email_attribute: "mail" });
  const nameIdPolicy = authnRequest(url).getElementsByTagNameNS(SAMLP, "NameIDPolicy")[0];
  assertEquals(nameIdPolicy?.getAttribute("Format") ?? "", "");
});

Deno.test("a sign-on URL with its own query keeps it, and the signature still verifies", async () => {
  using w = await world();
  const policy: SamlLoginPolicy = {
    method: "saml",
    idp_metadata_xml: idpMetadataXml({
      redirectUrl: `${IDP_ENTITY_ID}/sso?app=cfgtool`,
      keys: [{ use: "signing", certificate: idp.certificate }],
    }),
  };
  const { url } = await w.start(policy);
  assertEquals(url.searchParams.get("app"), "cfgtool");
  const raw = rawParams(url);
  const signed = [raw.get("SAMLRequest"), raw.get("RelayState"), raw.get("SigAlg")].join("&");
  const { certificate } = await samlSigningPair(w.deps);
  assert(
    createVerify("RSA-SHA256").update(signed).verify(
      certificate,
      url.searchParams.get("Signature")!,
      "base64",
    ),
  );
});

Deno.test("a sign-in whose identity provider's metadata cannot be fetched does not start: 503 login_unavailable", async () => {
  using w = await world();
  const closed = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(),
  );
  const url = `http://127.0.0.1:${closed.addr.port}/metadata`;
  await closed.shutdown();
  const err = await assertRejects(
    () => w.start({ method: "saml", idp_metadata_url: url }),
    UnavailableError,
  );
  assertEquals([err.status, err.code], [503, "login_unavailable"]);
});

Deno.test("finishing with a handle no accepted response made is refused as state", async () => {
  using w = await world();
  const { state } = await w.start();
  for (const handle of ["made-up-handle", "", null]) {
    const facts: SamlFacts = { method: "saml" };
    const err = await assertRejects(
      () => finishSamlFlow(w.deps, handle, state, facts),
      LoginError,
    );
    assertEquals([err.status, err.reason], [403, "state"]);
    assertEquals(facts, { method: "saml" }, "nothing learnt about anyone");
  }
  assertEquals(await samlTenantOfState(w.deps, "made-up-state"), null);
});
