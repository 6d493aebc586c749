/**
 * A relay's HTTP application: request ids, the access log (the lines of
 * `serve`), the error envelope (lib/http/errors.ts), path identifier checks
 * (lib/http/params.ts), `/healthz`, `/metrics`, the read routes and the
 * evaluation routes; everything else is 405 `read_only` naming the
 * upstream.
 *
 * @module
 */
import { Hono } from "hono";
import { errorResponse } from "../http/errors.ts";
import { guardPathIdentifiers } from "../http/params.ts";
import { presentedBearer } from "../http/authn.ts";
import { clientIp } from "../http/client_ip.ts";
import { requestLog } from "../http/request_log.ts";
import type { AppEnv } from "../http/deps.ts";
import { clientAbortResponse, isClientAbort } from "../net/client_abort.ts";
import { ScrapeAccess } from "../metrics/scrape_access.ts";
import { VERSION } from "../version.ts";
import type { RelayDeps } from "./deps.ts";
import { ReadOnlyError } from "./errors.ts";
import { relayEvaluateRoutes, relayOfrepRoutes } from "./evaluate_routes.ts";
import { relayReadRoutes } from "./read_routes.ts";

/** Options of {@linkcode createRelayApp}. */
export interface RelayAppOptions {
  /** Bearer token that may read `/metrics` from any address (else loopback only). */
  metricsToken?: string;
}

/**
 * Builds the relay's application.
 *
 * @param deps the relay's state
 * @param options the metrics token
 * @returns the app
 *
 * @example
 * ```ts
 * import { createRelayApp } from "./app.ts";
 * import { Holdings } from "./holdings.ts";
 * import { VerdictCache } from "./verdicts.ts";
 * import { RelayMetrics } from "./metrics.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * const ac = new AbortController();
 * const app = createRelayApp({
 *   upstream: "http://primary.example", holdings: new Holdings(),
 *   verdicts: new VerdictCache({ upstream: "http://primary.example" }),
 *   key: await randomTokenKey(), log: () => {}, settings: DEFAULT_SETTINGS, shutdown: ac.signal,
 *   metrics: new RelayMetrics(), lagMs: () => null,
 *   upstreamState: () => ({ connected: false, since: null, lastError: null }),
 * });
 * const res = await app.request("/api/v1/tenants", { method: "POST" });
 * if (res.status !== 405 || (await res.json()).code !== "read_only") throw new Error();
 * ac.abort();
 * ```
 */
export function createRelayApp(deps: RelayDeps, options: RelayAppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const scrape = new ScrapeAccess(options.metricsToken);
  app.use("*", requestLog(deps.log, (method, status) => deps.metrics.request(method, status)));
  app.onError((err, c) =>
    isClientAbort(err)
      ? clientAbortResponse(c.get("requestId") ?? crypto.randomUUID())
      : errorResponse(err, c.get("requestId") ?? crypto.randomUUID(), deps.log)
  );
  const readOnly = (c: { req: { method: string; path: string } }) =>
    errorResponse(
      new ReadOnlyError(c.req.method, c.req.path, deps.upstream),
      crypto.randomUUID(),
      deps.log,
    );
  app.notFound((c) => {
    const res = readOnly(c);
    res.headers.set("x-request-id", c.get("requestId"));
    return res;
  });
  guardPathIdentifiers(app);

  app.get("/healthz", (c) => {
    const up = deps.upstreamState();
    const now = Date.now();
    return c.json({
      status: "ok",
      role: "relay",
      version: VERSION,
      upstream: {
        url: deps.upstream,
        connected: up.connected,
        since: up.since,
        last_error: up.lastError,
      },
      serving: up.connected ? "live" : "last_verified",
      namespaces: deps.holdings.list().map((h) => ({
        tenant: h.tenant,
        namespace: h.namespace,
        version: h.state.version,
        closure_hash: h.state.hash,
        source: h.source,
        updated_at: h.updatedAt.toISOString(),
        lag_ms: deps.lagMs(h.tenant, h.namespace) ?? Math.max(0, now - h.updatedAt.getTime()),
      })),
      // known upstream, no version yet (created, never pushed)
      awaiting_first_version: deps.holdings.awaiting(),
    });
  });
  app.get("/metrics", async (c) => {
    await scrape.check(presentedBearer(c), c.req.raw.headers, clientIp(c));
    return c.body(await deps.metrics.render(), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });

  const reads = relayReadRoutes(deps);
  const ofrep = relayOfrepRoutes(deps);
  deps.metrics.probe({
    connected: () => deps.upstreamState().connected,
    namespaces: () =>
      deps.holdings.list().map((h) => ({
        tenant: h.tenant,
        namespace: h.namespace,
        version: h.state.version,
        lagMs: deps.lagMs(h.tenant, h.namespace),
      })),
    streams: () => ({ cfgtool: reads.streams(), ofrep: ofrep.streams() }),
  });
  app.route("/api/v1/tenants/:tenant/namespaces/:ns/environments/:env", relayEvaluateRoutes(deps));
  app.route("/api/v1", reads.app);
  app.route("/ofrep/v1", ofrep.app);
  // every other request: a write, or a read only the primary serves
  app.all("*", (c) => {
    throw new ReadOnlyError(c.req.method, c.req.path, deps.upstream);
  });
  return app;
}
