/**
 * A login policy as the people page shows it
 * (lib/console/login_policy_view.tsx): every field the API returns,
 * in words, for OpenID Connect where the secret is read (never one), and
 * for SAML where the identity provider's metadata comes from.
 */
import { assertEquals } from "../assert.ts";
import { policyFacts } from "../../lib/console/login_policy_view.tsx";

Deno.test("an OIDC policy shows its provider, where the secret is read, domains and groups", () => {
  const facts = Object.fromEntries(policyFacts({
    method: "oidc",
    issuer: "https://sso.acme.com/realms/staff",
    client_id: "cfgtool",
    client_secret_ref: "env:ACME_OIDC_SECRET",
    admin_groups: ["cfgtool-admins", "ops"],
  }));
  assertEquals(facts["Method"], "OpenID Connect (oidc)");
  assertEquals(facts["Issuer"], "https://sso.acme.com/realms/staff");
  assertEquals(facts["Client id"], "cfgtool");
  assertEquals(
    facts["Client secret"],
    "read by the server from env:ACME_OIDC_SECRET at each sign-in (never shown or stored)",
  );
  assertEquals(facts["Allowed email domains"], "any verified email the provider vouches for");
  assertEquals(facts["Groups claim"], "groups (the default)");
  assertEquals(facts["Admin groups"], "cfgtool-admins, ops");
});

Deno.test("an email policy shows its domains", () => {
  assertEquals(policyFacts({ method: "email", domains: ["acme.com", "acme.co.uk"] }), [
    ["Method", "Verified email (a link or code by mail) (email)"],
    ["Email domains", "acme.com, acme.co.uk"],
  ]);
});

Deno.test("a SAML policy shows where its metadata comes from, the email and groups attributes, domains and admin groups", () => {
  assertEquals(
    policyFacts({ method: "saml", idp_metadata_url: "https://login.acme.com/saml/metadata" }),
    [
      ["Method", "SAML 2.0 (saml)"],
      ["Identity provider metadata", "https://login.acme.com/saml/metadata"],
      ["Email", "the assertion's NameID"],
      ["Allowed email domains", "any email the provider asserts"],
      ["Groups attribute", "groups (the default)"],
      ["Admin groups", "none"],
    ],
  );
  const facts = Object.fromEntries(policyFacts({
    method: "saml",
    idp_metadata_xml: '<md:EntityDescriptor entityID="https://idp.acme.com"/>',
    email_attribute: "mail",
    allowed_email_domains: ["acme.com", "acme.co.uk"],
    groups_attribute: "memberOf",
    admin_groups: ["cfgtool-admins"],
  }));
  assertEquals(facts["Identity provider metadata"], "given as a document");
  assertEquals(facts["Email"], "attribute mail");
  assertEquals(facts["Allowed email domains"], "acme.com, acme.co.uk");
  assertEquals(facts["Groups attribute"], "memberOf");
  assertEquals(facts["Admin groups"], "cfgtool-admins");
});
