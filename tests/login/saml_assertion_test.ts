/**
 * cfgtool's own checks on a SAML response and its assertion
 * (lib/login/saml_assertion.ts), and the person an accepted
 * assertion names: each refusal is a 403 `LoginError` with its stable
 * reason.
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { LoginError } from "../../lib/errors.ts";
import {
  identityFromProfile,
  inspectAssertion,
  inspectResponse,
  type SamlProfileLike,
  shapeWithinLimits,
} from "../../lib/login/saml_assertion.ts";
import type { SamlLoginPolicy } from "../../lib/protocol/login_policy.ts";

const IDP = "https://idp.acme.test/realms/acme";
const ACS = "https://flags.acme.test/auth/saml/acs";
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
const HOLDER_OF_KEY = "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key";
const PASSWORD = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport";

/** What an assertion of these tests says. */
interface AssertionParts {
  issuer?: string;
  nameId?: string;
  /** Subject confirmations: method, Recipient, InResponseTo (default `_req1`; null: none). */
  confirmations?: {
    method: string;
    recipient: string;
    notOnOrAfter?: string;
    inResponseTo?: string | null;
  }[];
  conditionsNotOnOrAfter?: string | null;
}

/** An assertion as an identity provider writes it. */
function assertionXml(p: AssertionParts = {}): string {
  const confirmations = (p.confirmations ??
    [{ method: BEARER, recipient: ACS, notOnOrAfter: "2030-01-01T00:05:00Z" }])
    .map((c) =>
      `<saml:SubjectConfirmation Method="${c.method}">` +
      `<saml:SubjectConfirmationData${
        c.inResponseTo === null ? "" : ` InResponseTo="${c.inResponseTo ?? "_req1"}"`
      } Recipient="${c.recipient}"${
        c.notOnOrAfter === undefined ? "" : ` NotOnOrAfter="${c.notOnOrAfter}"`
      }/></saml:SubjectConfirmation>`
    ).join("\n      ");
  const until = p.conditionsNotOnOrAfter === undefined
    ? "2030-01-01T00:10:00Z"
    : p.conditionsNotOnOrAfter;
  return `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_assert1" IssueInstant="2030-01-01T00:00:00Z" Version="2.0">
    <saml:Issuer>${p.issuer ?? IDP}</saml:Issuer>
    <saml:Subject>
      <saml:NameID Format="${EMAIL_FORMAT}">${p.nameId ?? "ada@acme.com"}</saml:NameID>
      ${confirmations}
    </saml:Subject>
    <saml:Conditions NotBefore="2030-01-01T00:00:00Z"${
    until === null ? "" : ` NotOnOrAfter="${until}"`
  }>
      <saml:AudienceRestriction><saml:Audience>https://flags.acme.test/auth/saml/metadata?tenant=acme</saml:Audience></saml:AudienceRestriction>
    </saml:Conditions>
    <saml:AuthnStatement AuthnInstant="2030-01-01T00:00:00Z" SessionIndex="s1">
      <saml:AuthnContext><saml:AuthnContextClassRef>${PASSWORD}</saml:AuthnContextClassRef></saml:AuthnContext>
    </saml:AuthnStatement>
  </saml:Assertion>`;
}

/** A response carrying `assertion`, addressed to `destination` (none when null). */
function responseXml(assertion: string, destination: string | null = ACS): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_resp1" InResponseTo="_req1" IssueInstant="2030-01-01T00:00:00Z" Version="2.0"${
    destination === null ? "" : ` Destination="${destination}"`
  }>
  <saml:Issuer xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${IDP}</saml:Issuer>
  <samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>
  ${assertion}
