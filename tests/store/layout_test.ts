/**
 * The store layout (lib/store/layout.ts) and its migration runner
 * (lib/store/layout_runner.ts): a new store is recorded at this release's
 * layout, an unrecorded one at layout 1, a newer one is refused without a
 * write; an older one (a test-only layout 2, tests/store/layout_fixture.ts)
 * migrates in bounded batches, resumes after a stop or a failed batch with
 * each item migrated exactly once, is audited once per start and finish,
 * and is run by one process while another waits, or takes over from a
 * holder that died.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { exitCodeFor } from "../../lib/cli/exit.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { restorableKey } from "../../lib/store/backup/keys.ts";
import { layoutKey, migrationKey, migrationLeaseKey } from "../../lib/store/keys.ts";
import {
  prepareLayout,
  readLayout,
  recordLayout,
  StoreLayoutError,
} from "../../lib/store/layout.ts";
import {
  CURRENT_LAYOUT,
  LAYOUT_VERSION,
  migrationPath,
} from "../../lib/store/layout_migrations.ts";
import {
  MIGRATION_AUDIT_TYPES,
  migrationProgress,
  migrationStep,
} from "../../lib/store/layout_runner.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { VERSION } from "../../lib/version.ts";
import { NOTES_MIGRATION_ID, notesLayout, notesState, writeLegacyNotes } from "./layout_fixture.ts";

/** A store at layout 1 with `count` notes in layout 1's shape. */
async function previousLayoutStore(count: number): Promise<Deno.Kv> {
  const kv = await Deno.openKv(":memory:");
  await recordLayout(kv, { version: 1, written_by: "0.1.0", at: "2026-11-24T09:00:00.000Z" });
  await writeLegacyNotes(kv, count);
  return kv;
}

/** Every key of the store, encoded for comparison. */
async function allKeys(kv: Deno.Kv): Promise<string[]> {
  const keys: string[] = [];
  for await (const e of kv.list({ prefix: [] })) keys.push(JSON.stringify(e.key));
  return keys;
}

/** The migration's audit entries, oldest first, as `type from->to`. */
async function migrationAudit(kv: Deno.Kv): Promise<string[]> {
  const entries = (await listAudit(kv)).items.reverse();
  return entries
    .filter((e) => e.type.startsWith("store.migration_"))
    .map((e) => `${e.type} ${e.details.migration} ${e.details.from}->${e.details.to}`);
}

const FAST = { pollMs: 10, leaseMs: 1_000 };

Deno.test("a new store is recorded at this release's layout, with the cfgtool that recorded it", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const first = await prepareLayout(kv);
    assertEquals([first.found, first.from, first.version], ["new", LAYOUT_VERSION, LAYOUT_VERSION]);
    const record = await readLayout(kv);
    assertEquals([record?.version, record?.written_by], [LAYOUT_VERSION, VERSION]);
    assert(!Number.isNaN(Date.parse(record!.at)));
    assertEquals(await allKeys(kv), [JSON.stringify(layoutKey())]);
    // opened again: nothing to do, nothing written
    assertEquals((await prepareLayout(kv, { writtenBy: "9.9.9" })).found, "current");
    assertEquals((await readLayout(kv))?.written_by, VERSION);
  } finally {
    kv.close();
  }
});

Deno.test("a store with data but no layout record was written before layouts were recorded: it is layout 1", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["token_key_check"], "9f2c"); // what a process writes on opening: not data
    assertEquals((await prepareLayout(kv, { layout: notesLayout() })).found, "new");
    await kv.delete(layoutKey());
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    const found = await prepareLayout(kv);
    assertEquals([found.found, found.from, found.version], ["unrecorded", 1, LAYOUT_VERSION]);
    assertEquals((await readLayout(kv))?.version, 1);
  } finally {
    kv.close();
  }
});

