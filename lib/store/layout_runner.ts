/**
 * Runs layout migrations (lib/store/layout_migrations.ts) on a store:
 * bounded, resumable, audited, and by one process of the installation at a
 * time.
 *
 * - **Bounded**: a migration goes in batches of at most `batch` items (100
 *   by default). Each batch is one atomic commit holding the batch's writes
 *   and the migration's progress record at `["meta", "migration", id]`
 *   with the cursor where the next batch starts; the commit checks the
 *   progress record as read, so of two runners only one moves the cursor,
 *   and an item is migrated exactly once.
 * - **Resumable**: a run cut short (a shutdown, a crash, a lost lease)
 *   leaves the cursor of its last commit; the next run goes on from there.
 * - **Audited**: the commit that starts a migration writes a
 *   `store.migration_started` audit entry, the commit of its last batch a
 *   `store.migration_finished` one (installation-level, actor `upgrade`),
 *   and moves the layout record at `["meta", "layout"]` to the
 *   migration's `to` version.
 * - **One process**: {@linkcode migrateLayout} runs the migrations under a
 *   KV lease at `["meta", "migration_lease"]` (lib/store/leased_task.ts);
 *   every other process waits, reading the layout record every `pollMs`
 *   and logging the progress it reads, until the layout is current. A
 *   holder that dies stops renewing its lease; once it lapses (`leaseMs`,
 *   15 s by default) a waiting process takes it over and resumes.
 *
 * Log lines (to the given logger): `store layout migration started`
 * (`migration`, `from`, `to`, `summary`), `store layout migration progress`
 * (`items`, `batches`, every `progressMs`), `store layout migration
 * finished` (`items`, `batches`, `ms`), `store layout migration stopped`
 * (cut short; it resumes at the next start), and, in a process that waits,
 * `waiting for another process to migrate the store layout`.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import { addAudit, type AuditActor, eventAuditEntry } from "./audit.ts";
import { layoutKey, migrationKey, migrationLeaseKey } from "./keys.ts";
import { startLeasedTask } from "./leased_task.ts";
import type { LayoutRecord } from "./layout.ts";
import {
  type Migration,
  migrationPath,
  type StoreLayout,
  UNRECORDED_LAYOUT_VERSION,
} from "./layout_migrations.ts";

/** Items one batch migrates at most, by default. */
export const MIGRATION_BATCH = 100;

/** The audit event types of a migration. */
export const MIGRATION_AUDIT_TYPES = Object.freeze({
  started: "store.migration_started",
  finished: "store.migration_finished",
});

/** The actor of a migration's audit entries. */
const UPGRADE: AuditActor = { id: "upgrade", principal_type: "system", request_id: null };

/** The progress of one migration, as stored at `["meta", "migration", id]`. */
export interface MigrationProgress {
  /** The migration's id. */
  id: string;
  /** Its layout versions. */
  from: number;
  to: number;
  /** `running` until its last batch commits, then `done`. */
  state: "running" | "done";
  /** Where the next batch starts (null: at the beginning, or done). */
  cursor: Deno.KvKey | null;
  /** Items migrated so far. */
  items: number;
  /** Batches committed so far. */
  batches: number;
  /** When it started, and which cfgtool started it. */
  started_at: string;
  started_by: string;
  /** When its last batch committed. */
  finished_at: string | null;
}

/** What one {@linkcode migrationStep} did. */
export type StepOutcome =
  /** the progress record and the `store.migration_started` entry were written */
  | "started"
  /** one batch committed; more follow */
  | "batch"
  /** the last batch committed: the layout is now the migration's `to` */
  | "finished"
  /** the layout is already at or past the migration's `to`: nothing to do */
  | "already_done"
  /** another runner committed first: nothing was written, read again */
  | "lost_race";

/** Options of {@linkcode migrationStep}. */
export interface StepOptions {
  /** The cfgtool version recorded as `started_by` and in the layout record's `written_by`. */
  writtenBy: string;
  /** The time recorded (default: now). */
  now?: Date;
  /** Items per batch (default {@linkcode MIGRATION_BATCH}). */
  batch?: number;
}