</samlp:Response>`;
}

/** The reason of the LoginError `fn` throws (403). */
function reasonOf(fn: () => unknown): string {
  const err = assertThrows(fn, LoginError);
  assertEquals(err.status, 403);
  return err.reason;
}

Deno.test("a response addressed to this server, or to no one in particular, passes the raw checks", () => {
  inspectResponse(responseXml(assertionXml()), ACS);
  inspectResponse(responseXml(assertionXml(), null), ACS);
});

Deno.test("a response addressed to another site is refused as destination", () => {
  assertEquals(
    reasonOf(() => inspectResponse(responseXml(assertionXml(), "https://evil.test/acs"), ACS)),
    "destination",
  );
  assertEquals(
    reasonOf(() => inspectResponse(responseXml(assertionXml(), `${ACS}/`), ACS)),
    "destination",
  );
});

Deno.test("a comment inside the assertion's NameID is refused, whatever the rest says", () => {
  const forged = responseXml(assertionXml({ nameId: "a@acme.com<!---->.evil.example" }));
  const err = assertThrows(() => inspectResponse(forged, ACS), LoginError);
  assertEquals(err.reason, "assertion");
  assertStringIncludes(err.message, "XML comments");
});

Deno.test("a response with a DTD, or that is not XML, is refused as assertion", () => {
  const dtd = responseXml(assertionXml()).replace(
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<?xml version="1.0"?>\n<!DOCTYPE samlp:Response [<!ENTITY who "ada@acme.com">]>',
  ).replace("ada@acme.com</saml:NameID>", "&who;</saml:NameID>");
  assertEquals(reasonOf(() => inspectResponse(dtd, ACS)), "assertion");
  assertEquals(reasonOf(() => inspectResponse("SAMLResponse", ACS)), "assertion");
});

Deno.test("a verified assertion gives its id, its latest NotOnOrAfter and its authentication context", () => {
  const facts = inspectAssertion(assertionXml(), IDP, ACS, "_req1");
  assertEquals(facts, {
    id: "_assert1",
    notOnOrAfter: Date.parse("2030-01-01T00:10:00Z"),
    contexts: [PASSWORD],
  });
  const timeless = inspectAssertion(
    assertionXml({
      conditionsNotOnOrAfter: null,
      confirmations: [{ method: BEARER, recipient: ACS }],
    }),
    IDP,
    ACS,
    "_req1",
  );
  assertEquals(timeless.notOnOrAfter, null);
});

Deno.test("an assertion issued by another identity provider is refused as issuer", () => {
  assertEquals(
    reasonOf(() =>
      inspectAssertion(assertionXml({ issuer: "https://idp.evil.test" }), IDP, ACS, "_req1")
    ),
    "issuer",
  );
});

Deno.test("an assertion whose bearer confirmation names another Recipient is refused as recipient", () => {
  const elsewhere = assertionXml({
    confirmations: [{ method: BEARER, recipient: "https://other.test/auth/saml/acs" }],
  });
  assertEquals(reasonOf(() => inspectAssertion(elsewhere, IDP, ACS, "_req1")), "recipient");
});

Deno.test("a holder-of-key confirmation with the right Recipient does not stand for a bearer one", () => {
  const holderOnly = assertionXml({ confirmations: [{ method: HOLDER_OF_KEY, recipient: ACS }] });
  assertEquals(reasonOf(() => inspectAssertion(holderOnly, IDP, ACS, "_req1")), "recipient");
  const mixed = assertionXml({
    confirmations: [
      { method: HOLDER_OF_KEY, recipient: ACS },
      { method: BEARER, recipient: "https://other.test/auth/saml/acs" },
    ],
  });
  assertEquals(reasonOf(() => inspectAssertion(mixed, IDP, ACS, "_req1")), "recipient");
});

Deno.test("a bearer confirmation must answer this sign-in's request: none is unsolicited, another is in_response_to", () => {
  const unasked = assertionXml({
    confirmations: [{ method: BEARER, recipient: ACS, inResponseTo: null }],
  });
  assertEquals(reasonOf(() => inspectAssertion(unasked, IDP, ACS, "_req1")), "unsolicited");
  const other = assertionXml({
    confirmations: [{ method: BEARER, recipient: ACS, inResponseTo: "_req2" }],
  });
  assertEquals(reasonOf(() => inspectAssertion(other, IDP, ACS, "_req1")), "in_response_to");
  assertEquals(inspectAssertion(other, IDP, ACS, "_req2").id, "_assert1");
});

Deno.test("a response nested or namespaced beyond the shape limits is refused before any parser reads it", () => {
  const nested = (n: number, ns: boolean) =>
    Array.from({ length: n }, (_, i) => ns ? `<a xmlns:p${i}="u">` : "<a>").join("") +
    "</a>".repeat(n);
  assertEquals(reasonOf(() => inspectResponse(nested(20_000, true), ACS)), "assertion");
  assertEquals(reasonOf(() => inspectResponse(nested(41, false), ACS)), "assertion");
  const wide = `<r>${"<a/>".repeat(301)}</r>`; // 301 children of one element
  assertEquals(reasonOf(() => inspectResponse(wide, ACS)), "assertion");
  const attributes = `<a ${Array.from({ length: 5_001 }, (_, i) => `a${i}=""`).join(" ")}/>`;
  assertEquals(reasonOf(() => inspectResponse(attributes, ACS)), "assertion");
  for (const item of ["<!---->", "<?x ?>", "<![CDATA[x]]>"]) {
    const marked = `<a>${item.repeat(1_001)}</a>`;
    assertEquals(reasonOf(() => inspectResponse(marked, ACS)), "assertion", item);
  }
  const declared = `<r>${
    Array.from({ length: 101 }, (_, i) => `<a xmlns:p${i}="u"/>`).join("")
  }</r>`;
  assertEquals(reasonOf(() => inspectResponse(declared, ACS)), "assertion");
  inspectResponse(responseXml(assertionXml()), ACS); // a real one is far inside
});

Deno.test("a 256 KiB response of `<a` with no `>` is refused as assertion, tags counted by a forward scan", () => {
  // The scan's old regular expression looked for `>` from every `<`: this
  // input held the event loop for about 16 s (tests/security/ checks every
  // regex of lib/ for such cases).
  assertEquals(shapeWithinLimits("<a".repeat(131_072)), true, "no tag completes: no element");
  assertEquals(reasonOf(() => inspectResponse("<a".repeat(131_072), ACS)), "assertion");
  // A `<` inside a tag's text starts no tag of its own; a tag ends at the first `>`.
  assertEquals(shapeWithinLimits(`<r>${"<a<b/>".repeat(300)}</r>`), true);
  assertEquals(shapeWithinLimits(`<r>${"<a<b/>".repeat(301)}</r>`), false);
});

Deno.test("the shape limits count elements of any name, children per element, and attribute values", () => {
  // Names that start with a non-ASCII letter are elements too (the parser takes them).
  const many = (n: number, tag: string) => `<r>${tag.repeat(n)}</r>`;
  assertEquals(shapeWithinLimits(many(300, "<\u00e9/>")), true);
  assertEquals(reasonOf(() => inspectResponse(many(301, "<\u00e9/>"), ACS)), "assertion");
  assertEquals(reasonOf(() => inspectResponse(many(301, "<:x/>"), ACS)), "assertion");
  // 1,501 elements in groups of 300 children: the total counts.
  const groups = `<r>${`<g>${"<b/>".repeat(299)}</g>`.repeat(5)}<c/><c/><c/><c/><c/><c/></r>`;
  assertEquals(shapeWithinLimits(groups), false);
  // node-saml reads a StatusCode's Value with a regular expression that takes the
  // square of its length: a 250 KB value held the server for a minute.
  const status = (v: string) =>
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><samlp:Status>` +
    `<samlp:StatusCode Value="${v}"/></samlp:Status></samlp:Response>`;
  assertEquals(shapeWithinLimits(status("urn:oasis:names:tc:SAML:2.0:status:Requester")), true);
  assertEquals(
    reasonOf(() => inspectResponse(status(`${"a".repeat(250_000)}:`), ACS)),
    "assertion",
  );
  assertEquals(shapeWithinLimits(`<r a='${"x".repeat(2_048)}'/>`), true);
  assertEquals(shapeWithinLimits(`<r a='${"x".repeat(2_049)}'/>`), false);
});

