/**
 * Evaluation at a relay, on the wire of `serve` (docs/ofrep.md):
 * `POST …/environments/{env}/evaluate` and `…/evaluate/all`, OFREP single
 * and bulk (with its ETag and `eventStreams`), the OFREP event stream, and
 * their CORS preflights. The request path is the service's own where it
 * can be: the body and context checks (lib/http/evaluate.ts,
 * lib/http/context_input.ts), the OFREP context, body and ETag
 * (lib/http/ofrep.ts), OFREP's error answers (lib/http/ofrep_errors.ts),
 * CORS (lib/http/cors.ts), the SSE lifecycle (lib/events/sse.ts) and the
 * engine (lib/flags/evaluate.ts). What differs is where the model and the
 * caller come from: the relay's holdings and verdicts.
 *
 * The `public_evaluate` gate of a `namespace-client` token is read from the
 * relay's copy of `namespace.toml`; the token's CORS origins from its
 * verdict; a preflight is approved for an Origin that a client token the
 * relay has a verdict on lists (the relay cannot scan the token records).
 * Not at the relay: the per-Origin rate limit of client tokens (each relay
 * process would count alone; limit at the load balancer).
 *
 * @module
 */
import { type Context as HonoContext, Hono } from "hono";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import { assertEnvironment, evaluateAll, evaluateFlag } from "../flags/evaluate.ts";
import type { CompiledModel } from "../flags/evaluate.ts";
import type { AppEnv } from "../http/deps.ts";
import { flagOfBody, jsonHeaders, readEvaluationInput } from "../http/evaluate.ts";
import type { Principal } from "../auth/principal.ts";
import { applyCors, corsOrigin, preflightResponse } from "../http/cors.ts";
import {
  ofrepBulkResponse,
  ofrepFlagResponse,
  ofrepTriple,
  readOfrepContext,
} from "../http/ofrep.ts";
import { ofrepErrorHandler } from "../http/ofrep_errors.ts";
import { EVENT_STREAM_PATH, eventStreamUrl, RETRY_MS } from "../http/ofrep_events.ts";
import { sseHeaders } from "../events/sse.ts";
import { routeStreams } from "../events/route_streams.ts";
import { versionEtag } from "../protocol/etag.ts";
import { assertMayEvaluate, type ReadTarget } from "./access.ts";
import { presentedCredential, relayAuthn, verdictOf } from "./authn.ts";
import type { RelayDeps } from "./deps.ts";
import type { Held } from "./holdings.ts";
import type { Verdict } from "./verdicts.ts";

type Ctx = HonoContext<AppEnv>;
type Triple = Required<ReadTarget>;

/**
 * The model a request evaluates, after its caller may evaluate there (403
 * first, as at the service), its context read (400), then 404 for what the
 * relay does not hold.
 */
async function prepare<T>(
  deps: RelayDeps,
  v: Verdict,
  t: Triple,
  read: () => Promise<T>,
): Promise<{ model: CompiledModel; input: T }> {
  assertMayEvaluate(v, t, (a, b, e) => deps.holdings.isPublic(a, b, e));
  const input = await read();
  return { model: modelOf(deps, t), input };
}

/**
 * The relay's answer to `…/evaluate` (`all` false) or `…/evaluate/all`
 * for a caller with a verdict: the service's JSON with `Vary: Origin` and
 * the CORS headers the caller's token earns. The relay's routes and its
 * data plane (lib/relay/data_plane.ts) both answer with it.
 *
 * @param deps the relay's dependencies
 * @param v the caller's verdict
 * @param p the caller as a principal
 * @param req the request (its body is read here)
 * @param t the triple of the path
 * @param all whether every flag is evaluated
 * @returns the answer
 * @throws {CfgtoolError} for a refusal or a bad request (the caller shapes it)
 *
 * @example
 * ```ts ignore
 * return await relayEvaluation(deps, verdictOf(c), c.get("principal"), c.req.raw, t, false);
 * ```
 */
export async function relayEvaluation(
  deps: RelayDeps,
  v: Verdict,
  p: Principal,
  req: Request,
  t: Triple,
  all: boolean,
): Promise<Response> {
  const { model, input } = await prepare(deps, v, t, () => readEvaluationInput(req));
  const body = all
    ? { version: model.version, flags: evaluateAll(model, t.environment, input.context) }
    : evaluateFlag(model, t.environment, flagOfBody(input.body), input.context);
  const allowed = corsOrigin(p, req.headers.get("origin") ?? undefined);
  return new Response(JSON.stringify(body), { headers: jsonHeaders(allowed) });
}

