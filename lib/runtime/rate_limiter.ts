/**
 * The rate limit of `namespace-client` evaluation (docs/ofrep.md:
 * per (tenant, namespace, environment, Origin), not per token), as a token
 * bucket per key: `perMinute` requests of burst, refilled continuously at
 * `perMinute / 60` per second. A refused request is 429
 * `rate_limit_exceeded` with `Retry-After` (whole seconds until one request
 * is allowed again).
 *
 * Scope and limits, on purpose:
 *
 * - Without a KV the counting is per process, in memory. With one (as the
 *   runtime builds it) the bucket is the installation's: it lives in the KV
 *   (lib/store/leases.ts), and each process leases a block of its tokens
 *   at a time (one atomic check-and-set on the bucket; more when more
 *   requests wait for the lease, which spend them at once), spends them from
 *   memory and gives back what it did not use within `holdMs`. So the KV
 *   sees one write per block, not one per evaluation; a process that finds
 *   the bucket empty refuses from memory until the bucket would hold a
 *   token again, so refusals cost no KV write either. The price is a
 *   bounded error: the tokens leased but not spent yet sit outside the
 *   bucket, at most one block per process, so N processes admit at most
 *   N × `blockSize` requests over what one exact bucket would (the default
 *   block is 1/50 of the quota: at most 2 % of the quota per process), and
 *   a request may be refused while up to (N - 1) × `blockSize` tokens wait
 *   unused in other processes (until they give them back). A process that
 *   dies takes its unused block with it (those requests stay refused until
 *   the bucket refills).
 * - The Origin part of the key is the request's `Origin` only when it is in
 *   the token's `allowed_origins`; every other request of the triple
 *   (no Origin, or an Origin the token does not list) shares the bucket of
 *   the empty Origin. A non-browser caller can send any Origin, so trusting
 *   it would let one caller spread over unlimited buckets.
 * - Memory is bounded: at most `maxKeys` buckets (least recently used
 *   evicted first; a bucket that refilled completely is the same as no
 *   bucket, so eviction rarely forgets anything that matters; an evicted
 *   block is given back).
 *
 * @module
 */
import { RateLimitError } from "../errors.ts";
import { type BucketUpdate, type SharedBucket, updateBucket } from "../store/leases.ts";

/** Options of {@linkcode RateLimiter}. */
export interface RateLimiterOptions {
  /** Requests per minute per key; also the burst size. */
  perMinute: number;
  /** Most buckets kept (default 10,000). */
  maxKeys?: number;
  /** Clock in milliseconds, for tests (default `Date.now`). */
  now?: () => number;
  /** Count in this store, for the whole installation (default: in this process only). */
  kv?: Deno.Kv;
  /** With `kv`: tokens leased from the shared bucket at a time (default 1/50 of `perMinute`, at least 1). */
  blockSize?: number;
  /** With `kv`: leased tokens unused for this long go back to the shared bucket, ms (default 10 s). */
  holdMs?: number;
  /** Aborting it stops giving tokens back (the server is shutting down). */
  signal?: AbortSignal;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/** Tokens of a shared bucket this process holds. */
interface Block {
  /** Leased and not spent yet. */
  tokens: number;
  /** When a token was last spent or leased, ms. */
  lastUse: number;
  /** The shared bucket was empty: refuse from memory until then, ms. */
  emptyUntil: number;
  /** The lease in flight, if any. */
  pending: Promise<void> | null;
  /** Requests waiting for a lease. */
  waiting: number;
}

/** What a lease got from the shared bucket. */
interface Grant {
  granted: number;
  /** When nothing was granted: ms until the bucket holds a token. */
  waitMs: number;
}

/** What {@linkcode RateLimiter.take} decided. */
export interface RateDecision {
  /** Whether the request may go on. */
  allowed: boolean;
  /** When refused: whole seconds until a request would be allowed (at least 1). */
  retryAfter: number;
  /** Requests left in the bucket after this one (with a KV: in this process's block). */
  remaining: number;
}

/** The default block of a quota: 1/50 of it, at least 1. */
const BLOCK_FRACTION = 50;
/** A waiting request gives up after this many leases that others emptied first. */
const MAX_LEASE_ROUNDS = 8;

/**
 * Token buckets keyed by (tenant, namespace, environment, Origin).
 *
 * @example
 * ```ts
 * import { type RateDecision, RateLimiter } from "./rate_limiter.ts";
 * let now = 0;
 * const limiter = new RateLimiter({ perMinute: 2, now: () => now });
 * const key = RateLimiter.key("acme", "web", "staging", "https://app.example");
 * // without a KV every decision is immediate (no promise)
 * const first = limiter.take(key) as RateDecision;
 * if (!first.allowed || !(await limiter.take(key)).allowed) throw new Error();
 * const refused = await limiter.take(key);
 * if (refused.allowed || refused.retryAfter !== 30) throw new Error();
 * now += 30_000;
 * if (!(await limiter.take(key)).allowed) throw new Error();
 * ```
 *
 * @example Shared through the KV: two processes spend one quota
 * ```ts
 * import { RateLimiter } from "./rate_limiter.ts";
 * const kv = await Deno.openKv(":memory:");
 * const a = new RateLimiter({ perMinute: 4, kv, blockSize: 1, now: () => 0 });
 * const b = new RateLimiter({ perMinute: 4, kv, blockSize: 1, now: () => 0 });
 * let allowed = 0;
 * for (let i = 0; i < 6; i++) if ((await (i % 2 ? a : b).take("k")).allowed) allowed++;
 * if (allowed !== 4) throw new Error(`${allowed}`);
 * kv.close();
 * ```
 */
export class RateLimiter {
  readonly #perMinute: number;
  readonly #ratePerMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #kv: Deno.Kv | undefined;
  readonly #blockSize: number;
  readonly #holdMs: number;
  readonly #blocks = new Map<string, Block>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  constructor(options: RateLimiterOptions) {
    if (!(options.perMinute > 0)) throw new RangeError("perMinute must be positive");
    this.#perMinute = options.perMinute;
    this.#ratePerMs = options.perMinute / 60_000;
    this.#maxKeys = options.maxKeys ?? 10_000;
    this.#now = options.now ?? Date.now;
    this.#kv = options.kv;
    this.#blockSize = Math.max(
      1,
      Math.floor(options.blockSize ?? options.perMinute / BLOCK_FRACTION),
    );
    this.#holdMs = options.holdMs ?? 10_000;
    if (options.signal?.aborted) this.#stop();
    else options.signal?.addEventListener("abort", () => this.#stop(), { once: true });
  }

