/**
 * The per-process state of one server, built once by `createServer` and
 * handed to every route: the credential cache, the head watcher and what
 * hangs off it (compiled models, the event hub), the manifest workers, the closure and archive
 * memos, the CORS origin index, the client rate limiter, the stream guard
 * and the server's metrics (which read the caches' counters). No other
 * module keeps state of its own between requests, so two servers in one
 * process (as tests run them) share nothing, and closing a server releases
 * everything it held.
 *
 * Writes made through this process tell the runtime what they changed
 * ({@linkcode Runtime.namespaceChanged}, {@linkcode Runtime.tenantChanged})
 * before they answer; writes made by other processes reach it through the
 * head watcher.
 *
 * @module
 */
import { SamlChecker } from "../login/saml_checker.ts";
import { CredentialCache } from "../auth/credential_cache.ts";
import { StreamGuard } from "../auth/stream_guard.ts";
import { EventHub } from "../events/hub.ts";
import type { Logger } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import { HeadWatcher } from "../store/head_watcher.ts";
import { QueueListener } from "../store/queue.ts";
import { ManifestWorkers } from "../workers/manifest_workers.ts";
import { ServiceMetrics } from "../metrics/service_metrics.ts";
import { ClientOriginIndex } from "./client_origins.ts";
import { CountedMemo } from "./counted_memo.ts";
import { ModelCache } from "./model_cache.ts";
import { RateLimiter } from "./rate_limiter.ts";

/** What a {@linkcode Runtime} is built from. */
export interface RuntimeOptions {
  /** The opened KV. */
  kv: Deno.Kv;
  /** The HMAC key (signed closure URLs of the event stream). */
  key: CryptoKey;
  /** Where logs go. */
  log: Logger;
  /** Tunables. */
  settings: ServiceSettings;
  /** Start the manifest workers now rather than on first use. */
  startWorkers?: boolean;
  /** Clock, for tests. */
  now?: () => Date;
  /** The server's metrics (default: metrics of its own, never scraped). */
  metrics?: ServiceMetrics;
}

/**
 * One server's per-process state.
 *
 * @example
 * ```ts
 * import { Runtime } from "./runtime.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * const kv = await Deno.openKv(":memory:");
 * const runtime = new Runtime({ kv, key: await randomTokenKey(), log: () => {}, settings: DEFAULT_SETTINGS });
 * const cached = await runtime.models.get("acme", "web");
 * if (cached !== null) throw new Error("no namespace, no model");
 * runtime.close();
 * kv.close();
 * ```
 */
export class Runtime {
  /** The process's one watcher of namespace heads. */
  readonly heads: HeadWatcher;
  /** Ends long-lived streams whose credential was revoked or expired, or that may no longer read. */
  readonly guard: StreamGuard;
  /** Large uploads, stored versions and archives are handled there. */
  readonly workers: ManifestWorkers;
  /**
   * The process's listener on the installation's durable queue (scheduled
   * applies, webhook deliveries); services register their handlers, the
   * server starts it.
   */
  readonly queue: QueueListener;
  /** SAML responses are checked on a worker of their own (started on first use). */
  readonly samlChecker: SamlChecker = new SamlChecker();
  /** Compiled evaluation models per namespace. */
  readonly models: ModelCache;
  /** The event-stream hub. */
  readonly hub: EventHub;
  /** Archives of subscription closures, shared by the closure endpoint and the streams. */
  readonly closures: CountedMemo;
  /** Archives of whole manifest versions (`GET …/manifest`). */
  readonly manifests: CountedMemo;
  /** Origins of namespace-client tokens, for preflights. */
  readonly origins: ClientOriginIndex;
  /** The namespace-client rate limiter. */
  readonly limiter: RateLimiter;
  /** Token records, so that authenticating a known token reads nothing from the KV. */
  readonly credentials: CredentialCache;
  /** The server's metrics: what happens here is counted there. */
  readonly metrics: ServiceMetrics;
  /** Aborted by {@linkcode Runtime.close}: long-lived streams end on it. */
  readonly shutdown: AbortSignal;
  readonly #stop = new AbortController();

  /** @param options what the state is built from */
  constructor(options: RuntimeOptions) {
    const { kv, settings, log } = options;
    this.shutdown = this.#stop.signal;
    this.queue = new QueueListener(kv, log, () => (options.now?.() ?? new Date()).getTime());
    this.heads = new HeadWatcher(kv, { pollIntervalMs: settings.headPollMs });
    this.credentials = new CredentialCache(kv, { pollMs: settings.credentialPollMs });
    // streams are re-authorised before each delivery, under the cache's generation
    this.guard = new StreamGuard(kv, {
      intervalMs: settings.streamAuthCheckMs,
      credentials: this.credentials,
      log,
    });
    // a credential changed anywhere: this process's streams check theirs at once
    this.credentials.onChange(() => void this.guard.recheck());
    void this.credentials.start();
    this.workers = new ManifestWorkers();
    if (options.startWorkers) this.workers.start();
    this.models = new ModelCache(kv, this.heads, {
      settleMs: Math.max(50, 2 * settings.headPollMs),
      log,
      workers: this.workers,
    });
    this.closures = new CountedMemo();
    this.manifests = new CountedMemo({ maxEntries: 256, maxBytes: 32 * 1024 * 1024 });
    this.hub = new EventHub({
      kv,
      key: options.key,
      heads: this.heads,
      settings,
      log,
      workers: this.workers,
      closures: this.closures,
      shutdown: this.shutdown,
      access: this.guard,
      ...(options.now ? { now: options.now } : {}),
    });
    this.origins = new ClientOriginIndex(kv);
    this.limiter = new RateLimiter({
      perMinute: settings.clientRateLimitPerMinute,
      kv,
      signal: this.shutdown,
    });
    this.metrics = options.metrics ?? new ServiceMetrics();
    this.metrics.addCache("credentials", this.credentials);
    this.metrics.addCache("models", this.models);
    this.metrics.addCache("closures", this.closures);
    this.metrics.addCache("manifest_archives", this.manifests);
    this.metrics.addStreams("cfgtool", () => this.hub.stats.connections);
  }

  /**
   * A write through this process changed a namespace (its manifest, its
   * settings, its existence): the next evaluation reads its head again.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   */
  namespaceChanged(tenant: string, namespace: string): void {
    this.models.invalidate(tenant, namespace);
  }

  /**
   * A write through this process changed a tenant or the set of its
   * namespaces: every cached model of the tenant is read again.
   *
   * @param tenant tenant slug
   */
  tenantChanged(tenant: string): void {
    this.models.invalidateTenant(tenant);
  }

  /** Ends the streams, stops the watchers and the workers. */
  close(): void {
    this.samlChecker.close();
    this.#stop.abort();
    this.credentials.close();
    this.models.close();
    this.guard.close();
    this.heads.close();
    this.workers.close();
  }
}
