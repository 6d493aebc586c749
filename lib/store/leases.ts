/**
 * KV records that make per-process counters installation-wide: the liveness
 * lease of a process, the event-stream counts each process holds per
 * credential, and the shared token bucket of a rate-limit key. The policies
 * (limits, heartbeats, block sizes) live with their users,
 * lib/events/registry.ts and lib/runtime/rate_limiter.ts; this module only
 * reads and writes the records, each change in one atomic commit checked
 * against the versionstamps it read.
 *
 * | key | value |
 * |---|---|
 * | `["lease_holder", holder]` | `{until}`: the process `holder` is alive until `until` (ms since the epoch); renewed by heartbeat, expires |
 * | `["conn_lease", credential]` | `{holders: {[holder]: count}}`: open event streams of a credential, per process |
 * | `["rate_bucket", key]` | `{tokens, at}`: the installation-wide token bucket of a rate-limit key at time `at` (expires once it would be full) |
 *
 * A holder counts while its `until` lies in the future: a process that
 * died stops counting after its lease time. Deno KV deletes expired records
 * lazily, so the stored `until` decides, never the record's presence alone.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import { getManyChunked } from "./kv_batch.ts";

/** Key of a process's liveness lease. */
export const leaseHolderKey = (holder: string): Deno.KvKey => ["lease_holder", holder];
/** Key of a credential's event-stream counts. */
export const connectionLeaseKey = (credential: string): Deno.KvKey => ["conn_lease", credential];
/** Key of a shared rate-limit bucket. */
export const rateBucketKey = (key: string): Deno.KvKey => ["rate_bucket", key];

/** The stored liveness lease of a process. */
interface HolderRecord {
  until: number;
}

/** The stored event-stream counts of a credential. */
interface ConnectionRecord {
  holders: Record<string, number>;
}

/** A shared token bucket: `tokens` as of time `at` (ms since the epoch). */
export interface SharedBucket {
  /** Tokens in the bucket at `at` (may be fractional). */
  tokens: number;
  /** When `tokens` was computed, ms since the epoch. */
  at: number;
}

/** Gives up on a record after this many lost races in a row (it never happens in practice). */
const MAX_ATTEMPTS = 100;

/** 503 `kv_unavailable`: a record kept changing under every attempt of a commit. */
function contention(key: Deno.KvKey): CfgtoolError {
  return new CfgtoolError(
    "kv_unavailable",
    `The KV record ${JSON.stringify(key)} changed under ${MAX_ATTEMPTS} attempts in a row`,
    { status: 503 },
  );
}

/**
 * Writes (or renews) the liveness lease of a process: it counts as alive
 * until `until`. The record also expires in the KV a while after that.
 *
 * @param kv the store
 * @param holder the process's id
 * @param until ms since the epoch
 * @param now the current time, ms since the epoch
 *
 * @example
 * ```ts
 * import { holderAlive, renewHolder } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * await renewHolder(kv, "p1", 2_000, 1_000);
 * if (!(await holderAlive(kv, "p1", 1_500)) || await holderAlive(kv, "p1", 2_000)) throw new Error();
 * kv.close();
 * ```
 */
export async function renewHolder(
  kv: Deno.Kv,
  holder: string,
  until: number,
  now: number,
): Promise<void> {
  const record: HolderRecord = { until };
  // twice the remaining lease, so a record is never deleted while it still counts
  await kv.set(leaseHolderKey(holder), record, { expireIn: Math.max(1000, 2 * (until - now)) });
}

/**
 * Deletes the liveness lease of a process: whatever it held stops counting
 * at once (a graceful shutdown).
 *
 * @param kv the store
 * @param holder the process's id
 *
 * @example
 * ```ts
 * import { holderAlive, removeHolder, renewHolder } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * await renewHolder(kv, "p1", 2_000, 1_000);
 * await removeHolder(kv, "p1");
 * if (await holderAlive(kv, "p1", 1_500)) throw new Error();
 * kv.close();
 * ```
 */
export async function removeHolder(kv: Deno.Kv, holder: string): Promise<void> {
  await kv.delete(leaseHolderKey(holder));
}

