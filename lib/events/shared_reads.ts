/**
 * Reads of one key that many callers ask for at the same moment (ten
 * thousand event streams opening on one namespace, each checking that it
 * exists), made once for all of them without any caller seeing an answer
 * older than its question: a caller that asks while a read of its key is
 * under way waits for the next read, which starts as soon as that one ends
 * and answers everyone who asked meanwhile. Every caller so gets a value
 * read after it asked, as if it had read alone, and a storm of callers
 * costs one read per read time instead of one each.
 *
 * @module
 */

/** The callers waiting for one read. */
interface Round<V> {
  promise: Promise<V>;
  resolve: (v: V) => void;
  reject: (err: unknown) => void;
}

/**
 * Shares reads of a key between the callers that ask while one is under
 * way.
 *
 * @example
 * ```ts
 * import { SharedReads } from "./shared_reads.ts";
 * let reads = 0;
 * let value = 1;
 * const shared = new SharedReads<string, number>(async () => {
 *   reads++;
 *   const seen = value; // what the store holds when the read starts
 *   await new Promise((r) => setTimeout(r, 5));
 *   return seen;
 * });
 * const first = shared.read("k"); // starts a read at once
 * value = 2; // changed after the first read started
 * const later = [shared.read("k"), shared.read("k"), shared.read("k")];
 * if (await first !== 1) throw new Error("the first read");
 * for (const v of await Promise.all(later)) {
 *   if (v !== 2) throw new Error("a caller never sees a value read before it asked");
 * }
 * if (reads !== 2) throw new Error(`one read for the three later callers, not ${reads - 1}`);
 * ```
 */
export class SharedReads<K, V> {
  readonly #load: (key: K) => Promise<V>;
  /** Keys with a read under way. */
  readonly #running = new Set<K>();
  /** Per key, the callers that wait for the read after the current one. */
  readonly #next = new Map<K, Round<V>>();

  /**
   * @param load reads one key (called once per round, never twice at once for a key)
   */
  constructor(load: (key: K) => Promise<V>) {
    this.#load = load;
  }

  /**
   * A value of `key` read after this call.
   *
   * @param key what to read
   * @returns the value (or the read's error)
   */
  read(key: K): Promise<V> {
    if (!this.#running.has(key)) return this.#start(key);
    let round = this.#next.get(key);
    if (round === undefined) {
      let resolve!: (v: V) => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<V>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#next.set(key, round = { promise, resolve, reject });
    }
    return round.promise;
  }

  /** Starts a read of `key`; when it ends, the callers that asked meanwhile get the next one. */
  #start(key: K): Promise<V> {
    this.#running.add(key);
    const run = (async () => await this.#load(key))();
    const after = () => {
      this.#running.delete(key);
      const round = this.#next.get(key);
      if (round === undefined) return;
      this.#next.delete(key);
      this.#start(key).then(round.resolve, round.reject);
    };
    run.then(after, after);
    return run;
  }
}
