/**
 * The data plane of `cfgtool relay` (lib/http/data_plane.ts): evaluation
 * and OFREP requests with a bearer credential, answered from the relay's
 * holdings without the router, by the same functions its routes call
 * (lib/relay/evaluate_routes.ts), with the credential's verdict
 * (lib/relay/verdicts.ts); errors get the service's shapes and CORS
 * headers (lib/http/data_plane.ts). Requests are counted in
 * `cfgtool_relay_http_requests_total` as the router's are.
 *
 * @module
 */
import { type DataPlane, dataPlane, type DataPlaneExchange } from "../http/data_plane.ts";
import type { RelayDeps } from "./deps.ts";
import { relayEvaluation, relayOfrepBulk, relayOfrepFlag } from "./evaluate_routes.ts";
import { principalOf } from "./verdicts.ts";

/**
 * The data plane of a relay.
 *
 * @param deps the relay's dependencies (as its app takes them)
 * @returns the data plane: a response for the requests it takes, else null
 *
 * @example
 * ```ts ignore
 * const plane = createRelayDataPlane(deps);
 * const handler = (req, info) => plane(req, env) ?? app.fetch(req, env);
 * ```
 */
export function createRelayDataPlane(deps: RelayDeps): DataPlane {
  return dataPlane({
    log: deps.log,
    answer: (x) => answer(deps, x),
    observe: (_x, status) => deps.metrics.request("POST", status),
  });
}

async function answer(deps: RelayDeps, x: DataPlaneExchange): Promise<Response> {
  const v = await deps.verdicts.check(x.credential);
  const p = principalOf(v);
  x.principal = p;
  switch (x.route) {
    case "evaluate":
      return await relayEvaluation(deps, v, p, x.req, x, false);
    case "evaluate-all":
      return await relayEvaluation(deps, v, p, x.req, x, true);
    case "ofrep-flag":
      return await relayOfrepFlag(deps, v, p, x.req, x.key);
    case "ofrep-bulk": {
      const client = p.kind === "token" && p.token.type === "namespace-client";
      return await relayOfrepBulk(deps, v, p, x.req, client ? x.credential : null);
    }
  }
}
