/**
 * `cfgtool audit list` (lib/cli/audit.ts) through the real CLI against a
 * real `cfgtool serve`: the table and JSON lines with the API's filters and
 * paging, `--follow` printing a push made after it started and stopping at
 * Ctrl-C with exit 0, a principal the service refuses getting one clear
 * line and exit 1, usage mistakes exit 2, and server text printed without
 * control characters.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { CLI } from "../cli_process.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";
import {
  assertStatus,
  bodies,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
} from "../e2e/credentials_fixture.ts";
import { auditDetails, auditLine, auditTarget, sinceBefore } from "../../lib/cli/audit.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** A `cfgtool` process whose stdout is read as it comes, stopped with a signal. */
function follow(args: string[], env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", XDG_CONFIG_HOME: "/nonexistent/cfgtool-audit-test", ...env },
  }).spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>, isErr: boolean) => {
    const d = new TextDecoder();
    for await (const chunk of stream) {
      const text = (isErr ? d : decoder).decode(chunk, { stream: true });
      if (isErr) err += text;
      else out += text;
    }
  };
  const pumps = Promise.all([pump(child.stdout, false), pump(child.stderr, true)]);
  return {
    /** Waits (up to 30 s) until stdout matches. */
    async until(re: RegExp): Promise<string> {
      const end = Date.now() + 30_000;
      while (!re.test(out)) {
        if (Date.now() > end) {
          child.kill("SIGKILL");
          throw new Error(`no ${re} in 30 s; stdout:\n${out}\nstderr:\n${err}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    },
    /** Sends SIGINT and waits for the exit. */
    async interrupt(): Promise<{ code: number; stdout: string; stderr: string }> {
      child.kill("SIGINT");
      const status = await child.status;
      await pumps;
      return { code: status.code, stdout: out, stderr: err };
    },
  };
}

Deno.test("the table, the JSON lines and the cursor helpers read an entry as documented", () => {
  const e = {
    id: "01M80BXZF1WEEMJFF3D4ZNC9MX",
    timestamp: "2030-01-01T00:00:00.000Z",
    type: "manifest.rolled_back",
    actor_id: "usr_01M80BXWZ0000000000000000",
    result: "success" as const,
    tenant_slug: "acme",
    namespace_slug: "web",
    details: { version: 3, rolled_back_to: 1, message: "undo", file_count: 2, previous_version: 2 },
  };
  assertEquals(auditTarget(e), "acme/web");
  assertEquals(auditDetails(e), "version=3 rolled_back_to=1 message=undo file_count=2");
  assertMatch(
    auditLine(e),
    /^2030-01-01T00:00:00\.000Z {2}manifest\.rolled_back +usr_\S+ +acme\/web +version=3/,
  );
  // a cursor a few seconds back sorts before the id, and after older ids
  const back = sinceBefore(e.id, 5_000);
  assert(back < e.id && back.length === 26);
  assert(sinceBefore(e.id, 10_000) < back);
});

Deno.test("cfgtool audit list against a real server", async (t) => {
  const inst = await startInstallation();
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false });
    const read = await mint(inst, inst.admin, bodies("acme", "web", "production").read);

    await t.step("a table, newest first, with the changes and who made them", async () => {
      const r = await runCli(["audit", "list", "--tenant", "acme"], { env });
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assertMatch(lines[0]!, /^TIME +TYPE +ACTOR +TARGET +DETAILS$/);
      const types = lines.slice(1).map((l) => l.split(/\s+/)[1]);
      assertEquals(types, [
        "token.created",
        "manifest.pushed",
        "namespace.created",
        "tenant.created",
      ]);
      const push = lines.find((l) => l.includes("manifest.pushed"))!;
      assertStringIncludes(push, "acme/web");
      assertStringIncludes(push, "version=1 file_count=2");
      assertMatch(push, / tok_[0-9A-Z]{26} /);
      assertEquals(r.stderr, "");
    });

    await t.step("filters and paging: --type, --namespace, --limit and --after", async () => {
      const one = await runCli(["audit", "list", "--tenant", "acme", "--limit", "1"], { env });
      assertEquals(one.code, 0, one.stderr);
      assertEquals(one.stdout.trimEnd().split("\n").length, 2);
      const cursor = one.stderr.match(/^\(more: --after ([0-9A-Z]{26})\)$/m)?.[1];
      assert(cursor !== undefined, one.stderr);
      const next = await runCli(
        ["audit", "list", "--tenant", "acme", "--limit", "1", "--after", cursor, "--json"],
        { env },
      );
      assertEquals(next.code, 0, next.stderr);
      assertEquals(JSON.parse(next.stdout).type, "manifest.pushed");
      const typed = await runCli(
        [
          "audit",
          "list",
          "--tenant",
          "acme",
          "--namespace",
          "web",
          "--type",
          "namespace.created",
          "--json",
        ],
        { env },
      );
      assertEquals(typed.code, 0, typed.stderr);
      const entries = typed.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
      assertEquals(entries.map((e) => e.type), ["namespace.created"]);
      assertEquals(entries[0].namespace_slug, "web");
      const byToken = await runCli(
        ["audit", "list", "--tenant", "acme", "--token-id", read.token.id, "--json"],
        { env },
      );
      assertEquals(byToken.stdout.trimEnd().split("\n").map((l) => JSON.parse(l).type), [
        "token.created",
      ]);
      const none = await runCli(["audit", "list", "--tenant", "acme", "--type", "tenant.deleted"], {
        env,
      });
      assertEquals(none.stdout, "(none)\n");
    });

    await t.step(
      "--follow prints the latest entries, then a push made after it started",
      async () => {
        const live = follow(
          ["audit", "list", "--tenant", "acme", "--follow", "--limit", "2", "--interval", "1s"],
          env,
        );
        const first = await live.until(/manifest\.pushed/);
        const shown = first.trimEnd().split("\n");
        // the header, then the two latest, oldest first
        assertEquals(shown.slice(1).map((l) => l.split(/\s+/)[1]), [
          "manifest.pushed",
          "token.created",
        ]);
        const res = await inst.api(
          "PUT",
          "/api/v1/tenants/acme/namespaces/web/manifest",
          inst.admin,
          {
            files: { "namespace.toml": "schema_version = 1\n[namespace.environments.staging]\n" },
            message: "pushed while following",
          },
        );
        assertStatus(res, 201);
        await live.until(/pushed while following/);
        const done = await live.interrupt();
        assertEquals(done.code, 0, done.stderr);
        const lines = done.stdout.trimEnd().split("\n");
        assertStringIncludes(lines.at(-1)!, "manifest.pushed");
        assertStringIncludes(
          lines.at(-1)!,
          'version=2 message="pushed while following" file_count=1',
        );
        assertEquals(lines.filter((l) => l.includes("pushed while following")).length, 1);
        assertEquals(done.stderr, "");
      },
    );

    await t.step("--follow --json prints new entries as JSON lines, oldest first", async () => {
      const live = follow(
        [
          "audit",
          "list",
          "--tenant",
          "acme",
          "--follow",
          "--json",
          "--limit",
          "1",
          "--interval",
          "1s",
        ],
        env,
      );
      await live.until(/pushed while following/); // the latest entry: it is following now
      for (const slug of ["n1", "n2"]) await createNamespace(inst, "acme", slug);
      await live.until(/"namespace_slug":"n2"/);
      const done = await live.interrupt();
      assertEquals(done.code, 0, done.stderr);
      const entries = done.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
      assertEquals(entries.map((e) => `${e.type} ${e.namespace_slug}`), [
        "manifest.pushed web",
        "namespace.created n1",
        "namespace.created n2",
      ]);
    });

    await t.step("a namespace-read token is refused: one clear line, exit 1", async () => {
      for (const extra of [[], ["--follow"]]) {
        const r = await runCli(["audit", "list", ...extra], {
          env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: read.secret },
        });
        assertEquals(r.code, 1, `${extra}: ${r.stderr}`);
        assertStringIncludes(r.stderr, "error: Not allowed to read the audit log in acme");
        assertEquals(r.stdout, "");
      }
    });

    await t.step("usage mistakes exit 2 before any request", async () => {
      const after = await runCli([
        "audit",
        "list",
        "--follow",
        "--after",
        "01M80BXZF1WEEMJFF3D4ZNC9MX",
      ], {
        env,
      });
      assertEquals(after.code, 2);
      assertStringIncludes(after.stderr, "does not go with --follow");
      const zero = await runCli(["audit", "list", "--limit", "0"], { env });
      assertEquals(zero.code, 2);
      assertStringIncludes(zero.stderr, "--limit must be a whole number ≥ 1");
      const interval = await runCli(["audit", "list", "--follow", "--interval", "fast"], { env });
      assertEquals(interval.code, 2);
      assertStringIncludes(interval.stderr, "--interval must be a positive whole number");
    });

    await t.step("text the server stored is printed without control characters", async () => {
      const description = "Evil\u001b]0;owned\u0007 corp\u009b2J\nsecond line\u202e";
      assertStatus(
        await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "evil", description }),
        201,
      );
      const table = await runCli(["audit", "list", "--tenant", "evil"], { env });
      assertEquals(table.code, 0, table.stderr);
      // deno-lint-ignore no-control-regex
      assert(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/.test(table.stdout), table.stdout);
      assertEquals(table.stdout.trimEnd().split("\n").length, 2, "one line per entry");
      assertStringIncludes(table.stdout, "second line");
      const json = await runCli(["audit", "list", "--tenant", "evil", "--json"], { env });
      // deno-lint-ignore no-control-regex
      assert(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(json.stdout), json.stdout);
      assertEquals(JSON.parse(json.stdout).details.description, description);
    });

    await t.step("--help explains the output and shows examples", async () => {
      const r = await runCli(["audit", "list", "--help"]);
      assertEquals(r.code, 0);
      for (
        const text of ["--follow", "--token-id", "JSON lines", "Examples:", "cfgtool audit list"]
      ) {
        assertStringIncludes(r.stdout, text);
      }
    });
  } finally {
    await inst.close();
  }
});
