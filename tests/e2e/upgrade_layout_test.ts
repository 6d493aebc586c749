/**
 * Upgrading across store layouts, with real processes (tests/e2e/upgrade_test.ts
 * covers versions stored under older manifest rules and the people index):
 *
 * - `cfgtool admin bootstrap` and `cfgtool serve` record the layout of a new
 *   store, and of a store an earlier release wrote (data, no layout record);
 * - a store written by a newer cfgtool is refused by `serve` and the admin
 *   commands, exit status 3, naming the cfgtool to run, and nothing is
 *   written;
 * - a store of the previous layout (a test-only layout change,
 *   tests/store/layout_fixture.ts, served by tests/e2e/layout_server_main.ts)
 *   is migrated before the server listens: a process that crashes mid-way
 *   leaves the batches it committed, two processes started next share the
 *   rest (one migrates, each item exactly once), and the migration is in
 *   the audit log once.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { openKv } from "../../lib/store/kv.ts";
import { layoutKey } from "../../lib/store/keys.ts";
import { readLayout } from "../../lib/store/layout.ts";
import { LAYOUT_VERSION } from "../../lib/store/layout_migrations.ts";
import { migrationProgress } from "../../lib/store/layout_runner.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { VERSION } from "../../lib/version.ts";
import { NOTES_MIGRATION_ID, notesState, writeLegacyNotes } from "../store/layout_fixture.ts";
import { runCli } from "./installation.ts";
import { type ServerProcess, startServer } from "./server_process.ts";

const MAIN = new URL("./layout_server_main.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** Runs `fn` with a temporary directory, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-e2e-layout-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Opens the KV file, runs `fn` on it, closes it. */
async function withKv<T>(path: string, fn: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await openKv(path);
  try {
    return await fn(kv);
  } finally {
    kv.close();
  }
}

/** Every key of the store, encoded for comparison. */
function allKeys(path: string): Promise<string[]> {
  return withKv(path, async (kv) => {
    const keys: string[] = [];
    for await (const e of kv.list({ prefix: [] })) keys.push(JSON.stringify(e.key));
    return keys;
  });
}

/** A process of tests/e2e/layout_server_main.ts. */
interface LayoutServer {
  /** Resolves with its URL once it listens; rejects when it exits first. */
  listening: Promise<string>;
  /** Its exit status. */
  status: Promise<Deno.CommandStatus>;
  /** What it logged (JSON lines on stderr) so far. */
  logs(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number>;
}

/** Starts tests/e2e/layout_server_main.ts on the KV file. */
function startLayoutServer(kvPath: string, env: Record<string, string> = {}): LayoutServer {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, MAIN, kvPath],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  let out = "";
  let err = "";
  const decoder = () => new TextDecoder();
  let resolveUrl!: (url: string) => void;
  let rejectUrl!: (e: Error) => void;
  const listening = new Promise<string>((res, rej) => {
    resolveUrl = res;
    rejectUrl = rej;
  });
  listening.catch(() => {}); // a crash test never awaits it
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    const dec = decoder();
    for await (const chunk of stream) {
      if (!isOut) {
        err += dec.decode(chunk, { stream: true });
        continue;
      }
      out += dec.decode(chunk, { stream: true });
      const m = out.match(/listening on (https?:\/\/\S+)/);
      if (m) resolveUrl(m[1]!);
    }
  };
  const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  const status = child.status.then(async (s) => {
    await pumps;
    rejectUrl(new Error(`exited with ${s.code} before listening:\n${err}`));
    return s;
  });
  return {
    listening,
    status,
    logs: () => err,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      return (await status).code;
    },
  };
}

/** The JSON log lines with this message. */
function logLines(logs: string, msg: string): Record<string, unknown>[] {
  return logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg);
}

Deno.test("admin bootstrap and serve record the layout of a new store, and of a store an earlier release wrote", async () => {
  await inTempDir(async (dir) => {
    const kvPath = `${dir}/kv.sqlite3`;
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(boot.code, 0, boot.stderr);
    const recorded = await withKv(kvPath, readLayout);
    assertEquals([recorded?.version, recorded?.written_by], [LAYOUT_VERSION, VERSION]);

    // what an earlier release leaves: the same data, no layout record
    await withKv(kvPath, (kv) => kv.delete(layoutKey()));
    let server: ServerProcess | null = await startServer({ kv: kvPath });
    try {
      assertEquals((await fetch(`${server.url}/healthz`).then((r) => r.json())).status, "ok");
      const line = logLines(await server.logsSettled(), "recorded the store layout");
      assertEquals(line.map((l) => [l.layout, l.store]), [[1, "unrecorded"]]);
      assertEquals(await server.stop(), 0);
      server = null;
      const again = await withKv(kvPath, readLayout);
      assertEquals([again?.version, again?.written_by], [1, VERSION]);

      // started again: the layout is current, nothing is recorded or migrated
      server = await startServer({ kv: kvPath });
      const logs = await server.logsSettled();
      assertEquals(logLines(logs, "recorded the store layout"), []);
      assert(!logs.includes("migrat"), logs);
      assertEquals((await withKv(kvPath, readLayout))?.at, again?.at);
    } finally {
      await server?.stop();
    }
  });
});