/**
 * The relay's answer to `POST /ofrep/v1/evaluate/flags/{key}`, shared by
 * its route and its data plane.
 *
 * @param deps the relay's dependencies
 * @param v the caller's verdict
 * @param p the caller as a principal
 * @param req the request (its body is read here)
 * @param key the flag key of the path
 * @returns the answer
 * @throws {OfrepError} or {CfgtoolError} (the caller shapes it as OFREP's)
 *
 * @example
 * ```ts ignore
 * return await relayOfrepFlag(deps, verdictOf(c), c.get("principal"), c.req.raw, key);
 * ```
 */
export async function relayOfrepFlag(
  deps: RelayDeps,
  v: Verdict,
  p: Principal,
  req: Request,
  key: string,
): Promise<Response> {
  const t = ofrepTriple(p, req.headers);
  const { model, input: context } = await prepare(deps, v, t, () => readOfrepContext(req));
  return ofrepFlagResponse(p, req, key, t, evaluateFlag(model, t.environment, key, context));
}

/**
 * The relay's answer to `POST /ofrep/v1/evaluate/flags`, shared by its
 * route and its data plane.
 *
 * @param deps the relay's dependencies
 * @param v the caller's verdict
 * @param p the caller as a principal
 * @param req the request (its body is read here)
 * @param clientToken the `namespace-client` token as presented, or null
 * @returns the answer
 * @throws {OfrepError} or {CfgtoolError} (the caller shapes it as OFREP's)
 *
 * @example
 * ```ts ignore
 * return await relayOfrepBulk(deps, verdictOf(c), c.get("principal"), c.req.raw, null);
 * ```
 */
export async function relayOfrepBulk(
  deps: RelayDeps,
  v: Verdict,
  p: Principal,
  req: Request,
  clientToken: string | null,
): Promise<Response> {
  const t = ofrepTriple(p, req.headers);
  const { model, input: context } = await prepare(deps, v, t, () => readOfrepContext(req));
  const results = evaluateAll(model, t.environment, context);
  const streamUrl = clientToken === null ? null : eventStreamUrl(req, clientToken, deps.publicUrl);
  return ofrepBulkResponse(p, req, results, model.version, streamUrl);
}

function modelOf(deps: RelayDeps, t: Triple): CompiledModel {
  const held: Held | undefined = deps.holdings.get(t.tenant, t.namespace);
  if (held === undefined) {
    if (!deps.holdings.hasTenant(t.tenant)) {
      throw new NotFoundError("tenant_not_found", `No tenant ${t.tenant}`);
    }
    throw new NotFoundError("namespace_not_found", `No namespace ${t.tenant}/${t.namespace}`);
  }
  const model = held.state.model;
  assertEnvironment(model, t);
  return model;
}

/** The Origins client tokens known to the relay list (for preflights). */
function knownOrigin(deps: RelayDeps, origin: string | undefined, t?: Triple): boolean {
  if (origin === undefined) return false;
  if (t !== undefined && !deps.holdings.isPublic(t.tenant, t.namespace, t.environment)) {
    return false;
  }
  return deps.verdicts.knowsOrigin(origin, t);
}

/**
 * `…/evaluate` and `…/evaluate/all`, mounted under
 * `/api/v1/tenants/:tenant/namespaces/:ns/environments/:env`, and their
 * preflights.
 *
 * @param deps the relay's dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/api/v1/tenants/:tenant/namespaces/:ns/environments/:env", relayEvaluateRoutes(deps));
 * ```
 */
export function relayEvaluateRoutes(deps: RelayDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const authn = relayAuthn(deps, { from: "bearer" });
  const tripleOf = (c: Ctx): Triple => ({
    tenant: c.req.param("tenant")!,
    namespace: c.req.param("ns")!,
    environment: c.req.param("env")!,
  });
  app.use("*", async function evaluationCors(c, next) {
    await next();
    // a refused credential gets no CORS header and no Vary, as at the service
    const p = c.get("principal");
    if (c.req.method !== "OPTIONS" && p !== undefined) {
      applyCors(c.res.headers, corsOrigin(p, c.req.header("origin")));
    }
  });
  app.post(
    "/evaluate",
    authn,
    (c) => relayEvaluation(deps, verdictOf(c), c.get("principal"), c.req.raw, tripleOf(c), false),
  );
  app.post(
    "/evaluate/all",
    authn,
    (c) => relayEvaluation(deps, verdictOf(c), c.get("principal"), c.req.raw, tripleOf(c), true),
  );
  for (const path of ["/evaluate", "/evaluate/all"]) {
    app.options(path, (c) => {
      const origin = c.req.header("origin");
      return preflightResponse(origin, knownOrigin(deps, origin, tripleOf(c)));
    });
  }
  return app;
}

