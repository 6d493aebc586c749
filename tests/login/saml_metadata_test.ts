/**
 * Reading a SAML identity provider's metadata
 * (lib/login/saml_metadata.ts): what is taken from a realistic
 * document, the readable problem of each unusable one, and fetching
 * `idp_metadata_url` from a real HTTP server on 127.0.0.1 (cached; every
 * failure is 503 `login_unavailable`).
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { UnavailableError } from "../../lib/errors.ts";
import {
  idpMetadataOf,
  METADATA_MAX_BYTES,
  parseIdpMetadata,
} from "../../lib/login/saml_metadata.ts";
import { spMetadataXml } from "../../lib/login/saml_sp_metadata.ts";
import { derOf, IDP_ENTITY_ID, idpMetadataXml, makeCertificate } from "./saml_fixtures.ts";

const signing = await makeCertificate("signing.idp.acme.test");
const encryption = await makeCertificate("encryption.idp.acme.test");
const both = await makeCertificate("both.idp.acme.test");

/** A usable document: one signing key. */
const USABLE = idpMetadataXml({ keys: [{ use: "signing", certificate: signing.certificate }] });

/** The problem `parseIdpMetadata` finds in `xml` (which it must refuse). */
function problemOf(xml: string): string {
  const reading = parseIdpMetadata(xml);
  assert(!reading.ok, "the document was accepted");
  return reading.problem;
}

Deno.test("a realistic metadata document gives the entity id, the Redirect sign-on URL and the signing certificates", () => {
  const reading = parseIdpMetadata(idpMetadataXml({
    keys: [
      { use: "signing", certificate: signing.certificate },
      { use: "encryption", certificate: encryption.certificate },
      { certificate: both.certificate },
    ],
  }));
  assert(reading.ok, JSON.stringify(reading));
  assertEquals(reading.metadata.entityId, IDP_ENTITY_ID);
  assertEquals(reading.metadata.ssoUrl, `${IDP_ENTITY_ID}/protocol/saml/redirect`);
  assertEquals(
    reading.metadata.certificates.map(derOf),
    [signing.der, both.der],
    "the encryption-only key is left out; a key without use counts",
  );
  assert(reading.metadata.certificates.every((c) => c.startsWith("-----BEGIN CERTIFICATE-----")));
});

Deno.test("an EntitiesDescriptor holding one identity provider and service providers is read", () => {
  const idp = USABLE.replace(/^<\?xml[^>]*>\n/, "");
  const sp = spMetadataXml(
    { entityId: "https://sp.acme.test/metadata", acsUrl: "https://sp.acme.test/acs" },
    encryption.certificate,
  ).replace(/^<\?xml[^>]*>\n/, "");
  const reading = parseIdpMetadata(
    `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${sp}${idp}</md:EntitiesDescriptor>`,
  );
  assert(reading.ok, JSON.stringify(reading));
  assertEquals(reading.metadata.entityId, IDP_ENTITY_ID);
});

Deno.test("an http:// sign-on URL is accepted on a loopback host only", () => {
  const local = parseIdpMetadata(idpMetadataXml({
    redirectUrl: "http://127.0.0.1:8180/saml/redirect",
    keys: [{ use: "signing", certificate: signing.certificate }],
  }));
  assert(local.ok);
  assertEquals(local.metadata.ssoUrl, "http://127.0.0.1:8180/saml/redirect");
  assertStringIncludes(
    problemOf(idpMetadataXml({
      redirectUrl: "http://idp.acme.test/saml/redirect",
      keys: [{ use: "signing", certificate: signing.certificate }],
    })),
    "must be an https:// URL",
  );
});

Deno.test("unusable metadata is refused with a problem a person can act on", () => {
  const key = [{ use: "signing" as const, certificate: signing.certificate }];
  assertEquals(problemOf("this is not XML"), "the metadata is not well-formed XML");
  assertEquals(problemOf(USABLE.slice(0, 300)), "the metadata is not well-formed XML");
  const laughs = `<?xml version="1.0"?>
<!DOCTYPE md [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
${
    USABLE.replace(/^<\?xml[^>]*>\n/, "").replace(
      "Acme</md:OrganizationName>",
      "&lol2;</md:OrganizationName>",
    )
  }`;
  assertStringIncludes(problemOf(laughs), "DTD (<!DOCTYPE>)");
  assertStringIncludes(
    problemOf(spMetadataXml(
      { entityId: "https://sp.acme.test/metadata", acsUrl: "https://sp.acme.test/acs" },
      signing.certificate,
    )),
    "no identity provider (IDPSSODescriptor)",
  );
  const one = USABLE.replace(/^<\?xml[^>]*>\n/, "");
  const two = idpMetadataXml({ entityId: "https://idp.other.test", keys: key })
    .replace(/^<\?xml[^>]*>\n/, "");
  assertStringIncludes(
    problemOf(
      `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${one}${two}</md:EntitiesDescriptor>`,
    ),
    "describes 2 identity providers",
  );
  assertStringIncludes(
    problemOf(idpMetadataXml({ redirectUrl: null, keys: key })),
    "no SingleSignOnService with the HTTP-Redirect binding",
  );
  assertStringIncludes(
    problemOf(
      idpMetadataXml({ keys: [{ use: "encryption", certificate: encryption.certificate }] }),
    ),
    "names no signing certificate",
  );
  assertStringIncludes(problemOf(idpMetadataXml({ keys: [] })), "names no signing certificate");
  for (const junk of [btoa("this is not a certificate"), "not base64 at all!"]) {
    assertEquals(
      problemOf(idpMetadataXml({ keys: [{ use: "signing", certificate: junk }] })),
      "a signing certificate in the metadata cannot be read",
    );
  }
});