  /**
   * The bucket key of a request.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @param environment environment slug
   * @param origin the Origin that counts (see the module doc), or "" for none
   * @returns the key
   */
  static key(tenant: string, namespace: string, environment: string, origin: string): string {
    return `${tenant}\u0000${namespace}\u0000${environment}\u0000${origin}`;
  }

  /** How many buckets (with a KV: blocks) are kept now. */
  get size(): number {
    return this.#kv === undefined ? this.#buckets.size : this.#blocks.size;
  }

  /** Tokens leased at a time from a shared bucket. */
  get blockSize(): number {
    return this.#blockSize;
  }

  /**
   * Takes one request from the bucket of `key`. Without a KV, or while this
   * process holds tokens of the key (or knows its bucket is empty), the
   * decision is immediate; otherwise it is a promise that settles once a
   * block was leased from the shared bucket.
   *
   * @param key a key from {@linkcode RateLimiter.key}
   * @returns the decision
   */
  take(key: string): RateDecision | Promise<RateDecision> {
    if (this.#kv === undefined) return this.#takeLocal(key);
    const block = this.#block(key);
    return this.#decide(block) ?? this.#takeLeased(key, block, this.#kv);
  }

  /**
   * Like {@linkcode RateLimiter.take}, but throws (or rejects with) 429 when
   * refused. Returns nothing when it decided at once, a promise otherwise.
   *
   * @param key a key from {@linkcode RateLimiter.key}
   * @throws {RateLimitError} when the bucket is empty
   */
  check(key: string): void | Promise<void> {
    const d = this.take(key);
    if (d instanceof Promise) return d.then((x) => this.#enforce(x));
    this.#enforce(d);
  }

  #enforce(d: RateDecision): void {
    if (!d.allowed) {
      throw new RateLimitError(
        `Too many evaluation requests for this environment and Origin: ` +
          `the limit is ${this.#perMinute} per minute; retry in ${d.retryAfter} s`,
        d.retryAfter,
      );
    }
  }

  #takeLocal(key: string): RateDecision {
    const now = this.#now();
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.#perMinute, updated: now };
      if (this.#buckets.size >= this.#maxKeys) {
        const oldest = this.#buckets.keys().next();
        if (!oldest.done) this.#buckets.delete(oldest.value);
      }
    } else {
      this.#buckets.delete(key); // re-inserted below: Map order is the LRU order
      const elapsed = Math.max(0, now - b.updated);
      b.tokens = Math.min(this.#perMinute, b.tokens + elapsed * this.#ratePerMs);
      b.updated = now;
    }
    this.#buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { allowed: true, retryAfter: 0, remaining: Math.floor(b.tokens) };
    }
    return this.#refused((1 - b.tokens) / this.#ratePerMs);
  }

  #refused(waitMs: number): RateDecision {
    return { allowed: false, retryAfter: Math.max(1, Math.ceil(waitMs / 1000)), remaining: 0 };
  }

  /** The block of `key`, made most recently used (a new one when absent). */
  #block(key: string): Block {
    let block = this.#blocks.get(key);
    if (block === undefined) {
      block = { tokens: 0, lastUse: 0, emptyUntil: 0, pending: null, waiting: 0 };
      if (this.#blocks.size >= this.#maxKeys) {
        const oldest = this.#blocks.entries().next();
        if (!oldest.done) {
          this.#blocks.delete(oldest.value[0]);
          this.#giveBack(oldest.value[0], oldest.value[1]);
        }
      }
    } else {
      this.#blocks.delete(key); // re-inserted below: Map order is the LRU order
    }
    this.#blocks.set(key, block);
    return block;
  }

  /** Spends a held token, or refuses while the shared bucket is known empty; null: lease first. */
  #decide(block: Block): RateDecision | null {
    const now = this.#now();
    if (block.tokens >= 1) {
      block.tokens -= 1;
      block.lastUse = now;
      return { allowed: true, retryAfter: 0, remaining: block.tokens };
    }
    if (now < block.emptyUntil) return this.#refused(block.emptyUntil - now);
    return null;
  }

  async #takeLeased(key: string, block: Block, kv: Deno.Kv): Promise<RateDecision> {
    block.waiting++;
    try {
      for (let round = 0; round < MAX_LEASE_ROUNDS; round++) {
        block.pending ??= this.#lease(key, block, kv).finally(() => {
          block.pending = null;
        });
        await block.pending;
        const d = this.#decide(block);
        if (d !== null) return d;
      }
      return this.#refused(1000); // others took every token leased meanwhile
    } finally {
      block.waiting--;
    }
  }

  /**
   * Leases a block of the shared bucket of `key` (one atomic check-and-set):
   * enough for every request waiting, and at most `blockSize` more.
   */
  async #lease(key: string, block: Block, kv: Deno.Kv): Promise<void> {
    const now = this.#now();
    const want = Math.max(this.#blockSize, block.waiting);
    const grant = await updateBucket(
      kv,
      key,
      (b): BucketUpdate<Grant> => {
        const { tokens, at } = this.#refill(b, now);
        const granted = Math.min(want, Math.floor(tokens));
        if (granted === 0) {
          return { next: null, result: { granted, waitMs: (1 - tokens) / this.#ratePerMs } };
        }
        return { next: { tokens: tokens - granted, at }, result: { granted, waitMs: 0 } };
      },
      this.#expireMs(),
    );
    block.lastUse = now;
    if (grant.granted > 0) {
      block.tokens += grant.granted;
      this.#startSweeper();
    } else {
      block.emptyUntil = now + grant.waitMs;
    }
  }

  /** The shared bucket at `now` (null: never written or expired, so full). */
  #refill(b: SharedBucket | null, now: number): SharedBucket {
    if (b === null) return { tokens: this.#perMinute, at: now };
    const elapsed = Math.max(0, now - b.at);
    return {
      tokens: Math.min(this.#perMinute, b.tokens + elapsed * this.#ratePerMs),
      at: Math.max(now, b.at),
    };
  }

  /** A stored bucket would be full this long after it was written, ms. */
  #expireMs(): number {
    return Math.ceil(this.#perMinute / this.#ratePerMs) + 1000;
  }

  /** Returns the unused tokens of a block to the shared bucket (in the background). */
  #giveBack(key: string, block: Block): void {
    const n = Math.floor(block.tokens);
    block.tokens = 0;
    if (n <= 0 || this.#stopped || this.#kv === undefined) return;
    const now = this.#now();
    void updateBucket(
      this.#kv,
      key,
      (b): BucketUpdate<void> => {
        if (b === null) return { next: null, result: undefined }; // full already
        const { tokens, at } = this.#refill(b, now);
        return { next: { tokens: Math.min(this.#perMinute, tokens + n), at }, result: undefined };
      },
      this.#expireMs(),
    ).catch(() => {}); // lost tokens only refuse a little early
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined || this.#stopped) return;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(1, Math.floor(this.#holdMs / 2)));
    Deno.unrefTimer(this.#sweeper);
  }

  /** Gives back the blocks unused for `holdMs`; stops once no block holds tokens. */
  #sweep(): void {
    const now = this.#now();
    let holding = false;
    for (const [key, block] of this.#blocks) {
      if (block.tokens < 1) continue;
      if (now - block.lastUse >= this.#holdMs) this.#giveBack(key, block);
      else holding = true;
    }
    if (!holding) this.#stopSweeper();
  }

  #stopSweeper(): void {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #stop(): void {
    this.#stopped = true;
    this.#stopSweeper();
  }
}
