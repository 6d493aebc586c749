/**
 * `GET /healthz` (the process answers, with the cfgtool version and the
 * build's commit when known) and `GET /readyz` (the KV answers a read). Both
 * are open to anyone and carry no tenant data.
 *
 * @module
 */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./deps.ts";
import { CfgtoolError } from "../errors.ts";
import { checkReady } from "../services/health.ts";
import { errorResponse } from "./errors.ts";
import { buildCommit, VERSION } from "../version.ts";

/**
 * The health routes. `/healthz` answers `{"status":"ok","version":…}`, plus
 * `commit` when the build knows it.
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
  const commit = buildCommit();
  const health = { status: "ok", version: VERSION, ...(commit ? { commit } : {}) };
  app.get("/healthz", (c) => c.json(health));
  app.get("/readyz", async (c) => {
    try {
      await checkReady(deps);
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
