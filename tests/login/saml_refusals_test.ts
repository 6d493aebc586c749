/**
 * What `@node-saml/node-saml` finds wrong with a response, in cfgtool's
 * terms (lib/login/saml_refusals.ts): real responses, signed with a
 * test identity provider's key, are checked by the library configured as
 * the sign-in configures it, and each refusal maps to its documented
 * reason; the library's own words stay in the `cause`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
// @ts-types="../../lib/login/node_saml.d.ts"
import { SAML } from "@node-saml/node-saml";
import { signSamlPost } from "npm:@node-saml/node-saml@^5.1.0/lib/saml-post-signing.js";
import { LoginError, UnavailableError } from "../../lib/errors.ts";
import { samlRefusalOf } from "../../lib/login/saml_refusals.ts";
import { SAML_CLOCK_SKEW_MS } from "../../lib/login/saml_check.ts";
import { makeCertificate } from "./saml_fixtures.ts";

const IDP = "https://idp.acme.test/realms/acme";
const SP = "https://flags.acme.test/auth/saml/metadata?tenant=acme";
const ACS = "https://flags.acme.test/auth/saml/acs";
const REQUEST_ID = "_0123456789abcdef";

const idpKey = await makeCertificate("idp.acme.test");
const spKey = await makeCertificate("cfgtool SAML service provider");
const impostor = await makeCertificate("idp.acme.test");

/** A time `ms` from now, as SAML writes it. */
const at = (ms: number) => new Date(Date.now() + ms).toISOString();

/**
 * An assertion for `REQUEST_ID`, valid five minutes; `conditionsUntil` moves the
 * NotOnOrAfter of its Conditions, `audience` replaces the SP's.
 */
function assertion(o: { conditionsUntil?: number; audience?: string; id?: string } = {}): string {
  return `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${
    o.id ?? "_assert1"
  }" IssueInstant="${at(0)}" Version="2.0"><saml:Issuer>${IDP}</saml:Issuer><saml:Subject>` +
    `<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">ada@acme.com</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData InResponseTo="${REQUEST_ID}" NotOnOrAfter="${
      at(5 * 60_000)
    }" Recipient="${ACS}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${at(-60_000)}" NotOnOrAfter="${
      at(o.conditionsUntil ?? 5 * 60_000)
    }"><saml:AudienceRestriction><saml:Audience>${o.audience ?? SP}</saml:Audience>` +
    `</saml:AudienceRestriction></saml:Conditions><saml:AuthnStatement AuthnInstant="${at(0)}">` +
    `<saml:AuthnContext><saml:AuthnContextClassRef>` +
    `urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement></saml:Assertion>`;
}

/** The assertion signed (enveloped signature after its Issuer) with `key`. */
const signed = (xml: string, key = idpKey.privateKey) =>
  signSamlPost(xml, '/*[local-name(.)="Assertion"]', {
    privateKey: key,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "sha256",
  });

/** A response answering `inResponseTo` (none when null) with `status` and `body`. */
function response(
  body: string,
  inResponseTo: string | null = REQUEST_ID,
  status = '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/>',
): string {
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_resp1"${
    inResponseTo === null ? "" : ` InResponseTo="${inResponseTo}"`
  } Version="2.0" IssueInstant="${
    at(0)
  }" Destination="${ACS}"><saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${IDP}</saml:Issuer><samlp:Status>${status}</samlp:Status>${body}</samlp:Response>`;
}

/** The library, set up as the sign-in sets it up for the request `REQUEST_ID`. */
const saml = new SAML({
  callbackUrl: ACS,
  entryPoint: `${IDP}/protocol/saml`,
  issuer: SP,
  audience: SP,
  idpCert: [idpKey.certificate],
  privateKey: spKey.privateKey,
  signatureAlgorithm: "sha256",
  digestAlgorithm: "sha256",
  wantAssertionsSigned: true,
  wantAuthnResponseSigned: false,
  acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
  identifierFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  disableRequestedAuthnContext: true,
  validateInResponseTo: "always",
  cacheProvider: {
    saveAsync: () => Promise.resolve(null),
    getAsync: (id: string) => Promise.resolve(id === REQUEST_ID ? new Date().toISOString() : null),
    removeAsync: () => Promise.resolve(null),
  },
});

/** The refusal of `xml` by the library, as cfgtool words it (must be a 403 LoginError). */
async function refusalOf(xml: string): Promise<LoginError> {
  let raised: unknown;
  try {
    await saml.validatePostResponseAsync({ SAMLResponse: btoa(xml) });
  } catch (err) {
    raised = err;
  }
  assert(raised !== undefined, "the library accepted the response");
  const refusal = samlRefusalOf(raised);
  assert(refusal instanceof LoginError, String(refusal));
  assertEquals([refusal.status, refusal.code], [403, "login_failed"]);
  assert(refusal.cause === raised, "the library's error is kept as the cause, for the log");
  return refusal;
}

Deno.test("the response these cases alter is accepted by the library as the sign-in sets it up", async () => {
  const checked = await saml.validatePostResponseAsync({
    SAMLResponse: btoa(response(signed(assertion()))),
  });
  assertEquals(checked.profile?.nameID, "ada@acme.com");
});

