/**
 * The flag service's request handler over an opened KV: the HTTP app, the
 * per-process runtime it serves from and the server's metrics (its own
 * registry; the KV it hands on is measured, lib/telemetry/instrumented_kv.ts),
 * plus background retention and, once per store, the backfill of the
 * people index (lib/store/people_backfill.ts).
 * `serve` (lib/server/serve.ts) binds it to a port.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { createApp } from "./app.ts";
import { createDataPlane } from "./data_plane.ts";
import type { AppDeps, MailSettings } from "../http/deps.ts";
import { createLogger, type Logger } from "../log.ts";
import { resolveSettings, type ServiceSettings } from "../settings.ts";
import { Runtime } from "../runtime/runtime.ts";
import { startRetention } from "../store/retention.ts";
import { startAuditRetention } from "../store/audit_retention.ts";
import { startPeopleBackfill } from "../store/people_backfill.ts";
import { ServiceMetrics } from "../metrics/service_metrics.ts";
import { instrumentKv } from "../telemetry/instrumented_kv.ts";
import { startQueueWork } from "../services/queue_work.ts";
import { TrustedProxies } from "../net/trusted_proxies.ts";
import { fetchEnv } from "../http/client_ip.ts";
import { watchedRequest } from "../net/request_timeout.ts";

/** Options of {@linkcode createServer}. */
export interface ServerOptions {
  /** The opened KV. */
  kv: Deno.Kv;
  /** The HMAC key that digests service tokens and sessions. */
  key: CryptoKey;
  /** Where logs go (default: JSON lines on stderr). */
  log?: Logger;
  /** Tunables; unset ones take the defaults of lib/settings.ts. */
  settings?: Partial<ServiceSettings>;
  /** Public origin for URLs the service hands out (behind a proxy). */
  publicUrl?: string;
  /** Where sign-in mail goes (SMTP or an outbox directory); absent: email sign-in answers 503. */
  mail?: MailSettings;
  /**
   * Start the manifest workers now rather than on first use (`serve` does:
   * starting one costs its caller tens of milliseconds).
   */
  startWorkers?: boolean;
  /**
   * Bearer token that may scrape `GET /metrics` from any address; without it
   * only loopback clients may.
   */
  metricsToken?: string;
  /**
   * Count metrics, measure KV operations and answer `GET /metrics` (default
   * true). Off, the KV is used unwrapped and `/metrics` is 404: benchmarks
   * compare the two.
   */
  metrics?: boolean;
  /**
   * Proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`,
   * lib/net/trusted_proxies.ts); default none: the peer is the client.
   */
  trustedProxies?: TrustedProxies;
}

/** A request handler and what it holds open. */
export interface FlagServer {
  /** The fetch handler, as `Deno.serve` takes it (`info` gives the client address). */
  fetch: (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;
  /** Stops background work (pollers, streams). Does not close the KV. */
  close(): Promise<void>;
  /** The per-process state it serves from (its event hub, caches), for metrics and tests. */
  readonly runtime: Runtime;
}

/**
 * Builds the service's request handler over an opened KV.
 *
 * @example
 * ```ts
 * import { createServer } from "./create.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const server = createServer({ kv, key: await randomTokenKey(), log: () => {} });
 * const res = await server.fetch(new Request("http://x/healthz"));
 * if (res.status !== 200) throw new Error();
 * await server.close();
 * kv.close();
 * ```
 */
export function createServer(options: ServerOptions): FlagServer {
  const log = options.log ?? createLogger();
  const settings = resolveSettings(options.settings);
  const metrics = new ServiceMetrics({
    enabled: options.metrics ?? true,
    ...(options.metricsToken === undefined ? {} : { token: options.metricsToken }),
  });
  // every KV operation of this server is timed and traced (cfgtool.kv.<op>)
  const kv = metrics.enabled
    ? instrumentKv(options.kv, (op, seconds, outcome) => metrics.observeKv(op, seconds, outcome))
    : options.kv;
  const runtime = new Runtime({
    kv,
    metrics,
    key: options.key,
    log,
    settings,
    ...(options.startWorkers ? { startWorkers: true } : {}),
  });
  const appDeps: AppDeps = {
    kv,
    key: options.key,
    log,
    settings,
    runtime,
    ...(options.publicUrl ? { publicUrl: trimTrailing(options.publicUrl, "/") } : {}),
    ...(options.mail ? { mail: options.mail } : {}),
  };
  const app = createApp(appDeps);
  // evaluation and OFREP with a bearer credential: answered before the router
  const plane = createDataPlane(appDeps);
  const proxies = options.trustedProxies ?? TrustedProxies.NONE;
  // scheduled applies and webhook deliveries, from the installation's queue
  const queueWork = startQueueWork({ kv, key: options.key, runtime }, {
    settings,
    log,
    ...(options.publicUrl ? { publicUrl: trimTrailing(options.publicUrl, "/") } : {}),
  });
  const retention = startRetention(kv, {
    policy: { days: settings.retentionDays, versions: settings.retentionVersions },
    intervalMs: settings.pruneIntervalMs,
    log,
  });
  const auditRetention = startAuditRetention(kv, {
    retentionMs: settings.auditRetentionMs,
    intervalMs: settings.pruneIntervalMs,
    log,
    onPruned: (result) => metrics.auditPruned(result),
  });
  // sign-ins made before the people index existed, read once per store
  const peopleBackfill = startPeopleBackfill(kv, { log });
  return {
    fetch: (req, info) => {
      const env = fetchEnv(req, info, proxies);
      return plane(req, env) ?? app.fetch(watchedRequest(req), env);
    },
    runtime,
    close: async () => {
      runtime.close();
      await Promise.all([
        retention.stop(),
        auditRetention.stop(),
        peopleBackfill.stop(),
        queueWork.stop(),
      ]);
    },
  };
}
