/**
 * Reading a login policy (lib/login/policy.ts): every field checked,
 * unknown fields refused, secrets only by reference, a SAML policy's
 * metadata read before it is accepted.
 */
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "../assert.ts";
import { parseLoginPolicy, readClientSecret } from "../../lib/login/policy.ts";
import { InvalidRequestError, UnavailableError } from "../../lib/errors.ts";
import { idpMetadataXml, makeCertificate } from "./saml_fixtures.ts";

const OIDC = {
  method: "oidc",
  issuer: "https://idp.acme.test/realms/acme/",
  client_id: "cfgtool",
  client_secret_ref: "env:ACME_OIDC_SECRET",
};

function fieldOf(body: unknown): string {
  const err = assertThrows(() => parseLoginPolicy(body), InvalidRequestError);
  return (err.details as { field: string }).field;
}

Deno.test("an OIDC policy is read with its optional fields, issuer without a trailing slash", () => {
  const p = parseLoginPolicy({
    ...OIDC,
    allowed_email_domains: ["Acme.test", "acme.test"],
    groups_claim: "roles",
    admin_groups: ["flag-admins"],
  });
  assertEquals(p, {
    method: "oidc",
    issuer: "https://idp.acme.test/realms/acme",
    client_id: "cfgtool",
    client_secret_ref: "env:ACME_OIDC_SECRET",
    allowed_email_domains: ["acme.test"],
    groups_claim: "roles",
    admin_groups: ["flag-admins"],
  });
});

Deno.test("an email policy needs at least one domain name", () => {
  assertEquals(parseLoginPolicy({ method: "email", domains: ["ACME.test"] }), {
    method: "email",
    domains: ["acme.test"],
  });
  assertEquals(fieldOf({ method: "email", domains: [] }), "domains");
  assertEquals(fieldOf({ method: "email", domains: ["not a domain"] }), "domains");
  assertEquals(fieldOf({ method: "email", domains: ["@acme.test"] }), "domains");
});

Deno.test("a policy with a wrong or unknown field is refused naming the field", () => {
  assertEquals(fieldOf({ ...OIDC, client_secret: "s3cr3t" }), "client_secret");
  assertEquals(fieldOf({ ...OIDC, client_secret_ref: "s3cr3t" }), "client_secret_ref");
  assertEquals(fieldOf({ ...OIDC, issuer: "http://idp.acme.test" }), "issuer");
  assertEquals(fieldOf({ ...OIDC, issuer: "https://idp.acme.test/?x=1" }), "issuer");
  assertEquals(fieldOf({ ...OIDC, client_id: "" }), "client_id");
  assertEquals(fieldOf({ ...OIDC, admin_groups: "admins" }), "admin_groups");
  assertEquals(fieldOf({ method: "ldap" }), "method");
  assertEquals(fieldOf([]), "method");
});

Deno.test("an http issuer is accepted only on a loopback host", () => {
  const p = parseLoginPolicy({ ...OIDC, issuer: "http://127.0.0.1:9000" });
  assertEquals(p.method === "oidc" && p.issuer, "http://127.0.0.1:9000");
});

Deno.test("the client secret is read from the named variable or file, never guessed", async () => {
  const env = { get: (n: string) => n === "ACME_OIDC_SECRET" ? "from-env" : undefined };
  assertEquals(await readClientSecret("env:ACME_OIDC_SECRET", env), "from-env");
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(file, "from-file\n");
    assertEquals(await readClientSecret(`file:${file}`, env), "from-file");
  } finally {
    await Deno.remove(file);
  }
  const err = await assertRejects(() => readClientSecret("env:MISSING", env), UnavailableError);
  assertEquals(err.status, 503);
  await assertRejects(() => readClientSecret("file:/nonexistent/secret", env), UnavailableError);
});

const idpCert = await makeCertificate();
const METADATA = idpMetadataXml({ keys: [{ use: "signing", certificate: idpCert.certificate }] });

/** The refusal of `body`: its field and message. */
function refusalOf(body: unknown): [string, string] {
  const err = assertThrows(() => parseLoginPolicy(body), InvalidRequestError);
  assertEquals([err.status, err.code], [400, "invalid_request"]);
  return [(err.details as { field: string }).field, err.message];
}

