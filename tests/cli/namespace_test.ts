/**
 * `cfgtool namespace …` through the real CLI against a real `cfgtool serve`:
 * the VERSION column of `list`, `admin list`, and the confirmation that
 * `delete` asks for.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";
import {
  addNamespaceAdmin,
  assertError,
  assertStatus,
  bodies,
  createHuman,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
} from "../e2e/credentials_fixture.ts";
import { hasTerminalRunner, runOnTerminal } from "./terminal.ts";

/** The cells of the table row whose first cell is `first`. */
function row(table: string, first: string): string[] {
  const line = table.split("\n").find((l) => l.split(/\s{2,}/)[0] === first);
  assert(line !== undefined, `no row ${first} in:\n${table}`);
  return line.split(/\s{2,}/);
}

Deno.test("cfgtool namespace against a real server", async (t) => {
  const inst = await startInstallation();
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  const ns = (slug: string) => `/api/v1/tenants/acme/namespaces/${slug}`;
  try {
    await createTenant(inst, "acme");
    for (const slug of ["web", "api", "old", "tty"]) await createNamespace(inst, "acme", slug);
    await pushManifest(inst, inst.admin, "acme", "web", { production: false });
    await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    await pushManifest(inst, inst.admin, "acme", "tty", { production: false });

    await t.step("namespace list shows the head version in the VERSION column", async () => {
      const r = await runCli(["namespace", "list", "--tenant", "acme"], { env });
      assertEquals(r.code, 0, r.stderr);
      assertEquals(row(r.stdout, "SLUG").slice(0, 2), ["SLUG", "VERSION"]);
      assertEquals(row(r.stdout, "web")[1], "2");
      assertEquals(row(r.stdout, "api")[1], "0");
      assertEquals(row(r.stdout, "tty")[1], "1");
      const json = await runCli(["namespace", "list", "--tenant", "acme", "--json"], { env });
      const web = JSON.parse(json.stdout).find((n: { slug: string }) => n.slug === "web");
      assertEquals(web.head.version, 2);
    });

    const ana = await createHuman(inst, "ana@acme.test");
    await addNamespaceAdmin(inst, "acme", "web", ana.id);
    const apiRead = await mint(inst, inst.admin, bodies("acme", "api", "production").read);

    await t.step("namespace admin list shows the namespace's admins", async () => {
      const r = await runCli([
        "namespace",
        "admin",
        "list",
        "--tenant",
        "acme",
        "--namespace",
        "web",
      ], {
        env,
      });
      assertEquals(r.code, 0, r.stderr);
      assertMatch(row(r.stdout, ana.id)[1]!, /^tok_/);
      const json = await runCli(
        ["namespace", "admin", "list", "--tenant", "acme", "--namespace", "web", "--json"],
        { env },
      );
      assertEquals(JSON.parse(json.stdout).map((a: { user_id: string }) => a.user_id), [ana.id]);
      const none = await runCli(
        ["namespace", "admin", "list", "--tenant", "acme", "--namespace", "api"],
        { env },
      );
      assertEquals(none.stdout.trim(), "(none)");
    });

    await t.step(
      "namespace admin list refuses a token of another namespace (403) and no credential (401)",
      async () => {
        const r = await runCli(
          ["namespace", "admin", "list", "--tenant", "acme", "--namespace", "web"],
          { env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: apiRead.secret } },
        );
        assertEquals(r.code, 1);
        assertStringIncludes(r.stderr, "bound to namespace api");
        assertError(await inst.api("GET", `${ns("web")}/admins`, apiRead.secret), 403, "forbidden");
        assertError(await inst.api("GET", `${ns("web")}/admins`, null), 401, "unauthorized");
      },
    );

    const webRead = await mint(inst, inst.admin, bodies("acme", "web", "production").read);

    await t.step(
      "namespace delete without --yes and without a terminal deletes nothing (exit 2)",
      async () => {
        const r = await runCli(["namespace", "delete", "web", "--tenant", "acme"], { env });
        assertEquals(r.code, 2);
        assertStringIncludes(r.stderr, "pass --yes");
        assertStringIncludes(r.stderr, "nothing was deleted");
        assertStatus(await inst.api("GET", ns("web"), inst.admin), 200);
        assertStatus(
          await inst.api("GET", ns("web"), webRead.secret),
          200,
          "its token still works",
        );
      },
    );

    await t.step(
      "namespace delete --yes deletes at once and revokes the bound tokens",
      async () => {
        const r = await runCli(["namespace", "delete", "web", "--tenant", "acme", "--yes"], {
          env,
        });
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, "deleted namespace acme/web (1 token revoked)");
        assertError(await inst.api("GET", ns("web"), inst.admin), 404, "namespace_not_found");
        assertError(await inst.api("GET", ns("web"), webRead.secret), 401, "unauthorized");
      },
    );

    await t.step({
      name: "namespace delete on a terminal says what goes and deletes nothing on a wrong answer",
      ignore: !hasTerminalRunner,
      fn: async () => {
        await mint(inst, inst.admin, bodies("acme", "tty", "production").read);
        const r = await runOnTerminal(
          ["namespace", "delete", "tty", "--tenant", "acme"],
          "y\n",
          env,
        );
        assertEquals(r.code, 1, r.output);
        assertStringIncludes(r.output, "This deletes namespace acme/tty for good:");
        assertStringIncludes(r.output, "all its manifest versions (now at version 1)");
        assertStringIncludes(r.output, "1 active token bound to it, revoked");
        assertStringIncludes(r.output, "Type tty to confirm");
        assertStringIncludes(r.output, "Not confirmed: nothing was deleted");
        assertStatus(await inst.api("GET", ns("tty"), inst.admin), 200);
      },
    });

    await t.step({
      name: "namespace delete on a terminal deletes once the slug is typed",
      ignore: !hasTerminalRunner,
      fn: async () => {
        const r = await runOnTerminal(
          ["namespace", "delete", "tty", "--tenant", "acme"],
          "tty\n",
          env,
        );
        assertEquals(r.code, 0, r.output);
        assertStringIncludes(r.output, "deleted namespace acme/tty");
        assertError(await inst.api("GET", ns("tty"), inst.admin), 404, "namespace_not_found");
      },
    });
  } finally {
    await inst.close();
  }
});