Deno.test("a store written by a newer cfgtool is refused (exit 3), naming the cfgtool to run; nothing is written", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(layoutKey(), {
      version: LAYOUT_VERSION + 1,
      written_by: "9.9.0",
      at: "2027-01-02T03:04:05.000Z",
    });
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    const before = await allKeys(kv);
    for (const migrate of [true, false]) {
      const err = await assertRejects(() => prepareLayout(kv, { migrate }), StoreLayoutError);
      assertEquals(err.code, "store_layout_newer");
      assertStringIncludes(err.message, `layout version ${LAYOUT_VERSION + 1}`);
      assertStringIncludes(err.message, "written by cfgtool 9.9.0 at 2027-01-02T03:04:05.000Z");
      assertStringIncludes(err.message, `this cfgtool (${VERSION})`);
      assertStringIncludes(err.message, "Run cfgtool 9.9.0 or newer on this store");
      assertStringIncludes(err.message, "never migrated back");
      assertEquals(err.details, {
        store_layout: LAYOUT_VERSION + 1,
        written_by: "9.9.0",
        layout: LAYOUT_VERSION,
        cfgtool_version: VERSION,
      });
      const lines: string[] = [];
      assertEquals(exitCodeFor(err, (l) => lines.push(l)), 3);
      assertEquals(lines, [`error: ${err.message}`]);
    }
    assertEquals(await allKeys(kv), before);
  } finally {
    kv.close();
  }
});

Deno.test("an older store migrates in bounded batches, each committed with its cursor, and is audited once", async () => {
  const kv = await previousLayoutStore(25);
  try {
    const layout = notesLayout();
    const migration = layout.migrations[0]!;
    const outcomes: string[] = [];
    for (;;) {
      const step = await migrationStep(kv, migration, { writtenBy: "0.2.0", batch: 10 });
      outcomes.push(step.outcome);
      const state = await notesState(kv);
      // what a batch wrote committed with the progress that counts it
      assertEquals(state.moved, step.progress?.items ?? 0);
      assertEquals(state.legacy + state.moved, 25);
      if (step.outcome === "finished") break;
      assertEquals((await readLayout(kv))?.version, 1);
    }
    assertEquals(outcomes, ["started", "batch", "batch", "finished"]);
    const progress = await migrationProgress(kv, NOTES_MIGRATION_ID);
    assertEquals(
      [progress?.state, progress?.items, progress?.batches, progress?.cursor],
      ["done", 25, 3, null],
    );
    const record = await readLayout(kv);
    assertEquals([record?.version, record?.written_by], [2, "0.2.0"]);
    assertEquals(await migrationAudit(kv), [
      `store.migration_started ${NOTES_MIGRATION_ID} 1->2`,
      `store.migration_finished ${NOTES_MIGRATION_ID} 1->2`,
    ]);
    const finished = (await listAudit(kv, { type: MIGRATION_AUDIT_TYPES.finished })).items[0]!;
    assertEquals([finished.actor_id, finished.principal_type, finished.tenant_slug], [
      "upgrade",
      "system",
      null,
    ]);
    assertEquals(finished.details, {
      migration: NOTES_MIGRATION_ID,
      from: 1,
      to: 2,
      cfgtool_version: "0.2.0",
      items: 25,
      batches: 3,
    });
    // done: another step changes nothing
    assertEquals(
      (await migrationStep(kv, migration, { writtenBy: "0.2.0" })).outcome,
      "already_done",
    );
    assertEquals(Object.values((await notesState(kv)).migrations), Array(25).fill(1));
  } finally {
    kv.close();
  }
});

Deno.test("a batch never holds more than the batch size", async () => {
  const kv = await previousLayoutStore(23);
  try {
    const sizes: number[] = [];
    const layout = notesLayout({ onBatch: (_n, items) => void sizes.push(items) });
    const done = await prepareLayout(kv, { layout, batch: 5, log: () => {} });
    assertEquals([done.found, done.from, done.version, done.migrated], [
      "older",
      1,
      2,
      [NOTES_MIGRATION_ID],
    ]);
    assertEquals(sizes, [5, 5, 5, 5, 3]);
    assertEquals(await readLayout(kv).then((r) => r?.version), 2);
  } finally {
    kv.close();
  }
});

