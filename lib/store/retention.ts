/**
 * Retention of closure reconstruction data (docs/events.md): per namespace,
 * every version within the last `versions` versions OR created within the
 * last `days` days is kept (the larger of the two windows); older versions
 * are deleted. Versions only grow, so the pruned versions are always a
 * prefix; `["ns_retention", t, ns]` records the horizon (the oldest kept
 * version), written before the deletions, so readers can tell a pruned
 * version (`version_too_old`, 410 `closure_unavailable`) from one that was
 * never recorded.
 *
 * Blobs are shared by content between versions and namespaces, so they are
 * collected by mark and sweep: a blob that no remaining version references
 * is marked, and deleted by a later run at least `blobGraceMs` after the
 * mark if it is still unreferenced. The grace covers commits in flight
 * (they write blobs before the version that references them).
 *
 * One process at a time runs the task: a KV lease with an expiry
 * (lib/store/leased_task.ts).
 *
 * @module
 */
import type { Logger } from "../log.ts";
import { getBlob } from "./blobs.ts";
import {
  allChangeRequestsPrefix,
  allHeadsPrefix,
  allVersionsPrefix,
  blobChunkPrefix,
  blobGcKey,
  blobMetaKey,
  blobMetaPrefix,
  namespaceKey,
  retentionKey,
  retentionLeaseKey,
  versionKey,
  versionPrefix,
} from "./keys.ts";
import { deleteInBatches } from "./kv_batch.ts";
import { startLeasedTask } from "./leased_task.ts";
import type { NamespaceRecord } from "./namespaces.ts";
import type { Head, VersionMeta } from "./versions.ts";

/** How much history to keep. */
export interface RetentionPolicy {
  /** Keep versions created within this many days. */
  days: number;
  /** Keep at least this many most recent versions. */
  versions: number;
}

/** The retention record of a namespace. */
export interface RetentionRecord {
  /** Oldest kept version: every version below it was pruned. */
  horizon: number;
  /** `created_at` of the namespace the record is about (a re-created slug starts afresh). */
  namespace_created_at: string;
  /** When the last pruning happened. */
  pruned_at: string;
}

