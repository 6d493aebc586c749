/**
 * `GET /healthz` (the process answers) and `GET /readyz` (the KV answers a
 * read). Both are open to anyone and carry no data.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./app.ts";
import { CfgtoolError } from "../errors.ts";
import { errorResponse } from "./errors.ts";

/**
 * The health routes.
 *
 * @example
 * ```ts
 * import { healthRoutes } from "./health.ts";
 * import { silentLogger } from "../log.ts";
 * const kv = await Deno.openKv(":memory:");
 * const res = await healthRoutes({ kv, log: silentLogger }).request("/readyz");
 * if (res.status !== 200) throw new Error();
 * kv.close();
 * ```
 */
export function healthRoutes(deps: Pick<AppDeps, "kv" | "log">): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    try {
      await deps.kv.get(["readyz"], { consistency: "strong" });
      return c.json({ status: "ready" });
    } catch (err) {
      deps.log("warn", "readiness check failed", { error: (err as Error).message });
      return errorResponse(
        new CfgtoolError("kv_unavailable", "the KV store does not answer", { status: 503 }),
        c.get("requestId"),
        deps.log,
      );
    }
  });
  return app;
}
