/**
 * `cfgtool admin backup|restore|check` through the real CLI, on the KV
 * file of a running `cfgtool serve` that keeps taking pushes, issuing
 * tokens, deleting namespaces and collecting their files while the backup
 * runs: the restored store passes the full check, and a server started on
 * it with the same key file authenticates the tokens and session the backup
 * holds, refuses the revoked token, and serves closures that hash to the
 * recorded closure hashes. A backup cut short or edited, and a restore into
 * a store that is not empty, are refused.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { unpackArchive } from "../../lib/closure/archive.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";
import { startServer } from "../e2e/server_process.ts";
import {
  assertStatus,
  bodies,
  createNamespace,
  createTenant,
  mint,
  type Minted,
} from "../e2e/credentials_fixture.ts";

const lastLine = (s: string) => s.trim().split("\n").at(-1)!.trim();

const NAMESPACE_TOML = `schema_version = 1
[namespace]
description = "backup test"
[namespace.environments.production]
public_evaluate = false
`;

function flag(description: string): string {
  return `schema_version = 1
description = "${description}"
type = "boolean"
default = "off"

[variations]
on = true
off = false
`;
}

/**
 * A flag file of about 200 KiB (four blob chunks of at most 60 KiB) whose
 * comments hold text of every UTF-8 width, so its blob is no plain ASCII.
 */
function bigFlag(seed: number): string {
  const alphabet = "abcXYZ019 éßøπЖж中文字🙂🚀\u00a0\u2028";
  const chars = [...alphabet];
  let x = seed;
  const lines: string[] = [];
  let size = 0;
  while (size < 200 * 1024) {
    let line = "# ";
    for (let i = 0; i < 90; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      line += chars[x % chars.length];
    }
    lines.push(line);
    size += new TextEncoder().encode(line).length + 1;
  }
  return lines.join("\n") + "\n" + flag(`big ${seed}`);
}

/** A minimal JSON client of one server. */
function client(url: string) {
  return async (method: string, path: string, token: string | null, body?: unknown) => {
    const headers = new Headers();
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    if (body !== undefined) headers.set("content-type", "application/json");
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    const json = (res.headers.get("content-type") ?? "").includes("json") && text !== ""
      ? JSON.parse(text)
      : text;
    return { status: res.status, headers: res.headers, body: json };
  };
}

