/**
 * The evaluation endpoints (docs/ofrep.md), under
 * `/api/v1/tenants/{t}/namespaces/{ns}/environments/{env}`:
 *
 * - `POST …/evaluate` `{flag, context}` → one evaluation result
 *   `{flag, value, variation, reason, rule_index?, error_code?, error_message?, version}`.
 *   An unknown flag is still 200, with reason `ERROR` and error code
 *   `FLAG_NOT_FOUND` (OpenFeature reports evaluation errors in the result,
 *   and `…/evaluate/all` could not do otherwise).
 * - `POST …/evaluate/all` `{context}` → `{version, flags: {key: result}}`.
 *
 * Who: `evaluate` (namespace-read and above) and `namespace-client` tokens
 * for their bound triple while its environment has `public_evaluate = true`
 * (lib/auth/permissions.ts decides). `namespace-client` requests are rate
 * limited per (tenant, namespace, environment, Origin) (lib/runtime/rate_limiter.ts)
 * and get CORS headers for an allowed Origin (lib/http/cors.ts); preflights
 * are answered by {@linkcode evaluatePreflightRoutes}. An environment that
 * the namespace's current manifest does not declare is 404
 * `environment_not_found`; a bad context is 400 `invalid_context`
 * (lib/http/context_input.ts).
 *
 * The compiled model comes from the server's runtime (lib/runtime/): a write
 * through this process tells the runtime what it changed before it
 * answers, so the next evaluation sees it.
 *
 * @module
 */
import { type Context as HonoContext, Hono } from "hono";
import { InvalidRequestError } from "../errors.ts";
import { evaluateAll, evaluateFlag, type EvaluationResult } from "../flags/evaluate.ts";
import type { Principal } from "../auth/principal.ts";
import {
  evaluationModel,
  evaluationPreflightAllowed,
  type Triple,
} from "../services/evaluation.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { parseJsonObject, readBodyBytes } from "./body.ts";
import { readWholeBody, watchedRequest } from "../net/request_timeout.ts";
import { EVALUATION_BODY_LIMIT, validateContext } from "./context_input.ts";
import { applyCors, corsOrigin, EXPOSED_HEADERS, preflightResponse } from "./cors.ts";
import type { Context } from "../flags/conditions.ts";
import { recordEvaluationEvents } from "../telemetry/evaluation_events.ts";

/**
 * The answer of `…/evaluate` (`all` false) or `…/evaluate/all` for an
 * authenticated caller, through the one service call
 * ({@linkcode evaluationModel}): authorised, rate-limited by the request's
 * Origin, the context read (400) only then, 404 for what does not exist;
 * the evaluations counted ({@linkcode observeEvaluations}); the JSON answer
 * with `Vary: Origin` and the CORS headers the caller's token earns. The
 * router's routes and the data plane (lib/http/data_plane.ts) both answer
 * with it.
 *
 * @param deps the app dependencies
 * @param p the authenticated caller
 * @param req the request (its body is read here)
 * @param t the triple of the path
 * @param all whether every flag is evaluated
 * @returns the answer
 * @throws {CfgtoolError} for a refusal or a bad request (the caller shapes it)
 *
 * @example
 * ```ts ignore
 * return await answerEvaluation(deps, c.get("principal"), c.req.raw, t, false);
 * ```
 */
export async function answerEvaluation(
  deps: AppDeps,
  p: Principal,
  req: Request,
  t: Triple,
  all: boolean,
): Promise<Response> {
  const allowed = corsOrigin(p, req.headers.get("origin") ?? undefined);
  const { model, input } = await evaluationModel(deps, p, t, {
    input: () => readEvaluationInput(req),
    countedOrigin: allowed ?? "",
  });
  let body: string;
  if (all) {
    const flags = evaluateAll(model, t.environment, input.context);
    observeEvaluations(deps, "cfgtool", t, flags, input.context);
    body = JSON.stringify({ version: model.version, flags });
  } else {
    const result = evaluateFlag(model, t.environment, flagOfBody(input.body), input.context);
    observeEvaluations(deps, "cfgtool", t, result, input.context);
    body = JSON.stringify(result);
  }
  return new Response(body, { headers: jsonHeaders(allowed) });
}