Deno.test("something other than an assertion is refused as assertion", () => {
  assertEquals(
    reasonOf(() => inspectAssertion(responseXml(assertionXml()), IDP, ACS, "_req1")),
    "assertion",
  );
});

const POLICY: SamlLoginPolicy = { method: "saml", idp_metadata_url: "https://idp.acme.test/md" };

/** The person `profile` names under `policy`, as tenant acme admits them. */
const identity = (policy: SamlLoginPolicy, profile: SamlProfileLike) =>
  identityFromProfile("acme", policy, profile, [PASSWORD]);

/** The refusal reason (and message) for `profile` under `policy`. */
function refusal(policy: SamlLoginPolicy, profile: SamlProfileLike): [string, string] {
  const err = assertThrows(() => identity(policy, profile), LoginError);
  return [err.reason, err.message];
}

Deno.test("the NameID is the email when its format is emailAddress, unspecified or absent", () => {
  for (
    const nameIDFormat of [
      EMAIL_FORMAT,
      "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
      undefined,
    ]
  ) {
    const profile: SamlProfileLike = nameIDFormat === undefined
      ? { nameID: "ada@acme.com" }
      : { nameID: "ada@acme.com", nameIDFormat };
    assertEquals(identity(POLICY, profile), {
      tenant: "acme",
      email: "ada@acme.com",
      method: "saml",
      assurance: [PASSWORD],
      groups: [],
    });
  }
  assertEquals(
    refusal(POLICY, { nameID: "ada", nameIDFormat: EMAIL_FORMAT })[0],
    "email_missing",
    "a NameID that is not an address",
  );
});

