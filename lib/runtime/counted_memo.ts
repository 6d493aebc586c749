/**
 * A {@linkcode ClosureMemo} that counts its lookups, for the cache metrics
 * (`cfgtool_cache_requests_total{cache="closures"}`): every `get`, and so
 * every `getOrCreate`, is a hit or a miss.
 *
 * @module
 */
import { ClosureMemo, type MemoEntry } from "../closure/memo.ts";

/**
 * A closure memo with hit and miss counters.
 *
 * @example
 * ```ts
 * import { CountedMemo } from "./counted_memo.ts";
 * const memo = new CountedMemo();
 * const e = { archive: new Uint8Array(3), closureHash: "sha256:x", tarSize: 1024 };
 * await memo.getOrCreate("a", () => Promise.resolve(e));
 * await memo.getOrCreate("a", () => Promise.resolve(e));
 * if (memo.hits !== 1 || memo.misses !== 1) throw new Error();
 * ```
 */
export class CountedMemo extends ClosureMemo {
  /** Lookups that found their entry. */
  hits = 0;
  /** Lookups that did not. */
  misses = 0;

  /** The entry for a key (and marks it recently used), or undefined; counted. */
  override get(key: string): MemoEntry | undefined {
    const e = super.get(key);
    if (e === undefined) this.misses++;
    else this.hits++;
    return e;
  }
}
