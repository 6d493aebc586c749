/**
 * `cfgtool tenant login set|show` through the real CLI against a real
 * `cfgtool serve`: the policy set from options or a file is what the API
 * then serves, tenant admins (human or token) may manage their own tenant's
 * policy and no other, every change is audited, server refusals print as
 * for every remote command, and a literal secret never leaves the CLI.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "./installation.ts";
import {
  addTenantAdmin,
  allAudit,
  assertError,
  assertStatus,
  bodies,
  createHuman,
  createTenant,
  mint,
} from "./credentials_fixture.ts";

const SECRET = "hunter2-NeverSendThis";

Deno.test("cfgtool tenant login set|show against a real server", async (t) => {
  const inst = await startInstallation();
  const config = await Deno.makeTempDir({ prefix: "cfgtool-login-config-" });
  const as = (token: string) => ({
    env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: token, XDG_CONFIG_HOME: config },
  });
  const superadmin = as(inst.admin);
  const policyOf = async (tenant: string) =>
    await inst.api("GET", `/api/v1/tenants/${tenant}/login`, inst.admin);
  const changes = async () =>
    (await allAudit(inst, inst.admin, "type=tenant.login_policy_changed"))
      .filter((e) => e.type === "tenant.login_policy_changed");
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "globex");
    const alice = await createHuman(inst, "alice@acme.com");
    await addTenantAdmin(inst, "acme", alice.id);
    const acmeAdmin = await mint(inst, inst.admin, bodies("acme", "web", "production").tenant);

    await t.step("show before any policy exits 1 with the server's not-found message", async () => {
      const r = await runCli(["tenant", "login", "show", "acme"], superadmin);
      assertEquals(r.code, 1, r.stderr);
      assertStringIncludes(r.stderr, "error: Tenant acme has no login policy");
    });

    await t.step("set --method oidc stores the policy the API then serves", async () => {
      const r = await runCli([
        "tenant",
        "login",
        "set",
        "acme",
        "--method",
        "oidc",
        "--issuer",
        "https://sso.acme.com/realms/staff/",
        "--client-id",
        "cfgtool",
        "--client-secret-ref",
        "env:ACME_OIDC_SECRET",
        "--allowed-email-domain",
        "Acme.com",
        "--admin-group",
        "cfgtool-admins",
      ], superadmin);
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.stdout, "set the login policy of tenant acme\n");
      assertStringIncludes(r.stdout, "issuer:            https://sso.acme.com/realms/staff\n");
      assertStringIncludes(
        r.stderr,
        `register ${inst.url}/auth/oidc/callback as the redirect URI`,
      );
      const got = await policyOf("acme");
      assertStatus(got, 200);
      // the server normalises: no trailing slash on the issuer, domains in lower case
      assertEquals(got.body.policy, {
        method: "oidc",
        issuer: "https://sso.acme.com/realms/staff",
        client_id: "cfgtool",
        client_secret_ref: "env:ACME_OIDC_SECRET",
        allowed_email_domains: ["acme.com"],
        admin_groups: ["cfgtool-admins"],
      });
    });

    await t.step(
      "a human tenant admin's show --json prints the record the API serves",
      async () => {
        const r = await runCli(["tenant", "login", "show", "acme", "--json"], as(alice.session));
        assertEquals(r.code, 0, r.stderr);
        const { request_id: _id, ...record } = (await policyOf("acme")).body;
        assertEquals(JSON.parse(r.stdout), record);
        const plain = await runCli(["tenant", "login", "show", "acme"], as(alice.session));
        assertEquals(plain.code, 0, plain.stderr);
        assertStringIncludes(plain.stdout, "groups claim:      groups (default)\n");
        assertStringIncludes(plain.stdout, "client secret ref: env:ACME_OIDC_SECRET\n");
      },
    );

    await t.step(
      "a human tenant admin replaces it from a file, and both changes are audited",
      async () => {
        const file = `${inst.dir}/acme-login.json`;
        await Deno.writeTextFile(
          file,
          '{"method": "email", "domains": ["acme.com", "acme.co.uk"]}',
        );
        // A tenant-admin token may read the policy but not change it.
        const token = await runCli(
          ["tenant", "login", "set", "acme", "--from-file", file, "--json"],
          as(acmeAdmin.secret),
        );
        assertEquals(token.code, 1, token.stderr);
        assertStringIncludes(token.stderr, "A tenant-admin token cannot change");
        assertEquals((await policyOf("acme")).body.policy.method, "oidc");
        const r = await runCli(
          ["tenant", "login", "set", "acme", "--from-file", file, "--json"],
          as(alice.session),
        );
        assertEquals(r.code, 0, r.stderr);
        const printed = JSON.parse(r.stdout);
        assertEquals(printed.policy, { method: "email", domains: ["acme.com", "acme.co.uk"] });
        assertEquals(printed.updated_by, alice.id);
        assertEquals((await policyOf("acme")).body.policy.method, "email");
        const audited = (await changes()).filter((e) => e.tenant_slug === "acme");
        assertEquals(
          audited.map((e) => [e.details.method, e.details.previous_method]),
          [["email", "oidc"], ["oidc", null]],
        );
      },
    );

    await t.step(
      "a tenant admin cannot set another tenant's policy (exit 1, nothing stored)",
      async () => {
        const r = await runCli(
          ["tenant", "login", "set", "globex", "--method", "email", "--domain", "globex.com"],
          as(acmeAdmin.secret),
        );
        assertEquals(r.code, 1, r.stderr);
        assertStringIncludes(r.stderr, "is bound to tenant acme, not globex");
        const human = await runCli(
          ["tenant", "login", "show", "globex"],
          as(alice.session),
        );
        assertEquals(human.code, 1, human.stderr);
        assertStringIncludes(human.stderr, "read the tenant's login policy");
        assertError(await policyOf("globex"), 404, "not_found");
      },
    );

    await t.step("the server's refusal of a bad policy prints its message (exit 1)", async () => {
      const r = await runCli([
        "tenant",
        "login",
        "set",
        "acme",
        "--method",
        "oidc",
        "--issuer",
        "http://sso.acme.com",
        "--client-id",
        "cfgtool",
        "--client-secret-ref",
        "file:/run/secrets/acme-oidc",
      ], superadmin);
      assertEquals(r.code, 1, r.stderr);
      assertStringIncludes(r.stderr, "error: issuer must be an https:// URL");
      const unknown = await runCli(
        ["tenant", "login", "set", "nope", "--method", "email", "--domain", "nope.com"],
        superadmin,
      );
      assertEquals(unknown.code, 1, unknown.stderr);
      assertStringIncludes(unknown.stderr, "error: No tenant nope");
      assertEquals((await policyOf("acme")).body.policy.method, "email");
    });

    await t.step(
      "a literal client secret is refused before anything is sent (exit 2)",
      async () => {
        const before = (await changes()).length;
        const oidc = [
          "tenant",
          "login",
          "set",
          "acme",
          "--method",
          "oidc",
          "--issuer",
          "https://sso.acme.com/realms/staff",
          "--client-id",
          "cfgtool",
        ];
        for (
          const args of [
            [...oidc, "--client-secret", SECRET],
            [...oidc, "--client-secret-ref", SECRET],
          ]
        ) {
          const r = await runCli(args, superadmin);
          assertEquals(r.code, 2, r.stderr);
          assertStringIncludes(r.stderr, "never sen");
          assert(!(r.stdout + r.stderr).includes(SECRET), "the secret is never repeated");
        }
        assertEquals((await changes()).length, before);
        assertEquals((await policyOf("acme")).body.policy.method, "email");
      },
    );
  } finally {
    await inst.close();
    await Deno.remove(config, { recursive: true });
  }
});
