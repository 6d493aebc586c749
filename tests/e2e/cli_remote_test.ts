import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
} from "../assert.ts";
import { readManifestDir } from "../../lib/flags/files.ts";
import { runCli, startInstallation } from "./installation.ts";

const EXAMPLE = new URL("../../examples/flags", import.meta.url).pathname;

Deno.test("the CLI drives a real server: tenant, namespace, push, token, pull, versions, rollback", async (t) => {
  const inst = await startInstallation();
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  const work = await Deno.makeTempDir({ prefix: "cfgtool-cli-" });
  try {
    await t.step("tenant create and namespace create succeed and list shows them", async () => {
      assertEquals((await runCli(["tenant", "create", "acme"], { env })).code, 0);
      const ns = await runCli(["namespace", "create", "web", "--tenant", "acme"], { env });
      assertEquals(ns.code, 0, ns.stderr);
      const list = await runCli(["namespace", "list", "--tenant", "acme", "--json"], { env });
      assertEquals(list.code, 0, list.stderr);
      assertStringIncludes(list.stdout, '"web"');
    });

    await t.step("push uploads the example namespace, and a second push is unchanged", async () => {
      const first = await runCli(["push", EXAMPLE, "--tenant", "acme", "--namespace", "web"], {
        env,
      });
      assertEquals(first.code, 0, first.stderr);
      assertMatch(first.stdout, /version 1 \(sha256:[0-9a-f]{64}\)/);
      const again = await runCli(["push", EXAMPLE, "--tenant", "acme", "--namespace", "web"], {
        env,
      });
      assertEquals(again.code, 0, again.stderr);
      assertStringIncludes(again.stdout, "unchanged at version 1");
    });

    let readSecret = "";
    await t.step(
      "token create prints the secret alone on the last line, and it works for pull",
      async () => {
        const created = await runCli([
          "token",
          "create",
          "--type",
          "namespace-read",
          "--name",
          "runtime",
          "--tenant",
          "acme",
          "--namespace",
          "web",
          "--expires-in",
          "30d",
        ], { env });
        assertEquals(created.code, 0, created.stderr);
        readSecret = created.stdout.trim().split("\n").at(-1)!;
        assertMatch(readSecret, /^svc_read_[1-9A-HJ-NP-Za-km-z]{40,50}$/);
        const pulled = await runCli(
          ["pull", `${work}/copy`, "--tenant", "acme", "--namespace", "web"],
          { env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: readSecret } },
        );
        assertEquals(pulled.code, 0, pulled.stderr);
        const original = await readManifestDir(EXAMPLE);
        const copy = await readManifestDir(`${work}/copy`);
        assertEquals([...copy.keys()].sort(), [...original.keys()].sort());
        for (const [path, bytes] of original) assertEquals(copy.get(path), bytes, path);
      },
    );

    await t.step(
      "pull --force removes a manifest file the version does not have, and names it",
      async () => {
        await Deno.writeTextFile(`${work}/copy/flags/mine.toml`, "# my own draft\n");
        await Deno.writeTextFile(`${work}/copy/NOTES.txt`, "kept\n");
        const pulled = await runCli(
          ["pull", `${work}/copy`, "--tenant", "acme", "--namespace", "web", "--force"],
          { env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: readSecret } },
        );
        assertEquals(pulled.code, 0, pulled.stderr);
        assertStringIncludes(pulled.stdout, "\nremoved flags/mine.toml (not in version 1)\n");
        assertEquals(await Deno.readTextFile(`${work}/copy/NOTES.txt`), "kept\n");
        await assertRejects(() => Deno.stat(`${work}/copy/flags/mine.toml`), Deno.errors.NotFound);
      },
    );

    await t.step(
      "a read token cannot push: the CLI exits 1 with the server's 403 message",
      async () => {
        const denied = await runCli(
          ["push", EXAMPLE, "--tenant", "acme", "--namespace", "web", "--message", "x"],
          { env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: readSecret } },
        );
        assertEquals(denied.code, 1);
        assert(!denied.stderr.includes("    at "), "no stack trace");
        assert(!denied.stderr.includes(readSecret), "the token is never printed");
      },
    );

    await t.step(
      "a manifest that fails local validation is not sent (exit 1, problems listed)",
      async () => {
        await Deno.mkdir(`${work}/bad/flags`, { recursive: true });
        await Deno.writeTextFile(`${work}/bad/namespace.toml`, "schema_version = 1\n");
        await Deno.writeTextFile(`${work}/bad/flags/x.toml`, 'schema_version = 1\ntype = "nope"\n');
        const bad = await runCli(
          ["push", `${work}/bad`, "--tenant", "acme", "--namespace", "web"],
          { env },
        );
        assertEquals(bad.code, 1);
        assertStringIncludes(bad.stderr, "flags/x.toml");
        const versions = await runCli(
          ["namespace", "versions", "--tenant", "acme", "--namespace", "web", "--json"],
          { env },
        );
        assertEquals(versions.code, 0, versions.stderr);
        assertEquals(
          (JSON.parse(versions.stdout).items ?? JSON.parse(versions.stdout).versions ??
            JSON.parse(versions.stdout)).map((v: { version: number }) => v.version),
          [
            1,
            0,
          ],
        );
      },
    );

    await t.step("rollback to version 0 empties the namespace as a new version 2", async () => {
      const rb = await runCli(
        ["namespace", "rollback", "--tenant", "acme", "--namespace", "web", "--version", "0"],
        { env },
      );
      assertEquals(rb.code, 0, rb.stderr);
      const res = await inst.api(
        "GET",
        "/api/v1/tenants/acme/namespaces/web/manifest",
        inst.admin,
        undefined,
        {
          accept: "application/json",
        },
      );
      assertEquals(res.body.version, 2);
      assertEquals(res.body.files, {});
    });

    await t.step("an unreachable server is a clear one-line error, exit 1", async () => {
      const r = await runCli(["tenant", "list"], {
        env: { CFGTOOL_SERVER: "http://127.0.0.1:9", CFGTOOL_TOKEN: inst.admin },
      });
      assertEquals(r.code, 1);
      assertStringIncludes(r.stderr, "cannot reach");
      assert(!r.stderr.includes("    at "));
    });
  } finally {
    await inst.close();
    await Deno.remove(work, { recursive: true });
  }
});
