/**
 * The OpenFeature Remote Evaluation Protocol (OFREP, open-feature/protocol
 * `service/openapi.yaml`) over the cfgtool engine:
 *
 * - `POST /ofrep/v1/evaluate/flags/{key}` `{context}` → 200
 *   `{key, value, reason, variant, metadata}`;
 * - `POST /ofrep/v1/evaluate/flags` `{context}` → 200 `{flags: [...]}` with
 *   an `ETag`, or 304 when `If-None-Match` names it; for `namespace-client`
 *   tokens the body also carries `eventStreams` (ADR-0008, see
 *   lib/http/ofrep_events.ts).
 *
 * Which namespace: a `namespace-client` token evaluates its bound
 * (tenant, namespace, environment); every other principal names them in
 * `X-Cfgtool-Tenant`, `X-Cfgtool-Namespace` and `X-Cfgtool-Environment`
 * (a client token that sends them must name its own binding, else 403).
 * Permissions, the `public_evaluate` gate, the rate limit and CORS are those
 * of `…/evaluate` (lib/http/evaluate.ts).
 *
 * Context: OpenFeature's `targetingKey` is copied to the context attribute
 * `targeting_key`, the default `bucket_by` of rollouts (it wins over a
 * `targeting_key` sent alongside); the rest of the context is used as sent,
 * so `user.id` stays `user.id`. A `targetingKey` that is not a string is
 * `INVALID_CONTEXT`; an empty one is `TARGETING_KEY_MISSING` (an absent one
 * is fine: rules that need it are skipped, as everywhere in cfgtool).
 *
 * ## Errors (this module's own mapping, not the JSON envelope of §6)
 *
 * | condition | status | body |
 * |---|---|---|
 * | missing, unknown, expired or revoked credential | 401 | none (`WWW-Authenticate: Bearer`) |
 * | not allowed, binding mismatch, `public_evaluate = false` | 403 | none |
 * | rate limited | 429 | none, `Retry-After: <seconds>` |
 * | body not JSON or not an object | 400 | `PARSE_ERROR` |
 * | context not an object, too deep, too large; `targetingKey` not a string | 400 | `INVALID_CONTEXT` |
 * | `targetingKey` is `""` | 400 | `TARGETING_KEY_MISSING` |
 * | `X-Cfgtool-*` headers missing (non-client principals) | 400 | `GENERAL` |
 * | unknown flag | 404 | `FLAG_NOT_FOUND` |
 * | unknown tenant, namespace or environment | 404 | `FLAG_NOT_FOUND` (single), `GENERAL` (bulk) |
 * | anything else | 500 | `GENERAL` |
 *
 * Error bodies are `{key, errorCode, errorDetails}` for the single-flag
 * endpoint and `{errorCode, errorDetails}` for the bulk one. Handlers throw;
 * the routes' `onError` (lib/http/ofrep_errors.ts) answers.
 *
 * ## ETag
 *
 * The bulk `ETag` is a 64-bit hash of the response body: the evaluated
 * results (key, value, reason, variant, metadata, in key order) and the
 * event-stream entry. It changes exactly when what the caller would receive
 * changes — a push that leaves this context's results as they were (another
 * flag's targeting, another environment, a description) keeps it, so the
 * caller's next poll is a 304. The manifest version is therefore not in the
 * body; it is in the `X-Cfgtool-Version` header.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "../flags/conditions.ts";
import { murmur3, murmur3Finalize, murmur3MixBlock } from "../flags/bucket.ts";
import { etagMatches } from "../protocol/etag.ts";
import { evaluateAll, evaluateFlag, type EvaluationResult } from "../flags/evaluate.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authenticate, presentedClientToken } from "./authn.ts";
import { InvalidContextError, validateContext } from "./context_input.ts";
import { applyCors, corsOrigin, preflightResponse } from "./cors.ts";
import { jsonHeaders, observeEvaluations, readEvaluationBody } from "./evaluate.ts";
import { evaluationModel, ofrepPreflightAllowed, type Triple } from "../services/evaluation.ts";
import type { Principal } from "../auth/principal.ts";
import { eventStreamUrl, ofrepEventRoutes } from "./ofrep_events.ts";
import { OfrepError, ofrepErrorHandler } from "./ofrep_errors.ts";

/**
 * The context of an OFREP request with `targetingKey` copied to
 * `targeting_key` (see the module doc).
 *
 * @param ctx a validated context
 * @returns the context to evaluate
 * @throws {InvalidContextError} when `targetingKey` is not a string
 * @throws {OfrepError} `TARGETING_KEY_MISSING` when it is empty
 *
 * @example
 * ```ts
 * import { ofrepContext } from "./ofrep.ts";
 * const ctx = ofrepContext({ targetingKey: "u1", plan: "pro" });
 * if (ctx.targeting_key !== "u1" || ctx.plan !== "pro") throw new Error();
 * ```
 */