/**
 * Whether a process's liveness lease is current at `now`.
 *
 * @param kv the store
 * @param holder the process's id
 * @param now ms since the epoch
 * @returns true while its stored `until` lies after `now`
 *
 * @example
 * ```ts
 * import { holderAlive } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await holderAlive(kv, "nobody", Date.now())) throw new Error();
 * kv.close();
 * ```
 */
export async function holderAlive(kv: Deno.Kv, holder: string, now: number): Promise<boolean> {
  const e = await kv.get<HolderRecord>(leaseHolderKey(holder));
  return e.value !== null && e.value.until > now;
}

/** What {@linkcode leaseConnection} decided. */
export interface ConnectionLease {
  /** Whether the count was stored. */
  acquired: boolean;
  /** Streams of the credential counted installation-wide, this process's new count included when acquired. */
  total: number;
  /**
   * When the stored record now holds this process's count alone: its
   * versionstamp, to pass as `sole` to the next call (null otherwise).
   */
  sole: string | null;
}

/**
 * Sets this process's count of open streams of a credential to `count`
 * when the counts of every live process, `count` included, stay within
 * `limit`; otherwise changes nothing. Entries of processes whose lease has
 * ended are dropped in the same commit. The commit checks every record it
 * read (the counts and each holder's lease), so two processes racing for
 * the last slot cannot both get it.
 *
 * `sole` is the versionstamp a previous call returned when the record held
 * this process's count alone: the commit is then tried first against it,
 * without reading (unchanged since, the record still holds no other
 * process's streams, so this count is the total); when anything wrote the
 * record meanwhile, the check fails and the counts are read as usual.
 *
 * @param kv the store
 * @param credential token id or session id
 * @param holder this process's id (its own entry counts whatever its lease says)
 * @param count this process's count after taking the slot
 * @param limit streams allowed per credential, installation-wide
 * @param now ms since the epoch
 * @param sole the versionstamp of a record this process alone holds counts in, or null
 * @returns whether it was stored, the total counted, and the versionstamp for `sole`
 *
 * @example
 * ```ts
 * import { leaseConnection, renewHolder } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * await renewHolder(kv, "a", 10_000, 0);
 * await renewHolder(kv, "b", 10_000, 0);
 * const first = await leaseConnection(kv, "tok_1", "a", 1, 2, 0);
 * if (!first.acquired || first.sole === null) throw new Error("a holds the record alone");
 * // b's count lands in the record a last saw: a's next commit against it fails and reads
 * if (!(await leaseConnection(kv, "tok_1", "b", 1, 2, 0)).acquired) throw new Error();
 * const third = await leaseConnection(kv, "tok_1", "a", 2, 2, 0, first.sole);
 * if (third.acquired || third.total !== 3) throw new Error();
 * // once a's lease has ended, its stream no longer counts
 * if (!(await leaseConnection(kv, "tok_1", "b", 2, 2, 20_000)).acquired) throw new Error();
 * kv.close();
 * ```
 */
export async function leaseConnection(
  kv: Deno.Kv,
  credential: string,
  holder: string,
  count: number,
  limit: number,
  now: number,
  sole: string | null = null,
): Promise<ConnectionLease> {
  const key = connectionLeaseKey(credential);
  if (sole !== null && count > 0 && count <= limit) {
    const record: ConnectionRecord = { holders: { [holder]: count } };
    const res = await kv.atomic().check({ key, versionstamp: sole }).set(key, record).commit();
    if (res.ok) return { acquired: true, total: count, sole: res.versionstamp };
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const entry = await kv.get<ConnectionRecord>(key);
    const stored = entry.value?.holders ?? {};
    const others = Object.keys(stored).filter((h) => h !== holder);
    const leases = await getManyChunked<HolderRecord>(kv, others.map(leaseHolderKey));
    const holders: Record<string, number> = {};
    let total = count;
    others.forEach((h, i) => {
      const until = leases[i]!.value?.until;
      if (until !== undefined && until > now) {
        holders[h] = stored[h]!;
        total += stored[h]!;
      }
    });
    if (total > limit) return { acquired: false, total, sole: null };
    if (count > 0) holders[holder] = count;
    let op = kv.atomic().check(entry);
    for (const l of leases) op = op.check(l);
    const alone = Object.keys(holders).length === 1 && count > 0;
    op = Object.keys(holders).length === 0
      ? op.delete(key)
      : op.set(key, { holders } satisfies ConnectionRecord);
    const res = await op.commit();
    if (res.ok) return { acquired: true, total, sole: alone ? res.versionstamp : null };
  }
  throw contention(key);
}

