/**
 * The store layout version: which shape of records a store holds, kept at
 * `["meta", "layout"]` as `{version, written_by, at}` (`written_by`: the
 * cfgtool version that recorded it or last migrated the store), and what
 * happens when a process opens a store ({@linkcode prepareLayout}):
 *
 * - a **new** store (no layout record, no data) gets a record of this
 *   code's layout;
 * - a store with data but **no record** was written before layouts were
 *   recorded: it is at layout 1 ({@linkcode UNRECORDED_LAYOUT_VERSION}),
 *   which is recorded;
 * - a store at a **newer** layout than this code's is refused with a
 *   {@linkcode StoreLayoutError} `store_layout_newer` (the CLI exits 3),
 *   naming the cfgtool that wrote it; nothing is written;
 * - a store at an **older** layout is migrated forward
 *   (lib/store/layout_runner.ts: bounded batches, resumable, audited, one
 *   process at a time while the others wait), or, for callers that must
 *   not migrate (the `admin` commands), refused with
 *   `store_layout_outdated`.
 *
 * Layouts only move forward: no code migrates a store back.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import {
  allHeadsPrefix,
  allVersionsPrefix,
  auditByTimePrefix,
  blobMetaPrefix,
  layoutKey,
  sessionPrefix,
  tenantPrefix,
  tokenPrefix,
  userPrefix,
} from "./keys.ts";
import {
  CURRENT_LAYOUT,
  migrationPath,
  type StoreLayout,
  UNRECORDED_LAYOUT_VERSION,
} from "./layout_migrations.ts";
import { migrateLayout, type MigrateOptions, migrationProgress } from "./layout_runner.ts";

export { UNRECORDED_LAYOUT_VERSION };

/** The layout record at `["meta", "layout"]`. */
export interface LayoutRecord {
  /** The layout version of the store. */
  version: number;
  /** The cfgtool version that recorded it or last migrated the store. */
  written_by: string;
  /** When, RFC 3339. */
  at: string;
}

/**
 * A store this cfgtool must not open as it is. `code`:
 * `store_layout_newer` (a newer cfgtool wrote it; exit status 3 on the
 * CLI) or `store_layout_outdated` (an older layout, and the caller does not
 * migrate: start `cfgtool serve` of this version first). `details` holds
 * `store_layout`, `written_by`, `layout` (this code's) and
 * `cfgtool_version` (this code's).
 *
 * @example
 * ```ts
 * import { StoreLayoutError } from "./layout.ts";
 * const err = new StoreLayoutError("store_layout_newer", "newer", {});
 * if (err.code !== "store_layout_newer" || err.status !== 503) throw new Error();
 * ```
 */
export class StoreLayoutError extends CfgtoolError {
  constructor(
    code: "store_layout_newer" | "store_layout_outdated",
    message: string,
    details: Record<string, unknown>,
  ) {
    super(code, message, { status: 503, details });
    this.name = "StoreLayoutError";
  }
}

/**
 * Reads the layout record (null on a store that has none).
 *
 * @param kv the store
 * @returns the record, or null
 *
 * @example
 * ```ts
 * import { readLayout, recordLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await readLayout(kv) !== null) throw new Error();
 * await recordLayout(kv, { version: 1, written_by: "0.1.0", at: "2026-11-24T09:00:00.000Z" });
 * if ((await readLayout(kv))?.written_by !== "0.1.0") throw new Error();
 * kv.close();
 * ```
 */
export async function readLayout(kv: Deno.Kv): Promise<LayoutRecord | null> {
  return (await kv.get<LayoutRecord>(layoutKey())).value;
}

/**
 * Records the layout only when the store has no record yet (a
 * check-and-set against an absent record): of two processes opening a new
 * store at once, one records it.
 *
 * @param kv the store
 * @param record the layout record
 * @returns whether this call recorded it
 *
 * @example
 * ```ts
 * import { recordLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * const at = new Date().toISOString();
 * if (!await recordLayout(kv, { version: 1, written_by: "0.1.0", at })) throw new Error();
 * if (await recordLayout(kv, { version: 1, written_by: "0.2.0", at })) throw new Error("overwrote");
 * kv.close();
 * ```
 */
