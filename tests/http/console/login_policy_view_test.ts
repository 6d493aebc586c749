/**
 * A login policy as the people page shows it
 * (lib/http/console/login_policy_view.tsx): every field the API returns,
 * in words, and for OpenID Connect where the secret is read, never one.
 */
import { assertEquals } from "../../assert.ts";
import { policyFacts } from "../../../lib/http/console/login_policy_view.tsx";

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
