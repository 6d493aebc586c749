/**
 * Flag evaluation: who may evaluate a (tenant, namespace, environment)
 * triple, and the compiled model to evaluate it with. Every evaluating
 * route (`…/evaluate`, `…/evaluate/all`, OFREP single and bulk, the OFREP
 * event stream, the console's playground) makes one call,
 * {@linkcode evaluationModel}: it authorises the caller (`evaluate`; for a
 * `namespace-client` token its bound triple while the environment has
 * `public_evaluate = true`, read from the runtime's model cache), counts a
 * `namespace-client` request against its rate limit, and returns the
 * current model from the runtime (404 for an unknown tenant, namespace or
 * environment). Evaluating is then a pure function of the model
 * (lib/flags/evaluate.ts).
 *
 * @module
 */
import { authorize } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import { assertEnvironment } from "../flags/evaluate.ts";
import type { CachedModel } from "../runtime/model_cache.ts";
import { RateLimiter } from "../runtime/rate_limiter.ts";
import { getNamespace } from "../store/namespaces.ts";
import { getTenant } from "../store/tenants.ts";
import { getHead, type Head } from "../store/versions.ts";
import { type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** A namespace's current head (its version, closure hash and environments). */
export type { Head };

/** A (tenant, namespace, environment) triple. */
export interface Triple {
  tenant: string;
  namespace: string;
  environment: string;
}

/** What an evaluating request says beyond its triple. */
export interface EvaluationOptions<T> {
  /**
   * The request's own input (its context), read only once the caller is
   * authorised and before the model is looked up: a bad context is 400
   * even for a namespace that does not exist.
   */
  input?: Deferred<T>;
  /**
   * The Origin a `namespace-client` request is counted under (its CORS
   * origin when the token allows it, else `""`): the rate limit is per
   * (tenant, namespace, environment, Origin).
   */
  countedOrigin?: string;
  /** Evaluate at least this version (a client that saw a push asks for it). */
  minVersion?: number;
}

/**
 * Authorises an evaluation of `t` by `principal`, counts it against a
 * `namespace-client` token's rate limit (429), and gives the model of the
 * namespace's current version (404 `tenant_not_found`,
 * `namespace_not_found`, `environment_not_found`).
 *
 * @param deps store, runtime
 * @param principal the caller
 * @param t the triple to evaluate
 * @param options the request's input, the counted Origin, a minimum version
 * @returns the head, the compiled model and the input
 *
 * @example
 * ```ts
 * import { evaluationModel } from "./evaluation.ts";
 * import { createNamespace } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * import { pushManifest } from "./manifests.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const deps = { kv, key, runtime };
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(deps, admin, { slug: "acme" }, { requestId: "r1" });
 * await createNamespace(deps, admin, "acme", { slug: "web" }, { requestId: "r1" });
 * const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest(deps, admin, { tenant: "acme", namespace: "web" }, { upload: { format: "json", bytes } }, { requestId: "r1" });
 * const { model } = await evaluationModel(deps, admin, { tenant: "acme", namespace: "web", environment: "prod" });
 * if (model.version !== 1) throw new Error();
 * let code = "";
 * try { await evaluationModel(deps, admin, { tenant: "acme", namespace: "web", environment: "qa" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "environment_not_found") throw new Error(code);
 * runtime.close();
 * kv.close();
 * ```
 */
export async function evaluationModel<T = undefined>(
  deps: ServiceDeps,
  principal: Principal,
  t: Triple,
  options: EvaluationOptions<T> = {},
): Promise<CachedModel & { input: T }> {
  const { models } = deps.runtime;
  await admit(deps, principal, t, options.countedOrigin);
  const input = await resolveInput(options.input as Deferred<T>);
  const cached = await models.get(
    t.tenant,
    t.namespace,
    options.minVersion === undefined ? {} : { minVersion: options.minVersion },
  );
  if (cached === null) {
    await getTenant(deps.kv, t.tenant); // tenant_not_found
    await getNamespace(deps.kv, t.tenant, t.namespace); // namespace_not_found
    throw new NotFoundError("namespace_not_found", `No namespace ${t.tenant}/${t.namespace}`);
  }
  assertEnvironment(cached.model, t);
  return { ...cached, input };
}

/**
 * Authorises an evaluation of `t` (the `namespace-client` gate reads the
 * head from the model cache, in memory) and counts a `namespace-client`
 * request against its rate limit.
 */
async function admit(
  deps: ServiceDeps,
  principal: Principal,
  t: Triple,
  countedOrigin: string | undefined,
): Promise<void> {
  const { models, limiter } = deps.runtime;
  await authorize(deps.kv, principal, "evaluate", t, {
    memo: memoOf(deps),
    headOf: (t, ns) => models.head(t, ns),
  });
  if (principal.kind === "token" && principal.token.type === "namespace-client") {
    await limiter.check(RateLimiter.key(t.tenant, t.namespace, t.environment, countedOrigin ?? ""));
  }
}

/**
 * Admits a `namespace-client` token's OFREP event stream for its bound
 * triple (403 for any other principal, and as {@linkcode evaluationModel}
 * for authorisation and rate limit) and gives the namespace's current head
 * (403 when the namespace is gone).
 *
 * @param deps store, runtime
 * @param principal the caller
 * @param countedOrigin the Origin the request is counted under
 * @returns the triple, its current head, and the token's id
 *
 * @example
 * ```ts ignore
 * const { t, head, tokenId } = await evaluationStreamHead(deps, principal, countedOrigin);
 * ```
 */
export async function evaluationStreamHead(
  deps: ServiceDeps,
  principal: Principal,
  countedOrigin: string,
): Promise<{ t: Triple; head: Head; tokenId: string }> {
  if (principal.kind !== "token" || principal.token.type !== "namespace-client") {
    throw new ForbiddenError("Only namespace-client tokens may open the OFREP event stream");
  }
  const t: Triple = {
    tenant: principal.token.tenant_slug ?? "",
    namespace: principal.token.namespace_slug ?? "",
    environment: principal.token.environment_slug ?? "",
  };
  await admit(deps, principal, t, countedOrigin);
  const head = await getHead(deps.kv, t.tenant, t.namespace);
  if (head === null) throw new ForbiddenError(`Namespace ${t.tenant}/${t.namespace} is gone`);
  return { t, head, tokenId: principal.token.id };
}

/**
 * Whether a CORS preflight from `origin` for the evaluation endpoints of
 * `t` is approved: a `namespace-client` token bound to `t` lists the
 * Origin, and the environment has `public_evaluate = true` (no credential:
 * a preflight carries none; approving one reveals nothing, the actual
 * request still needs the token).
 *
 * @param deps store, runtime
 * @param origin the preflight's Origin, if any
 * @param t the triple of the path
 * @returns whether to approve it
 *
 * @example
 * ```ts
 * import { evaluationPreflightAllowed } from "./evaluation.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const t = { tenant: "acme", namespace: "web", environment: "prod" };
 * if (await evaluationPreflightAllowed({ kv, key, runtime }, "https://a.example", t)) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export async function evaluationPreflightAllowed(
  deps: ServiceDeps,
  origin: string | undefined,
  t: Triple,
): Promise<boolean> {
  if (origin === undefined || !await deps.runtime.origins.allows(origin, t)) return false;
  const head = await getHead(deps.kv, t.tenant, t.namespace);
  return head?.environments[t.environment]?.public_evaluate === true;
}

/**
 * Whether a CORS preflight from `origin` for OFREP is approved: a
 * `namespace-client` token of any triple lists the Origin (OFREP's URL
 * names no triple).
 *
 * @param deps the runtime
 * @param origin the preflight's Origin, if any
 * @returns whether to approve it
 *
 * @example
 * ```ts ignore
 * return preflightResponse(origin, await ofrepPreflightAllowed(deps, origin));
 * ```
 */
export async function ofrepPreflightAllowed(
  deps: Pick<ServiceDeps, "runtime">,
  origin: string | undefined,
): Promise<boolean> {
  return origin !== undefined && await deps.runtime.origins.allows(origin);
}