/** What a stored version number is now. */
export type VersionStatus = "available" | "pruned" | "unrecorded";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The oldest kept version of a namespace (0 when nothing was pruned).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the horizon
 *
 * @example
 * ```ts
 * import { retentionHorizon } from "./retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await retentionHorizon(kv, "acme", "web") !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function retentionHorizon(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
): Promise<number> {
  const [rec, ns] = await kv.getMany<[RetentionRecord, NamespaceRecord]>([
    retentionKey(tenant, namespace),
    namespaceKey(tenant, namespace),
  ]);
  return horizonOf(rec.value, ns.value);
}

function horizonOf(rec: RetentionRecord | null, ns: NamespaceRecord | null): number {
  if (rec === null || ns === null || rec.namespace_created_at !== ns.created_at) return 0;
  return rec.horizon;
}

/**
 * Whether a version's data is available, was pruned (below the horizon), or
 * was never recorded (missing above the horizon: history that predates the
 * namespace's records, e.g. after a restore or a backfilling upgrade).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version the version
 * @returns its status
 *
 * @example
 * ```ts
 * import { versionStatus } from "./retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await versionStatus(kv, "acme", "web", 1) !== "unrecorded") throw new Error();
 * kv.close();
 * ```
 */
export async function versionStatus(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
): Promise<VersionStatus> {
  const [meta, rec, ns] = await kv.getMany<[VersionMeta, RetentionRecord, NamespaceRecord]>([
    versionKey(tenant, namespace, version),
    retentionKey(tenant, namespace),
    namespaceKey(tenant, namespace),
  ]);
  if (meta.value !== null) return "available";
  return version < horizonOf(rec.value, ns.value) ? "pruned" : "unrecorded";
}

/**
 * Deletes the versions of one namespace that fall outside both retention
 * windows. The head is always kept.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param policy days and versions to keep
 * @param now the current time
 * @returns the new horizon and how many versions were deleted
 *
 * @example
 * ```ts
 * import { pruneNamespace } from "./retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * const r = await pruneNamespace(kv, "acme", "web", { days: 30, versions: 100 });
 * if (r.deleted !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function pruneNamespace(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  policy: RetentionPolicy,
  now: Date = new Date(),
): Promise<{ horizon: number; deleted: number }> {
  const [head, ns] = await kv.getMany<[Head, NamespaceRecord]>([
    ["ns_head", tenant, namespace],
    namespaceKey(tenant, namespace),
  ]);
  if (head.value === null || ns.value === null) return { horizon: 0, deleted: 0 };
  const keepFrom = Math.max(0, head.value.version - Math.max(1, policy.versions) + 1);
  const cutoff = now.getTime() - policy.days * DAY_MS;
  const doomed: number[] = [];
  for await (
    const e of kv.list<VersionMeta>({
      start: versionPrefix(tenant, namespace),
      end: versionKey(tenant, namespace, keepFrom),
    })
  ) {
    if (Date.parse(e.value.created_at) >= cutoff) break;
    doomed.push(e.value.version);
  }
  if (doomed.length === 0) {
    return { horizon: await retentionHorizon(kv, tenant, namespace), deleted: 0 };
  }
  const horizon = doomed.at(-1)! + 1;
  const record: RetentionRecord = {
    horizon,
    namespace_created_at: ns.value.created_at,
    pruned_at: now.toISOString(),
  };
  // The horizon first: a reader never sees a missing version without knowing why.
  await kv.set(retentionKey(tenant, namespace), record);
  await deleteInBatches(kv, doomed.map((v) => versionKey(tenant, namespace, v)));
  return { horizon, deleted: doomed.length };
}

/** Outcome of {@linkcode collectBlobs}. */
export interface BlobCollection {
  /** Blobs referenced by a kept version. */
  live: number;
  /** Unreferenced blobs marked by this run. */
  marked: number;
  /** Blobs deleted by this run. */
  deleted: number;
}

/**
 * Mark and sweep of blobs: deletes blobs that no version and no change
 * request references and
 * that were already found unreferenced at least `graceMs` ago.
 *
 * Aborting `signal` ends the run between two steps: before any marking
 * while the referenced set is still being read (an incomplete set must not
 * mark anything), or between two blobs; each step is atomic on its own.
 *
 * @param kv the store
 * @param graceMs how long a blob stays marked before deletion
 * @param now the current time
 * @param signal aborting it ends the run early (a shutdown)
 * @returns counts
 *
 * @example
 * ```ts
 * import { collectBlobs } from "./retention.ts";
 * import { putBlob } from "./blobs.ts";
 * const kv = await Deno.openKv(":memory:");
 * await putBlob(kv, new Uint8Array([1]));
 * const first = await collectBlobs(kv, 0);
 * const second = await collectBlobs(kv, 0);
 * if (first.marked !== 1 || second.deleted !== 1) throw new Error();
 * // an aborted run marks nothing
 * await putBlob(kv, new Uint8Array([2]));
 * const stopped = await collectBlobs(kv, 0, new Date(), AbortSignal.abort());
 * if (stopped.marked !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function collectBlobs(
  kv: Deno.Kv,
  graceMs: number,
  now: Date = new Date(),
  signal?: AbortSignal,
): Promise<BlobCollection> {
  const live = new Set<string>();
  const trees = new Set<string>();
  for await (const e of kv.list<VersionMeta>({ prefix: allVersionsPrefix() })) {
    if (signal?.aborted) return { live: 0, marked: 0, deleted: 0 };
    trees.add(e.value.tree);
  }
  // a change request's proposed files, and its base's, live as long as the request
  const requests = kv.list<{ tree: string; base_tree: string }>({
    prefix: allChangeRequestsPrefix(),
  });
  for await (const e of requests) {
    if (signal?.aborted) return { live: 0, marked: 0, deleted: 0 };
    trees.add(e.value.tree);
    trees.add(e.value.base_tree);
  }
  for (const tree of trees) {
    if (signal?.aborted) return { live: 0, marked: 0, deleted: 0 };
    live.add(tree);
    const bytes = await getBlob(kv, tree);
    if (bytes === null) continue;
    for (const [, id] of JSON.parse(new TextDecoder().decode(bytes)) as [string, string][]) {
      live.add(id);
    }
  }
  let marked = 0;
  let deleted = 0;
  for await (const e of kv.list({ prefix: blobMetaPrefix() })) {
    if (signal?.aborted) break;
    const id = e.key[1] as string;
    const mark = await kv.get<{ at: string }>(blobGcKey(id));
    if (live.has(id)) {
      if (mark.value !== null) await kv.delete(blobGcKey(id));
      continue;
    }
    if (mark.value === null) {
      await kv.set(blobGcKey(id), { at: now.toISOString() });
      marked++;
      continue;
    }
    if (now.getTime() - Date.parse(mark.value.at) < graceMs) continue;
    // Metadata first: a blob without metadata is unreadable, never half-read.
    const gone = await kv.atomic().check(e).check(mark).delete(blobMetaKey(id))
      .delete(blobGcKey(id)).commit();
    if (!gone.ok) continue;
    await deleteInBatches(kv, kv.list({ prefix: blobChunkPrefix(id) }));
    deleted++;
  }
  return { live: live.size, marked, deleted };
}

/** Outcome of {@linkcode pruneAll}. */
export interface PruneReport {
  namespaces: number;
  versionsDeleted: number;
  blobs: BlobCollection;
}

/**
 * Prunes every namespace, then collects unreferenced blobs.
 *
 * @param kv the store
 * @param policy days and versions to keep
 * @param blobGraceMs grace before an unreferenced blob is deleted
 * @param now the current time
 * @param signal aborting it ends the run between two namespaces or two blobs (a shutdown)
 * @returns what was done
 *
 * @example
 * ```ts
 * import { pruneAll } from "./retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * const r = await pruneAll(kv, { days: 30, versions: 100 }, 0);
 * if (r.namespaces !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function pruneAll(
  kv: Deno.Kv,
  policy: RetentionPolicy,
  blobGraceMs: number,
  now: Date = new Date(),
  signal?: AbortSignal,
): Promise<PruneReport> {
  let namespaces = 0;
  let versionsDeleted = 0;
  for await (const e of kv.list<Head>({ prefix: allHeadsPrefix() })) {
    if (signal?.aborted) break;
    namespaces++;
    const [, t, ns] = e.key as [string, string, string];
    versionsDeleted += (await pruneNamespace(kv, t, ns, policy, now)).deleted;
  }
  const blobs = await collectBlobs(kv, blobGraceMs, now, signal);
  return { namespaces, versionsDeleted, blobs };
}

/** Options of {@linkcode startRetention}. */
export interface RetentionTaskOptions {
  /** What to keep. */
  policy: RetentionPolicy;
  /** Interval between runs, ms. */
  intervalMs: number;
  /** Grace before an unreferenced blob is deleted (default half the interval). */
  blobGraceMs?: number;
  /** Where run summaries and failures go. */
  log: Logger;
  /** Clock, for tests. */
  now?: () => Date;
}

/** A running retention task. */
export interface RetentionTask {
  /** Runs once now (when this process holds or takes the lease). */
  runOnce(): Promise<PruneReport | null>;
  /** Stops the timer, ends a run in progress at its next step (waiting for that step) and gives the lease back. */
  stop(): Promise<void>;
}

/**
 * Starts the periodic pruning task of a process. Several processes on one
 * KV take turns through a lease, so one run happens per interval
 * ({@linkcode startLeasedTask}); a run ends at its next step (a namespace,
 * a blob) on shutdown.
 *
 * @param kv the store
 * @param options policy, interval, logger
 * @returns the task
 *
 * @example
 * ```ts
 * import { startRetention } from "./retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * const options = { policy: { days: 30, versions: 100 }, intervalMs: 60_000, log: () => {} };
 * const task = startRetention(kv, options);
 * const report = await task.runOnce();
 * if (report === null || report.namespaces !== 0 || report.versionsDeleted !== 0) throw new Error();
 * // a second process on the same store waits for the lease: no run
 * const other = startRetention(kv, options);
 * if (await other.runOnce() !== null) throw new Error();
 * await other.stop();
 * await task.stop();
 * kv.close();
 * ```
 */
export function startRetention(kv: Deno.Kv, options: RetentionTaskOptions): RetentionTask {
  const grace = options.blobGraceMs ?? Math.floor(options.intervalMs / 2);
  // A run over a long history takes minutes (one read per stored file): a
  // shutdown must not wait, so each namespace and each blob is one step.
  return startLeasedTask(kv, {
    name: "retention",
    leaseKey: retentionLeaseKey(),
    intervalMs: options.intervalMs,
    log: options.log,
    ...(options.now === undefined ? {} : { now: options.now }),
    run: async ({ signal, now }) => {
      const started = performance.now();
      const report = await pruneAll(kv, options.policy, grace, now, signal);
      options.log(
        "info",
        signal.aborted ? `retention run cut short by ${signal.reason}` : "retention run",
        {
          namespaces: report.namespaces,
          versions_deleted: report.versionsDeleted,
          blobs_marked: report.blobs.marked,
          blobs_deleted: report.blobs.deleted,
          ms: Math.round(performance.now() - started),
        },
      );
      return report;
    },
  });
}
