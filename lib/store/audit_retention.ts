/**
 * The installation's audit-retention policy (`--audit-retention`, default
 * 400 days): audit entries, and expired or revoked token records, older
 * than the retention period are deleted in bounded batches by a periodic
 * task. An audit entry is old when its `timestamp` is; a token record when
 * it stopped working (the earlier of `revoked_at` and a passed
 * `expires_at`) before the period began. A live token (active, not past
 * its expiry) is never touched.
 *
 * Each entry goes with both its keys (`["audit", t, id]` and
 * `["audit_by_time", id]`), each token record with every index that names
 * it (`token_by_digest`, `token_by_tenant`, `token_by_namespace`, and its
 * `token_by_name` entry when that still holds its id), so nothing dangles.
 * Entries are read oldest first and the walk stops at the first one inside
 * the period; token records are scanned in id order. Commits hold at most
 * {@linkcode DEFAULT_BATCH} entries (two deletions each) or
 * {@linkcode DEFAULT_TOKEN_BATCH} token records (at most five deletions and
 * three checks each), well under Deno KV's limits; one run deletes at most
 * {@linkcode DEFAULT_MAX_PER_RUN} of each, and when it stops at that bound
 * the next run follows after a short pause instead of a whole interval.
 *
 * One process at a time runs the task (a KV lease, lib/store/leased_task.ts,
 * as lib/store/retention.ts does); a shutdown ends a run before its next
 * batch. A run that deleted something logs one `info` line with its counts;
 * a run that found nothing logs at `debug`.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { AuditEntry } from "./audit.ts";
import {
  auditByTimeKey,
  auditByTimePrefix,
  auditKey,
  auditRetentionLeaseKey,
  tokenByDigestKey,
  tokenByNameKey,
  tokenByNamespaceKey,
  tokenByTenantKey,
  tokenKey,
  tokenPrefix,
} from "./keys.ts";
import { deleteInBatches, KV_LIMITS } from "./kv_batch.ts";
import { startLeasedTask } from "./leased_task.ts";
import type { TokenRecord } from "./tokens.ts";

/** Audit entries deleted per atomic commit (two keys each). */
export const DEFAULT_BATCH = 100;
/**
 * Token records deleted per atomic commit (up to five keys and three checks
 * each; their name and digest entries are read with one `getMany` each, so
 * a batch holds at most {@linkcode KV_LIMITS.getManyKeys}).
 */
export const DEFAULT_TOKEN_BATCH = 10;
/** At most this many audit entries, and this many token records, are deleted per run. */
export const DEFAULT_MAX_PER_RUN = 20_000;
/** Pause before the next run when a run stopped at its bound with more to delete, ms. */
export const CATCH_UP_DELAY_MS = 1_000;

/** What one pruning run deleted. */
export interface AuditPruneResult {
  /** Audit entries deleted. */
  auditEntries: number;
  /** Expired or revoked token records deleted. */
  tokens: number;
  /** True when the run stopped at its bound and more may be left for the next one. */
  more: boolean;
}

/** How much one pass deletes and when, for {@linkcode pruneAudit}. */
export interface AuditPruneOptions {
  /** Entries and token records older than this are deleted, ms. */
  retentionMs: number;
  /** The current time (default: now). */
  now?: Date;
  /** Audit entries per commit (default {@linkcode DEFAULT_BATCH}). */
  batchSize?: number;
  /** Token records per commit (default {@linkcode DEFAULT_TOKEN_BATCH}, at most {@linkcode KV_LIMITS.getManyKeys}). */
  tokenBatchSize?: number;
  /** Most entries, and most token records, one pass deletes (default {@linkcode DEFAULT_MAX_PER_RUN}). */
  maxPerRun?: number;
  /**
   * Aborting it ends the pass before its next batch (a shutdown); the pass
   * then says `more`.
   */
  signal?: AbortSignal;
}

