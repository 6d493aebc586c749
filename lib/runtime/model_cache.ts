/**
 * The per-process cache of compiled evaluation models: for each
 * (tenant, namespace) the head last seen and the model compiled from that
 * head's version. A model is compiled once per version (files read from the
 * KV, parsed, compiled); concurrent requests that miss share one
 * compilation. At most `maxEntries` namespaces are kept, least recently
 * used evicted first.
 *
 * ## Consistency
 *
 * The hot path does not read the head from the KV: each cached namespace
 * is watched through the process's {@linkcode HeadWatcher}, whose
 * notifications replace the cached head. What a request sees:
 *
 * - **A push through this process** (manifest upload, rollback, namespace
 *   deletion) is visible to every request that starts after the push's
 *   response: the HTTP layer calls {@linkcode ModelCache.invalidate} before
 *   it answers the write (lib/http/evaluate.ts, `invalidateOnWrite`), and an
 *   invalidated namespace reads its head from the KV again.
 * - **A push through another process** of the installation is visible
 *   once this process's watcher sees it: at once on KV Connect backends
 *   (`kv.watch`), within the poll interval (`--head-poll-ms`, default
 *   250 ms) on the embedded SQLite backend.
 * - **A caller that knows a version** can ask for at least that version
 *   (`minVersion`): the cache then reads the head when it holds an older
 *   one. OFREP refetches triggered by the event stream do this, so a
 *   browser notified by one process is never answered from an older head by
 *   another.
 * - **A new entry** is not trusted until its watch has certainly taken its
 *   baseline (two poll intervals): until then each request reads the head
 *   (reads are shared by concurrent requests), so a push racing the start
 *   of the watch cannot be missed.
 *
 * @module
 */
import { type CompiledModel, compileManifestInSlices } from "../flags/evaluate.ts";
import type { Manifest } from "../flags/model.ts";
import { ManifestWorkers } from "../workers/manifest_workers.ts";
import { warmPatterns } from "../linear_regex.ts";
import type { Logger } from "../log.ts";
import type { HeadWatcher } from "../store/head_watcher.ts";
import { getHead, type Head, readFiles } from "../store/versions.ts";

/** A namespace's head and the model compiled from it. */
export interface CachedModel {
  /** The head the model was compiled from. */
  head: Head;
  /** The compiled model of `head.version`. */
  model: CompiledModel;
}

/** Options of {@linkcode ModelCache}. */
export interface ModelCacheOptions {
  /** Namespaces kept at most (default 256). */
  maxEntries?: number;
  /**
   * How long a new entry reads the head on every request before trusting
   * its watch, ms (default 500: two default poll intervals).
   */
  settleMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
  /**
   * Where the warnings of a compiled version go, once per version compiled
   * (a `matches` pattern of an older stored version that never holds).
   */
  log?: Logger;
  /**
   * The process's manifest workers, which load large versions off the event
   * loop (default: a pool of this cache's own, closed with it).
   */
  workers?: ManifestWorkers;
}

/** Options of {@linkcode ModelCache.get}. */
export interface GetOptions {
  /** Read the head from the KV when the cached one is older than this version. */
  minVersion?: number;
}

interface Entry {
  tenant: string;
  namespace: string;
  /** The trusted head; undefined when it must be read from the KV. */
  head: Head | null | undefined;
  /** Bumped by every notification and invalidation. */
  gen: number;
  /** A KV read of the head in flight, with the generation it started in. */
  reading: { gen: number; promise: Promise<Head | null> } | null;
  /** The newest model, or its compilation in flight. */
  compiled: { version: number; hash: string; promise: Promise<CompiledModel> } | null;
  /** Before this time the watch is not trusted (ms). */
  trustAfter: number;
  unwatch: () => void;
}