Deno.test("an unsigned assertion, one signed by another key, or two assertions are refused as signature", async () => {
  const unsigned = await refusalOf(response(assertion()));
  assertEquals(unsigned.reason, "signature");
  assertEquals(
    unsigned.message,
    "The sign-in response is not signed by this tenant's identity provider",
  );
  assertEquals(
    (await refusalOf(response(signed(assertion(), impostor.privateKey)))).reason,
    "signature",
  );
  const two = signed(assertion()) + signed(assertion({ id: "_assert2" }));
  assertEquals((await refusalOf(response(two))).reason, "signature");
});

Deno.test("a response to no request is unsolicited; one to another request is in_response_to", async () => {
  assertEquals((await refusalOf(response(signed(assertion()), null))).reason, "unsolicited");
  assertEquals(
    (await refusalOf(response(signed(assertion()), "_fedcba9876543210"))).reason,
    "in_response_to",
  );
});

Deno.test("an assertion whose conditions ended beyond the clock skew is refused as expired", async () => {
  const late = await refusalOf(
    response(signed(assertion({ conditionsUntil: -SAML_CLOCK_SKEW_MS - 60_000 }))),
  );
  assertEquals(late.reason, "expired");
  assertStringIncludes(late.message, "check the clocks");
});

Deno.test("an assertion whose subject confirmation and conditions ended ten minutes ago is refused as expired", async () => {
  // The library checks the bearer confirmation's NotOnOrAfter first, in words of its own.
  const late = await refusalOf(
    response(
      signed(assertion().replaceAll(/NotOnOrAfter="[^"]+"/g, `NotOnOrAfter="${at(-600_000)}"`)),
    ),
  );
  assertEquals(late.reason, "expired");
});

Deno.test("an assertion for another audience is refused as audience, without the library's details", async () => {
  const refusal = await refusalOf(
    response(signed(assertion({ audience: "https://other.acme.test/saml" }))),
  );
  assertEquals(refusal.reason, "audience");
  assert(!refusal.message.includes("other.acme.test"), refusal.message);
});

Deno.test("a failure status from the identity provider is provider, showing its status code but not its unsigned text", async () => {
  const failed = await refusalOf(response(
    "",
    REQUEST_ID,
    '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder">' +
      '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"/></samlp:StatusCode>',
  ));
  assertEquals(failed.reason, "provider");
  assertStringIncludes(failed.message, "(Responder)");
  const unassigned = await refusalOf(response(
    "",
    REQUEST_ID,
    '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Requester"/>' +
      "<samlp:StatusMessage>The user is not assigned to this application</samlp:StatusMessage>",
  ));
  assertEquals(unassigned.reason, "provider");
  assertStringIncludes(unassigned.message, "(Requester)");
  // Anyone can post a status response: its free text goes to the log only.
  assert(!unassigned.message.includes("not assigned"), unassigned.message);
  assertStringIncludes(String((unassigned.cause as Error).message), "not assigned");
  assertEquals((await refusalOf(response(""))).reason, "assertion", "success without an assertion");
});

Deno.test("an encrypted assertion is refused as assertion, saying to turn encryption off", async () => {
  const encrypted = '<saml:EncryptedAssertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">' +
    '<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#"/></saml:EncryptedAssertion>';
  const refusal = await refusalOf(response(encrypted));
  assertEquals(refusal.reason, "assertion");
  assertStringIncludes(refusal.message, "turn assertion encryption off");
});

Deno.test("each of the library's messages maps to its refusal", () => {
  const cases: [string, string][] = [
    ["InResponseTo is missing from response", "unsolicited"],
    ["InResponseTo is not valid", "in_response_to"],
    ["InResponseTo does not match subjectInResponseTo", "in_response_to"],
    ["SubjectInResponseTo is not valid", "in_response_to"],
    ["Invalid signature", "signature"],
    ["Invalid document signature", "signature"],
    ["Invalid signature: multiple assertions", "signature"],
    ["Cannot obtain assertion from signed data", "signature"],
    ["SAML assertion not yet valid", "expired"],
    ["SAML assertion expired: clocks skewed too much", "expired"],
    ["SAML assertion expired: assertion too old", "expired"],
    ["SAML assertion has no AudienceRestriction", "audience"],
    ["SAML assertion audience mismatch. Expected: a Received: b", "audience"],
    ["Missing SAML assertion", "assertion"],
    ["No decryption key for encrypted SAML response", "assertion"],
    ["Unable to process multiple conditions in SAML assertion", "assertion"],
  ];
  for (const [message, reason] of cases) {
    assertEquals((samlRefusalOf(new Error(message)) as LoginError).reason, reason, message);
  }
});

Deno.test("anything unknown is assertion; cfgtool's own errors pass through", () => {
  for (const odd of [new TypeError("x is undefined"), "a string", null]) {
    const refusal = samlRefusalOf(odd);
    assertEquals((refusal as LoginError).reason, "assertion");
    assertEquals(refusal.message, "The identity provider's answer could not be accepted");
  }
  const own = new LoginError("recipient", "meant for another site");
  assert(samlRefusalOf(own) === own);
  const unavailable = new UnavailableError("login_unavailable", "metadata");
  assert(samlRefusalOf(unavailable) === unavailable);
});