Deno.test("a migration stopped mid-way resumes where it stopped: each item migrated exactly once", async () => {
  const kv = await previousLayoutStore(40);
  try {
    const stop = new AbortController();
    const lines: string[] = [];
    const log = (_level: string, msg: string) => lines.push(msg);
    const first = await prepareLayout(kv, {
      layout: notesLayout({ onBatch: (n) => n === 2 ? stop.abort("SIGTERM") : undefined }),
      batch: 10,
      signal: stop.signal,
      log,
      ...FAST,
    });
    assertEquals([first.stopped, first.version, first.migrated], [true, 1, []]);
    assertEquals(lines.at(-1), "store layout migration stopped");
    const midway = await migrationProgress(kv, NOTES_MIGRATION_ID);
    assertEquals([midway?.state, midway?.items, midway?.batches], ["running", 20, 2]);
    assertEquals((await notesState(kv)).moved, 20);
    assertEquals(await kv.get(migrationLeaseKey()).then((e) => e.value), null, "lease given back");

    // started again: the remaining 20 items, in two batches
    const second = await prepareLayout(kv, { layout: notesLayout(), batch: 10, log, ...FAST });
    assertEquals([second.stopped, second.version, second.migrated], [false, 2, [
      NOTES_MIGRATION_ID,
    ]]);
    const state = await notesState(kv);
    assertEquals([state.legacy, state.moved], [0, 40]);
    assertEquals(Object.values(state.migrations), Array(40).fill(1));
    assertEquals((await migrationProgress(kv, NOTES_MIGRATION_ID))?.batches, 4);
    assertEquals(await migrationAudit(kv), [
      `store.migration_started ${NOTES_MIGRATION_ID} 1->2`,
      `store.migration_finished ${NOTES_MIGRATION_ID} 1->2`,
    ]);
    assertEquals(lines.filter((l) => l === "store layout migration started").length, 1);
    assertEquals(lines.filter((l) => l === "store layout migration finished").length, 1);
  } finally {
    kv.close();
  }
});

Deno.test("a batch that fails (a crash before its commit) fails the start; the next start resumes without repeating", async () => {
  const kv = await previousLayoutStore(30);
  try {
    const failing = notesLayout({
      onBatch: (n) => {
        if (n === 3) throw new Error("disk on fire");
      },
    });
    await assertRejects(
      () => prepareLayout(kv, { layout: failing, batch: 10, ...FAST }),
      Error,
      "disk on fire",
    );
    assertEquals((await readLayout(kv))?.version, 1);
    assertEquals((await migrationProgress(kv, NOTES_MIGRATION_ID))?.items, 20);
    const again = await prepareLayout(kv, { layout: notesLayout(), batch: 10, ...FAST });
    assertEquals(again.version, 2);
    assertEquals(Object.values((await notesState(kv)).migrations), Array(30).fill(1));
  } finally {
    kv.close();
  }
});