export function ofrepContext(ctx: Context): Context {
  if (!Object.hasOwn(ctx, "targetingKey")) return ctx;
  const tk = ctx.targetingKey;
  if (tk === undefined || tk === null) return ctx;
  if (typeof tk !== "string") {
    throw new InvalidContextError("context.targetingKey must be a string");
  }
  if (tk === "") {
    throw new OfrepError("TARGETING_KEY_MISSING", "context.targetingKey is empty");
  }
  return { ...ctx, targeting_key: tk };
}

/** One flag of an OFREP response, serialized once per shared engine result. */
interface Fragment {
  json: string;
  h1: number;
  h2: number;
}

const fragments = new WeakMap<EvaluationResult, Fragment>();
const SEED_1 = 0x9747b28c;
const SEED_2 = 0x5bd1e995;

/**
 * The OFREP JSON of one engine result: a success
 * `{key, value, reason, variant, metadata}` or, for an `ERROR` result, a
 * failure `{key, errorCode, errorDetails}`.
 */
function fragmentOf(r: EvaluationResult): Fragment {
  let f = fragments.get(r);
  if (f !== undefined) return f;
  const json = JSON.stringify(
    r.reason === "ERROR"
      ? {
        key: r.flag,
        errorCode: r.error_code === "FLAG_NOT_FOUND" ? "FLAG_NOT_FOUND" : "GENERAL",
        errorDetails: r.error_message ?? r.error_code ?? "evaluation failed",
      }
      : {
        key: r.flag,
        value: r.value,
        reason: r.reason,
        variant: r.variation,
        metadata: r.rule_index === undefined ? {} : { ruleIndex: r.rule_index },
      },
  );
  f = { json, h1: murmur3(json, SEED_1), h2: murmur3(json, SEED_2) };
  // Engine results are shared between requests when they do not depend on
  // the context: serialize and hash each only once.
  if (Object.isFrozen(r)) fragments.set(r, f);
  return f;
}

/**
 * The bulk response body and its ETag.
 *
 * @param results flag key → result, in key order
 * @param streamUrl the event-stream URL, or null
 * @returns body text and ETag (quoted)
 *
 * @example
 * ```ts
 * import { bulkBody } from "./ofrep.ts";
 * const r = { flag: "a", value: true, variation: "on", reason: "DEFAULT" as const, version: 1 };
 * const one = bulkBody({ a: r }, null);
 * const two = bulkBody({ a: { ...r, version: 2 } }, null);
 * if (one.etag !== two.etag || JSON.parse(one.body).flags[0].value !== true) throw new Error();
 * ```
 */
