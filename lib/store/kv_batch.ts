/**
 * Reads and writes of many keys within Deno KV's per-call limits, written
 * once for every store module: {@linkcode getManyChunked} reads any number
 * of keys through `getMany` calls of at most ten, and
 * {@linkcode commitInBatches} / {@linkcode deleteInBatches} (on top of
 * {@linkcode CommitBatcher}) pack mutations into as few atomic commits as
 * the limits allow.
 *
 * Deno KV's limits (Deno 2.x, `ext/kv/config.rs` and `op_kv_atomic_write`
 * in `ext/kv/lib.rs`; each one checked against Deno 2.9.6 on a `:memory:`
 * store, by tests/store/kv_batch_test.ts):
 *
 * | limit | value | refused with |
 * |---|---|---|
 * | keys per `getMany` | 10 | `Too many ranges (max 10)` |
 * | checks per commit | 100 | `Too many checks (max 100)` |
 * | mutations (and enqueues) per commit | 1,000 | `Too many mutations (max 1000)` |
 * | one key, encoded | 2,048 bytes | `Key too large for write (max 2048 bytes)` |
 * | one value, serialized | 65,536 bytes (64 KiB) | `Value too large (max 65536 bytes)` |
 * | total size of a commit | 819,200 bytes (800 KiB) | `Total mutation size too large (max 819200 bytes)` |
 * | total key size of a commit | 81,920 bytes (80 KiB) | `Total key size too large (max 81920 bytes)` |
 *
 * The total size counts the key of every check and every mutation once,
 * and the key and the value of every mutation that carries a value
 * (`set`, `sum`, `min`, `max`) once more; the total key size counts only
 * the keys of mutations that carry a value (a delete adds nothing to it).
 * A value is measured as stored: a `Uint8Array` by its length, a
 * `Deno.KvU64` as 8 bytes, anything else by its V8 serialization.
 *
 * What must be one commit (a change checked against versionstamps it read,
 * a change and its audit entry) stays a hand-built atomic operation: these
 * helpers only split work whose commits are independent of each other, and
 * they make no checks.
 *
 * @module
 */
import { serialize } from "node:v8";

/** Deno KV's limits per call (see the module documentation for what each counts). */
export const KV_LIMITS = {
  /** Keys one `getMany` reads. */
  getManyKeys: 10,
  /** Checks in one atomic commit. */
  checks: 100,
  /** Mutations in one atomic commit (enqueues count too). */
  mutations: 1000,
  /** Bytes of one encoded key. */
  keyBytes: 2048,
  /** Bytes of one serialized value. */
  valueBytes: 65536,
  /** Total bytes of one commit: every key once, plus key and value again for each value-carrying mutation. */
  commitBytes: 800 * 1024,
  /** Total bytes of the keys of the value-carrying mutations of one commit. */
  commitKeyBytes: 80 * 1024,
} as const;

/** How much one commit of {@linkcode CommitBatcher} may hold (defaults: {@linkcode KV_LIMITS}). */
export interface CommitLimits {
  /** Mutations per commit. */
  mutations: number;
  /** Total bytes per commit, counted as Deno KV counts them. */
  commitBytes: number;
  /** Total bytes of the keys of value-carrying mutations per commit. */
  commitKeyBytes: number;
}

/** Options of the batched writes. */
export interface BatchOptions {
  /** Lower limits than Deno KV's (smaller commits); each defaults to {@linkcode KV_LIMITS}. */
  limits?: Partial<CommitLimits>;
}

/** Options of {@linkcode getManyChunked}. */
export interface GetManyOptions {
  /** Consistency of each `getMany` (default strong). */
  consistency?: Deno.KvConsistencyLevel;
  /** `getMany` calls in flight at once (default 1: one after another). */
  inFlight?: number;
}

/**
 * Reads any number of keys with `getMany` calls of at most
 * {@linkcode KV_LIMITS.getManyKeys} keys, `inFlight` of them at a time.
 * Each call is a snapshot of its own keys only: entries of different calls
 * may come from different moments.
 *
 * @param kv the store
 * @param keys the keys, any number (none: no call)
 * @param options consistency, and how many calls run at once
 * @returns one entry per key, in the order of `keys`
 *
 * @example
 * ```ts
 * import { getManyChunked } from "./kv_batch.ts";
 * const kv = await Deno.openKv(":memory:");
 * for (let i = 0; i < 25; i += 2) await kv.set(["n", i], i * 10);
 * const keys = Array.from({ length: 25 }, (_, i) => ["n", i]);
 * const entries = await getManyChunked<number>(kv, keys, { inFlight: 3 });
 * if (entries.length !== 25) throw new Error("one entry per key");
 * if (entries[24]!.value !== 240 || entries[23]!.value !== null) throw new Error("in order");
 * kv.close();
 * ```
 */
