/**
 * `cfgtool tenant delete` through the real CLI against a real `cfgtool
 * serve`: it asks on a terminal and needs `--yes` elsewhere.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";
import {
  assertError,
  assertStatus,
  bodies,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
} from "../e2e/credentials_fixture.ts";
import { hasTerminalRunner, runOnTerminal } from "./terminal.ts";

Deno.test("cfgtool tenant delete against a real server", async (t) => {
  const inst = await startInstallation();
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false });
    const tenantToken = await mint(inst, inst.admin, bodies("acme", "web", "production").tenant);
    const readToken = await mint(inst, inst.admin, bodies("acme", "web", "production").read);

    await t.step(
      "tenant delete without --yes and without a terminal deletes nothing (exit 2)",
      async () => {
        const r = await runCli(["tenant", "delete", "acme"], { env });
        assertEquals(r.code, 2);
        assertStringIncludes(r.stderr, "pass --yes");
        assertStringIncludes(r.stderr, "nothing was deleted");
        assertStatus(await inst.api("GET", "/api/v1/tenants/acme", inst.admin), 200);
        assertStatus(
          await inst.api("GET", "/api/v1/tenants/acme/namespaces/web", readToken.secret),
          200,
        );
      },
    );

    await t.step({
      name:
        "tenant delete on a terminal lists the namespaces and tokens, and a wrong answer keeps them",
      ignore: !hasTerminalRunner,
      fn: async () => {
        const r = await runOnTerminal(["tenant", "delete", "acme"], "yes\n", env);
        assertEquals(r.code, 1, r.output);
        assertStringIncludes(r.output, "This deletes tenant acme for good:");
        assertStringIncludes(r.output, "2 namespaces (api, web) with all their manifest versions");
        assertStringIncludes(r.output, "2 active tokens bound to the tenant or its namespaces");
        assertStringIncludes(r.output, "Type acme to confirm");
        assertStatus(await inst.api("GET", "/api/v1/tenants/acme", inst.admin), 200);
      },
    });

    await t.step("tenant delete --yes deletes the tenant, its namespaces and tokens", async () => {
      const r = await runCli(["tenant", "delete", "acme", "--yes"], { env });
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.stdout, "deleted tenant acme (2 tokens revoked)");
      assertError(
        await inst.api("GET", "/api/v1/tenants/acme", inst.admin),
        404,
        "tenant_not_found",
      );
      for (const secret of [tenantToken.secret, readToken.secret]) {
        assertError(await inst.api("GET", "/api/v1/tenants", secret), 401, "unauthorized");
      }
    });

    await t.step({
      name: "tenant delete on a terminal deletes once the slug is typed",
      ignore: !hasTerminalRunner,
      fn: async () => {
        await createTenant(inst, "globex");
        const r = await runOnTerminal(["tenant", "delete", "globex"], "globex\n", env);
        assertEquals(r.code, 0, r.output);
        assertStringIncludes(r.output, "0 namespaces with all their manifest versions");
        assertStringIncludes(r.output, "deleted tenant globex (0 tokens revoked)");
        assertError(
          await inst.api("GET", "/api/v1/tenants/globex", inst.admin),
          404,
          "tenant_not_found",
        );
      },
    });
  } finally {
    await inst.close();
  }
});