/**
 * The OFREP routes, mounted at `/ofrep/v1`.
 *
 * @param deps the relay's dependencies
 * @returns the routes and the number of open OFREP event streams
 *
 * @example
 * ```ts ignore
 * const ofrep = relayOfrepRoutes(deps);
 * app.route("/ofrep/v1", ofrep.app);
 * ```
 */
export function relayOfrepRoutes(deps: RelayDeps): { app: Hono<AppEnv>; streams: () => number } {
  const app = new Hono<AppEnv>();
  app.onError(ofrepErrorHandler(deps.log));
  const authn = relayAuthn(deps, { from: "bearer" });

  app.post(
    "/evaluate/flags/:key",
    authn,
    (c) => relayOfrepFlag(deps, verdictOf(c), c.get("principal"), c.req.raw, c.req.param("key")),
  );
  app.post("/evaluate/flags", authn, (c) => {
    const p = c.get("principal");
    const client = p.kind === "token" && p.token.type === "namespace-client";
    const clientToken = client ? presentedCredential(c, "bearer") : null;
    return relayOfrepBulk(deps, verdictOf(c), p, c.req.raw, clientToken);
  });

  for (const path of ["/evaluate/flags", "/evaluate/flags/:key"]) {
    app.options(path, (c) => {
      const origin = c.req.header("origin");
      return preflightResponse(origin, knownOrigin(deps, origin));
    });
  }

  // The OFREP event stream: one refetchEvaluation per new version of the token's namespace.
  const streams = routeStreams(deps.settings, deps.shutdown);
  interface Listener {
    t: Triple;
    token: string;
    write(frame: Uint8Array): void;
    close(): void;
  }
  const listeners = new Set<Listener>();
  const encoder = new TextEncoder();
  const opening = encoder.encode(`retry: ${RETRY_MS}\n: cfgtool OFREP events\n\n`);
  const frameOf = (held: Held) =>
    encoder.encode(
      `id: ${held.state.version}\ndata: ${
        JSON.stringify({
          type: "refetchEvaluation",
          etag: versionEtag(held.state.version, held.state.hash),
        })
      }\n\n`,
    );
  deps.holdings.onChange(({ held }) => {
    const frame = frameOf(held);
    for (const l of listeners) {
      if (l.t.tenant !== held.tenant || l.t.namespace !== held.namespace) continue;
      // each event goes out only while the token may still evaluate there
      deps.verdicts.check(l.token).then((v: Verdict) => {
        assertMayEvaluate(v, l.t, (a, b, e) => deps.holdings.isPublic(a, b, e));
        l.write(frame);
      }).catch(() => l.close());
    }
  });

  app.get(EVENT_STREAM_PATH, relayAuthn(deps, { from: "query" }), (c) => {
    const p = c.get("principal");
    const v = verdictOf(c);
    if (v.type !== "namespace-client") {
      throw new ForbiddenError("Only namespace-client tokens may open the OFREP event stream");
    }
    const t: Triple = {
      tenant: v.tenant ?? "",
      namespace: v.namespace ?? "",
      environment: v.environment ?? "",
    };
    assertMayEvaluate(v, t, (a, b, e) => deps.holdings.isPublic(a, b, e));
    const held = deps.holdings.get(t.tenant, t.namespace);
    const stream = streams.open();
    if (!stream.closed) {
      const l: Listener = {
        t,
        token: presentedCredential(c, "query")!,
        write: (f) => stream.write(f),
        close: () => stream.close(),
      };
      listeners.add(l);
      stream.onClose(() => listeners.delete(l));
      stream.write(opening);
      if (held !== undefined && c.req.header("last-event-id") !== String(held.state.version)) {
        stream.write(frameOf(held));
      }
    }
    const headers = sseHeaders();
    applyCors(headers, corsOrigin(p, c.req.header("origin")));
    return new Response(stream.body, { headers });
  });

  return { app, streams: () => streams.size };
}