Deno.test("two processes on one store: one migrates, the other waits for it, each item once", async () => {
  const kv = await previousLayoutStore(30);
  try {
    let waiting!: () => void;
    const someoneWaits = new Promise<void>((r) => (waiting = r));
    const logs: string[][] = [[], []];
    const start = (i: number) =>
      prepareLayout(kv, {
        // the migrating process holds its first batch until the other waits
        layout: notesLayout({ onBatch: (n) => n === 1 ? someoneWaits : undefined }),
        batch: 10,
        log: (_level, msg) => {
          logs[i]!.push(msg);
          if (msg === "waiting for another process to migrate the store layout") waiting();
        },
        ...FAST,
      });
    const [a, b] = await Promise.all([start(0), start(1)]);
    const [runner, waiter] = a.migrated.length > 0 ? [a, b] : [b, a];
    assertEquals([runner.migrated, runner.waited], [[NOTES_MIGRATION_ID], false]);
    assertEquals([waiter.migrated, waiter.waited, waiter.version], [[], true, 2]);
    assertEquals(
      logs.flat().filter((l) => l === "store layout migration finished").length,
      1,
    );
    assertEquals(Object.values((await notesState(kv)).migrations), Array(30).fill(1));
    assertEquals((await migrationAudit(kv)).length, 2);
  } finally {
    kv.close();
  }
});

Deno.test("a process that died holding the migration lease: another takes over once the lease lapses and resumes", async () => {
  const kv = await previousLayoutStore(30);
  try {
    const stop = new AbortController();
    await prepareLayout(kv, {
      layout: notesLayout({ onBatch: (n) => n === 1 ? stop.abort() : undefined }),
      batch: 10,
      signal: stop.signal,
      ...FAST,
    });
    assertEquals((await migrationProgress(kv, NOTES_MIGRATION_ID))?.items, 10);
    // what a killed process leaves: its lease, still valid for a moment
    await kv.set(migrationLeaseKey(), { holder: "killed", until: Date.now() + 300 });
    const lines: string[] = [];
    const taken = await prepareLayout(kv, {
      layout: notesLayout(),
      batch: 10,
      log: (_level, msg) => lines.push(msg),
      ...FAST,
    });
    assertEquals([taken.version, taken.waited, taken.migrated], [2, true, [NOTES_MIGRATION_ID]]);
    assert(lines.includes("waiting for another process to migrate the store layout"));
    assertEquals(Object.values((await notesState(kv)).migrations), Array(30).fill(1));
  } finally {
    kv.close();
  }
});

Deno.test("an admin command (migrate: false) refuses an older layout, says a migration runs, and writes nothing", async () => {
  const kv = await previousLayoutStore(20);
  try {
    const layout = notesLayout();
    const before = await allKeys(kv);
    const err = await assertRejects(
      () => prepareLayout(kv, { layout, migrate: false, writtenBy: "0.2.0" }),
      StoreLayoutError,
    );
    assertEquals(err.code, "store_layout_outdated");
    assertStringIncludes(err.message, "layout version 1, written by cfgtool 0.1.0");
    assertStringIncludes(err.message, "Start `cfgtool serve` of this version on the store first");
    assertEquals(exitCodeFor(err, () => {}), 1);
    assertEquals(await allKeys(kv), before);
    await migrationStep(kv, layout.migrations[0]!, { writtenBy: "0.2.0" }); // a serve started it
    const running = await assertRejects(
      () => prepareLayout(kv, { layout, migrate: false, writtenBy: "0.2.0" }),
      StoreLayoutError,
    );
    assertStringIncludes(running.message, "A migration to layout 2 is in progress");
  } finally {
    kv.close();
  }
});

Deno.test("a layout registry with a gap is refused before anything is written", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    const gap = { version: 3, migrations: notesLayout().migrations };
    await assertRejects(
      () => prepareLayout(kv, { layout: gap }),
      Error,
      "exactly one migration from layout 2 to 3",
    );
    assertEquals(await readLayout(kv), null);
  } finally {
    kv.close();
  }
});

Deno.test("this release's registry reaches its layout from layout 1; backups keep the layout records", () => {
  assertEquals(CURRENT_LAYOUT.version, LAYOUT_VERSION);
  assertEquals(migrationPath(CURRENT_LAYOUT, 1).length, LAYOUT_VERSION - 1);
  for (const key of [layoutKey(), migrationKey(NOTES_MIGRATION_ID), migrationLeaseKey()]) {
    assert(restorableKey(key), JSON.stringify(key));
  }
});