/**
 * One step of a migration: its start (progress record and audit entry),
 * or one batch, or its last batch (with the layout record and the audit
 * entry), each in one atomic commit checked against the progress and
 * layout records as read.
 *
 * @param kv the store
 * @param migration the migration
 * @param options the cfgtool version, clock, batch size
 * @returns what the step did and the progress after it
 *
 * @example
 * ```ts
 * import { migrationStep } from "./layout_runner.ts";
 * import { recordLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * await recordLayout(kv, { version: 1, written_by: "0.1.0", at: new Date().toISOString() });
 * for (let i = 0; i < 3; i++) await kv.set(["old_item", i], i);
 * const migration = {
 *   id: "0002-example", from: 1, to: 2, summary: "each old_item gets a new_item",
 *   async batch({ kv, cursor, limit }: { kv: Deno.Kv; cursor: Deno.KvKey | null; limit: number }) {
 *     const prefix = ["old_item"];
 *     const found: Deno.KvEntry<number>[] = [];
 *     const selector = cursor === null ? { prefix } : { prefix, start: cursor };
 *     for await (const e of kv.list<number>(selector, { limit: limit + 1 })) found.push(e);
 *     const batch = found.slice(0, limit);
 *     return {
 *       items: batch.length,
 *       next: found[limit]?.key ?? null, // where the next batch starts
 *       write: (op: Deno.AtomicOperation) => {
 *         for (const e of batch) op.set(["new_item", e.key[1]!], e.value);
 *       },
 *     };
 *   },
 * };
 * const seen: string[] = [];
 * for (;;) {
 *   const step = await migrationStep(kv, migration, { writtenBy: "0.2.0", batch: 2 });
 *   seen.push(step.outcome);
 *   if (step.outcome === "finished") break;
 * }
 * if (seen.join() !== "started,batch,finished") throw new Error(seen.join());
 * if ((await kv.get(["new_item", 2])).value !== 2) throw new Error();
 * if ((await kv.get<{ version: number }>(["meta", "layout"])).value?.version !== 2) throw new Error();
 * kv.close();
 * ```
 */
export async function migrationStep(
  kv: Deno.Kv,
  migration: Migration,
  options: StepOptions,
): Promise<{ outcome: StepOutcome; progress: MigrationProgress | null }> {
  const now = options.now ?? new Date();
  const limit = options.batch ?? MIGRATION_BATCH;
  const [progressEntry, layoutEntry] = await kv.getMany<[MigrationProgress, LayoutRecord]>([
    migrationKey(migration.id),
    layoutKey(),
  ]);
  const version = layoutEntry.value?.version ?? UNRECORDED_LAYOUT_VERSION;
  const progress = progressEntry.value;
  if (version >= migration.to) return { outcome: "already_done", progress };
  if (version !== migration.from) {
    throw new Error(
      `migration ${migration.id} takes layout ${migration.from} to ${migration.to}, ` +
        `but the store's layout is ${version}`,
    );
  }
  const op = kv.atomic().check(progressEntry).check(layoutEntry);
  if (progress === null || progress.state === "done") {
    // a `done` record at the migration's `from` layout: a store restored from a
    // backup taken between two commits cannot hold one; start over all the same
    const started: MigrationProgress = {
      id: migration.id,
      from: migration.from,
      to: migration.to,
      state: "running",
      cursor: null,
      items: 0,
      batches: 0,
      started_at: now.toISOString(),
      started_by: options.writtenBy,
      finished_at: null,
    };
    op.set(migrationKey(migration.id), started);
    addAudit(op, auditEntry(MIGRATION_AUDIT_TYPES.started, migration, started, now));
    const res = await op.commit();
    return res.ok ? { outcome: "started", progress: started } : { outcome: "lost_race", progress };
  }
  const batch = await migration.batch({ kv, cursor: progress.cursor, limit });
  if (!Number.isInteger(batch.items) || batch.items < 0 || batch.items > limit) {
    throw new Error(
      `migration ${migration.id} returned a batch of ${batch.items} items; a batch holds at most ${limit}`,
    );
  }
  if (batch.next !== null && progress.cursor !== null && sameKey(batch.next, progress.cursor)) {
    throw new Error(
      `migration ${migration.id} returned the cursor it was given: it would never end`,
    );
  }
  batch.write(op);
  const last = batch.next === null;
  const next: MigrationProgress = {
    ...progress,
    cursor: batch.next,
    items: progress.items + batch.items,
    batches: progress.batches + 1,
    ...(last ? { state: "done" as const, finished_at: now.toISOString() } : {}),
  };
  op.set(migrationKey(migration.id), next);
  if (last) {
    const record: LayoutRecord = {
      version: migration.to,
      written_by: options.writtenBy,
      at: now.toISOString(),
    };
    op.set(layoutKey(), record);
    addAudit(op, auditEntry(MIGRATION_AUDIT_TYPES.finished, migration, next, now));
  }
  const res = await op.commit();
  if (!res.ok) return { outcome: "lost_race", progress };
  return { outcome: last ? "finished" : "batch", progress: next };
}

/** The audit entry of a migration's start or end. */
function auditEntry(type: string, m: Migration, p: MigrationProgress, now: Date) {
  return eventAuditEntry(type, UPGRADE, now, {
    details: {
      migration: m.id,
      from: m.from,
      to: m.to,
      cfgtool_version: p.started_by,
      ...(p.state === "done" ? { items: p.items, batches: p.batches } : { summary: m.summary }),
    },
  });
}