/** A metadata server on 127.0.0.1 that answers with `answer` and counts requests by path. */
function metadataServer(answer: (path: string) => Response) {
  const hits = new Map<string, number>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    return answer(path);
  });
  return {
    /** A URL of this server (each test uses its own path: fetched metadata is kept per URL). */
    url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}`,
    hits: (path: string) => hits.get(path) ?? 0,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The error `idpMetadataOf` raises for a policy with this URL; it must be 503 login_unavailable. */
async function unavailable(url: string): Promise<string> {
  const err = await assertRejects(
    () => idpMetadataOf({ method: "saml", idp_metadata_url: url }),
    UnavailableError,
  );
  assertEquals([err.status, err.code], [503, "login_unavailable"]);
  return err.message;
}

Deno.test("metadata at a URL is fetched once and reused", async () => {
  await using idp = metadataServer(() =>
    new Response(USABLE, { headers: { "content-type": "application/samlmetadata+xml" } })
  );
  const url = idp.url("/reused/metadata");
  const first = await idpMetadataOf({ method: "saml", idp_metadata_url: url });
  assertEquals(first.entityId, IDP_ENTITY_ID);
  assertEquals(first.certificates.map(derOf), [signing.der]);
  const second = await idpMetadataOf({ method: "saml", idp_metadata_url: url });
  assertEquals(second, first);
  assertEquals(idp.hits("/reused/metadata"), 1, "the second sign-in makes no request");
});

Deno.test("a metadata URL that answers an error, too much, unusable metadata or a redirect is 503 login_unavailable", async () => {
  let broken = true;
  await using idp = metadataServer((path) => {
    switch (path) {
      case "/flaky":
        return broken ? new Response("boom", { status: 500 }) : new Response(USABLE);
      case "/huge":
        return new Response("x".repeat(METADATA_MAX_BYTES + 1));
      case "/sp":
        return new Response(spMetadataXml(
          { entityId: "https://sp.acme.test/metadata", acsUrl: "https://sp.acme.test/acs" },
          signing.certificate,
        ));
      case "/moved":
        return new Response(null, { status: 302, headers: { location: "/target" } });
      default:
        return new Response(USABLE);
    }
  });
  assertStringIncludes(await unavailable(idp.url("/flaky")), "answered 500");
  broken = false;
  assertEquals(
    (await idpMetadataOf({ method: "saml", idp_metadata_url: idp.url("/flaky") })).entityId,
    IDP_ENTITY_ID,
    "a failure is not remembered: the next sign-in fetches again",
  );
  assertStringIncludes(await unavailable(idp.url("/huge")), `larger than ${METADATA_MAX_BYTES}`);
  assertStringIncludes(await unavailable(idp.url("/sp")), "no identity provider");
  await unavailable(idp.url("/moved"));
  assertEquals(idp.hits("/target"), 0, "the redirect is not followed");
});

Deno.test("a metadata URL nobody listens on is 503 login_unavailable", async () => {
  const closed = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(),
  );
  const url = `http://127.0.0.1:${closed.addr.port}/metadata`;
  await closed.shutdown();
  assertStringIncludes(await unavailable(url), "does not answer");
});

Deno.test("a policy's metadata document is read without any request; an unusable one is 503", async () => {
  const metadata = await idpMetadataOf({ method: "saml", idp_metadata_xml: USABLE });
  assertEquals(metadata.ssoUrl, `${IDP_ENTITY_ID}/protocol/saml/redirect`);
  const err = await assertRejects(
    () => idpMetadataOf({ method: "saml", idp_metadata_xml: idpMetadataXml({ keys: [] }) }),
    UnavailableError,
  );
  assertEquals(err.code, "login_unavailable");
  assertStringIncludes(err.message, "names no signing certificate");
});