/**
 * Compiled models per namespace, invalidated by head notifications.
 *
 * @example
 * ```ts
 * import { ModelCache } from "./model_cache.ts";
 * import { HeadWatcher } from "../store/head_watcher.ts";
 * const kv = await Deno.openKv(":memory:");
 * const heads = new HeadWatcher(kv);
 * const cache = new ModelCache(kv, heads);
 * if (await cache.get("acme", "web") !== null) throw new Error("no such namespace");
 * cache.close();
 * heads.close();
 * kv.close();
 * ```
 */
export class ModelCache {
  readonly #kv: Deno.Kv;
  readonly #heads: HeadWatcher;
  readonly #max: number;
  readonly #settle: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #workers: ManifestWorkers;
  readonly #ownWorkers: boolean;
  readonly #entries = new Map<string, Entry>();
  /** The entry used last (already at the end of the LRU order). */
  #recent: Entry | undefined;
  #closed = false;
  /** Compilations done so far (for tests and metrics). */
  compilations = 0;
  /** Head reads done so far (for tests and metrics). */
  headReads = 0;
  /** Lookups answered from the trusted head and its compiled model (metrics). */
  hits = 0;
  /** Lookups that read the head from the KV or compiled a model (metrics). */
  misses = 0;

  constructor(kv: Deno.Kv, heads: HeadWatcher, options: ModelCacheOptions = {}) {
    this.#kv = kv;
    this.#heads = heads;
    this.#max = options.maxEntries ?? 256;
    this.#settle = options.settleMs ?? 500;
    this.#now = options.now ?? (() => performance.now());
    this.#log = options.log ?? (() => {});
    this.#workers = options.workers ?? new ManifestWorkers();
    this.#ownWorkers = options.workers === undefined;
  }

  /** Namespaces cached now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The current model of a namespace, or null when the namespace does not
   * exist.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @param options `minVersion`
   * @returns the head and its compiled model, or null
   */
  async get(
    tenant: string,
    namespace: string,
    options: GetOptions = {},
  ): Promise<CachedModel | null> {
    const e = this.#entry(tenant, namespace);
    const trusted = this.#trusted(e, options);
    const head = await this.#currentHead(e, options);
    if (head === null) {
      this.misses++;
      return null;
    }
    if (trusted && this.#compiledFor(e, head) !== null) this.hits++;
    else this.misses++;
    return { head, model: await this.#model(e, head) };
  }

  /**
   * The current head of a namespace, with the consistency of
   * {@linkcode ModelCache.get} and without compiling its model (the
   * namespace-client gate reads `environments` from it), or null when the
   * namespace does not exist.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns the head, or null
   */
  head(tenant: string, namespace: string): Promise<Head | null> {
    return this.#currentHead(this.#entry(tenant, namespace), {});
  }

  /** Whether the entry's head can be used without reading the KV. */
  #trusted(e: Entry, options: GetOptions): boolean {
    const head = e.head;
    return !(head === undefined || this.#now() < e.trustAfter ||
      (options.minVersion !== undefined && (head === null || head.version < options.minVersion)));
  }

  async #currentHead(e: Entry, options: GetOptions): Promise<Head | null> {
    const cached = e.head;
    if (cached !== undefined && this.#trusted(e, options)) return cached;
    let head = await this.#readHead(e, false);
    if (
      options.minVersion !== undefined && (head === null || head.version < options.minVersion)
    ) {
      head = await this.#readHead(e, true); // the shared read may have started too early
    }
    return head;
  }

  /**
   * Forgets the cached head of a namespace: the next request reads it from
   * the KV. Called by the HTTP layer before it answers a write.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   */
  invalidate(tenant: string, namespace: string): void {
    const e = this.#entries.get(key(tenant, namespace));
    if (e === undefined) return;
    e.gen++;
    e.head = undefined;
  }

  /**
   * {@linkcode ModelCache.invalidate} for every cached namespace of a tenant.
   *
   * @param tenant tenant slug
   */
  invalidateTenant(tenant: string): void {
    for (const e of this.#entries.values()) {
      if (e.tenant === tenant) this.invalidate(tenant, e.namespace);
    }
  }

  /** Drops every entry and its watch. */
  close(): void {
    this.#closed = true;
    for (const e of this.#entries.values()) e.unwatch();
    this.#entries.clear();
    this.#recent = undefined;
    if (this.#ownWorkers) this.#workers.close();
  }

  #entry(tenant: string, namespace: string): Entry {
    const id = key(tenant, namespace);
    let e = this.#entries.get(id);
    if (e !== undefined) {
      if (this.#recent !== e) {
        this.#entries.delete(id); // Map order is the LRU order
        this.#entries.set(id, e);
        this.#recent = e;
      }
      return e;
    }
    const entry: Entry = {
      tenant,
      namespace,
      head: undefined,
      gen: 0,
      reading: null,
      compiled: null,
      trustAfter: this.#now() + this.#settle,
      unwatch: () => {},
    };
    e = entry;
    if (!this.#closed) {
      try {
        entry.unwatch = this.#heads.watch(tenant, namespace, (h) => {
          entry.gen++;
          entry.head = h;
        });
      } catch {
        // a closed watcher: the entry reads the head on every request
        entry.trustAfter = Infinity;
      }
    } else {
      entry.trustAfter = Infinity;
    }
    this.#entries.set(id, entry);
    this.#recent = entry;
    if (this.#entries.size > this.#max) {
      const [oldId, old] = this.#entries.entries().next().value as [string, Entry];
      old.unwatch();
      this.#entries.delete(oldId);
    }
    return entry;
  }

