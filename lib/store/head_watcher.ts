/**
 * Change detection for namespace heads, shared by every stream of a process
 * (docs/events.md, "Several server processes"). Two layers: `kv.watch` on each watched head (immediate for
 * this process's writes and on KV Connect backends), and ONE poller per
 * process that reads every watched head with batched `getMany` calls at a
 * fixed interval (the embedded SQLite backend does not tell one process about
 * another's writes). Listeners are called once per new head versionstamp,
 * whichever layer saw it first. Nothing here is per connection: a thousand
 * subscribers of one namespace cost one watch and one key in the poll.
 *
 * @module
 */
import { headKey } from "./keys.ts";
import { getManyChunked } from "./kv_batch.ts";
import type { Head } from "./versions.ts";

/** Called with the new head (null when the namespace was deleted). */
export type HeadListener = (head: Head | null) => void;

/** Options of {@linkcode HeadWatcher}. */
export interface HeadWatcherOptions {
  /** Poll interval in milliseconds (default 250). */
  pollIntervalMs?: number;
  /** Use `kv.watch` as well as polling (default true). */
  useWatch?: boolean;
}

interface Watched {
  tenant: string;
  namespace: string;
  listeners: Set<HeadListener>;
  versionstamp: string | null | undefined;
  stopWatch?: () => void;
}

/**
 * Watches namespace heads for one process.
 *
 * @example
 * ```ts
 * import { HeadWatcher } from "./head_watcher.ts";
 * const kv = await Deno.openKv(":memory:");
 * const watcher = new HeadWatcher(kv, { pollIntervalMs: 20 });
 * const seen: number[] = [];
 * const stop = watcher.watch("acme", "web", (h) => h && seen.push(h.version));
 * await new Promise((r) => setTimeout(r, 50)); // the baseline read
 * await kv.set(["ns_head", "acme", "web"], { version: 1, closure_hash: "x", environments: {} });
 * for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
 * stop();
 * watcher.close();
 * kv.close();
 * if (seen[0] !== 1) throw new Error(String(seen));
 * ```
 */
export class HeadWatcher {
  readonly #kv: Deno.Kv;
  readonly #interval: number;
  readonly #useWatch: boolean;
  readonly #watched = new Map<string, Watched>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  #closed = false;

  constructor(kv: Deno.Kv, options: HeadWatcherOptions = {}) {
    this.#kv = kv;
    this.#interval = options.pollIntervalMs ?? 250;
    this.#useWatch = options.useWatch ?? true;
  }

  /** How many namespaces are watched now. */
  get size(): number {
    return this.#watched.size;
  }

  /**
   * Calls `listener` whenever the head of (tenant, namespace) changes, until
   * the returned function is called. The current head is not replayed: the
   * first read of a newly watched head (started at once) is the baseline, so
   * callers that must not miss a version read the head themselves after
   * watching (as the stream feeds do when they build their first snapshot).
   */
  watch(tenant: string, namespace: string, listener: HeadListener): () => void {
    if (this.#closed) throw new Error("HeadWatcher is closed");
    const id = `${tenant}\u0000${namespace}`;
    let w = this.#watched.get(id);
    if (w === undefined) {
      w = { tenant, namespace, listeners: new Set(), versionstamp: undefined };
      this.#watched.set(id, w);
      this.#prime(w);
      if (this.#useWatch) this.#startWatch(w);
      this.#ensureTimer();
    }
    w.listeners.add(listener);
    const entry = w;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.#watched.get(id) === entry) {
        entry.stopWatch?.();
        this.#watched.delete(id);
        if (this.#watched.size === 0) this.#stopTimer();
      }
    };
  }

  /** Stops the poller and every watch. */
  close(): void {
    this.#closed = true;
    this.#stopTimer();
    for (const w of this.#watched.values()) w.stopWatch?.();
    this.#watched.clear();
  }

  /** Polls every watched head once (also what the timer does). */
  async poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const all = [...this.#watched.values()];
      // every getMany at once: one poll is one round of reads
      const entries = await getManyChunked<Head>(
        this.#kv,
        all.map((w) => headKey(w.tenant, w.namespace)),
        { inFlight: Infinity },
      );
      entries.forEach((e, i) => this.#observe(all[i]!, e));
    } catch {
      // the KV may be closing; the next tick tries again
    } finally {
      this.#polling = false;
    }
  }

  #observe(w: Watched, entry: Deno.KvEntryMaybe<Head>): void {
    if (w.versionstamp === undefined) {
      w.versionstamp = entry.versionstamp; // first sight: the baseline, not a change
      return;
    }
    if (entry.versionstamp === w.versionstamp) return;
    if (
      entry.versionstamp !== null && w.versionstamp !== null &&
      entry.versionstamp < w.versionstamp
    ) {
      return; // an older read raced a newer one
    }
    w.versionstamp = entry.versionstamp;
    for (const l of [...w.listeners]) {
      try {
        l(entry.value);
      } catch {
        // one listener's failure must not stop the others
      }
    }
  }

  #prime(w: Watched): void {
    this.#kv.get<Head>(headKey(w.tenant, w.namespace)).then((e) => {
      if (w.versionstamp === undefined) w.versionstamp = e.versionstamp;
    }, () => {});
  }

  #startWatch(w: Watched): void {
    const stream = this.#kv.watch<[Head]>([headKey(w.tenant, w.namespace)]);
    const reader = stream.getReader();
    let stopped = false;
    w.stopWatch = () => {
      stopped = true;
      reader.cancel().catch(() => {});
    };
    (async () => {
      while (!stopped) {
        const { value, done } = await reader.read();
        if (done || value === undefined) return;
        this.#observe(w, value[0]);
      }
    })().catch(() => {});
  }

  #ensureTimer(): void {
    if (this.#timer !== undefined || this.#closed) return;
    const timer = setInterval(() => void this.poll(), this.#interval);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