export async function recordLayout(kv: Deno.Kv, record: LayoutRecord): Promise<boolean> {
  const res = await kv.atomic()
    .check({ key: layoutKey(), versionstamp: null })
    .set(layoutKey(), record)
    .commit();
  return res.ok;
}

/** Record kinds that only an installation in use holds (a key check or a process lease does not count). */
const DATA_PREFIXES: readonly (() => Deno.KvKey)[] = [
  tenantPrefix,
  tokenPrefix,
  userPrefix,
  sessionPrefix,
  auditByTimePrefix,
  allHeadsPrefix,
  allVersionsPrefix,
  blobMetaPrefix,
];

/**
 * Whether the store holds an installation's data (a tenant, a token, a
 * user, a session, an audit entry, a namespace head, a version or a blob),
 * as opposed to nothing, or only what a process writes when it opens a
 * store (the token-key check, leases). Reads at most one record per kind.
 *
 * @param kv the store
 * @returns true when it holds data
 *
 * @example
 * ```ts
 * import { holdsData } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(["token_key_check"], "9f2c");
 * if (await holdsData(kv)) throw new Error("a key check is not data");
 * await kv.set(["tenant", "acme"], { slug: "acme" });
 * if (!await holdsData(kv)) throw new Error();
 * kv.close();
 * ```
 */
export async function holdsData(kv: Deno.Kv): Promise<boolean> {
  const found = await Promise.all(DATA_PREFIXES.map(async (prefix) => {
    for await (const _ of kv.list({ prefix: prefix() }, { limit: 1 })) return true;
    return false;
  }));
  return found.includes(true);
}

/** Options of {@linkcode prepareLayout}. */
export interface PrepareLayoutOptions extends Partial<Omit<MigrateOptions, "writtenBy" | "log">> {
  /** Where the recording and the migrations are logged (default: nowhere). */
  log?: Logger;
  /** Migrate an older layout (default true); false refuses it with `store_layout_outdated`. */
  migrate?: boolean;
  /** The layout this code reads and writes, with its migrations (default: this release's). */
  layout?: StoreLayout;
  /** The cfgtool version recorded and named in messages (default: this one). */
  writtenBy?: string;
}

/** What {@linkcode prepareLayout} found and did. */
export interface LayoutOutcome {
  /** `new` (no record, no data), `unrecorded` (data, no record), `current`, or `older`. */
  found: "new" | "unrecorded" | "current" | "older";
  /** The store's layout version as found (`new`: this code's). */
  from: number;
  /** Its layout version now: this code's, unless `stopped`. */
  version: number;
  /** The migrations this process ran. */
  migrated: string[];
  /** Whether it waited for another process's migration. */
  waited: boolean;
  /** Whether the signal ended a migration before the layout was current. */
  stopped: boolean;
}

/**
 * Makes the store's layout this code's before anything else reads or
 * writes it (see the module documentation): records it on a new store,
 * refuses a newer one, migrates an older one (or refuses it when
 * `migrate` is false). A migration is logged; with `signal` aborted it
 * returns at its next batch with `stopped` set.
 *
 * @param kv the store
 * @param options logger, whether to migrate, the layout, the cfgtool version, signal and runner tunables
 * @returns what was found and done
 * @throws {StoreLayoutError} for a newer layout, or an older one without `migrate`
 *
 * @example
 * ```ts
 * import { prepareLayout, readLayout } from "./layout.ts";
 * const kv = await Deno.openKv(":memory:");
 * const first = await prepareLayout(kv, { writtenBy: "0.1.0" });
 * if (first.found !== "new" || (await readLayout(kv))?.version !== first.version) throw new Error();
 * if ((await prepareLayout(kv)).found !== "current") throw new Error();
 * // a store written by a newer cfgtool is refused
 * await kv.set(["meta", "layout"], { version: 99, written_by: "9.0.0", at: new Date().toISOString() });
 * let code = "";
 * try { await prepareLayout(kv); } catch (err) { code = (err as { code: string }).code; }
 * if (code !== "store_layout_newer") throw new Error(code);
 * kv.close();
 * ```
 */