/** Options of {@linkcode startAuditRetention}. */
export interface AuditRetentionTaskOptions {
  /** Entries and token records older than this are deleted, ms. */
  retentionMs: number;
  /** Interval between runs, ms. */
  intervalMs: number;
  /** Where each run is logged. */
  log: Logger;
  /** Clock (tests inject one). */
  now?: () => Date;
  /** Told what each run deleted (metrics). */
  onPruned?: (result: AuditPruneResult) => void;
  /** Audit entries per commit (default {@linkcode DEFAULT_BATCH}). */
  batchSize?: number;
  /** Token records per commit (default {@linkcode DEFAULT_TOKEN_BATCH}). */
  tokenBatchSize?: number;
  /** Most entries, and most token records, one run deletes (default {@linkcode DEFAULT_MAX_PER_RUN}). */
  maxPerRun?: number;
}

/** A running audit-retention task. */
export interface AuditRetentionTask {
  /** Runs once now, when this process holds or takes the lease (else null). */
  runOnce(): Promise<AuditPruneResult | null>;
  /** Stops the task, ends a run in progress before its next batch (waiting for that batch) and gives the lease back. */
  stop(): Promise<void>;
}

/**
 * When a token record stopped working, in epoch ms: the earlier of its
 * revocation and its passed expiry; null while it is live (active and not
 * past `expires_at`), and for a record that says neither.
 *
 * @param t the record
 * @param now the current time
 * @returns the end, or null
 *
 * @example
 * ```ts
 * import { tokenEndedAt } from "./audit_retention.ts";
 * import type { TokenRecord } from "./tokens.ts";
 * const now = new Date("2030-01-01T00:00:00Z");
 * const live = { status: "active", expires_at: "2031-01-01T00:00:00Z", revoked_at: null } as TokenRecord;
 * const expired = { ...live, expires_at: "2029-06-01T00:00:00Z" };
 * const revoked = { ...live, status: "revoked", revoked_at: "2029-01-01T00:00:00Z" } as TokenRecord;
 * if (tokenEndedAt(live, now) !== null) throw new Error();
 * if (tokenEndedAt(expired, now) !== Date.parse("2029-06-01T00:00:00Z")) throw new Error();
 * if (tokenEndedAt(revoked, now) !== Date.parse("2029-01-01T00:00:00Z")) throw new Error();
 * ```
 */
export function tokenEndedAt(t: TokenRecord, now: Date): number | null {
  const ends: number[] = [];
  if (t.status === "revoked" && t.revoked_at !== null) ends.push(Date.parse(t.revoked_at));
  if (t.expires_at !== null) {
    const expiry = Date.parse(t.expires_at);
    if (expiry <= now.getTime()) ends.push(expiry);
  }
  const known = ends.filter(Number.isFinite);
  return known.length === 0 ? null : Math.min(...known);
}