export function bulkBody(
  results: Record<string, EvaluationResult>,
  streamUrl: string | null,
): { body: string; etag: string } {
  const parts: string[] = [];
  let h1 = SEED_1;
  let h2 = SEED_2;
  for (const k in results) {
    const f = fragmentOf(results[k]!);
    parts.push(f.json);
    h1 = murmur3MixBlock(h1, f.h1);
    h2 = murmur3MixBlock(h2, f.h2);
  }
  let body = `{"flags":[${parts.join(",")}]`;
  if (streamUrl !== null) {
    body += `,"eventStreams":${JSON.stringify([{ type: "sse", url: streamUrl }])}`;
    h1 = murmur3MixBlock(h1, murmur3(streamUrl, SEED_1));
    h2 = murmur3MixBlock(h2, murmur3(streamUrl, SEED_2));
  }
  body += "}";
  h1 = murmur3Finalize(h1, parts.length);
  h2 = murmur3Finalize(h2, parts.length);
  const hex = h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0");
  return { body, etag: `"${hex}"` };
}

/** Whether an `If-None-Match` header names an ETag (weakly): lib/protocol/etag.ts. */
export { etagMatches } from "../protocol/etag.ts";

/**
 * The manifest version an SSE-triggered refetch names: `flagConfigEtag`
 * (ofrep-core) or `sseEtag` (ADR-0008 text), both carrying the event's
 * `"v<version>-<hash>"`.
 *
 * @param url the request URL
 * @returns the version, or undefined
 *
 * @example
 * ```ts
 * import { refetchVersion } from "./ofrep.ts";
 * if (refetchVersion(new URL('http://x/?flagConfigEtag="v7-ab"')) !== 7) throw new Error();
 * ```
 */
export function refetchVersion(url: URL): number | undefined {
  const v = url.searchParams.get("flagConfigEtag") ?? url.searchParams.get("sseEtag");
  if (v === null) return undefined;
  const m = /^(?:W\/)?"?v(\d{1,15})-/.exec(v);
  return m ? Number(m[1]) : undefined;
}

/**
 * The triple an authenticated OFREP request evaluates: a `namespace-client`
 * token's binding (headers may restate it), else the one named in the
 * `X-Cfgtool-Tenant`, `X-Cfgtool-Namespace` and `X-Cfgtool-Environment`
 * headers. Shared with the relay's OFREP routes.
 *
 * @param p the authenticated caller
 * @param headers the request's headers
 * @returns the triple (a client token's binding check is the caller's)
 * @throws {OfrepError} `GENERAL` when a non-client principal names no triple
 *
 * @example
 * ```ts ignore
 * const t = ofrepTriple(c.get("principal"), c.req.raw.headers);
 * ```
 */
export function ofrepTriple(p: Principal, headers: Headers): Triple {
  const named = {
    tenant: headers.get("x-cfgtool-tenant") ?? undefined,
    namespace: headers.get("x-cfgtool-namespace") ?? undefined,
    environment: headers.get("x-cfgtool-environment") ?? undefined,
  };
  if (p.kind === "token" && p.token.type === "namespace-client") {
    return {
      tenant: named.tenant ?? p.token.tenant_slug ?? "",
      namespace: named.namespace ?? p.token.namespace_slug ?? "",
      environment: named.environment ?? p.token.environment_slug ?? "",
    };
  }
  if (
    named.tenant === undefined || named.namespace === undefined ||
    named.environment === undefined
  ) {
    throw new OfrepError(
      "GENERAL",
      "Name the flags to evaluate with the X-Cfgtool-Tenant, X-Cfgtool-Namespace and " +
        "X-Cfgtool-Environment headers (only namespace-client tokens imply them)",
    );
  }
  return { tenant: named.tenant, namespace: named.namespace, environment: named.environment };
}

/**
 * The context of an OFREP request's body: read and checked as at
 * `…/evaluate`, then {@linkcode ofrepContext}. Shared with the relay.
 *
 * @param req the request
 * @returns the context to evaluate
 * @throws {OfrepError} or {InvalidContextError} for a bad body or context
 *
 * @example
 * ```ts
 * import { readOfrepContext } from "./ofrep.ts";
 * const req = new Request("http://x/", {
 *   method: "POST",
 *   body: JSON.stringify({ context: { targetingKey: "u1" } }),
 * });
 * if ((await readOfrepContext(req)).targeting_key !== "u1") throw new Error();
 * ```
 */