Deno.test("a store written by a newer cfgtool: serve and admin commands exit 3 naming the cfgtool to run, and write nothing", async () => {
  await inTempDir(async (dir) => {
    const kvPath = `${dir}/kv.sqlite3`;
    await withKv(kvPath, async (kv) => {
      await createTenant(kv, { slug: "acme", created_by: "tok_1" });
      await kv.set(layoutKey(), {
        version: LAYOUT_VERSION + 1,
        written_by: "9.1.0",
        at: "2027-03-04T05:06:07.000Z",
      });
    });
    const before = await allKeys(kvPath);
    const runs = [
      await runCli(["serve", "--port", "0", "--kv", kvPath]),
      await runCli(["admin", "bootstrap", "--kv", kvPath]),
      await runCli(["admin", "user", "list", "--kv", kvPath]),
    ];
    for (const run of runs) {
      assertEquals(run.code, 3, run.stderr);
      const error = run.stderr.split("\n").find((l) => l.startsWith("error: "));
      assertEquals(
        error,
        `error: This store has layout version ${LAYOUT_VERSION + 1}, written by cfgtool 9.1.0 at ` +
          `2027-03-04T05:06:07.000Z; this cfgtool (${VERSION}) reads store layouts up to version ` +
          `${LAYOUT_VERSION}. Run cfgtool 9.1.0 or newer on this store. Store layouts are never ` +
          "migrated back: to run this version again, restore a backup taken before the upgrade " +
          "into a new --kv path",
      );
      assertEquals(run.stdout.includes("listening"), false);
    }
    assertEquals(await allKeys(kvPath), before);
    const files = [];
    for await (const e of Deno.readDir(dir)) files.push(e.name);
    assertEquals(files.includes("token.key"), false, "no token key was made");
  });
});

Deno.test("a store of the previous layout is migrated before serving: after a crash mid-way, two processes finish it, each item once, audited once", async () => {
  await inTempDir(async (dir) => {
    const kvPath = `${dir}/kv.sqlite3`;
    // the previous layout: a store in use (a superadmin, layout 1 recorded) with notes
    // in layout 1's shape, written straight into the KV
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(boot.code, 0, boot.stderr);
    const admin = boot.stdout.trim().split("\n").at(-1)!;
    await withKv(kvPath, (kv) => writeLegacyNotes(kv, 45));

    // a process that dies while it makes its third batch (batches of 10)
    const crashed = startLayoutServer(kvPath, { LAYOUT_CRASH_AT_BATCH: "3" });
    assertEquals((await crashed.status).code, 70, crashed.logs());
    await withKv(kvPath, async (kv) => {
      assertEquals((await readLayout(kv))?.version, 1);
      const p = await migrationProgress(kv, NOTES_MIGRATION_ID);
      assertEquals([p?.state, p?.items, p?.batches], ["running", 20, 2]);
      const state = await notesState(kv);
      assertEquals([state.legacy, state.moved], [25, 20]);
    });

    // two processes started next: one takes over once the dead one's lease lapses
    const servers = [startLayoutServer(kvPath), startLayoutServer(kvPath)];
    try {
      const urls = await Promise.all(servers.map((s) => s.listening));
      for (const url of urls) {
        assertEquals((await fetch(`${url}/healthz`).then((r) => r.json())).status, "ok");
      }
      const finished = servers.flatMap((s) =>
        logLines(s.logs(), "store layout migration finished")
      );
      assertEquals(finished.map((l) => [l.migration, l.items, l.batches]), [[
        NOTES_MIGRATION_ID,
        45,
        5,
      ]]);
      await withKv(kvPath, async (kv) => {
        const record = await readLayout(kv);
        assertEquals([record?.version, record?.written_by], [2, VERSION]);
        const state = await notesState(kv);
        assertEquals([state.legacy, state.moved], [0, 45]);
        assertEquals(Object.values(state.migrations), Array(45).fill(1));
      });

      // the audit log holds the start and the end once, for a superadmin to read
      const audit = await fetch(`${urls[0]}/api/v1/audit?limit=10`, {
        headers: { authorization: `Bearer ${admin}` },
      }).then((r) => r.json());
      const entries = (audit.entries as Record<string, unknown>[])
        .filter((e) => String(e.type).startsWith("store.migration_")).reverse();
      assertEquals(
        entries.map((e) => [e.type, e.actor_id, (e.details as Record<string, unknown>).migration]),
        [
          ["store.migration_started", "upgrade", NOTES_MIGRATION_ID],
          ["store.migration_finished", "upgrade", NOTES_MIGRATION_ID],
        ],
      );
      assertStringIncludes(JSON.stringify(entries[1]), '"items":45');
    } finally {
      for (const code of await Promise.all(servers.map((s) => s.stop()))) assertEquals(code, 0);
    }
  });
});