Deno.test("a SAML policy is read with its metadata document and its optional fields", () => {
  assertEquals(
    parseLoginPolicy({
      method: "saml",
      idp_metadata_xml: METADATA,
      allowed_email_domains: ["ACME.test", "acme.test"],
      email_attribute: "mail",
      groups_attribute: "memberOf",
      admin_groups: ["flag-admins"],
    }),
    {
      method: "saml",
      idp_metadata_xml: METADATA,
      allowed_email_domains: ["acme.test"],
      email_attribute: "mail",
      groups_attribute: "memberOf",
      admin_groups: ["flag-admins"],
    },
  );
});

Deno.test("a SAML policy may give where to fetch the metadata instead: https://, or http:// on loopback", () => {
  assertEquals(
    parseLoginPolicy({ method: "saml", idp_metadata_url: "https://login.acme.test/saml/metadata" }),
    { method: "saml", idp_metadata_url: "https://login.acme.test/saml/metadata" },
  );
  const local = parseLoginPolicy({ method: "saml", idp_metadata_url: "http://127.0.0.1:8180/md" });
  assertEquals(local.method === "saml" && local.idp_metadata_url, "http://127.0.0.1:8180/md");
  for (
    const url of [
      "http://login.acme.test/saml/metadata",
      "not a URL",
      "https://user:pass@login.acme.test/md",
      "https://login.acme.test/md#frag",
    ]
  ) {
    assertEquals(refusalOf({ method: "saml", idp_metadata_url: url })[0], "idp_metadata_url", url);
  }
});

Deno.test("a SAML policy takes exactly one of the metadata document and its URL", () => {
  const [both, message] = refusalOf({
    method: "saml",
    idp_metadata_xml: METADATA,
    idp_metadata_url: "https://login.acme.test/md",
  });
  assertEquals(both, "idp_metadata_url");
  assertStringIncludes(message, "exactly one of idp_metadata_xml");
  assertEquals(refusalOf({ method: "saml" })[0], "idp_metadata_xml");
  assertEquals(
    refusalOf({ method: "saml", allowed_email_domains: ["acme.test"] })[0],
    "idp_metadata_xml",
  );
});

Deno.test("a metadata document that is too large or unusable is refused, saying why", () => {
  const padded = METADATA.replace(
    "<md:IDPSSODescriptor",
    `<!-- ${"padding ".repeat(6_200)} -->\n  <md:IDPSSODescriptor`,
  );
  assert(new TextEncoder().encode(padded).length > 48 * 1024);
  const [field, message] = refusalOf({ method: "saml", idp_metadata_xml: padded });
  assertEquals(field, "idp_metadata_xml");
  assertStringIncludes(message, "give idp_metadata_url instead");
  const [unusable, why] = refusalOf({
    method: "saml",
    idp_metadata_xml: idpMetadataXml({
      redirectUrl: null,
      keys: [{ certificate: idpCert.certificate }],
    }),
  });
  assertEquals(unusable, "idp_metadata_xml");
  assertStringIncludes(why, "HTTP-Redirect binding");
  assertEquals(refusalOf({ method: "saml", idp_metadata_xml: "<html/>" })[0], "idp_metadata_xml");
  assertEquals(refusalOf({ method: "saml", idp_metadata_xml: " " })[0], "idp_metadata_xml");
  assertEquals(refusalOf({ method: "saml", idp_metadata_xml: 42 })[0], "idp_metadata_xml");
});

Deno.test("a SAML policy with another method's field, or a bad optional one, is refused naming it", () => {
  const saml = { method: "saml", idp_metadata_url: "https://login.acme.test/md" };
  assertEquals(refusalOf({ ...saml, groups_claim: "groups" })[0], "groups_claim");
  assertEquals(refusalOf({ ...saml, client_secret_ref: "env:S" })[0], "client_secret_ref");
  assertEquals(refusalOf({ ...saml, email_attribute: "" })[0], "email_attribute");
  assertEquals(
    refusalOf({ ...saml, allowed_email_domains: ["not a domain"] })[0],
    "allowed_email_domains",
  );
  assertEquals(refusalOf({ ...saml, admin_groups: "admins" })[0], "admin_groups");
});