export async function getManyChunked<T = unknown>(
  kv: Deno.Kv,
  keys: readonly Deno.KvKey[],
  options: GetManyOptions = {},
): Promise<Deno.KvEntryMaybe<T>[]> {
  const out = new Array<Deno.KvEntryMaybe<T>>(keys.length);
  const starts: number[] = [];
  for (let i = 0; i < keys.length; i += KV_LIMITS.getManyKeys) starts.push(i);
  const read = options.consistency === undefined ? {} : { consistency: options.consistency };
  let next = 0;
  const lane = async () => {
    while (next < starts.length) {
      const start = starts[next++]!;
      const entries = await kv.getMany<T[]>(keys.slice(start, start + KV_LIMITS.getManyKeys), read);
      entries.forEach((e, j) => (out[start + j] = e));
    }
  };
  const lanes = Math.max(1, Math.min(Math.floor(options.inFlight ?? 1), starts.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return out;
}

const utf8 = new TextEncoder();

/** Zero bytes, which the key encoding escapes as two bytes. */
function zeros(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === 0) n++;
  return n;
}

/**
 * The size of a key as Deno KV encodes it (the tuple encoding its limits
 * count): a string or `Uint8Array` part is a type byte, its bytes (a zero
 * byte escaped as two) and a terminator; a number nine bytes; a boolean
 * one; a bigint at most two bytes more than its magnitude (an upper bound).
 *
 * @param key the key
 * @returns its encoded size in bytes
 *
 * @example
 * ```ts
 * import { encodedKeySize, KV_LIMITS } from "./kv_batch.ts";
 * if (encodedKeySize(["blob", 0]) !== 6 + 9) throw new Error();
 * // the longest string key Deno KV writes: a type byte, 2,046 bytes, a terminator
 * const longest = ["x".repeat(2046)];
 * if (encodedKeySize(longest) !== KV_LIMITS.keyBytes) throw new Error();
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(longest, 1);
 * kv.close();
 * ```
 */
export function encodedKeySize(key: Deno.KvKey): number {
  let size = 0;
  for (const part of key) {
    if (part instanceof Uint8Array) {
      size += 2 + part.length + zeros(part);
    } else if (typeof part === "string") {
      const bytes = utf8.encode(part);
      size += 2 + bytes.length + zeros(bytes);
    } else if (typeof part === "number") {
      size += 9;
    } else if (typeof part === "bigint") {
      const magnitude = part < 0n ? -part : part;
      size += 2 + Math.ceil(magnitude.toString(16).length / 2);
    } else {
      size += 1; // boolean
    }
  }
  return size;
}

/** The size Deno KV counts for a stored value. */
function valueSize(value: unknown): number {
  if (value instanceof Deno.KvU64) return 8;
  if (value instanceof Uint8Array) return value.byteLength;
  return serialize(value).byteLength;
}

/** What a group of mutations adds to a commit's totals. */
interface Cost {
  mutations: number;
  bytes: number;
  keyBytes: number;
}

function costOf(mutations: readonly Deno.KvMutation[]): Cost {
  const cost: Cost = { mutations: mutations.length, bytes: 0, keyBytes: 0 };
  for (const m of mutations) {
    const key = encodedKeySize(m.key);
    cost.bytes += key;
    if (m.type !== "delete") {
      cost.bytes += key + valueSize(m.value);
      cost.keyBytes += key;
    }
  }
  return cost;
}

/**
 * Packs mutations into atomic commits that each stay within Deno KV's
 * limits (or lower ones), committing a batch when the next group would not
 * fit. A group (the mutations of one {@linkcode CommitBatcher.add} call)
 * always lands in one commit; a group that exceeds the limits on its own
 * is committed alone, for Deno KV to refuse. Commits make no checks, so
 * none is ever refused for a changed record: use this for work whose
 * commits are independent of each other (deleting what is already
 * unreachable, writing content-addressed records). Mutations are committed
 * in the order they were added.
 *
 * @example
 * ```ts
 * import { CommitBatcher } from "./kv_batch.ts";
 * const kv = await Deno.openKv(":memory:");
 * const batch = new CommitBatcher(kv, { limits: { mutations: 4 } });
 * for (let i = 0; i < 5; i++) {
 *   // a record and its index: always in the same commit
 *   await batch.add(
 *     { type: "set", key: ["item", i], value: { n: i } },
 *     { type: "set", key: ["item_by_n", i], value: i },
 *   );
 * }
 * await batch.flush();
 * if (batch.commits !== 3) throw new Error(`${batch.commits} commits`);
 * if ((await kv.get(["item_by_n", 4])).value !== 4) throw new Error();
 * kv.close();
 * ```
 */
export class CommitBatcher {
  readonly #kv: Deno.Kv;
  readonly #limits: CommitLimits;
  #pending: Deno.KvMutation[] = [];
  #bytes = 0;
  #keyBytes = 0;
  #commits = 0;

  /**
   * @param kv the store
   * @param options lower limits than Deno KV's, if wanted
   */
  constructor(kv: Deno.Kv, options: BatchOptions = {}) {
    this.#kv = kv;
    this.#limits = {
      mutations: options.limits?.mutations ?? KV_LIMITS.mutations,
      commitBytes: options.limits?.commitBytes ?? KV_LIMITS.commitBytes,
      commitKeyBytes: options.limits?.commitKeyBytes ?? KV_LIMITS.commitKeyBytes,
    };
  }

  /** Commits made so far. */
  get commits(): number {
    return this.#commits;
  }

  /** Mutations added and not committed yet. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Adds one group of mutations, to be committed together; first commits
   * what is pending when the group would not fit beside it.
   *
   * @param mutations the group
   */
  async add(...mutations: Deno.KvMutation[]): Promise<void> {
    if (mutations.length === 0) return;
    const cost = costOf(mutations);
    const fits = this.#pending.length + cost.mutations <= this.#limits.mutations &&
      this.#bytes + cost.bytes <= this.#limits.commitBytes &&
      this.#keyBytes + cost.keyBytes <= this.#limits.commitKeyBytes;
    if (!fits) await this.flush();
    this.#pending.push(...mutations);
    this.#bytes += cost.bytes;
    this.#keyBytes += cost.keyBytes;
  }

  /** Commits what is pending (nothing when nothing is). */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const op = this.#kv.atomic().mutate(...this.#pending);
    this.#pending = [];
    this.#bytes = 0;
    this.#keyBytes = 0;
    const res = await op.commit();
    this.#commits++;
    // a commit without checks is never refused; a wrapper that refuses one must not pass silently
    if (!res.ok) throw new Error("A batched KV commit was refused");
  }
}