export async function prepareLayout(
  kv: Deno.Kv,
  options: PrepareLayoutOptions = {},
): Promise<LayoutOutcome> {
  const layout = options.layout ?? CURRENT_LAYOUT;
  const writtenBy = options.writtenBy ?? VERSION;
  const log = options.log ?? (() => {});
  const now = options.now ?? (() => new Date());
  for (;;) {
    const record = await readLayout(kv);
    let found: LayoutOutcome["found"];
    let from: number;
    if (record === null) {
      const data = await holdsData(kv);
      found = data ? "unrecorded" : "new";
      from = data ? UNRECORDED_LAYOUT_VERSION : layout.version;
      migrationPath(layout, from); // a broken registry fails before anything is written
      if (from < layout.version && options.migrate === false) {
        throw outdated(from, null, layout, writtenBy, null);
      }
      const at = now().toISOString();
      // another process recorded it meanwhile: read it again
      if (!await recordLayout(kv, { version: from, written_by: writtenBy, at })) continue;
      // a new store's first start is routine; a store from before layouts were recorded is news
      log(found === "new" ? "debug" : "info", "recorded the store layout", {
        layout: from,
        store: found,
      });
      if (from === layout.version) return done(found, from, layout.version);
    } else {
      from = record.version;
      if (from > layout.version) throw newer(record, layout, writtenBy);
      if (from === layout.version) return done("current", from, from);
      found = "older";
      const next = migrationPath(layout, from)[0]!;
      if (options.migrate === false) {
        throw outdated(from, record, layout, writtenBy, await migrationProgress(kv, next.id));
      }
    }
    const path = migrationPath(layout, from);
    log("info", "the store layout is older than this cfgtool's: migrating it before serving", {
      layout: from,
      to: layout.version,
      migrations: path.map((m) => m.id).join(","),
    });
    const r = await migrateLayout(kv, layout, {
      ...options,
      writtenBy,
      log,
      now,
    });
    if (!r.stopped) log("info", "store layout upgraded", { from, to: r.version });
    return {
      found,
      from,
      version: r.version,
      migrated: r.ran,
      waited: r.waited,
      stopped: r.stopped,
    };
  }
}

/** The outcome when nothing had to migrate. */
function done(found: LayoutOutcome["found"], from: number, version: number): LayoutOutcome {
  return { found, from, version, migrated: [], waited: false, stopped: false };
}

/** The refusal of a store a newer cfgtool wrote. */
function newer(record: LayoutRecord, layout: StoreLayout, writtenBy: string): StoreLayoutError {
  return new StoreLayoutError(
    "store_layout_newer",
    `This store has layout version ${record.version}, written by cfgtool ${record.written_by} ` +
      `at ${record.at}; this cfgtool (${writtenBy}) reads store layouts up to version ` +
      `${layout.version}. Run cfgtool ${record.written_by} or newer on this store. Store ` +
      "layouts are never migrated back: to run this version again, restore a backup taken " +
      "before the upgrade into a new --kv path",
    {
      store_layout: record.version,
      written_by: record.written_by,
      layout: layout.version,
      cfgtool_version: writtenBy,
    },
  );
}

/** The refusal of an older layout by a caller that does not migrate. */
function outdated(
  version: number,
  record: LayoutRecord | null,
  layout: StoreLayout,
  writtenBy: string,
  progress: { state: string; items: number; started_at: string } | null,
): StoreLayoutError {
  const running = progress?.state === "running"
    ? ` A migration to layout ${version + 1} is in progress (started ${progress.started_at}, ` +
      `${progress.items} items so far): wait for the service to finish it.`
    : "";
  return new StoreLayoutError(
    "store_layout_outdated",
    `This store has layout version ${version}${
      record ? `, written by cfgtool ${record.written_by}` : ""
    }; this cfgtool (${writtenBy}) uses layout ${layout.version}. Start \`cfgtool serve\` of ` +
      "this version on the store first (it migrates the store before it serves; back the " +
      `store up before), then run this command again.${running}`,
    {
      store_layout: version,
      written_by: record?.written_by ?? null,
      layout: layout.version,
      cfgtool_version: writtenBy,
    },
  );
}
