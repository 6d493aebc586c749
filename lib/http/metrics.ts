/**
 * The HTTP side of the server's metrics: `GET /metrics` (Prometheus text
 * exposition of lib/metrics/service_metrics.ts, for loopback clients or the
 * metrics token, lib/metrics/scrape_access.ts; refusals in the error
 * envelope) and the middleware that counts every request by method,
 * matched route pattern and status, with its latency, and completes the
 * request's trace span (lib/telemetry/request_span.ts).
 *
 * The route label is the pattern of the route that answers
 * (`/api/v1/tenants/:tenant/namespaces/:ns/manifest`), never the raw path;
 * a request no route matches is `_unmatched`, a method outside the HTTP
 * set `_other`: the label sets are fixed by the code.
 *
 * @module
 */
import { presentedBearer } from "./authn.ts";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { NotFoundError } from "../errors.ts";
import type { ServiceMetrics } from "../metrics/service_metrics.ts";
import { completeRequestSpan, recordingSpan } from "../telemetry/request_span.ts";
import { clientIp } from "./client_ip.ts";
import type { AppDeps, AppEnv } from "./deps.ts";

/** The route label of a request no route matched. */
export const UNMATCHED = "_unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The route pattern of the route that answers a request: the first route
 * registered with a method at or after the one running now (so a refusal by
 * a middleware, an authentication failure say, still names the route it was
 * headed for), or {@linkcode UNMATCHED}.
 *
 * @param c the hono context, after the request was handled
 * @returns the route pattern
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { routePattern } from "./metrics.ts";
 * const seen: string[] = [];
 * const app = new Hono();
 * app.use("*", async (c, next) => { await next(); seen.push(routePattern(c)); });
 * app.get("/tenants/:tenant", (c) => c.text("ok"));
 * await app.request("/tenants/acme");
 * await app.request("/nowhere");
 * if (seen.join() !== "/tenants/:tenant,_unmatched") throw new Error(seen.join());
 * ```
 */
export function routePattern(c: Context): string {
  const routes = matchedRoutes(c);
  for (let i = c.req.routeIndex; i < routes.length; i++) {
    const r = routes[i]!;
    if (r.method !== "ALL") return r.path;
  }
  return UNMATCHED;
}

/**
 * The method label: the method, or `_other` outside the HTTP set.
 *
 * @param method the request method
 * @returns the label
 *
 * @example
 * ```ts
 * import { methodLabel } from "./metrics.ts";
 * if (methodLabel("GET") !== "GET" || methodLabel("BREW") !== "_other") throw new Error();
 * ```
 */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : "_other";
}

/**
 * The middleware that counts and times every request and names its trace
 * span after the route. Mounted first, so its time covers everything.
 *
 * @param metrics the server's metrics
 * @returns the middleware
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { observeRequests } from "./metrics.ts";
 * import { ServiceMetrics } from "../metrics/service_metrics.ts";
 * const metrics = new ServiceMetrics();
 * const app = new Hono().use("*", observeRequests(metrics)).get("/x/:id", (c) => c.text("ok"));
 * await app.request("/x/1");
 * if (!(await metrics.render()).includes('route="/x/:id",status="200"} 1')) throw new Error();
 * ```
 */
export function observeRequests(metrics: ServiceMetrics): MiddlewareHandler<AppEnv> {
  return async function requestMetrics(c, next) {
    const span = recordingSpan(); // Deno's span of this request, when tracing is on
    const started = performance.now();
    await next();
    if (!metrics.enabled && span === undefined) return;
    const route = routePattern(c);
    const method = methodLabel(c.req.method);
    metrics.observeRequest(method, route, c.res.status, (performance.now() - started) / 1000);
    if (span !== undefined) completeRequestSpan(span, method, route, c.req.url);
  };
}

/**
 * `GET /metrics`, mounted on the root app.
 *
 * @param deps the app dependencies (the runtime holds the server's metrics)
 * @returns the route
 *
 * @example
 * ```ts ignore
 * app.route("/", metricsRoutes(deps));
 * ```
 */
export function metricsRoutes(deps: Pick<AppDeps, "runtime">): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/metrics", async (c) => {
    const metrics = deps.runtime.metrics;
    if (!metrics.enabled) throw new NotFoundError("not_found", "This server runs without metrics");
    await metrics.access.check(presentedBearer(c), c.req.raw.headers, clientIp(c));
    return new Response(await metrics.render(), {
      headers: { "content-type": metrics.contentType, "cache-control": "no-store" },
    });
  });
  return app;
}
