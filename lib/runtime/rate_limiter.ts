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
 * - Counting is per process, in memory: an installation of N `serve`
 *   processes behind a load balancer allows up to N × the quota. Counting in
 *   the KV would add a write to every evaluation, the hot path.
 * - The Origin part of the key is the request's `Origin` only when it is in
 *   the token's `allowed_origins`; every other request of the triple
 *   (no Origin, or an Origin the token does not list) shares the bucket of
 *   the empty Origin. A non-browser caller can send any Origin, so trusting
 *   it would let one caller spread over unlimited buckets.
 * - Memory is bounded: at most `maxKeys` buckets (least recently used
 *   evicted first; a bucket that refilled completely is the same as no
 *   bucket, so eviction rarely forgets anything that matters).
 *
 * @module
 */
import { RateLimitError } from "../errors.ts";

/** Options of {@linkcode RateLimiter}. */
export interface RateLimiterOptions {
  /** Requests per minute per key; also the burst size. */
  perMinute: number;
  /** Most buckets kept (default 10,000). */
  maxKeys?: number;
  /** Clock in milliseconds, for tests (default `Date.now`). */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/** What {@linkcode RateLimiter.take} decided. */
export interface RateDecision {
  /** Whether the request may go on. */
  allowed: boolean;
  /** When refused: whole seconds until a request would be allowed (at least 1). */
  retryAfter: number;
  /** Requests left in the bucket after this one. */
  remaining: number;
}

/**
 * Token buckets keyed by (tenant, namespace, environment, Origin).
 *
 * @example
 * ```ts
 * import { RateLimiter } from "./rate_limiter.ts";
 * let now = 0;
 * const limiter = new RateLimiter({ perMinute: 2, now: () => now });
 * const key = RateLimiter.key("acme", "web", "staging", "https://app.example");
 * if (!limiter.take(key).allowed || !limiter.take(key).allowed) throw new Error();
 * const refused = limiter.take(key);
 * if (refused.allowed || refused.retryAfter !== 30) throw new Error();
 * now += 30_000;
 * if (!limiter.take(key).allowed) throw new Error();
 * ```
 */
export class RateLimiter {
  readonly #perMinute: number;
  readonly #ratePerMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimiterOptions) {
    if (!(options.perMinute > 0)) throw new RangeError("perMinute must be positive");
    this.#perMinute = options.perMinute;
    this.#ratePerMs = options.perMinute / 60_000;
    this.#maxKeys = options.maxKeys ?? 10_000;
    this.#now = options.now ?? Date.now;
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

  /** How many buckets are kept now. */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Takes one request from the bucket of `key`.
   *
   * @param key a key from {@linkcode RateLimiter.key}
   * @returns the decision
   */
  take(key: string): RateDecision {
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
    const waitMs = (1 - b.tokens) / this.#ratePerMs;
    return { allowed: false, retryAfter: Math.max(1, Math.ceil(waitMs / 1000)), remaining: 0 };
  }

  /**
   * Like {@linkcode RateLimiter.take}, but throws 429 when refused.
   *
   * @param key a key from {@linkcode RateLimiter.key}
   * @throws {RateLimitError} when the bucket is empty
   */
  check(key: string): void {
    const d = this.take(key);
    if (!d.allowed) {
      throw new RateLimitError(
        `Too many evaluation requests for this environment and Origin: ` +
          `the limit is ${this.#perMinute} per minute; retry in ${d.retryAfter} s`,
        d.retryAfter,
      );
    }
  }
}