Deno.test("a backup taken while the server works restores into a store that checks out and authenticates the same tokens", async (t) => {
  // The retention task every second: the blobs of the namespaces the load
  // deletes are marked and collected while the backup runs.
  const inst = await startInstallation({ args: ["--prune-interval-ms", "1000"] });
  const work = await Deno.makeTempDir({ prefix: "cfgtool-backup-test-" });
  const backup = `${work}/backup.jsonl`;
  const restoredKv = `${work}/restored/kv.sqlite3`;
  const keyFile = `${inst.dir}/token.key`;
  const live = client(inst.url);
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    const push = async (ns: string, files: Record<string, string>, message: string) => {
      const res = await live(
        "PUT",
        `/api/v1/tenants/acme/namespaces/${ns}/manifest`,
        inst.admin,
        { files, message },
      );
      assert(res.status === 201 || res.status === 200, `push ${ns}: ${JSON.stringify(res.body)}`);
    };
    for (let v = 1; v <= 3; v++) {
      await push("web", {
        "namespace.toml": NAMESPACE_TOML,
        "flags/big.toml": bigFlag(v),
        "flags/small.toml": flag(`web ${v}`),
      }, `web ${v}`);
    }
    await push("api", { "namespace.toml": NAMESPACE_TOML, "flags/a.toml": flag("api") }, "api");

    const b = bodies("acme", "web", "production");
    const read = await mint(inst, inst.admin, b.read);
    const write = await mint(inst, inst.admin, { ...b.write, namespace_slug: "api" });
    const tenantAdmin = await mint(inst, inst.admin, b.tenant);
    const revoked = await mint(inst, inst.admin, b.read);
    assertStatus(await live("DELETE", `/api/v1/tokens/${revoked.token.id}`, inst.admin), 200);
    const user = await runCli([
      "admin",
      "user",
      "create",
      "--kv",
      inst.kvPath,
      "--email",
      "ops@acme.test",
    ]);
    assertEquals(user.code, 0, user.stderr);
    const session = await runCli([
      "admin",
      "session",
      "create",
      "--kv",
      inst.kvPath,
      "--user",
      "ops@acme.test",
      "--ttl",
      "2h",
    ]);
    assertEquals(session.code, 0, session.stderr);
    const sessionSecret = lastLine(session.stdout);

    // Keep pushing (each push new content, the big file changing too),
    // issuing tokens, and creating, filling and deleting namespaces from
    // before the backup starts until it ends: a round of each, then a short
    // breath, so the load overlaps the backup without starving it.
    let busy = true;
    const issued: Minted[] = [];
    let pushes = 0;
    let roundDone!: () => void;
    const firstRound = new Promise<void>((resolve) => roundDone = resolve);
    const load = (async () => {
      for (let i = 0; busy; i++) {
        await push("web", {
          "namespace.toml": NAMESPACE_TOML,
          "flags/big.toml": bigFlag(100 + i),
          "flags/small.toml": flag(`load ${i}`),
        }, `load ${i}`);
        pushes++;
        issued.push(await mint(inst, inst.admin, b.read));
        await createNamespace(inst, "acme", `tmp-${i}`);
        await push(`tmp-${i}`, {
          "namespace.toml": NAMESPACE_TOML,
          "flags/tmp.toml": flag(`tmp ${i}`),
        }, "short-lived");
        assertStatus(
          await live("DELETE", `/api/v1/tenants/acme/namespaces/tmp-${i}`, inst.admin),
          200,
        );
        roundDone();
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    await t.step("admin backup on the live store writes a complete file, mode 0600", async () => {
      await Promise.race([firstRound, load]); // the load is under way (or failed)
      const r = await runCli(["admin", "backup", "--kv", inst.kvPath, "--out", backup]);
      busy = false;
      await load;
      assertEquals(r.code, 0, r.stderr);
      assertMatch(
        r.stdout,
        /^wrote .*backup\.jsonl: [\d,]+ entries, [\d.]+ (KiB|MiB), sha256 [0-9a-f]{64}$/m,
      );
      assertStringIncludes(r.stdout, `from a snapshot of ${inst.kvPath} taken `);
      assertStringIncludes(r.stdout, `the token key file; back it up separately (${keyFile})`);
      assertEquals((await Deno.stat(backup)).mode! & 0o777, 0o600);
      assert(pushes >= 1, "the load pushed while the backup ran");
      const leftovers = [...Deno.readDirSync(work)].map((e) => e.name);
      assertEquals(leftovers, ["backup.jsonl"], "no temporary file or snapshot is left behind");
    });

    await t.step(
      "admin restore into a new path writes it all and the full check passes",
      async () => {
        const r = await runCli(["admin", "restore", "--kv", restoredKv, "--in", backup]);
        assertEquals(r.code, 0, r.stdout + r.stderr);
        assertMatch(r.stdout, /^restored [\d,]+ entries into .*restored\/kv\.sqlite3 from /m);
        assertStringIncludes(r.stdout, "no problems found");
        assertMatch(
          r.stdout,
          /1 tenant, \d+ namespaces, \d+ versions \((\d+) hashed to their closure hash\)/,
        );
        const [, versions, hashed] = r.stdout.match(/(\d+) versions \((\d+) hashed/)!;
        assertEquals(hashed, versions, "every version's files hash to its closure hash");
        assertStringIncludes(r.stdout, `next: put the token key file`);
        const check = await runCli([
          "admin",
          "check",
          "--kv",
          restoredKv,
          "--token-key-file",
          keyFile,
        ]);
        assertEquals(check.code, 0, check.stdout + check.stderr);
        assertStringIncludes(
          check.stdout,
          `token key ${keyFile}: the key this store's tokens were digested with`,
        );
        assertStringIncludes(check.stdout, "no problems found");
      },
    );

    await t.step(
      "a server on the restored store, with the same key file, authenticates what the backup holds",
      async () => {
        await inst.server.stop();
        const server = await startServer({ kv: restoredKv, args: ["--token-key-file", keyFile] });
        try {
          const restored = client(server.url);
          for (const [name, m] of Object.entries({ read, write, tenantAdmin })) {
            const res = await restored("GET", `/api/v1/tokens/${m.token.id}`, m.secret);
            assertEquals(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
          }
          assertEquals((await restored("GET", "/api/v1/tenants", inst.admin)).status, 200);
          const refused = await restored(
            "GET",
            `/api/v1/tokens/${revoked.token.id}`,
            revoked.secret,
          );
          assertEquals(refused.status, 401, "the revoked token stays revoked");
          assertEquals((await restored("GET", "/api/v1/me", sessionSecret)).status, 200);
          // tokens issued during the backup: in the store and authenticating, or absent and refused
          let kept = 0;
          for (const m of issued) {
            const known = await restored("GET", `/api/v1/tokens/${m.token.id}`, inst.admin);
            const self = await restored("GET", `/api/v1/tokens/${m.token.id}`, m.secret);
            assertEquals(self.status, known.status === 200 ? 200 : 401, m.token.id);
            if (known.status === 200) kept++;
          }
          assert(kept <= issued.length);
          for (const ns of ["web", "api"]) {
            const base = `/api/v1/tenants/acme/namespaces/${ns}`;
            const by = tenantAdmin.secret;
            const head = (await restored("GET", base, by)).body.namespace.head;
            const meta =
              (await restored("GET", `${base}/versions/${head.version}`, by)).body.version;
            assertEquals(meta.closure_hash, head.closure_hash);
            const res = await fetch(
              `${server.url}${base}/closure?version=${head.version}&subscription=Kg`,
              {
                headers: { authorization: `Bearer ${by}` },
              },
            );
            assertEquals(res.status, 200, `${ns} closure`);
            const files = await unpackArchive(new Uint8Array(await res.arrayBuffer()));
            assertEquals(await closureHash(files), meta.closure_hash, `${ns} v${head.version}`);
            assertEquals(res.headers.get("etag"), `"v${head.version}-${meta.closure_hash}"`);
          }
        } finally {
          await server.stop();
        }
      },
    );

    await t.step(
      "with another key file the restored store refuses to start, and check says why",
      async () => {
        const other = `${work}/other.key`;
        await Deno.writeFile(other, crypto.getRandomValues(new Uint8Array(32)), { mode: 0o600 });
        const check = await runCli([
          "admin",
          "check",
          "--kv",
          restoredKv,
          "--token-key-file",
          other,
        ]);
        assertEquals(check.code, 1);
        assertStringIncludes(check.stdout, `token key ${other}: NOT the key`);
        assertStringIncludes(check.stderr, "1 problem found");
        let failure = "";
        try {
          const s = await startServer({ kv: restoredKv, args: ["--token-key-file", other] });
          await s.stop();
        } catch (err) {
          failure = (err as Error).message;
        }
        assertStringIncludes(failure, "is not the key this store's tokens were digested with");
      },
    );

    await t.step(
      "a restore into a store that is not empty is refused and writes nothing",
      async () => {
        const r = await runCli(["admin", "restore", "--kv", restoredKv, "--in", backup]);
        assertEquals(r.code, 1);
        assertStringIncludes(r.stderr, "is not empty");
        assertStringIncludes(r.stderr, "nothing was written");
      },
    );

    await t.step("a backup cut short or edited is refused before anything is written", async () => {
      const bytes = await Deno.readFile(backup);
      const cut = `${work}/cut.jsonl`;
      await Deno.writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
      const edited = `${work}/edited.jsonl`;
      const text = new TextDecoder().decode(bytes).replace('"ops@acme.test"', '"eve@acme.test"');
      await Deno.writeFile(edited, new TextEncoder().encode(text));
      const empty = (name: string) => `${work}/${name}/kv.sqlite3`;
      const r1 = await runCli(["admin", "restore", "--kv", empty("cut"), "--in", cut]);
      assertEquals(r1.code, 1);
      assertStringIncludes(r1.stderr, `${cut} is incomplete: it ends after`);
      const r2 = await runCli(["admin", "restore", "--kv", empty("edited"), "--in", edited]);
      assertEquals(r2.code, 1);
      assertStringIncludes(r2.stderr, `${edited} was changed after it was written`);
      for (const name of ["cut", "edited"]) {
        const created = await Deno.stat(`${work}/${name}`).then(() => true, () => false);
        assert(!created, `${name}: the target store was not even created`);
      }
    });
  } finally {
    await inst.close();
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("admin backup, restore and check explain themselves in --help", async () => {
  const backup = await runCli(["admin", "backup", "--help"]);
  assertEquals(backup.code, 0);
  assertStringIncludes(backup.stdout, "is NOT in the backup");
  assertStringIncludes(
    backup.stdout,
    "cfgtool admin backup --kv /var/lib/cfgtool/kv.sqlite3 --out",
  );
  const restore = await runCli(["admin", "restore", "--help"]);
  assertStringIncludes(restore.stdout, "Only into an empty store");
  assertStringIncludes(restore.stdout, "--token-key-file");
  assertStringIncludes(restore.stdout, "revocations made since are lost");
  assertStringIncludes(restore.stdout, "Tokens revoked after the backup are active");
  assertStringIncludes(restore.stdout, "must be protected like the store");
  assertStringIncludes(backup.stdout, "Sign-ins in progress");
  assertStringIncludes(backup.stdout, "is no protection against someone who means harm");
  const check = await runCli(["admin", "check", "--help"]);
  assertStringIncludes(check.stdout, "version's files hash to its closure hash");
});

Deno.test("admin backup of a store that does not exist, or to a missing directory, says so", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = await runCli([
      "admin",
      "backup",
      "--kv",
      `${dir}/none.sqlite3`,
      "--out",
      `${dir}/b.jsonl`,
    ]);
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, `There is no KV store at ${dir}/none.sqlite3`);
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    kv.close();
    const noDir = await runCli([
      "admin",
      "backup",
      "--kv",
      `${dir}/kv.sqlite3`,
      "--out",
      `${dir}/x/b.jsonl`,
    ]);
    assertEquals(noDir.code, 2);
    assertStringIncludes(noDir.stderr, `the directory ${dir}/x does not exist`);
    const notBackup = `${dir}/notes.txt`;
    await Deno.writeTextFile(notBackup, "hello\n");
    const r = await runCli(["admin", "restore", "--kv", `${dir}/r/kv.sqlite3`, "--in", notBackup]);
    assertEquals(r.code, 1);
    assertStringIncludes(r.stderr, "is not a cfgtool backup");
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert(!names.includes("r"), "a bad backup does not create the target store");
    assert(!names.some((n) => n.includes("b.jsonl") || n.startsWith(".cfgtool")), names.join());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