/**
 * Sets this process's count of open streams of a credential, whatever the
 * others hold (a release, or restoring the counts after the process's
 * lease lapsed). A count of 0 removes the entry, and the record with its
 * last entry.
 *
 * @param kv the store
 * @param credential token id or session id
 * @param holder this process's id
 * @param count this process's open streams of the credential
 *
 * @example
 * ```ts
 * import { connectionCounts, setConnectionCount } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * await setConnectionCount(kv, "tok_1", "a", 3);
 * await setConnectionCount(kv, "tok_1", "b", 1);
 * await setConnectionCount(kv, "tok_1", "a", 0);
 * if (JSON.stringify(await connectionCounts(kv, "tok_1")) !== '{"b":1}') throw new Error();
 * kv.close();
 * ```
 */
export async function setConnectionCount(
  kv: Deno.Kv,
  credential: string,
  holder: string,
  count: number,
): Promise<void> {
  const key = connectionLeaseKey(credential);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const entry = await kv.get<ConnectionRecord>(key);
    const holders = { ...(entry.value?.holders ?? {}) };
    if ((holders[holder] ?? 0) === count) return;
    if (count > 0) holders[holder] = count;
    else delete holders[holder];
    const op = kv.atomic().check(entry);
    const res = Object.keys(holders).length === 0
      ? await op.delete(key).commit()
      : await op.set(key, { holders } satisfies ConnectionRecord).commit();
    if (res.ok) return;
  }
  throw contention(key);
}

/**
 * The stored stream counts of a credential per process, live or not (for
 * tests and diagnostics).
 *
 * @param kv the store
 * @param credential token id or session id
 * @returns holder id → count
 *
 * @example
 * ```ts
 * import { connectionCounts } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (Object.keys(await connectionCounts(kv, "tok_1")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function connectionCounts(
  kv: Deno.Kv,
  credential: string,
): Promise<Record<string, number>> {
  return (await kv.get<ConnectionRecord>(connectionLeaseKey(credential))).value?.holders ?? {};
}

/** What an update of a shared bucket does: the bucket to store (null: leave it) and a result. */
export interface BucketUpdate<R> {
  /** The new bucket, or null to write nothing. */
  next: SharedBucket | null;
  /** Handed back to the caller. */
  result: R;
}

/**
 * Reads the shared bucket of a rate-limit key, lets `update` decide, and
 * stores its answer atomically (retrying from a fresh read when another
 * process changed the bucket meanwhile). `update` sees null for a bucket
 * that was never written or has expired (a full one). A record that
 * expired but was not deleted yet is passed as stored: its `at` tells how
 * long it refilled.
 *
 * @param kv the store
 * @param key the rate-limit key
 * @param update decides from the stored bucket; must have no side effects (it may run again)
 * @param expireInMs the stored bucket expires after this long (it would be full by then)
 * @returns what `update` returned on the attempt that was committed
 *
 * @example
 * ```ts
 * import { updateBucket } from "./leases.ts";
 * const kv = await Deno.openKv(":memory:");
 * const take = (b: { tokens: number; at: number } | null) => {
 *   const tokens = b?.tokens ?? 5;
 *   return { next: { tokens: tokens - 2, at: 0 }, result: tokens };
 * };
 * const first = await updateBucket(kv, "k", take, 60_000);
 * const second = await updateBucket(kv, "k", take, 60_000);
 * if (first !== 5 || second !== 3) throw new Error();
 * kv.close();
 * ```
 */
export async function updateBucket<R>(
  kv: Deno.Kv,
  key: string,
  update: (bucket: SharedBucket | null) => BucketUpdate<R>,
  expireInMs: number,
): Promise<R> {
  const k = rateBucketKey(key);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const entry = await kv.get<SharedBucket>(k);
    const { next, result } = update(entry.value);
    if (next === null) return result;
    const res = await kv.atomic().check(entry).set(k, next, { expireIn: expireInMs }).commit();
    if (res.ok) return result;
  }
  throw contention(k);
}