export async function readOfrepContext(req: Request): Promise<Context> {
  const { body, bytes } = await readEvaluationBody(req);
  return ofrepContext(validateContext(body.context, { bodyBytes: bytes }));
}

/** The Origin the caller's token allows for this request, or null (lib/http/cors.ts). */
function allowedOrigin(p: Principal | undefined, req: Request): string | null {
  return corsOrigin(p, req.headers.get("origin") ?? undefined);
}

/**
 * The answer of `POST /ofrep/v1/evaluate/flags/{key}` for one engine result
 * (with CORS headers); shared with the relay.
 *
 * @param p the authenticated caller
 * @param req the request
 * @param key the flag key of the path
 * @param t the evaluated triple (named in the not-found message)
 * @param r the engine's result
 * @returns the success response
 * @throws {OfrepError} `FLAG_NOT_FOUND` (404), `PARSE_ERROR` (400) or `GENERAL` (500) for an `ERROR` result
 *
 * @example
 * ```ts ignore
 * return ofrepFlagResponse(p, c.req.raw, key, t, evaluateFlag(model, t.environment, key, context));
 * ```
 */
export function ofrepFlagResponse(
  p: Principal,
  req: Request,
  key: string,
  t: Triple,
  r: EvaluationResult,
): Response {
  if (r.reason === "ERROR") {
    if (r.error_code === "FLAG_NOT_FOUND") {
      throw new OfrepError(
        "FLAG_NOT_FOUND",
        `Flag ${key} does not exist in ${t.tenant}/${t.namespace}`,
        404,
      );
    }
    throw new OfrepError(
      r.error_code === "PARSE_ERROR" ? "PARSE_ERROR" : "GENERAL",
      r.error_message ?? "evaluation failed",
      r.error_code === "PARSE_ERROR" ? 400 : 500,
    );
  }
  const body = {
    key,
    value: r.value,
    reason: r.reason,
    variant: r.variation,
    metadata: r.rule_index === undefined
      ? { version: r.version }
      : { version: r.version, ruleIndex: r.rule_index },
  };
  const headers = jsonHeaders(allowedOrigin(p, req));
  headers["cache-control"] = "private, no-cache";
  return new Response(JSON.stringify(body), { headers });
}

/**
 * The answer of `POST /ofrep/v1/evaluate/flags`: the bulk body with its
 * ETag and `X-Cfgtool-Version`, or a 304 when `If-None-Match` names the
 * ETag (with CORS headers); shared with the relay.
 *
 * @param p the authenticated caller
 * @param req the request
 * @param results flag key → result, in key order
 * @param version the evaluated manifest version
 * @param streamUrl the event-stream URL, or null
 * @returns the response
 *
 * @example
 * ```ts ignore
 * return ofrepBulkResponse(p, c.req.raw, evaluateAll(model, t.environment, context), model.version, null);
 * ```
 */