/**
 * The headers of a JSON evaluation answer: `Vary: Origin`, and the CORS
 * headers for an allowed Origin (see lib/http/cors.ts).
 *
 * @param allowed the Origin to allow ({@linkcode corsOrigin}), or null
 * @returns the headers
 *
 * @example
 * ```ts
 * import { jsonHeaders } from "./evaluate.ts";
 * if (jsonHeaders(null).vary !== "Origin") throw new Error();
 * if (jsonHeaders("https://a.example")["access-control-allow-origin"] !== "https://a.example") {
 *   throw new Error();
 * }
 * ```
 */
export function jsonHeaders(allowed: string | null): Record<string, string> {
  return allowed === null ? { "content-type": "application/json", vary: "Origin" } : {
    "content-type": "application/json",
    vary: "Origin",
    "access-control-allow-origin": allowed,
    "access-control-expose-headers": EXPOSED_HEADERS,
  };
}

/**
 * Counts evaluations in the server's metrics
 * (`cfgtool_evaluations_total`, label sets bounded as
 * lib/metrics/evaluation_series.ts says) and adds a
 * `feature_flag.evaluation` event per result to the request's trace span
 * (lib/telemetry/evaluation_events.ts).
 *
 * @param deps the app dependencies (the runtime holds the metrics)
 * @param api which API evaluated (`cfgtool`, `ofrep`)
 * @param t the triple evaluated
 * @param results the engine's results: one, or a bulk answer's by flag key
 * @param context the evaluation context (its `targeting_key` is the event's context id)
 *
 * @example
 * ```ts
 * import { observeEvaluations } from "./evaluate.ts";
 * import { ServiceMetrics } from "../metrics/service_metrics.ts";
 * import type { Runtime } from "../runtime/runtime.ts";
 * const metrics = new ServiceMetrics();
 * const runtime = { metrics } as unknown as Runtime;
 * const r = { flag: "theme", value: "dark", variation: "dark", reason: "DEFAULT" as const, version: 1 };
 * observeEvaluations({ runtime }, "cfgtool", { tenant: "acme", namespace: "web", environment: "prod" }, r, {});
 * if (!(await metrics.render()).includes('flag="theme",variation="dark",reason="DEFAULT"} 1')) throw new Error();
 * ```
 */
export function observeEvaluations(
  deps: Pick<AppDeps, "runtime">,
  api: "cfgtool" | "ofrep",
  t: Triple,
  results: EvaluationResult | Readonly<Record<string, EvaluationResult>>,
  context: Context,
): void {
  const count = deps.runtime.metrics.evaluations(api, t.tenant, t.namespace);
  const one = isResult(results);
  if (one) count.add(results.flag, results.variation, results.reason, notFound(results));
  else {
    for (const k in results) {
      const r = results[k]!;
      count.add(r.flag, r.variation, r.reason, notFound(r));
    }
  }
  const tk = context.targeting_key;
  recordEvaluationEvents(one ? [results] : results, {
    ...t,
    contextId: typeof tk === "string" ? tk : undefined,
  });
}

function isResult(
  x: EvaluationResult | Readonly<Record<string, EvaluationResult>>,
): x is EvaluationResult {
  return typeof x.flag === "string" && typeof x.reason === "string";
}

function notFound(r: EvaluationResult): boolean {
  return r.error_code === "FLAG_NOT_FOUND";
}

/** A parsed evaluation request body. */
export interface EvaluationBody {
  /** The whole body. */
  body: Record<string, unknown>;
  /** Its size in bytes. */
  bytes: number;
}

/**
 * Reads an evaluation request body: a JSON object of at most 64 KiB (413
 * above), or nothing (the empty object).
 *
 * @param req the request
 * @returns the body and its size
 *
 * @example
 * ```ts
 * import { readEvaluationBody } from "./evaluate.ts";
 * const { body } = await readEvaluationBody(new Request("http://x", { method: "POST", body: '{"context":{}}' }));
 * if (typeof body.context !== "object") throw new Error();
 * ```
 */
