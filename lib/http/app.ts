/**
 * The HTTP application: request ids, access logs, the error envelope and the
 * route modules of lib/http/. Handlers call store/ and auth/; nothing here
 * opens the KV.
 *
 * @module
 */
import { Hono } from "hono";
import type { Logger } from "../log.ts";
import { NotFoundError } from "../errors.ts";
import { errorResponse } from "./errors.ts";
import { healthRoutes } from "./health.ts";

/** What the HTTP application needs from the server. */
export interface AppDeps {
  /** The opened KV store. */
  kv: Deno.Kv;
  /** Where logs go. */
  log: Logger;
}

/** Variables every handler can read from the hono context. */
export type AppEnv = { Variables: { requestId: string } };

/**
 * Creates the hono application with every route of the service.
 *
 * @example
 * ```ts
 * import { createApp } from "./app.ts";
 * import { silentLogger } from "../log.ts";
 * const kv = await Deno.openKv(":memory:");
 * const app = createApp({ kv, log: silentLogger });
 * const res = await app.request("/healthz");
 * if (res.status !== 200) throw new Error();
 * kv.close();
 * ```
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", async function requestContext(c, next) {
    const incoming = c.req.header("x-request-id");
    const id = incoming && /^[A-Za-z0-9._-]{1,64}$/.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    const started = performance.now();
    await next();
    c.res.headers.set("x-request-id", id);
    deps.log("info", "request", {
      request_id: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  app.onError((err, c) => errorResponse(err, c.get("requestId") ?? crypto.randomUUID(), deps.log));
  app.notFound((c) =>
    errorResponse(
      new NotFoundError("not_found", `no route for ${c.req.method} ${c.req.path}`),
      c.get("requestId"),
      deps.log,
    )
  );
  app.route("/", healthRoutes(deps));
  return app;
}
