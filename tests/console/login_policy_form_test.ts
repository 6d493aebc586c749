/**
 * How people sign in, changed in the console: a tenant admin changes who
 * is admitted and which groups are admins (audited like the API); the
 * identity provider's own fields stay a superadmin's, even in a forged
 * post; a member can neither see the form nor post it.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { OIDC_POLICY } from "../http/auth/world.ts";
import { consoleTest } from "./world.ts";

const FORM = "/ui/t/acme/login-policy";
const API = "/api/v1/tenants/acme/login";

consoleTest("a tenant admin changes admitted domains and admin groups", async (w) => {
  const set = await w.json("PUT", API, { bearer: w.admin, json: OIDC_POLICY });
  assertEquals(set.status, 200, JSON.stringify(set.body));
  const people = await w.page("/ui/t/acme/people", w.tenantAdmin);
  assert(people.doc.querySelector(`a[href='${FORM}']`), "the people page links to the form");
  const form = await w.page(FORM, w.tenantAdmin);
  assertEquals(form.status, 200);
  assertEquals(form.doc.querySelector("#policy-method-oidc").hasAttribute("checked"), true);
  assertEquals(form.doc.querySelector("input[name=issuer]"), null, "the issuer is not a field");
  assertStringIncludes(form.text, "https://idp.acme.test");
  const saved = await w.post(FORM, w.tenantAdmin, {
    method: "oidc",
    allowed_email_domains: "acme.test\r\n\r\nacme.example\r\n",
    admin_groups: "platform-admins",
    groups_claim: "roles",
    // forged: the provider's fields are not the tenant admin's to set
    issuer: "https://evil.example",
    client_secret_ref: "file:/etc/passwd",
  });
  assertEquals(saved.status, 303, saved.text);
  const after = await w.json("GET", API, { bearer: w.admin });
  assertEquals(after.body.policy, {
    ...OIDC_POLICY,
    allowed_email_domains: ["acme.test", "acme.example"],
    admin_groups: ["platform-admins"],
    groups_claim: "roles",
  });
  const audit = await w.json(
    "GET",
    "/api/v1/audit?tenant=acme&type=tenant.login_policy_changed",
    {
      bearer: w.admin,
    },
  );
  assertEquals(audit.status, 200, JSON.stringify(audit.body));
  const entry =
    (audit.body.entries as { actor: { id: string }; details: { changed: string[] } }[])[0]!;
  assertEquals(entry.details.changed, ["admin_groups", "allowed_email_domains", "groups_claim"]);
});

consoleTest("a tenant admin cannot name a new identity provider; the form says why", async (w) => {
  await w.json("PUT", API, { bearer: w.admin, json: { method: "email", domains: ["acme.test"] } });
  const refused = await w.post(FORM, w.tenantAdmin, {
    method: "saml",
    idp_metadata_url: "https://evil.example/metadata",
    allowed_email_domains: "acme.test",
  });
  assertEquals(refused.status, 403, refused.text);
  assertStringIncludes(refused.text, "Only a superadmin can switch acme to SAML");
  assertEquals(refused.doc.querySelector("#policy-method-saml").hasAttribute("checked"), true);
  const after = await w.json("GET", API, { bearer: w.admin });
  assertEquals(after.body.policy, { method: "email", domains: ["acme.test"] });
  // a bad domain is refused by the same validation as the API, the input kept
  const bad = await w.post(FORM, w.tenantAdmin, {
    method: "email",
    allowed_email_domains: "not a domain",
  });
  assertEquals(bad.status, 400, bad.text);
  assertStringIncludes(
    bad.doc.querySelector("#policy-allowed_email_domains").textContent,
    "not a domain",
  );
});

consoleTest("a member sees no form, and a forged post changes nothing", async (w) => {
  await w.json("PUT", API, { bearer: w.admin, json: { method: "email", domains: ["acme.test"] } });
  assertEquals((await w.page(FORM, w.member)).status, 403);
  const forged = await w.post(FORM, w.member, {
    method: "email",
    allowed_email_domains: "evil.example",
  });
  assertEquals(forged.status, 403);
  const after = await w.json("GET", API, { bearer: w.admin });
  assertEquals(after.body.policy, { method: "email", domains: ["acme.test"] });
});