export function ofrepBulkResponse(
  p: Principal,
  req: Request,
  results: Record<string, EvaluationResult>,
  version: number,
  streamUrl: string | null,
): Response {
  const { body, etag } = bulkBody(results, streamUrl);
  const headers = new Headers({
    etag,
    "cache-control": "private, no-cache",
    "x-cfgtool-version": String(version),
  });
  applyCors(headers, allowedOrigin(p, req));
  if (etagMatches(req.headers.get("if-none-match") ?? undefined, etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers.set("content-type", "application/json");
  return new Response(body, { headers });
}

/**
 * The answer of `POST /ofrep/v1/evaluate/flags/{key}` for an
 * authenticated caller: the triple (its token's binding, or the
 * `X-Cfgtool-*` headers), the model through the one service call
 * (authorised, rate-limited, the context read only then), the evaluation
 * counted. The router's route and the data plane (lib/http/data_plane.ts)
 * both answer with it.
 *
 * @param deps the app dependencies
 * @param p the authenticated caller
 * @param req the request (its body is read here)
 * @param key the flag key of the path
 * @returns the answer
 * @throws {OfrepError} or {CfgtoolError} (the caller shapes it as OFREP's)
 *
 * @example
 * ```ts ignore
 * return await answerOfrepFlag(deps, c.get("principal"), c.req.raw, c.req.param("key"));
 * ```
 */
export async function answerOfrepFlag(
  deps: AppDeps,
  p: Principal,
  req: Request,
  key: string,
): Promise<Response> {
  const t = ofrepTriple(p, req.headers);
  const { model, input: context } = await evaluationModel(deps, p, t, {
    input: () => readOfrepContext(req),
    countedOrigin: allowedOrigin(p, req) ?? "",
  });
  const r = evaluateFlag(model, t.environment, key, context);
  observeEvaluations(deps, "ofrep", t, r, context);
  return ofrepFlagResponse(p, req, key, t, r);
}

/**
 * The answer of `POST /ofrep/v1/evaluate/flags` for an authenticated
 * caller: every flag of the triple, with the ETag, `X-Cfgtool-Version`, a
 * 304 for a matching `If-None-Match`, and the event-stream URL for a
 * `namespace-client` token. Shared by the router's route and the data
 * plane.
 *
 * @param deps the app dependencies
 * @param p the authenticated caller
 * @param req the request (its body is read here)
 * @param clientToken the `namespace-client` token as presented, or null
 * @returns the answer
 * @throws {OfrepError} or {CfgtoolError} (the caller shapes it as OFREP's)
 *
 * @example
 * ```ts ignore
 * return await answerOfrepBulk(deps, c.get("principal"), c.req.raw, presentedClientToken(c));
 * ```
 */
export async function answerOfrepBulk(
  deps: AppDeps,
  p: Principal,
  req: Request,
  clientToken: string | null,
): Promise<Response> {
  const t = ofrepTriple(p, req.headers);
  const q = req.url.indexOf("?");
  const minVersion = q === -1 ? undefined : refetchVersion(new URL(req.url));
  const { model, input: context } = await evaluationModel(deps, p, t, {
    input: () => readOfrepContext(req),
    countedOrigin: allowedOrigin(p, req) ?? "",
    ...(minVersion === undefined ? {} : { minVersion }),
  });
  const results = evaluateAll(model, t.environment, context);
  observeEvaluations(deps, "ofrep", t, results, context);
  const streamUrl = clientToken === null ? null : eventStreamUrl(req, clientToken, deps.publicUrl);
  return ofrepBulkResponse(p, req, results, model.version, streamUrl);
}

/**
 * The OFREP routes, mounted at `/ofrep/v1` of the root app (they
 * authenticate themselves: their errors are OFREP's, not the §6 envelope).
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/ofrep/v1", ofrepRoutes(deps, evaluation));
 * ```
 */
export function ofrepRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.onError(ofrepErrorHandler(deps.log)); // handlers throw; errors answer in OFREP's shape

  const authn = authenticate(deps, { from: ["bearer"] }); // preflights (OPTIONS) carry none

  app.post(
    "/evaluate/flags/:key",
    authn,
    (c) => answerOfrepFlag(deps, c.get("principal"), c.req.raw, c.req.param("key")),
  );
  app.post(
    "/evaluate/flags",
    authn,
    (c) => answerOfrepBulk(deps, c.get("principal"), c.req.raw, presentedClientToken(c)),
  );

  for (const path of ["/evaluate/flags", "/evaluate/flags/:key"]) {
    app.options(path, async (c) => {
      const origin = c.req.header("origin");
      return preflightResponse(origin, await ofrepPreflightAllowed(deps, origin));
    });
  }

  app.route("/", ofrepEventRoutes(deps));
  return app;
}
