/**
 * Upgrading over versions an earlier release stored: such a version may
 * break rules added since (a `matches` pattern RE2 cannot compile, a segment
 * chain deeper than the limit, more environments than the limit). A real
 * server keeps evaluating and serving it; pushing the same content, or
 * rolling back to it, is refused with the problems named. A store whose
 * sign-ins predate the people index gets it filled once, at start.
 */
import { assert, assertEquals } from "../assert.ts";
import { unpackArchive } from "../../lib/closure/archive.ts";
import { encodeSubscription } from "../../lib/protocol/subscription.ts";
import type { Environment } from "../../lib/flags/model.ts";
import { openKv } from "../../lib/store/kv.ts";
import { headKey, sessionKey, versionKey } from "../../lib/store/keys.ts";
import { auditLoginSucceeded } from "../../lib/login/sign_in.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { ulid } from "../../lib/store/ulid.ts";
import { commitVersion } from "../store/commit.ts";
import {
  OLDER_ENVIRONMENTS,
  olderReleaseFiles,
  olderReleaseFileSet,
} from "../flags/older_release_fixture.ts";
import { evalPath } from "./evaluation_fixture.ts";
import { runCli, startInstallation } from "./installation.ts";
import { type ServerProcess, startServer } from "./server_process.ts";

/**
 * Writes the older release's manifest as version 1, straight into the KV
 * file, as that release stored it (no validation, all 101 environments in
 * the metadata).
 */
async function writeAsOlderRelease(kvPath: string): Promise<void> {
  const kv = await openKv(kvPath);
  try {
    await commitVersion(kv, {
      tenant: "acme",
      namespace: "web",
      files: olderReleaseFileSet(),
      environments: {},
      created_by: "test",
      message: "pushed with the earlier release",
    });
    const environments: Record<string, Environment> = {};
    const names = ["production", ...Array.from({ length: 100 }, (_, i) => `env-${i + 1}`)];
    for (const e of names) environments[e] = { public_evaluate: false };
    assertEquals(names.length, OLDER_ENVIRONMENTS);
    for (const key of [headKey("acme", "web"), versionKey("acme", "web", 1)]) {
      const entry = await kv.get<Record<string, unknown>>(key);
      assert(entry.value !== null, `no ${key.join("/")}`);
      await kv.set(key, { ...entry.value, environments });
    }
  } finally {
    kv.close();
  }
}

Deno.test("a version stored by an earlier release keeps evaluating after an upgrade; pushing or rolling back to it is 422", async (t) => {
  const inst = await startInstallation();
  try {
    const admin = inst.admin;
    assertEquals((await inst.api("POST", "/api/v1/tenants", admin, { slug: "acme" })).status, 201);
    const base = "/api/v1/tenants/acme/namespaces/web";
    assertEquals(
      (await inst.api("POST", "/api/v1/tenants/acme/namespaces", admin, { slug: "web" })).status,
      201,
    );
    await writeAsOlderRelease(inst.kvPath);

    await t.step(
      "evaluate answers 200: the deep chain evaluates, the JS-only pattern never matches",
      async () => {
        const evaluate = async (env: string, flag: string, context: Record<string, unknown>) => {
          const res = await inst.api("POST", evalPath("acme", "web", env), admin, {
            flag,
            context,
          });
          assertEquals(res.status, 200, JSON.stringify(res.body));
          return [res.body.value, res.body.reason, res.body.version];
        };
        assertEquals(await evaluate("production", "deep", { plan: "pro" }), [
          true,
          "TARGETING_MATCH",
          1,
        ]);
        assertEquals(await evaluate("env-100", "deep", { plan: "free" }), [false, "DEFAULT", 1]);
        // JavaScript would have matched "A"; RE2 cannot run the pattern, so it never holds
        assertEquals(await evaluate("production", "by-name", { name: "A" }), [false, "DEFAULT", 1]);
        const all = await inst.api("POST", evalPath("acme", "web", "env-50", true), admin, {
          context: { plan: "pro", name: "A" },
        });
        assertEquals(all.status, 200, JSON.stringify(all.body));
        assertEquals([all.body.flags.deep.value, all.body.flags["by-name"].value], [true, false]);
      },
    );

    await t.step("the server logs the pattern it cannot run, once", async () => {
      const warnings = (await inst.server.logsSettled()).split("\n")
        .filter((l) => l.includes("never hold"));
      assertEquals(warnings.length, 1, warnings.join("\n"));
      const line = JSON.parse(warnings[0]!);
      assertEquals([line.level, line.namespace, line.version], ["warn", "web", 1]);
      assertEquals(line.warnings[0].path, "segments/js.toml");
    });

    await t.step("its closure is served (the stream and the SDK's path)", async () => {
      const res = await fetch(
        `${inst.url}${base}/closure?version=1&subscription=${encodeSubscription(["deep"])}`,
        { headers: { authorization: `Bearer ${admin}` } },
      );
      assertEquals(res.status, 200);
      const files = await unpackArchive(new Uint8Array(await res.arrayBuffer()));
      assertEquals(files.has("flags/deep.toml") && files.has("segments/s39.toml"), true);
      assertEquals(files.has("flags/by-name.toml"), false);
    });

    await t.step("pushing the same content is 422 naming each problem", async () => {
      const res = await inst.api("PUT", `${base}/manifest`, admin, { files: olderReleaseFiles() });
      assertEquals(res.status, 422, JSON.stringify(res.body));
      assertEquals(res.body.code, "invalid_manifest");
      assertEquals(
        res.body.details.problems.map((p: { path: string; key: string }) => `${p.path} ${p.key}`),
        [
          "namespace.toml namespace.environments",
          "segments/js.toml predicate[0].value",
          "segments/s0.toml predicate[0].attribute",
        ],
      );
    });

    await t.step("rolling back to it is 422 and makes no new version", async () => {
      const ok = await inst.api("PUT", `${base}/manifest`, admin, {
        files: { "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n" },
      });
      assertEquals(ok.status, 201, JSON.stringify(ok.body));
      assertEquals(ok.body.version, 2);
      const res = await inst.api("POST", `${base}/rollback`, admin, { version: 1 });
      assertEquals(res.status, 422, JSON.stringify(res.body));
      assertEquals(res.body.code, "invalid_manifest");
      assertEquals(res.body.details.problems.length, 3);
      const head = await inst.api("POST", evalPath("acme", "web", "production"), admin, {
        flag: "deep",
        context: {},
      });
      assertEquals([head.status, head.body.version, head.body.error_code], [
        200,
        2,
        "FLAG_NOT_FOUND",
      ]);
    });
  } finally {
    await inst.close();
  }
});