/** Whether two KV keys are the same key. */
function sameKey(a: Deno.KvKey, b: Deno.KvKey): boolean {
  if (a.length !== b.length) return false;
  return a.every((part, i) => {
    const other = b[i];
    if (part instanceof Uint8Array && other instanceof Uint8Array) {
      return part.length === other.length && part.every((byte, j) => byte === other[j]);
    }
    return part === other;
  });
}

/**
 * Reads a migration's progress record (null before it started).
 *
 * @param kv the store
 * @param id the migration's id
 * @returns the progress, or null
 *
 * @example
 * ```ts
 * import { migrationProgress } from "./layout_runner.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await migrationProgress(kv, "0002-example") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function migrationProgress(
  kv: Deno.Kv,
  id: string,
): Promise<MigrationProgress | null> {
  return (await kv.get<MigrationProgress>(migrationKey(id))).value;
}

/** Options of {@linkcode runMigration}. */
export interface RunOptions {
  /** The cfgtool version recorded with the migration. */
  writtenBy: string;
  /** Where progress goes. */
  log: Logger;
  /** Ends the run between two batches. */
  signal?: AbortSignal;
  /** Clock for the records (default: the system clock). */
  now?: () => Date;
  /** Items per batch (default {@linkcode MIGRATION_BATCH}). */
  batch?: number;
  /** How often a progress line is logged, ms (default 10 s). */
  progressMs?: number;
}

/** Commits lost to another runner in a row before a run gives up (it never happens in practice). */
const MAX_LOST_RACES = 100;

/** Default interval between two progress lines, ms. */
const PROGRESS_MS = 10_000;

/**
 * Runs one migration to its end, batch after batch, or until `signal` is
 * aborted (then it returns at the next batch; the next run resumes there).
 *
 * @param kv the store
 * @param migration the migration
 * @param options the cfgtool version, logger, signal, clock, batch size
 * @returns how the run ended and the progress then
 *
 * @example
 * ```ts
 * import { runMigration } from "./layout_runner.ts";
 * import { recordLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * await recordLayout(kv, { version: 1, written_by: "0.1.0", at: new Date().toISOString() });
 * const nothing = {
 *   id: "0002-nothing", from: 1, to: 2, summary: "changes nothing",
 *   batch: () => Promise.resolve({ items: 0, next: null, write: () => {} }),
 * };
 * const lines: string[] = [];
 * const run = await runMigration(kv, nothing, { writtenBy: "0.2.0", log: (_l, msg) => lines.push(msg) });
 * if (run.outcome !== "finished" || run.progress?.batches !== 1) throw new Error();
 * if (lines.join() !== "store layout migration started,store layout migration finished") throw new Error();
 * kv.close();
 * ```
 */
export async function runMigration(
  kv: Deno.Kv,
  migration: Migration,
  options: RunOptions,
): Promise<
  { outcome: "finished" | "already_done" | "stopped"; progress: MigrationProgress | null }
> {
  const fields = { migration: migration.id, from: migration.from, to: migration.to };
  const progressMs = options.progressMs ?? PROGRESS_MS;
  let lastLine = performance.now();
  let lost = 0;
  let progress: MigrationProgress | null = null;
  for (;;) {
    if (options.signal?.aborted) {
      const reason = options.signal.reason;
      options.log("info", "store layout migration stopped", {
        ...fields,
        items: progress?.items ?? 0,
        reason: typeof reason === "string" ? reason : "abort",
        note: "it resumes where it stopped at the next start",
      });
      return { outcome: "stopped", progress };
    }
    const step = await migrationStep(kv, migration, {
      writtenBy: options.writtenBy,
      now: options.now?.() ?? new Date(),
      ...(options.batch === undefined ? {} : { batch: options.batch }),
    });
    progress = step.progress ?? progress;
    lost = step.outcome === "lost_race" ? lost + 1 : 0;
    switch (step.outcome) {
      case "already_done":
        return { outcome: "already_done", progress };
      case "lost_race":
        if (lost >= MAX_LOST_RACES) {
          throw new Error(
            `migration ${migration.id}: ${lost} commits in a row found its records changed`,
          );
        }
        break;
      case "started":
        options.log("info", "store layout migration started", {
          ...fields,
          summary: migration.summary,
        });
        break;
      case "batch":
        if (performance.now() - lastLine >= progressMs) {
          lastLine = performance.now();
          options.log("info", "store layout migration progress", {
            ...fields,
            items: progress?.items ?? 0,
            batches: progress?.batches ?? 0,
          });
        }
        break;
      case "finished": {
        const p = step.progress!;
        options.log("info", "store layout migration finished", {
          ...fields,
          items: p.items,
          batches: p.batches,
          ms: Date.parse(p.finished_at ?? p.started_at) - Date.parse(p.started_at),
        });
        return { outcome: "finished", progress };
      }
    }
  }
}

