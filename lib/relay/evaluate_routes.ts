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
import { flagOfBody, readEvaluationInput } from "../http/evaluate.ts";
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
  c: Ctx,
  t: Triple,
  read: () => Promise<T>,
): Promise<{ model: CompiledModel; input: T }> {
  assertMayEvaluate(verdictOf(c), t, (a, b, e) => deps.holdings.isPublic(a, b, e));
  const input = await read();
  return { model: modelOf(deps, t), input };
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
  const readContext = (c: Ctx) => () => readEvaluationInput(c.req.raw);
  app.use("*", async function evaluationCors(c, next) {
    await next();
    if (c.req.method !== "OPTIONS") {
      applyCors(c.res.headers, corsOrigin(c.get("principal"), c.req.header("origin")));
    }
  });
  app.post("/evaluate", authn, async (c) => {
    const t = tripleOf(c);
    const { model, input } = await prepare(deps, c, t, readContext(c));
    return c.json(evaluateFlag(model, t.environment, flagOfBody(input.body), input.context));
  });
  app.post("/evaluate/all", authn, async (c) => {
    const t = tripleOf(c);
    const { model, input } = await prepare(deps, c, t, readContext(c));
    return c.json({
      version: model.version,
      flags: evaluateAll(model, t.environment, input.context),
    });
  });
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

  const readContext = (c: Ctx) => () => readOfrepContext(c.req.raw);

  app.post("/evaluate/flags/:key", authn, async (c) => {
    const key = c.req.param("key");
    const t = ofrepTriple(c);
    const { model, input: context } = await prepare(deps, c, t, readContext(c));
    return ofrepFlagResponse(c, key, t, evaluateFlag(model, t.environment, key, context));
  });

  app.post("/evaluate/flags", authn, async (c) => {
    const t = ofrepTriple(c);
    const { model, input: context } = await prepare(deps, c, t, readContext(c));
    const results = evaluateAll(model, t.environment, context);
    const p = c.get("principal");
    const clientToken = p.kind === "token" && p.token.type === "namespace-client"
      ? presentedCredential(c, "bearer")
      : null;
    const streamUrl = clientToken === null
      ? null
      : eventStreamUrl(c.req.raw, clientToken, deps.publicUrl);
    return ofrepBulkResponse(c, results, model.version, streamUrl);
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
