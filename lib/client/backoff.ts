/**
 * Jittered exponential backoff for the FlagClient's reconnects and closure
 * re-fetches, and an abortable sleep. Web APIs only (Deno and Node).
 *
 * @module
 */

/** Options of {@linkcode Backoff}. */
export interface BackoffOptions {
  /** First delay before jitter, ms (default 250). */
  initialMs?: number;
  /** Largest delay before jitter, ms (default 30,000). */
  maxMs?: number;
  /** Growth factor per attempt (default 2). */
  factor?: number;
  /**
   * Share of the delay that is random, 0 to 1 (default 0.5): the delay is
   * drawn uniformly from `[base × (1 − jitter), base]`.
   */
  jitter?: number;
  /** Random source in [0, 1) (default `Math.random`). */
  random?: () => number;
}

/**
 * The delay of one attempt: `min(maxMs, initialMs × factor^attempt)`, of
 * which the `jitter` share is random.
 *
 * @param attempt the attempt number, from 0
 * @param options the curve
 * @returns the delay in ms
 *
 * @example
 * ```ts
 * import { backoffDelay } from "./backoff.ts";
 * const d = backoffDelay(3, { initialMs: 100, maxMs: 10_000, jitter: 0 });
 * if (d !== 800) throw new Error(String(d));
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = options.initialMs ?? 250;
  const max = options.maxMs ?? 30_000;
  const factor = options.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.5));
  const random = options.random ?? Math.random;
  const base = Math.min(max, initial * Math.pow(factor, Math.max(0, attempt)));
  return Math.round(base * (1 - jitter * random()));
}

/**
 * A backoff sequence: each {@linkcode Backoff.next} grows the delay until
 * {@linkcode Backoff.reset}.
 *
 * @example
 * ```ts
 * import { Backoff } from "./backoff.ts";
 * const b = new Backoff({ initialMs: 10, maxMs: 40, jitter: 0 });
 * const seq = [b.next(), b.next(), b.next(), b.next()];
 * if (seq.join() !== "10,20,40,40") throw new Error(seq.join());
 * b.reset();
 * if (b.next() !== 10) throw new Error();
 * ```
 */
export class Backoff {
  readonly #options: BackoffOptions;
  #attempt = 0;

  /** @param options the curve */
  constructor(options: BackoffOptions = {}) {
    this.#options = options;
  }

  /** Attempts since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /**
   * The next delay.
   *
   * @returns ms to wait
   */
  next(): number {
    return backoffDelay(this.#attempt++, this.#options);
  }

  /** Starts the sequence again. */
  reset(): void {
    this.#attempt = 0;
  }
}

/**
 * Waits `ms`, or less when `signal` aborts (it then resolves, never
 * rejects; callers check the signal). The timer is always cleared.
 *
 * @param ms how long
 * @param signal ends the wait early
 * @returns resolves when the time is up or the signal aborted
 *
 * @example
 * ```ts
 * import { sleep } from "./backoff.ts";
 * const ac = new AbortController();
 * ac.abort();
 * const t = Date.now();
 * await sleep(10_000, ac.signal);
 * if (Date.now() - t > 1000) throw new Error("did not stop");
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}