/**
 * Runs one pruning pass: deletes audit entries whose `timestamp` is more
 * than `retentionMs` before `now`, then token records that stopped working
 * more than `retentionMs` before `now`, each with every key it has, in
 * batches, at most `maxPerRun` of each.
 *
 * @param kv the store
 * @param options the retention period, the clock, batch sizes and the per-pass bound
 * @returns what was deleted, and whether more may be left
 *
 * @example
 * ```ts
 * import { pruneAudit } from "./audit_retention.ts";
 * import { eventAuditEntry, listAudit, writeAudit } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const system = { id: "system", principal_type: "system" as const, request_id: null };
 * const at = new Date("2030-01-01T00:00:00Z");
 * await writeAudit(kv, eventAuditEntry("tenant.created", system, at, { tenant_slug: "acme" }));
 * const day = 24 * 60 * 60 * 1000;
 * const kept = await pruneAudit(kv, { retentionMs: 2 * day, now: new Date(at.getTime() + day) });
 * const gone = await pruneAudit(kv, { retentionMs: 2 * day, now: new Date(at.getTime() + 3 * day) });
 * if (kept.auditEntries !== 0 || gone.auditEntries !== 1) throw new Error();
 * if ((await listAudit(kv, { tenant: "acme" })).items.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function pruneAudit(
  kv: Deno.Kv,
  options: AuditPruneOptions,
): Promise<AuditPruneResult> {
  const now = options.now ?? new Date();
  const cutoff = now.getTime() - options.retentionMs;
  const max = Math.max(1, options.maxPerRun ?? DEFAULT_MAX_PER_RUN);
  const entries = await pruneEntries(
    kv,
    cutoff,
    Math.max(1, options.batchSize ?? DEFAULT_BATCH),
    max,
    options.signal,
  );
  const tokenBatch = Math.min(
    KV_LIMITS.getManyKeys,
    Math.max(1, options.tokenBatchSize ?? DEFAULT_TOKEN_BATCH),
  );
  const tokens = await pruneTokens(kv, cutoff, now, tokenBatch, max, options.signal);
  return {
    auditEntries: entries.deleted,
    tokens: tokens.deleted,
    more: entries.more || tokens.more,
  };
}

/** Deletes entries oldest first until the first one inside the period, or the bound. */
async function pruneEntries(
  kv: Deno.Kv,
  cutoff: number,
  batch: number,
  max: number,
  signal: AbortSignal | undefined,
): Promise<{ deleted: number; more: boolean }> {
  let deleted = 0;
  while (deleted < max) {
    if (signal?.aborted) return { deleted, more: true };
    const want = Math.min(batch, max - deleted);
    const doomed: AuditEntry[] = [];
    let reachedWindow = false;
    for await (const e of kv.list<AuditEntry>({ prefix: auditByTimePrefix() }, { limit: want })) {
      if (!(entryTime(e.value) < cutoff)) {
        reachedWindow = true;
        break;
      }
      doomed.push(e.value);
    }
    if (doomed.length > 0) {
      // no checks: entries never change, so no commit can be refused
      await deleteInBatches(
        kv,
        doomed.flatMap((e) => [auditKey(e.tenant_slug, e.id), auditByTimeKey(e.id)]),
      );
      deleted += doomed.length;
    }
    if (reachedWindow || doomed.length < want) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/** An entry's time: its `timestamp`, else the time of its ULID. */
function entryTime(e: AuditEntry): number {
  const t = Date.parse(e.timestamp);
  return Number.isFinite(t) ? t : ulidTime(e.id);
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function ulidTime(id: string): number {
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + Math.max(0, CROCKFORD.indexOf(ch));
  return t;
}

/** Deletes dead token records in batches; a refused batch is retried one record at a time. */
async function pruneTokens(
  kv: Deno.Kv,
  cutoff: number,
  now: Date,
  batch: number,
  max: number,
  signal: AbortSignal | undefined,
): Promise<{ deleted: number; more: boolean }> {
  let deleted = 0;
  let pending: Deno.KvEntry<TokenRecord>[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const group = pending;
    pending = [];
    if (await deleteTokens(kv, group)) {
      deleted += group.length;
      return;
    }
    for (const one of group) {
      // changed meanwhile: read it again and decide afresh
      const fresh = await kv.get<TokenRecord>(tokenKey(one.value.id));
      if (fresh.value === null) continue;
      const ended = tokenEndedAt(fresh.value, now);
      if (ended === null || !(ended < cutoff)) continue;
      if (await deleteTokens(kv, [fresh as Deno.KvEntry<TokenRecord>])) deleted++;
    }
  };
  for await (const e of kv.list<TokenRecord>({ prefix: tokenPrefix() })) {
    // records read but not deleted yet wait for the next run
    if (signal?.aborted) return { deleted, more: true };
    const ended = tokenEndedAt(e.value, now);
    if (ended === null || !(ended < cutoff)) continue;
    if (deleted + pending.length >= max) {
      await flush();
      return { deleted, more: true };
    }
    pending.push(e);
    if (pending.length >= batch) await flush();
  }
  await flush();
  return { deleted, more: false };
}

/**
 * Deletes token records and every index entry that names them in one
 * commit, checked against the records as read and the name and digest
 * entries as read (so a name taken over by another token meanwhile is left
 * alone). False when the commit was refused.
 */
async function deleteTokens(kv: Deno.Kv, records: Deno.KvEntry<TokenRecord>[]): Promise<boolean> {
  const nameKeys = records.map(({ value: t }) =>
    tokenByNameKey(t.tenant_slug, t.namespace_slug, t.name)
  );
  const digestKeys = records.map(({ value: t }) => tokenByDigestKey(t.digest));
  const names = await kv.getMany<string[]>(nameKeys);
  const digests = await kv.getMany<string[]>(digestKeys);
  const op = kv.atomic();
  records.forEach((entry, i) => {
    const t = entry.value;
    op.check(entry).delete(tokenKey(t.id));
    const name = names[i]!;
    if (name.value === t.id) op.check(name).delete(name.key);
    const digest = digests[i]!;
    if (digest.value === t.id) op.check(digest).delete(digest.key);
    if (t.tenant_slug !== null) {
      op.delete(tokenByTenantKey(t.tenant_slug, t.id));
      if (t.namespace_slug !== null) {
        op.delete(tokenByNamespaceKey(t.tenant_slug, t.namespace_slug, t.id));
      }
    }
  });
  return (await op.commit()).ok;
}

/**
 * Starts the periodic audit-retention task: every `intervalMs` (or
 * {@linkcode CATCH_UP_DELAY_MS} after a run that stopped at its bound),
 * the process holding the KV lease runs {@linkcode pruneAudit}, logs its
 * counts (`info` when it deleted something, else `debug`) and tells
 * `onPruned`.
 *
 * @param kv the store
 * @param options retention period, interval, log, clock, metrics callback, batch sizes
 * @returns the task
 *
 * @example
 * ```ts
 * import { startAuditRetention } from "./audit_retention.ts";
 * const kv = await Deno.openKv(":memory:");
 * const runs: number[] = [];
 * const options = {
 *   retentionMs: 1000,
 *   intervalMs: 60_000,
 *   log: () => {},
 *   onPruned: (r: { auditEntries: number }) => void runs.push(r.auditEntries),
 * };
 * const task = startAuditRetention(kv, options);
 * const result = await task.runOnce();
 * if (result === null || result.auditEntries !== 0 || runs.length !== 1) throw new Error();
 * // a second process on the same store waits for the lease: no run
 * const other = startAuditRetention(kv, options);
 * if (await other.runOnce() !== null) throw new Error();
 * await other.stop();
 * await task.stop();
 * kv.close();
 * ```
 */
export function startAuditRetention(
  kv: Deno.Kv,
  options: AuditRetentionTaskOptions,
): AuditRetentionTask {
  return startLeasedTask(kv, {
    name: "audit retention",
    leaseKey: auditRetentionLeaseKey(),
    intervalMs: options.intervalMs,
    log: options.log,
    ...(options.now === undefined ? {} : { now: options.now }),
    nextRunInMs: (result) =>
      result?.more ? Math.min(CATCH_UP_DELAY_MS, options.intervalMs) : options.intervalMs,
    run: async ({ signal, now }) => {
      const started = performance.now();
      const result = await pruneAudit(kv, {
        retentionMs: options.retentionMs,
        now,
        signal,
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
        ...(options.tokenBatchSize === undefined ? {} : { tokenBatchSize: options.tokenBatchSize }),
        ...(options.maxPerRun === undefined ? {} : { maxPerRun: options.maxPerRun }),
      });
      const something = result.auditEntries > 0 || result.tokens > 0;
      options.log(
        something ? "info" : "debug",
        signal.aborted
          ? `audit retention run cut short by ${signal.reason}`
          : "audit retention run",
        {
          audit_entries_deleted: result.auditEntries,
          tokens_deleted: result.tokens,
          more: result.more,
          retention_ms: options.retentionMs,
          ms: Math.round(performance.now() - started),
        },
      );
      options.onPruned?.(result);
      return result;
    },
  });
}
