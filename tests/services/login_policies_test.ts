/**
 * `PUT/GET /api/v1/tenants/{t}/login` (lib/services/login_policies.ts):
 * a superadmin or a human tenant admin sets a tenant's login policy,
 * audited; a tenant-admin token reads it but never changes it (admission
 * and admin groups grant rights no token holds); everyone else is refused.
 */
import { assertEquals } from "../assert.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { OIDC_POLICY, signInTest } from "../http/auth/world.ts";
import { idpMetadataXml, makeCertificate } from "../login/saml_fixtures.ts";

const POLICY = { method: "email", domains: ["acme.test"] };

signInTest(
  "a superadmin sets a tenant's login policy; the change is audited and read back",
  async (w) => {
    const put = await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: POLICY,
    });
    assertEquals(put.status, 200);
    assertEquals(put.body.policy, POLICY);
    const get = await w.json("GET", "/api/v1/tenants/acme/login", { bearer: w.admin });
    assertEquals([get.body.tenant_slug, get.body.policy], ["acme", POLICY]);
    const audit = await listAudit(w.kv, { tenant: "acme", type: "tenant.login_policy_changed" });
    assertEquals(audit.items.map((e) => e.details.method), ["email"]);
    const none = await w.json("GET", "/api/v1/tenants/other/login", { bearer: w.admin });
    assertEquals([none.status, none.body.code], [404, "not_found"]);
    const gone = await w.json("PUT", "/api/v1/tenants/nope/login", {
      bearer: w.admin,
      body: POLICY,
    });
    assertEquals([gone.status, gone.body.code], [404, "tenant_not_found"]);
  },
);

signInTest("human tenant admins set their own tenant's policy, nobody else does", async (w) => {
  const mint = async (body: Record<string, unknown>) =>
    ((await w.json("POST", "/api/v1/tokens", { bearer: w.admin, body })).body.secret) as string;
  await w.json("POST", "/api/v1/tenants/acme/namespaces", {
    bearer: w.admin,
    body: { slug: "web" },
  });
  const tenantToken = await mint({ type: "tenant-admin", name: "t", tenant_slug: "acme" });
  const writeToken = await mint({
    type: "namespace-write",
    name: "w",
    tenant_slug: "acme",
    namespace_slug: "web",
  });
  const otherAdmin = await mint({ type: "tenant-admin", name: "o", tenant_slug: "other" });
  const member = await w.person("ana@acme.test", "acme");
  const human = await w.person("boss@acme.test", "acme");
  await w.json("POST", "/api/v1/tenants/acme/admins", {
    bearer: w.admin,
    body: { user_id: human.user_id },
  });
  const put = (bearer: string) =>
    w.json("PUT", "/api/v1/tenants/acme/login", { bearer, body: POLICY });
  assertEquals((await put(human.secret)).status, 200);
  assertEquals((await put(tenantToken)).status, 403, "a token changes no login policy");
  assertEquals(
    (await w.json("GET", "/api/v1/tenants/acme/login", { bearer: tenantToken })).status,
    200,
    "but reads it",
  );
  for (const refused of [writeToken, otherAdmin, member.secret]) {
    const res = await put(refused);
    assertEquals([res.status, res.body.code], [403, "forbidden"]);
    const read = await w.json("GET", "/api/v1/tenants/acme/login", { bearer: refused });
    assertEquals(read.status, 403);
  }
});

signInTest("a bad policy is refused before anything is stored", async (w) => {
  const bad = await w.json("PUT", "/api/v1/tenants/acme/login", {
    bearer: w.admin,
    body: { method: "oidc", issuer: "https://idp.test", client_id: "c", client_secret: "plain" },
  });
  assertEquals([bad.status, bad.body.code], [400, "invalid_request"]);
  assertEquals(
    (await w.call("GET", "/api/v1/tenants/acme/login", { bearer: w.admin })).status,
    404,
  );
});