/** Options of {@linkcode migrateLayout}. */
export interface MigrateOptions extends RunOptions {
  /** How long the migration lease lasts without a renewal, ms (default 15 s). */
  leaseMs?: number;
  /** How often a waiting process reads the layout again, ms (default 500). */
  pollMs?: number;
}

/** What {@linkcode migrateLayout} did. */
export interface MigrateOutcome {
  /** The store's layout version when it returned. */
  version: number;
  /** The migrations this process finished. */
  ran: string[];
  /** Whether it waited for another process's migration. */
  waited: boolean;
  /** Whether `signal` ended it before the layout was current. */
  stopped: boolean;
}

/** The lease length by default, ms. */
const LEASE_MS = 15_000;
/** A waiting process reads the layout this often by default, ms. */
const POLL_MS = 500;
/** The leased task never runs on its own timer: only when this process asks. */
const NEVER_MS = 2 ** 31 - 1;

/** The stored layout version (a store without a record is at the unrecorded layout). */
async function storedVersion(kv: Deno.Kv): Promise<number> {
  return (await kv.get<LayoutRecord>(layoutKey())).value?.version ?? UNRECORDED_LAYOUT_VERSION;
}

/** What one leased run did. */
interface LeasedRunResult {
  ran: string[];
  error: unknown;
}

/**
 * Brings the store to `layout.version`: runs the missing migrations, in
 * order, under the installation's migration lease, or waits while another
 * process holds it (see the module documentation). Returns once the layout
 * is current, or when `signal` is aborted; throws what a migration threw.
 *
 * @param kv the store
 * @param layout the layout to reach and its migrations
 * @param options cfgtool version, logger, signal, clock, batch size, lease and poll times
 * @returns the version reached, what this process ran, whether it waited or was stopped
 *
 * @example
 * ```ts
 * import { migrateLayout } from "./layout_runner.ts";
 * import { recordLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * await recordLayout(kv, { version: 1, written_by: "0.1.0", at: new Date().toISOString() });
 * const nothing = {
 *   id: "0002-nothing", from: 1, to: 2, summary: "changes nothing",
 *   batch: () => Promise.resolve({ items: 0, next: null, write: () => {} }),
 * };
 * const done = await migrateLayout(kv, { version: 2, migrations: [nothing] }, { writtenBy: "0.2.0", log: () => {} });
 * if (done.version !== 2 || done.ran.join() !== "0002-nothing" || done.waited) throw new Error();
 * kv.close();
 * ```
 */
export async function migrateLayout(
  kv: Deno.Kv,
  layout: StoreLayout,
  options: MigrateOptions,
): Promise<MigrateOutcome> {
  const pollMs = options.pollMs ?? POLL_MS;
  const progressMs = options.progressMs ?? PROGRESS_MS;
  const task = startLeasedTask<LeasedRunResult>(kv, {
    name: "store layout migration",
    leaseKey: migrationLeaseKey(),
    intervalMs: NEVER_MS,
    leaseMs: options.leaseMs ?? LEASE_MS,
    log: options.log,
    run: async ({ signal }) => {
      const ran: string[] = [];
      try {
        const both = options.signal ? AbortSignal.any([signal, options.signal]) : signal;
        for (const m of migrationPath(layout, await storedVersion(kv))) {
          const run = await runMigration(kv, m, { ...options, signal: both });
          if (run.outcome === "stopped") break;
          if (run.outcome === "finished") ran.push(m.id);
        }
        return { ran, error: null };
      } catch (error) {
        return { ran, error };
      }
    },
  });
  const ran: string[] = [];
  let waited = false;
  let lastLine = -Infinity;
  try {
    for (;;) {
      const version = await storedVersion(kv);
      if (version >= layout.version) return { version, ran, waited, stopped: false };
      if (options.signal?.aborted) return { version, ran, waited, stopped: true };
      const result = await task.runOnce();
      if (result !== null) {
        ran.push(...result.ran);
        if (result.error !== null) throw result.error;
        continue;
      }
      // another process holds the lease: it migrates, this one waits
      waited = true;
      if (performance.now() - lastLine >= progressMs) {
        lastLine = performance.now();
        const next = migrationPath(layout, version)[0]!;
        const p = await migrationProgress(kv, next.id);
        options.log("info", "waiting for another process to migrate the store layout", {
          layout: version,
          to: layout.version,
          migration: next.id,
          items: p?.state === "running" ? p.items : 0,
        });
      }
      await pause(pollMs, options.signal);
    }
  } finally {
    await task.stop();
  }
}

/** Waits `ms`, or less when `signal` is aborted. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