Deno.test("a store from before the people index: the server fills it once at start from sessions and sign-ins", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-e2e-people-" });
  const kvPath = `${dir}/kv.sqlite3`;
  let server: ServerProcess | null = null;
  try {
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(boot.code, 0, boot.stderr);
    const admin = boot.stdout.trim().split("\n").at(-1)!;
    // what an earlier release left: a session admitted to acme, a sign-in in acme's audit log
    const kv = await openKv(kvPath);
    const ids: Record<string, string> = {};
    try {
      const t0 = Date.now() - 3_600_000;
      await createTenant(kv, { slug: "acme", created_by: "test", now: () => new Date(t0) });
      const ana = await createUser(kv, { email: "ana@acme.test" });
      const bo = await createUser(kv, { email: "bo@acme.test" });
      [ids.ana, ids.bo] = [ana.id, bo.id];
      const created = new Date(t0 + 60_000).toISOString();
      const id = `ssn_${ulid(t0 + 60_000)}`;
      await kv.set(sessionKey(id), {
        id,
        user_id: ana.id,
        prefix: "ses_old",
        digest: "old",
        created_at: created,
        expires_at: new Date(t0 + 7_200_000).toISOString(),
        tenants: ["acme"],
        login_method: "oidc",
        assurance: [],
        groups: [],
        client: "browser",
        last_seen_at: created,
        idle_timeout_ms: null,
        ip_hash: null,
      });
      await auditLoginSucceeded(kv, bo.id, new Date(t0 + 120_000), { requestId: "old" }, "acme", {
        method: "email",
        client: "cli",
      });
      await kv.delete(["people_backfill"]); // the earlier release had no index at all
      for await (const e of kv.list({ prefix: ["tenant_person"] })) await kv.delete(e.key);
      for await (const e of kv.list({ prefix: ["tenant_person_by_user"] })) await kv.delete(e.key);
    } finally {
      kv.close();
    }

    const people = async (url: string) => {
      const res = await fetch(`${url}/api/v1/users?tenant=acme`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      assertEquals(res.status, 200);
      return (await res.json()).users as Record<string, unknown>[];
    };
    server = await startServer({ kv: kvPath });
    let listed: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && listed.length < 2; i++) {
      listed = await people(server.url);
      if (listed.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(
      listed.map((u) => [u.id, u.last_sign_in_method, u.last_sign_in_client]),
      [[ids.ana, "oidc", "browser"], [ids.bo, "email", "cli"]],
    );
    const once = (logs: string) =>
      logs.split("\n").filter((l) => l.includes("people index backfilled"));
    const lines = once(await server.logsSettled());
    assertEquals(lines.length, 1, lines.join("\n"));
    const line = JSON.parse(lines[0]!);
    assertEquals(
      [line.level, line.sessions_read, line.sign_in_entries_read, line.people_records_written],
      ["info", 1, 1, 2],
    );
    await server.stop();

    // started again, it does not backfill again
    server = await startServer({ kv: kvPath });
    assertEquals((await people(server.url)).length, 2);
    assertEquals(once(await server.logsSettled()), []);
  } finally {
    await server?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