signInTest("deleting a tenant removes its login policy", async (w) => {
  await w.json("PUT", "/api/v1/tenants/acme/login", { bearer: w.admin, body: POLICY });
  await w.call("DELETE", "/api/v1/tenants/acme", { bearer: w.admin });
  await w.call("POST", "/api/v1/tenants", { bearer: w.admin, body: { slug: "acme" } });
  assertEquals(
    (await w.call("GET", "/api/v1/tenants/acme/login", { bearer: w.admin })).status,
    404,
  );
});

const OIDC = OIDC_POLICY;

signInTest("only a superadmin points an OIDC policy at an issuer and a secret", async (w) => {
  const human = await w.person("boss@acme.test", "acme");
  await w.json("POST", "/api/v1/tenants/acme/admins", {
    bearer: w.admin,
    body: { user_id: human.user_id },
  });
  const put = (bearer: string, body: Record<string, unknown>) =>
    w.json("PUT", "/api/v1/tenants/acme/login", { bearer, body });
  // A tenant admin choosing issuer and secret file could make the server send the file anywhere.
  const exfiltrate = await put(human.secret, {
    ...OIDC,
    issuer: "https://attacker.test",
    client_secret_ref: "file:/etc/passwd",
  });
  assertEquals([exfiltrate.status, exfiltrate.body.code], [403, "forbidden"]);
  assertEquals((await put(w.admin, OIDC)).status, 200);
  const groups = await put(human.secret, { ...OIDC, admin_groups: ["flag-admins"] });
  assertEquals(
    groups.status,
    200,
    "the rest of a superadmin's OIDC policy is the tenant admin's to change",
  );
  for (const field of ["issuer", "client_id", "client_secret_ref"]) {
    const moved = await put(human.secret, {
      ...OIDC,
      [field]: field === "issuer" ? "https://x.test" : "env:OTHER",
    });
    assertEquals(moved.status, 403, field);
  }
  assertEquals((await put(human.secret, POLICY)).status, 200, "switching to email sign-in is fine");
});

const idpCert = await makeCertificate();
const SAML_URL = { method: "saml", idp_metadata_url: "https://login.acme.test/saml/metadata" };
const SAML_XML = {
  method: "saml",
  idp_metadata_xml: idpMetadataXml({
    keys: [{ use: "signing", certificate: idpCert.certificate }],
  }),
};

signInTest(
  "only a superadmin names a SAML policy's identity provider; tenant admins change the rest",
  async (w) => {
    const human = await w.person("boss@acme.test", "acme");
    await w.json("POST", "/api/v1/tenants/acme/admins", {
      bearer: w.admin,
      body: { user_id: human.user_id },
    });
    const put = (bearer: string, body: Record<string, unknown>) =>
      w.json("PUT", "/api/v1/tenants/acme/login", { bearer, body });
    // Whoever names the identity provider decides which emails its assertions may claim.
    for (const policy of [SAML_URL, SAML_XML]) {
      const res = await put(human.secret, policy);
      assertEquals([res.status, res.body.code], [403, "forbidden"]);
    }
    assertEquals(
      (await w.call("GET", "/api/v1/tenants/acme/login", { bearer: w.admin })).status,
      404,
      "nothing was stored",
    );
    const set = await put(w.admin, SAML_URL);
    assertEquals(set.status, 200);
    const narrowed = await put(human.secret, {
      ...SAML_URL,
      allowed_email_domains: ["acme.test"],
      admin_groups: ["flag-admins"],
      groups_attribute: "memberOf",
    });
    assertEquals(narrowed.status, 200, "domains and groups are the tenant admin's to change");
    assertEquals(narrowed.body.policy, {
      ...SAML_URL,
      allowed_email_domains: ["acme.test"],
      groups_attribute: "memberOf",
      admin_groups: ["flag-admins"],
    });
    const renamed = await put(human.secret, {
      ...(narrowed.body.policy as Record<string, unknown>),
      email_attribute: "mail",
    });
    assertEquals(
      [renamed.status, renamed.body.code],
      [403, "forbidden"],
      "which attribute is the email is the superadmin's: it decides who a sign-in claims to be",
    );
    const moved = await put(human.secret, {
      ...SAML_URL,
      idp_metadata_url: "https://attacker.test/metadata",
    });
    assertEquals([moved.status, moved.body.code], [403, "forbidden"]);
    assertEquals(
      (await put(human.secret, SAML_XML)).status,
      403,
      "nor swap the URL for a document",
    );
    const kept = await w.json("GET", "/api/v1/tenants/acme/login", { bearer: w.admin });
    assertEquals(kept.body.policy, narrowed.body.policy);
    assertEquals(
      (await put(human.secret, POLICY)).status,
      200,
      "switching to email sign-in is fine",
    );
  },
);

