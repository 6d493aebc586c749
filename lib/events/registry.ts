/**
 * Concurrent event-stream connections per credential, in this process. Over
 * the limit a new connection is refused with 429 `rate_limit_exceeded`.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";

/**
 * Counts connections per credential id.
 *
 * @example
 * ```ts
 * import { ConnectionRegistry } from "./registry.ts";
 * const r = new ConnectionRegistry(1);
 * const release = r.acquire("tok_1");
 * let status = 0;
 * try { r.acquire("tok_1"); } catch (e) { status = (e as { status: number }).status; }
 * release();
 * if (status !== 429 || r.count("tok_1") !== 0) throw new Error();
 * ```
 */
export class ConnectionRegistry {
  readonly #limit: number;
  readonly #counts = new Map<string, number>();

  /** @param limit connections allowed per credential */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Open connections of a credential. */
  count(id: string): number {
    return this.#counts.get(id) ?? 0;
  }

  /** Open connections in total. */
  get total(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c;
    return n;
  }

  /**
   * Takes a slot for a credential, or throws 429 `rate_limit_exceeded`.
   * Returns the function that gives the slot back (idempotent).
   */
  acquire(id: string): () => void {
    const n = this.count(id);
    if (n >= this.#limit) {
      throw new CfgtoolError(
        "rate_limit_exceeded",
        `Too many concurrent event streams for this credential: the limit is ${this.#limit}`,
        { status: 429, details: { limit: this.#limit, retry_after: 1 } },
      );
    }
    this.#counts.set(id, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(id) - 1;
      if (left <= 0) this.#counts.delete(id);
      else this.#counts.set(id, left);
    };
  }
}
