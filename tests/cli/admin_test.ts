/**
 * `cfgtool admin user list|delete` and `cfgtool admin session list|revoke`
 * through the real CLI, on the KV file of a running `cfgtool serve`: what
 * they print, and that the server refuses a revoked or deleted user's
 * session at once.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  assertError,
  assertStatus,
  createHuman,
  createNamespace,
  createTenant,
} from "../e2e/credentials_fixture.ts";

const lastLine = (s: string) => s.trim().split("\n").at(-1)!.trim();

Deno.test("cfgtool admin user and session management on a real installation", async (t) => {
  const inst = await startInstallation();
  const kv = ["--kv", inst.kvPath];
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    const ana = await createHuman(inst, "ana@acme.test");
    const bo = await createHuman(inst, "bo@acme.test");
    await addTenantAdmin(inst, "acme", ana.id);
    await addNamespaceAdmin(inst, "acme", "web", ana.id);
    const second = await runCli(["admin", "session", "create", ...kv, "--user", ana.email]);
    assertEquals(second.code, 0, second.stderr);
    const anaSecond = lastLine(second.stdout);

    await t.step("admin user list shows every user with what it administers", async () => {
      const r = await runCli(["admin", "user", "list", ...kv]);
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assertEquals(lines[0]!.split(/\s{2,}/), ["ID", "EMAIL", "CREATED", "ADMIN OF"]);
      assertEquals(lines.length, 3);
      assertStringIncludes(lines[1]!, `${ana.id}  ana@acme.test`);
      assert(lines[1]!.endsWith("acme, acme/web"), lines[1]);
      assert(lines[2]!.startsWith(bo.id) && lines[2]!.endsWith("-"), lines[2]);
      const json = JSON.parse((await runCli(["admin", "user", "list", ...kv, "--json"])).stdout);
      assertEquals(json.map((u: { email: string }) => u.email), ["ana@acme.test", "bo@acme.test"]);
      assertEquals(json[0].memberships, [
        { tenant: "acme", namespace: null },
        { tenant: "acme", namespace: "web" },
      ]);
    });

    let anaSessionIds: string[] = [];
    await t.step("admin session list shows sessions but never a secret or digest", async () => {
      const r = await runCli(["admin", "session", "list", ...kv]);
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assertEquals(lines[0]!.split(/\s{2,}/), [
        "ID",
        "USER",
        "EMAIL",
        "PREFIX",
        "CREATED",
        "EXPIRES",
      ]);
      assertEquals(lines.length, 4, r.stdout);
      const json = JSON.parse(
        (await runCli(["admin", "session", "list", ...kv, "--user", ana.email, "--json"])).stdout,
      );
      assertEquals(json.length, 2);
      for (const s of json) {
        // the sign-in fields of a session made on the host; never a digest, secret or IP hash
        assertEquals(Object.keys(s).sort(), [
          "assurance",
          "client",
          "created_at",
          "expires_at",
          "groups",
          "id",
          "idle_timeout_ms",
          "last_seen_at",
          "login_method",
          "prefix",
          "tenants",
          "user_id",
        ]);
        assertEquals([s.login_method, s.client], ["admin", "admin"]);
        assertEquals(s.user_id, ana.id);
      }
      anaSessionIds = json.map((s: { id: string }) => s.id);
      for (const secret of [ana.session, anaSecond, bo.session]) {
        assert(!r.stdout.includes(secret) && !r.stderr.includes(secret), "a secret was printed");
        assert(!JSON.stringify(json).includes(secret), "a secret was printed");
      }
      assert(!/[0-9a-f]{64}/.test(r.stdout + JSON.stringify(json)), "a digest was printed");
    });

    await t.step(
      "admin session revoke ends that session at once; others keep working",
      async () => {
        const first = await runCli(["admin", "session", "list", ...kv, "--user", ana.id, "--json"]);
        const ids = JSON.parse(first.stdout).map((s: { id: string; prefix: string }) => s);
        const target = ids.find((s: { prefix: string }) => ana.session.startsWith(s.prefix));
        assert(target !== undefined);
        const r = await runCli(["admin", "session", "revoke", target.id, ...kv]);
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, `revoked session ${target.id} of ${ana.id}`);
        assertError(
          await inst.api("GET", "/api/v1/tenants/acme", ana.session),
          401,
          "unauthorized",
        );
        assertStatus(await inst.api("GET", "/api/v1/tenants/acme", anaSecond), 200);
        const again = await runCli(["admin", "session", "revoke", target.id, ...kv]);
        assertEquals(again.code, 1);
        assertStringIncludes(again.stderr, `No session ${target.id}`);
      },
    );

    await t.step(
      "admin user delete without --yes and without a terminal deletes nothing (exit 2)",
      async () => {
        const r = await runCli(["admin", "user", "delete", ana.email, ...kv]);
        assertEquals(r.code, 2);
        assertStringIncludes(r.stderr, "pass --yes");
        assertStatus(await inst.api("GET", "/api/v1/tenants/acme", anaSecond), 200);
      },
    );

    await t.step(
      "admin user delete --yes removes the user, its memberships and sessions",
      async () => {
        const r = await runCli(["admin", "user", "delete", ana.id, ...kv, "--yes"]);
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, `deleted user ana@acme.test (${ana.id})`);
        assertStringIncludes(r.stdout, "removed 2 admin membership(s), ended 1 session(s)");
        // the server sees another process's change within its credential poll (25 ms)
        let after = await inst.api("GET", "/api/v1/tenants/acme", anaSecond);
        for (let i = 0; i < 40 && after.status !== 401; i++) {
          await new Promise((r) => setTimeout(r, 50));
          after = await inst.api("GET", "/api/v1/tenants/acme", anaSecond);
        }
        assertError(after, 401, "unauthorized");
        const admins = await inst.api("GET", "/api/v1/tenants/acme/admins", inst.admin);
        assertEquals(admins.body.admins, []);
        const nsAdmins = await inst.api(
          "GET",
          "/api/v1/tenants/acme/namespaces/web/admins",
          inst.admin,
        );
        assertEquals(nsAdmins.body.admins, []);
        const users = JSON.parse((await runCli(["admin", "user", "list", ...kv, "--json"])).stdout);
        assertEquals(users.map((u: { id: string }) => u.id), [bo.id]);
        const sessions = JSON.parse(
          (await runCli(["admin", "session", "list", ...kv, "--json"])).stdout,
        );
        assertEquals(sessions.map((s: { user_id: string }) => s.user_id), [bo.id]);
        assert(!anaSessionIds.some((id) => JSON.stringify(sessions).includes(id)));
        const gone = await runCli(["admin", "user", "delete", ana.id, ...kv, "--yes"]);
        assertEquals(gone.code, 1);
        assertStringIncludes(gone.stderr, `No user ${ana.id}`);
      },
    );

    await t.step("admin user and session commands refuse --kv :memory:", async () => {
      const r = await runCli(["admin", "session", "list", "--kv", ":memory:"]);
      assertEquals(r.code, 2);
      assertStringIncludes(r.stderr, "name the server's KV file");
    });
  } finally {
    await inst.close();
  }
});

Deno.test("admin commands refusing a value given on the command line exit 2 (a usage mistake), not 1", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = ["--kv", `${dir}/kv.sqlite3`];
    const email = await runCli(["admin", "user", "create", ...kv, "--email", "not-an-email"]);
    assertEquals(email.code, 2, email.stderr);
    assertStringIncludes(email.stderr, 'error: Cannot use "not-an-email" as email');
    // A look-alike of kate@acme.test (Kelvin sign) would be another account that reads the same.
    const lookAlike = await runCli([
      "admin",
      "user",
      "create",
      ...kv,
      "--email",
      "\u212Aate@acme.test",
    ]);
    assertEquals(lookAlike.code, 2, lookAlike.stderr);
    assertStringIncludes(lookAlike.stderr, "plain ASCII addresses only");
    const long = await runCli([
      "admin",
      "user",
      "create",
      ...kv,
      "--email",
      `${"a".repeat(300)}@x`,
    ]);
    assertEquals(long.code, 2, long.stderr);
    assertStringIncludes(long.stderr, "email is 302 characters long");
    const name = await runCli(["admin", "bootstrap", ...kv, "--name", " "]);
    assertEquals(name.code, 2, name.stderr);
    assertStringIncludes(name.stderr, 'Cannot use name " "');
    assertEquals(name.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
