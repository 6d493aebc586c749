/**
 * The stream hub of a process: every open event-stream connection, one
 * {@linkcode NamespaceFeed} per watched namespace (one head-watcher
 * subscription each, fanned out in memory) and the per-credential connection
 * registry. The streams' lifecycle (keepalives, idle closes, shutdown) is
 * lib/events/sse.ts's {@linkcode SseStreams}, shared with the OFREP event
 * stream. Nothing here polls the KV per connection. With a
 * {@linkcode StreamAccess} (the runtime's stream guard), each connection
 * carries one read grant per namespace, shared with the other connections
 * of its credential, and the feeds re-authorise through it before each
 * delivery (lib/events/access.ts).
 *
 * @module
 */
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import type { ClosureMemo } from "../closure/memo.ts";
import type { FlagSelection } from "../protocol/subscription.ts";
import type { Logger } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import type { HeadWatcher } from "../store/head_watcher.ts";
import type { ReadGrant, StreamAccess, WatchedStream } from "./access.ts";
import { StreamConnection } from "./connection.ts";
import { NamespaceFeed } from "./feed.ts";
import { ConnectionRegistry } from "./registry.ts";
import type { SseStreams } from "./sse.ts";
import { routeStreams } from "./route_streams.ts";

/** What the hub needs. */
export interface HubDeps {
  kv: Deno.Kv;
  key: CryptoKey;
  heads: HeadWatcher;
  settings: ServiceSettings;
  log: Logger;
  /** The process's manifest workers (large versions load and archive there). */
  workers?: ManifestWorkers;
  /** The process's closure memo (archives the streams' snapshots point at). */
  closures: ClosureMemo;
  /** Aborting it ends every stream. */
  shutdown: AbortSignal;
  /**
   * Re-authorises streams before each delivery (lib/auth/stream_guard.ts);
   * without it a stream is authorised only when it opens.
   */
  access?: StreamAccess;
  /** Clock. */
  now?: () => Date;
}

/** A validated request to open a stream. */
export interface OpenRequest {
  /** Token id or user id (signed snapshot tokens are bound to it). */
  principalId: string;
  /** What the per-credential limit counts (token id or session id). */
  credentialId: string;
  /** The connection's tenant. */
  tenant: string;
  /** Scheme and host of the request, for snapshot URLs. */
  origin: string;
  /** Subscribed namespaces with their resume hints. */
  namespaces: { slug: string; flags: FlagSelection; hint: number | null }[];
  /**
   * Called once with a function that ends this stream; returns the
   * stream's read grants, one per entry of `namespaces` in order, checked
   * before each delivery, and the function to call when the stream ends
   * (lib/auth/stream_guard.ts watches here).
   */
  watch?: (close: () => void) => WatchedStream;
}

/** Counters of a hub. */
export interface HubStats {
  connections: number;
  feeds: number;
  groups: number;
  deltas: number;
}

/**
 * The process's event-stream hub.
 *
 * @example
 * ```ts
 * import { EventHub } from "./hub.ts";
 * import { HeadWatcher } from "../store/head_watcher.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const heads = new HeadWatcher(kv);
 * const ac = new AbortController();
 * import { ClosureMemo } from "../closure/memo.ts";
 * const hub = new EventHub({
 *   kv, key: await randomTokenKey(), heads, settings: DEFAULT_SETTINGS, log: () => {},
 *   closures: new ClosureMemo(), shutdown: ac.signal,
 * });
 * if (hub.stats.connections !== 0) throw new Error();
 * ac.abort();
 * heads.close();
 * kv.close();
 * ```
 */
export class EventHub {
  readonly #deps: HubDeps;
  readonly registry: ConnectionRegistry;
  readonly #feeds = new Map<string, NamespaceFeed>();
  readonly #streams: SseStreams;
  #nextId = 1;
  #closed = false;

  constructor(deps: HubDeps) {
    this.#deps = deps;
    this.registry = new ConnectionRegistry(deps.settings.maxConnectionsPerToken, {
      kv: deps.kv,
      leaseMs: deps.settings.processLeaseMs,
      signal: deps.shutdown,
      log: deps.log,
    });
    this.#streams = routeStreams(deps.settings, deps.shutdown, deps.now);
    if (deps.shutdown.aborted) this.close();
    else deps.shutdown.addEventListener("abort", () => this.close(), { once: true });
  }

  /** Counters. */
  get stats(): HubStats {
    let groups = 0;
    let deltas = 0;
    for (const f of this.#feeds.values()) {
      const s = f.stats;
      groups += s.groups;
      deltas += s.deltas;
    }
    return { connections: this.#streams.size, feeds: this.#feeds.size, groups, deltas };
  }

  /**
   * Opens a stream: takes a slot of the credential (429 when none is left),
   * subscribes to every namespace and returns the response body. The first
   * event of each namespace (a snapshot) follows as soon as it is built.
   */
  async open(req: OpenRequest): Promise<ReadableStream<Uint8Array>> {
    if (this.#closed) throw new Error("The event hub is shut down");
    const release = await this.registry.acquire(req.credentialId);
    const stream = this.#streams.open(release);
    const conn = new StreamConnection({
      id: this.#nextId++,
      principalId: req.principalId,
      tenant: req.tenant,
      origin: req.origin,
      stream,
    });
    const watched = req.watch?.(() => conn.close());
    // One close hook per connection for the hub's bookkeeping and the guard's.
    stream.onClose(() => {
      this.#drop(conn);
      watched?.release();
    });
    req.namespaces.forEach((ns, i) => {
      const grant: ReadGrant | undefined = watched?.grants[i];
      conn.states.set(ns.slug, {
        slug: ns.slug,
        flags: ns.flags,
        version: null,
        hash: null,
        inlineSent: false,
        hint: null,
        ...(grant === undefined ? {} : { grant }),
      });
    });
    for (const ns of req.namespaces) {
      void this.#feed(req.tenant, ns.slug).join(conn, ns.hint);
    }
    return stream.body;
  }

  /** Waits until every feed has handled what it was told (tests, benchmarks). */
  async settled(): Promise<void> {
    await Promise.all([...this.#feeds.values()].map((f) => f.idle()));
  }

  /** Ends every stream and stops the feeds. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#streams.close(); // every connection's stream
    for (const f of [...this.#feeds.values()]) f.stop();
  }

  #now(): Date {
    return this.#deps.now?.() ?? new Date();
  }

  #feed(tenant: string, slug: string): NamespaceFeed {
    const id = `${tenant}\u0000${slug}`;
    let feed = this.#feeds.get(id);
    if (feed === undefined) {
      const created: NamespaceFeed = new NamespaceFeed(
        {
          kv: this.#deps.kv,
          key: this.#deps.key,
          heads: this.#deps.heads,
          limits: this.#deps.settings,
          log: this.#deps.log,
          ...(this.#deps.workers ? { workers: this.#deps.workers } : {}),
          closures: this.#deps.closures,
          ...(this.#deps.access ? { access: this.#deps.access } : {}),
          now: () => this.#now(),
        },
        tenant,
        slug,
        () => {
          if (this.#feeds.get(id) === created) this.#feeds.delete(id);
        },
      );
      feed = created;
      this.#feeds.set(id, feed);
    }
    return feed;
  }

  #drop(conn: StreamConnection): void {
    for (const slug of conn.states.keys()) {
      this.#feeds.get(`${conn.tenant}\u0000${slug}`)?.leave(conn);
    }
  }
}