  /**
   * Reads the head from the KV. A read already in flight in the current
   * generation (no change known to this process since it started) is shared
   * unless `fresh` asks for a read that starts now. The
   * result becomes the trusted head unless a notification or invalidation
   * came in meanwhile.
   */
  #readHead(e: Entry, fresh: boolean): Promise<Head | null> {
    if (!fresh && e.reading !== null && e.reading.gen === e.gen) {
      // Started in this generation, i.e. after the last change this process knows of.
      return e.reading.promise;
    }
    const gen = e.gen;
    this.headReads++;
    const promise = getHead(this.#kv, e.tenant, e.namespace).then((h) => {
      if (e.gen === gen) e.head = h;
      return h;
    }).finally(() => {
      if (e.reading?.promise === promise) e.reading = null;
    });
    e.reading = { gen, promise };
    return promise;
  }

  /** The entry's model (or its compilation) for this head, or null. */
  #compiledFor(e: Entry, head: Head): Promise<CompiledModel> | null {
    const c = e.compiled;
    return c !== null && c.version === head.version && c.hash === head.closure_hash
      ? c.promise
      : null;
  }

  #model(e: Entry, head: Head): Promise<CompiledModel> {
    const ready = this.#compiledFor(e, head);
    if (ready !== null) return ready;
    this.compilations++;
    const promise = (async () => {
      const files = await readFiles(this.#kv, e.tenant, e.namespace, head.version);
      // A stored version loads with the relaxed rules of a stored load, so a
      // version an earlier release accepted keeps evaluating after an upgrade.
      const { manifest, warnings } = await this.#workers.load(files);
      if (warnings.length > 0) {
        this.#log("warn", "stored manifest has predicates that never hold", {
          tenant: e.tenant,
          namespace: e.namespace,
          version: head.version,
          warnings,
        });
      }
      // thousands of distinct patterns compile a slice at a time, not in one go
      await warmPatterns(matchesPatterns(manifest));
      return await compileManifestInSlices(manifest, head.version);
    })();
    const slot = { version: head.version, hash: head.closure_hash, promise };
    e.compiled = slot;
    promise.catch(() => {
      if (e.compiled === slot) e.compiled = null; // the next request tries again
    });
    return promise;
  }
}

/** The patterns of every `matches` predicate of a manifest. */
function* matchesPatterns(manifest: Manifest): Iterable<string> {
  for (const segment of Object.values(manifest.segments)) {
    for (const p of segment.predicates) {
      if (p.op === "matches" && typeof p.value === "string") yield p.value;
    }
  }
}

function key(tenant: string, namespace: string): string {
  return `${tenant}\u0000${namespace}`;
}