export async function readEvaluationBody(req: Request): Promise<EvaluationBody> {
  // With a Content-Length within the limit, one arrayBuffer() call is several
  // times faster than iterating the body stream (the common, hot case).
  const declared = Number(req.headers.get("content-length") ?? NaN);
  const bytes = Number.isInteger(declared) && declared <= EVALUATION_BODY_LIMIT
    ? new Uint8Array(await readWholeBody(req))
    : await readBodyBytes(watchedRequest(req), EVALUATION_BODY_LIMIT);
  if (bytes.length === 0) return { body: {}, bytes: 0 };
  return { body: parseJsonObject(bytes), bytes: bytes.length };
}

/**
 * The body of `…/evaluate` or `…/evaluate/all` and its checked context.
 * Shared with the relay.
 *
 * @param req the request
 * @returns the body and its context
 * @throws {InvalidRequestError} or {InvalidContextError} for a bad body or context
 *
 * @example
 * ```ts
 * import { readEvaluationInput } from "./evaluate.ts";
 * const req = new Request("http://x", { method: "POST", body: '{"flag":"a","context":{"k":1}}' });
 * const { body, context } = await readEvaluationInput(req);
 * if (body.flag !== "a" || context.k !== 1) throw new Error();
 * ```
 */
export async function readEvaluationInput(
  req: Request,
): Promise<{ body: Record<string, unknown>; context: Context }> {
  const { body, bytes } = await readEvaluationBody(req);
  return { body, context: validateContext(body.context, { bodyBytes: bytes }) as Context };
}

/**
 * The flag key `…/evaluate` names in its body. Shared with the relay.
 *
 * @param body the request body
 * @returns the key
 * @throws {InvalidRequestError} when `flag` is missing, empty or not a string
 *
 * @example
 * ```ts
 * import { flagOfBody } from "./evaluate.ts";
 * if (flagOfBody({ flag: "a" }) !== "a") throw new Error();
 * let threw = false;
 * try {
 *   flagOfBody({ flag: 1 });
 * } catch {
 *   threw = true;
 * }
 * if (!threw) throw new Error();
 * ```
 */
export function flagOfBody(body: Record<string, unknown>): string {
  const flag = body.flag;
  if (flag !== undefined && flag !== null && typeof flag !== "string") {
    throw new InvalidRequestError("flag must be a string: the key of the flag to evaluate", {
      details: { field: "flag" },
    });
  }
  if (typeof flag !== "string" || flag === "") {
    throw new InvalidRequestError("flag is required: the key of the flag to evaluate", {
      details: { field: "flag" },
    });
  }
  return flag;
}

/**
 * The evaluation routes, mounted under
 * `/tenants/:tenant/namespaces/:ns/environments/:env` of the authenticated API.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * api.route("/tenants/:tenant/namespaces/:ns/environments/:env", evaluateRoutes(deps, evaluation));
 * ```
 */
export function evaluateRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use("*", async function evaluationCors(c, next) {
    await next();
    applyCors(c.res.headers, corsOrigin(c.get("principal"), c.req.header("origin")));
  });

  const tripleOf = (c: HonoContext<AppEnv>): Triple => ({
    tenant: c.req.param("tenant")!,
    namespace: c.req.param("ns")!,
    environment: c.req.param("env")!,
  });
  app.post(
    "/evaluate",
    (c) => answerEvaluation(deps, c.get("principal"), c.req.raw, tripleOf(c), false),
  );
  app.post(
    "/evaluate/all",
    (c) => answerEvaluation(deps, c.get("principal"), c.req.raw, tripleOf(c), true),
  );

  return app;
}

/**
 * CORS preflights of `…/evaluate` and `…/evaluate/all`, mounted on the root
 * app before the authenticated API (a preflight has no credential). See
 * lib/http/cors.ts for the rule.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/", evaluatePreflightRoutes(deps, evaluation));
 * ```
 */
export function evaluatePreflightRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = "/api/v1/tenants/:tenant/namespaces/:ns/environments/:env";
  for (const path of [`${base}/evaluate`, `${base}/evaluate/all`]) {
    app.options(path, async (c) => {
      const origin = c.req.header("origin");
      const t: Triple = {
        tenant: c.req.param("tenant")!,
        namespace: c.req.param("ns")!,
        environment: c.req.param("env")!,
      };
      return preflightResponse(origin, await evaluationPreflightAllowed(deps, origin, t));
    });
  }
  return app;
}