Deno.test("a persistent NameID is not an email unless the policy names the email attribute", () => {
  const profile = {
    nameID: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
    nameIDFormat: PERSISTENT,
    attributes: { mail: "ada@acme.com" },
  };
  const [reason, message] = refusal(POLICY, profile);
  assertEquals(reason, "email_missing");
  assertStringIncludes(message, "NameID");
  assertEquals(identity({ ...POLICY, email_attribute: "mail" }, profile).email, "ada@acme.com");
});

Deno.test("the email attribute may hold one value or several (the first is the email), and nothing else stands in for it", () => {
  const policy = { ...POLICY, email_attribute: "mail" };
  assertEquals(
    identity(policy, { attributes: { mail: ["ada@acme.com", "ada.lovelace@acme.com"] } }).email,
    "ada@acme.com",
  );
  const [reason, message] = refusal(policy, {
    nameID: "ada@acme.com",
    nameIDFormat: EMAIL_FORMAT,
    attributes: { email: "ada@acme.com" },
  });
  assertEquals(reason, "email_missing");
  assertStringIncludes(message, "attribute mail");
  assertEquals(refusal(policy, { attributes: { mail: "   " } })[0], "email_missing");
});

Deno.test("an email outside the allowed domains is refused as email_domain, naming them", () => {
  const policy = { ...POLICY, allowed_email_domains: ["acme.com", "acme.co.uk"] };
  assertEquals(identity(policy, { nameID: "Ada@ACME.com" }).email, "Ada@ACME.com");
  const [reason, message] = refusal(policy, { nameID: "eve@acme.com.evil.example" });
  assertEquals(reason, "email_domain");
  assertStringIncludes(message, "acme.com, acme.co.uk");
});

Deno.test("an email with non-ASCII look-alikes or inner spaces is refused, never folded into another address", () => {
  for (const nameID of ["\u212Aate@acme.com", "kate@acme.com\u00a0", "ka te@acme.com"]) {
    assertEquals(refusal(POLICY, { nameID })[0], "email_missing", JSON.stringify(nameID));
  }
  assertEquals(identity(POLICY, { nameID: "\n  kate@acme.com\n" }).email, "kate@acme.com");
});

Deno.test("groups are taken exactly as sent: a look-alike of an admin group is another group", () => {
  const groups = ["flag-admins\u00a0", "\u3000flag-admins", "flag-admins\n", "eng"];
  assertEquals(
    identity(POLICY, { nameID: "ada@acme.com", attributes: { groups } }).groups,
    groups,
  );
});

Deno.test("groups come from the groups attribute, or the one the policy names", () => {
  const attributes = { groups: ["eng", "ops"], memberOf: "cfgtool-admins", role: "x" };
  assertEquals(identity(POLICY, { nameID: "ada@acme.com", attributes }).groups, ["eng", "ops"]);
  assertEquals(
    identity({ ...POLICY, groups_attribute: "memberOf" }, { nameID: "ada@acme.com", attributes })
      .groups,
    ["cfgtool-admins"],
  );
  assertEquals(
    identity({ ...POLICY, groups_attribute: "teams" }, { nameID: "ada@acme.com", attributes })
      .groups,
    [],
  );
  assert(identity(POLICY, { nameID: "ada@acme.com" }).groups.length === 0);
});
