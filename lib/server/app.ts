/**
 * The HTTP application: request metrics and trace span names, request ids,
 * access logs, the error envelope and the route modules of lib/http/.
 * Handlers call store/ and auth/; nothing here opens the KV.
 *
 * @module
 */
import { Hono } from "hono";
import { NotFoundError } from "../errors.ts";
import { errorPageResponse, errorResponse, wantsErrorPage } from "../http/errors.ts";
import { requestLog } from "../http/request_log.ts";
import { clientAbortResponse, isClientAbort } from "../net/client_abort.ts";
import { guardPathIdentifiers } from "../http/params.ts";
import { healthRoutes } from "../http/health.ts";
import { authRoutes } from "../http/auth/routes.ts";
import { consoleRoutes } from "../console/routes.tsx";
import { authenticate } from "../http/authn.ts";
import { tenantRoutes } from "../http/tenants.ts";
import { namespaceRoutes } from "../http/namespaces.ts";
import { manifestRoutes } from "../http/manifest.ts";
import { changeRoutes } from "../http/changes.ts";
import { tokenRoutes } from "../http/tokens.ts";
import { userRoutes } from "../http/users.ts";
import { meRoutes, sessionRoutes } from "../http/sessions.ts";
import { auditRoutes } from "../http/audit.ts";
import { webhookRoutes } from "../http/webhooks.ts";
import { closureRoutes } from "../http/closure.ts";
import { eventRoutes } from "../http/events.ts";
import { evaluatePreflightRoutes, evaluateRoutes } from "../http/evaluate.ts";
import { ofrepRoutes } from "../http/ofrep.ts";
import { metricsRoutes, observeRequests } from "../http/metrics.ts";
import type { AppDeps, AppEnv } from "../http/deps.ts";

export type { AppDeps, AppEnv };

/**
 * Creates the hono application with every route of the service.
 *
 * @example
 * ```ts
 * import { createApp } from "./app.ts";
 * import { silentLogger } from "../log.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS });
 * const app = createApp({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS, runtime });
 * const res = await app.request("/healthz");
 * if (res.status !== 200) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", observeRequests(deps.runtime.metrics)); // first: its time covers everything
  app.use("*", requestLog(deps.log));
  app.onError((err, c) =>
    isClientAbort(err) // the client went away: 499 at info, not a 500 error
      ? clientAbortResponse(c.get("requestId") ?? crypto.randomUUID())
      : (wantsErrorPage(c.req.raw) ? errorPageResponse : errorResponse)(
        err,
        c.get("requestId") ?? crypto.randomUUID(),
        deps.log,
      )
  );
  app.notFound((c) =>
    errorResponse(
      new NotFoundError("not_found", `no route for ${c.req.method} ${c.req.path}`),
      c.get("requestId"),
      deps.log,
    )
  );
  guardPathIdentifiers(app); // path identifiers of a bad shape never reach a route
  app.route("/", healthRoutes(deps));
  app.route("/", metricsRoutes(deps)); // loopback or the metrics token
  app.route("/auth", authRoutes(deps)); // sign-in pages: own authentication
  app.get("/", (c) => c.redirect("/ui", 303));
  app.route("/ui", consoleRoutes(deps)); // the web console: browser sessions only
  const api = new Hono<AppEnv>();
  api.use("*", authenticate(deps)); // bearer, or the browser session cookie with CSRF
  api.route("/tenants", tenantRoutes(deps));
  api.route("/tenants/:tenant/namespaces", namespaceRoutes(deps));
  api.route("/tenants/:tenant/namespaces/:ns", manifestRoutes(deps));
  api.route("/tenants/:tenant/namespaces/:ns", changeRoutes(deps));
  api.route("/tokens", tokenRoutes(deps));
  api.route("/users", userRoutes(deps));
  api.route("/me", meRoutes(deps));
  api.route("/sessions", sessionRoutes(deps));
  api.route("/audit", auditRoutes(deps));
  // Routes of later issues register here, one line each.
  api.route("/tenants/:tenant/webhooks", webhookRoutes(deps));
  api.route("/events", eventRoutes(deps));
  app.route("/", evaluatePreflightRoutes(deps)); // CORS preflights carry no credential
  app.route("/ofrep/v1", ofrepRoutes(deps)); // own auth: OFREP error shapes
  api.route("/tenants/:tenant/namespaces/:ns/environments/:env", evaluateRoutes(deps));
  app.route("/api/v1", closureRoutes(deps)); // own auth: bearer or signed token
  app.route("/api/v1", api);
  return app;
}