signInTest(
  "a superadmin sets a SAML policy from a metadata document, and a tenant admin keeps it",
  async (w) => {
    const set = await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: SAML_XML,
    });
    assertEquals(set.status, 200);
    const read = await w.json("GET", "/api/v1/tenants/acme/login", { bearer: w.admin });
    assertEquals(read.body.policy, SAML_XML);
    const human = await w.person("boss@acme.test", "acme");
    await w.json("POST", "/api/v1/tenants/acme/admins", {
      bearer: w.admin,
      body: { user_id: human.user_id },
    });
    const same = await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: human.secret,
      body: { ...SAML_XML, allowed_email_domains: ["acme.test"] },
    });
    assertEquals(same.status, 200);
    const audit = await listAudit(w.kv, { tenant: "acme", type: "tenant.login_policy_changed" });
    assertEquals(audit.items.map((e) => e.details.method), ["saml", "saml"]);
    assertEquals(audit.items[0]!.actor_id, human.user_id);
    assertEquals(audit.items[0]!.details.changed, ["allowed_email_domains"]);
  },
);

signInTest(
  "a tenant-admin token cannot make anyone an admin through the login policy; nothing is written",
  async (w) => {
    // Before: the token set admin_groups to a group it controls at the
    // provider, and every member of it signed in as a human tenant admin,
    // who may mint tenant-admin tokens and add admins (which the token may not).
    assertEquals(
      (await w.json("PUT", "/api/v1/tenants/acme/login", {
        bearer: w.admin,
        body: OIDC,
      })).status,
      200,
    );
    const tenantToken = (await w.json("POST", "/api/v1/tokens", {
      bearer: w.admin,
      body: { type: "tenant-admin", name: "t", tenant_slug: "acme" },
    })).body.secret as string;
    const changes = async () =>
      (await listAudit(w.kv, { tenant: "acme", type: "tenant.login_policy_changed" })).items.length;
    const auditBefore = await changes();
    const attempts: Record<string, unknown>[] = [
      { ...OIDC, admin_groups: ["eve-crew"] },
      { ...OIDC, groups_claim: "roles" },
      { ...OIDC, allowed_email_domains: ["evil.test"] },
      POLICY,
      { method: "email", domains: ["evil.test"] },
    ];
    for (const body of attempts) {
      const res = await w.json("PUT", "/api/v1/tenants/acme/login", { bearer: tenantToken, body });
      assertEquals([res.status, res.body.code], [403, "forbidden"], JSON.stringify(body));
      assertEquals(
        String(res.body.message).includes("tenant-admin token cannot change"),
        true,
        String(res.body.message),
      );
    }
    const kept = await w.json("GET", "/api/v1/tenants/acme/login", { bearer: w.admin });
    assertEquals(kept.body.policy, OIDC, "the policy is unchanged");
    assertEquals(await changes(), auditBefore, "no change audited");
    // A member of the group the token wanted as admins stays a member: no
    // tenant-admin token for them.
    const eve = await w.person("eve@acme.test", "acme", ["eve-crew"]);
    const mint = await w.json("POST", "/api/v1/tokens", {
      bearer: eve.secret,
      body: { type: "tenant-admin", name: "eve", tenant_slug: "acme" },
    });
    assertEquals(mint.status, 403);
  },
);
