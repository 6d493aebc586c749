/**
 * The data plane of `cfgtool serve` (lib/http/data_plane.ts): evaluation
 * and OFREP requests with a bearer credential, answered without the
 * router by the same functions its routes call (lib/http/evaluate.ts,
 * lib/http/ofrep.ts), authenticated through the same door
 * (lib/http/authn.ts); errors get the router's shapes and CORS headers
 * (lib/http/data_plane.ts). Requests are counted and timed under the router's route patterns
 * (`cfgtool_http_requests_total`, the trace span's name).
 *
 * @module
 */
import { authenticateBearer } from "../http/authn.ts";
import { DATA_PLANE_PATTERNS, type DataPlane, dataPlane } from "../http/data_plane.ts";
import type { DataPlaneExchange } from "../http/data_plane.ts";
import type { AppDeps } from "../http/deps.ts";
import { answerEvaluation } from "../http/evaluate.ts";
import { answerOfrepBulk, answerOfrepFlag } from "../http/ofrep.ts";
import { completeRequestSpan } from "../telemetry/request_span.ts";

/**
 * The data plane of a `serve` process.
 *
 * @param deps the app dependencies (as {@linkcode createApp} takes them)
 * @returns the data plane: a response for the requests it takes, else null
 *
 * @example
 * ```ts
 * import { createDataPlane } from "./data_plane.ts";
 * import { silentLogger } from "../log.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS });
 * const plane = createDataPlane({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS, runtime });
 * const res = await plane(new Request("http://x/ofrep/v1/evaluate/flags", {
 *   method: "POST", headers: { authorization: "Bearer svc_read_nope" }, body: "{}",
 * }), {});
 * if (res?.status !== 401 || res.headers.get("x-request-id") === null) throw new Error();
 * await res.body?.cancel();
 * if (plane(new Request("http://x/healthz"), {}) !== null) throw new Error("the router's");
 * runtime.close();
 * kv.close();
 * ```
 */
export function createDataPlane(deps: AppDeps): DataPlane {
  const metrics = deps.runtime.metrics;
  return dataPlane({
    log: deps.log,
    answer: (x) => answer(deps, x),
    observe(x, status, seconds, span) {
      if (!metrics.enabled && span === undefined) return;
      const route = DATA_PLANE_PATTERNS[x.route];
      metrics.observeRequest("POST", route, status, seconds);
      if (span !== undefined) completeRequestSpan(span, "POST", route, x.req.url);
    },
  });
}

async function answer(deps: AppDeps, x: DataPlaneExchange): Promise<Response> {
  const p = await authenticateBearer(deps, x.credential, {
    requestId: x.requestId,
    ...(x.clientIp === undefined ? {} : { ip: x.clientIp }),
  });
  x.principal = p;
  switch (x.route) {
    case "evaluate":
      return await answerEvaluation(deps, p, x.req, x, false);
    case "evaluate-all":
      return await answerEvaluation(deps, p, x.req, x, true);
    case "ofrep-flag":
      return await answerOfrepFlag(deps, p, x.req, x.key);
    case "ofrep-bulk": {
      const client = p.kind === "token" && p.token.type === "namespace-client";
      return await answerOfrepBulk(deps, p, x.req, client ? x.credential : null);
    }
  }
}
