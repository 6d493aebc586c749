/**
 * Per-process memo of generated closure archives. An archive is a pure
 * function of (tenant, namespace, version content, subscription), so the
 * key includes the version's content-addressed tree id: a namespace deleted
 * and re-created with the same slug never hits a stale entry. Bounded by
 * entry count and total bytes; least recently used entries go first.
 *
 * @module
 */

/** A generated closure archive. */
export interface MemoEntry {
  /** The tar.gz bytes. */
  archive: Uint8Array;
  /** The closure hash. */
  closureHash: string;
  /** Size of the uncompressed tar, bytes (`snapshot_size_bytes`). */
  tarSize: number;
}

/** Bounds of a {@linkcode ClosureMemo}. */
export interface MemoLimits {
  /** Most entries (default 512). */
  maxEntries: number;
  /** Most archive bytes in total (default 64 MiB). */
  maxBytes: number;
}

/**
 * A bounded LRU map of closure archives.
 *
 * @example
 * ```ts
 * import { ClosureMemo } from "./memo.ts";
 * const memo = new ClosureMemo({ maxEntries: 1, maxBytes: 1024 });
 * const e = { archive: new Uint8Array(3), closureHash: "sha256:x", tarSize: 1024 };
 * memo.set("a", e);
 * memo.set("b", e);
 * if (memo.get("a") !== undefined || memo.get("b") !== e) throw new Error();
 * ```
 */
export class ClosureMemo {
  readonly #limits: MemoLimits;
  readonly #map = new Map<string, MemoEntry>();
  readonly #pending = new Map<string, Promise<MemoEntry>>();
  #bytes = 0;

  constructor(limits: Partial<MemoLimits> = {}) {
    this.#limits = { maxEntries: 512, maxBytes: 64 * 1024 * 1024, ...limits };
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size;
  }

  /** Total archive bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The entry for a key (and marks it recently used), or undefined. */
  get(key: string): MemoEntry | undefined {
    const e = this.#map.get(key);
    if (e !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, e);
    }
    return e;
  }

  /** Stores an entry, evicting the least recently used ones over the bounds. */
  set(key: string, entry: MemoEntry): void {
    const old = this.#map.get(key);
    if (old !== undefined) {
      this.#bytes -= old.archive.length;
      this.#map.delete(key);
    }
    if (entry.archive.length > this.#limits.maxBytes) return;
    this.#map.set(key, entry);
    this.#bytes += entry.archive.length;
    for (const [k, e] of this.#map) {
      if (this.#map.size <= this.#limits.maxEntries && this.#bytes <= this.#limits.maxBytes) break;
      this.#map.delete(k);
      this.#bytes -= e.archive.length;
    }
  }

  /**
   * The entry for a key, generating it once when absent: concurrent callers
   * of the same key share one generation.
   */
  async getOrCreate(key: string, make: () => Promise<MemoEntry>): Promise<MemoEntry> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const pending = this.#pending.get(key);
    if (pending !== undefined) return await pending;
    const p = make().then((e) => {
      this.set(key, e);
      return e;
    }).finally(() => this.#pending.delete(key));
    this.#pending.set(key, p);
    return await p;
  }
}

/**
 * The memo key of a closure archive.
 *
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version manifest version
 * @param tree the version's tree blob id
 * @param subscription canonical flag list
 * @returns the key
 *
 * @example
 * ```ts
 * import { memoKey } from "./memo.ts";
 * if (!memoKey("acme", "web", 1, "abc", "*").includes("abc")) throw new Error();
 * ```
 */
export function memoKey(
  tenant: string,
  namespace: string,
  version: number,
  tree: string,
  subscription: string,
): string {
  return `${tenant}\u0000${namespace}\u0000${version}\u0000${tree}\u0000${subscription}`;
}
