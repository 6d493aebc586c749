/**
 * The store layout this code reads and writes, and the migrations that
 * bring an older store to it: the registry. Each migration moves the store
 * from one layout version to the next (`from` → `from + 1`) in bounded
 * batches; lib/store/layout_runner.ts runs them, one batch per atomic
 * commit, and lib/store/layout.ts decides at start-up whether any must run.
 *
 * Layout 1 is the layout of the first release that records a layout (a
 * store with data but no layout record is a layout-1 store). A release
 * that changes what the store holds, in a way older code would misread or
 * newer code could not read without a conversion, raises
 * {@linkcode LAYOUT_VERSION} and adds the migration from the previous
 * version here, in order. Layouts only move forward: there are no
 * migrations back.
 *
 * @module
 */

/** The layout version this code reads and writes. */
export const LAYOUT_VERSION = 1;

/** The layout of a store that holds data but no layout record (written before layouts were recorded). */
export const UNRECORDED_LAYOUT_VERSION = 1;

/** What one batch of a migration is given. */
export interface MigrationBatchContext {
  /** The store: read what the batch migrates here; the writes go in {@linkcode MigrationBatch.write}. */
  kv: Deno.Kv;
  /** Where the previous batch stopped (its `next`), or null for the first batch. */
  cursor: Deno.KvKey | null;
  /** Items this batch may migrate at most. */
  limit: number;
}

/** One batch of a migration: what it migrates and where the next one starts. */
export interface MigrationBatch {
  /** Items this batch migrates (at most the context's `limit`). */
  items: number;
  /** Where the next batch starts (stored with this batch's writes); null when this batch is the last. */
  next: Deno.KvKey | null;
  /**
   * Adds the batch's writes (and checks of what it read, if any) to the
   * atomic commit that also stores `next`: the batch and the move of the
   * cursor commit together or not at all, so each item is migrated once.
   * With the runner's bookkeeping, the writes of a batch must stay within
   * one commit's limits (lib/store/kv_batch.ts: 1,000 mutations, 800 KiB).
   */
  write(op: Deno.AtomicOperation): void;
}

/** One step of the layout: from one version to the next, in bounded batches. */
export interface Migration {
  /** Stable id, named in logs and audit entries: `<to, 4 digits>-<what>` (`0002-people-index`). */
  id: string;
  /** The layout version it starts from. */
  from: number;
  /** The layout version it ends at: `from + 1`. */
  to: number;
  /** What it changes, in one sentence (logged when it starts). */
  summary: string;
  /** Reads one batch from `cursor` on and says what to write. */
  batch(ctx: MigrationBatchContext): Promise<MigrationBatch>;
}

/** A layout version and the migrations that lead to it. */
export interface StoreLayout {
  /** The version this code reads and writes. */
  version: number;
  /** Every migration, oldest first: `from` 1, 2, … up to `version - 1`. */
  migrations: readonly Migration[];
}

/** The layout of this code: {@linkcode LAYOUT_VERSION}, reached by these migrations. */
export const CURRENT_LAYOUT: StoreLayout = Object.freeze({
  version: LAYOUT_VERSION,
  migrations: Object.freeze([]),
});

/**
 * The migrations that take a store from layout `from` to the layout's
 * version, in order. Throws when the registry has a gap or a migration
 * that does not move one version up.
 *
 * @param layout the layout and its migrations
 * @param from the store's layout version (at most `layout.version`)
 * @returns the migrations to run, none when `from` is the layout's version
 *
 * @example
 * ```ts
 * import { migrationPath, type StoreLayout } from "./layout_migrations.ts";
 * const step = (from: number) => ({
 *   id: `000${from + 1}-example`, from, to: from + 1, summary: "an example",
 *   batch: () => Promise.resolve({ items: 0, next: null, write: () => {} }),
 * });
 * const layout: StoreLayout = { version: 3, migrations: [step(1), step(2)] };
 * if (migrationPath(layout, 1).map((m) => m.id).join() !== "0002-example,0003-example") throw new Error();
 * if (migrationPath(layout, 3).length !== 0) throw new Error();
 * ```
 */
export function migrationPath(layout: StoreLayout, from: number): Migration[] {
  const path: Migration[] = [];
  for (let v = from; v < layout.version; v++) {
    const found = layout.migrations.filter((m) => m.from === v);
    if (found.length !== 1 || found[0]!.to !== v + 1) {
      throw new Error(
        `the layout registry needs exactly one migration from layout ${v} to ${v + 1}, ` +
          `found ${found.map((m) => `${m.id} (${m.from} -> ${m.to})`).join(", ") || "none"}`,
      );
    }
    path.push(found[0]!);
  }
  return path;
}