/** One unit of {@linkcode commitInBatches}: a mutation, or mutations that must share a commit. */
export type MutationGroup = Deno.KvMutation | readonly Deno.KvMutation[];

/**
 * Commits mutations in as few atomic commits as Deno KV's limits (or lower
 * ones) allow, in order, each group within one commit (see
 * {@linkcode CommitBatcher}). The groups may come from an async iterable,
 * read as the commits go.
 *
 * @param kv the store
 * @param groups mutations, or arrays of mutations that must share a commit
 * @param options lower limits, if wanted
 * @returns the number of commits made
 *
 * @example
 * ```ts
 * import { commitInBatches } from "./kv_batch.ts";
 * const kv = await Deno.openKv(":memory:");
 * const chunk = new Uint8Array(60 * 1024);
 * // 30 chunks of 60 KiB: 800 KiB per commit holds 13 of them
 * const sets = Array.from({ length: 30 }, (_, i) => ({ type: "set" as const, key: ["chunk", i], value: chunk }));
 * if (await commitInBatches(kv, sets) !== 3) throw new Error();
 * if ((await kv.get<Uint8Array>(["chunk", 29])).value?.length !== chunk.length) throw new Error();
 * kv.close();
 * ```
 */
export async function commitInBatches(
  kv: Deno.Kv,
  groups: Iterable<MutationGroup> | AsyncIterable<MutationGroup>,
  options: BatchOptions = {},
): Promise<number> {
  const batch = new CommitBatcher(kv, options);
  for await (const group of groups) {
    if (isMutationList(group)) await batch.add(...group);
    else await batch.add(group);
  }
  await batch.flush();
  return batch.commits;
}

function isMutationList(group: MutationGroup): group is readonly Deno.KvMutation[] {
  return Array.isArray(group);
}

/** A key, or an entry whose key is meant (what `kv.list` yields). */
export type KeyOrEntry = Deno.KvKey | { readonly key: Deno.KvKey };

/**
 * Deletes keys in as few atomic commits as Deno KV's limits (or lower
 * ones) allow: up to 1,000 a commit, fewer for long keys. The keys may be
 * entries, and may come from an async iterable such as a `kv.list` read
 * as the deletions go. Each commit is independent: a failure part way
 * leaves the earlier commits applied.
 *
 * @param kv the store
 * @param keys the keys, or entries (their keys are deleted)
 * @param options lower limits, if wanted
 * @returns the number of commits made
 *
 * @example
 * ```ts
 * import { commitInBatches, deleteInBatches } from "./kv_batch.ts";
 * const kv = await Deno.openKv(":memory:");
 * await commitInBatches(kv, Array.from({ length: 1500 }, (_, i) => ({ type: "set" as const, key: ["old", i], value: i })));
 * if (await deleteInBatches(kv, kv.list({ prefix: ["old"] })) !== 2) throw new Error();
 * if ((await Array.fromAsync(kv.list({ prefix: ["old"] }))).length !== 0) throw new Error();
 * if (await deleteInBatches(kv, []) !== 0) throw new Error("nothing to delete: no commit");
 * kv.close();
 * ```
 */
export function deleteInBatches(
  kv: Deno.Kv,
  keys: Iterable<KeyOrEntry> | AsyncIterable<KeyOrEntry>,
  options: BatchOptions = {},
): Promise<number> {
  return commitInBatches(kv, deletions(keys), options);
}

async function* deletions(
  keys: Iterable<KeyOrEntry> | AsyncIterable<KeyOrEntry>,
): AsyncGenerator<Deno.KvMutation> {
  for await (const k of keys) {
    yield { type: "delete", key: isKey(k) ? k : k.key };
  }
}

function isKey(k: KeyOrEntry): k is Deno.KvKey {
  return Array.isArray(k);
}
