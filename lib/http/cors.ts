/**
 * Cross-origin access to the evaluation endpoints (docs/ofrep.md,
 * "Cross-origin requests"): CORS headers only for `namespace-client`
 * tokens, only on the evaluation endpoints (`…/evaluate`, `…/evaluate/all`,
 * OFREP and its event stream), and only for an `Origin` listed in the
 * token's `allowed_origins`. With an empty list, no CORS header at all.
 *
 * Actual requests: {@linkcode corsOrigin} decides from the authenticated
 * token; the response gets `Access-Control-Allow-Origin: <origin>`,
 * `Vary: Origin` and `Access-Control-Expose-Headers: ETag, Retry-After,
 * X-Request-Id`. Requests that fail authentication (401, or 403 from the
 * `public_evaluate` gate) have no token to decide from and get no CORS
 * headers.
 *
 * Preflights (`OPTIONS`) carry no `Authorization`, so they cannot be
 * decided from a token. The choice made here: a preflight is approved when
 * at least one active `namespace-client` token lists the Origin — bound to
 * the path's (tenant, namespace, environment) for `…/evaluate[/all]`
 * (whose environment must also have `public_evaluate = true`), bound to any
 * triple for OFREP, whose URL names none. Approving a preflight reveals
 * nothing: the actual request still needs the token, and its response is
 * readable only when that token lists the Origin. Approved preflights allow
 * `POST` with `Authorization`, `Content-Type` and `If-None-Match`, cached by
 * the browser for 10 minutes; refused ones get 204 without any CORS header.
 *
 * The Origin → bindings index behind preflights ({@linkcode ClientOriginIndex})
 * is one scan of the token records per process, rebuilt every 30 s, and at
 * most once a second on a miss, so a new token's origins are honoured by
 * preflights within about a second.
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import { tokenPrefix } from "../store/keys.ts";
import { effectiveStatus, type TokenRecord } from "../store/tokens.ts";

/** Request headers a preflight allows. */
export const ALLOWED_HEADERS = "Authorization, Content-Type, If-None-Match";

/** Response headers a cross-origin caller may read. */
export const EXPOSED_HEADERS = "ETag, Retry-After, X-Request-Id";

/** How long a browser may cache an approved preflight, seconds. */
export const PREFLIGHT_MAX_AGE = 600;

/**
 * The Origin to allow for an authenticated request, or null: the request's
 * `Origin` when the principal is a `namespace-client` token that lists it.
 *
 * @param p the principal (undefined when authentication failed)
 * @param origin the request's `Origin` header
 * @returns the origin to echo, or null for no CORS headers
 *
 * @example
 * ```ts
 * import { corsOrigin } from "./cors.ts";
 * import type { TokenRecord } from "../store/tokens.ts";
 * const token = { type: "namespace-client", allowed_origins: ["https://a.example"] } as TokenRecord;
 * if (corsOrigin({ kind: "token", token }, "https://a.example") !== "https://a.example") throw new Error();
 * if (corsOrigin({ kind: "token", token }, "https://b.example") !== null) throw new Error();
 * ```
 */
export function corsOrigin(p: Principal | undefined, origin: string | undefined): string | null {
  if (p === undefined || origin === undefined || p.kind !== "token") return null;
  if (p.token.type !== "namespace-client") return null;
  return p.token.allowed_origins.includes(origin) ? origin : null;
}

/**
 * Adds the CORS headers of an allowed actual request to `headers`, and
 * `Vary: Origin` in every case (the answer depends on the Origin).
 *
 * @param headers the response headers to change
 * @param origin the result of {@linkcode corsOrigin}
 *
 * @example
 * ```ts
 * import { applyCors } from "./cors.ts";
 * const h = new Headers();
 * applyCors(h, "https://a.example");
 * if (h.get("access-control-allow-origin") !== "https://a.example") throw new Error();
 * ```
 */
export function applyCors(headers: Headers, origin: string | null): void {
  appendVary(headers, "Origin");
  if (origin === null) return;
  headers.set("access-control-allow-origin", origin);
  headers.set("access-control-expose-headers", EXPOSED_HEADERS);
}

/**
 * The answer to a preflight: 204 with the CORS preflight headers when
 * allowed, a bare 204 otherwise.
 *
 * @param origin the request's Origin
 * @param allowed whether {@linkcode ClientOriginIndex} approved it
 * @param methods the methods to allow (default `POST`)
 * @returns the response
 *
 * @example
 * ```ts
 * import { preflightResponse } from "./cors.ts";
 * const res = preflightResponse("https://a.example", true);
 * if (res.headers.get("access-control-allow-headers") !== "Authorization, Content-Type, If-None-Match") throw new Error();
 * ```
 */
export function preflightResponse(
  origin: string | undefined,
  allowed: boolean,
  methods = "POST",
): Response {
  const headers = new Headers({ vary: "Origin" });
  if (allowed && origin !== undefined) {
    headers.set("access-control-allow-origin", origin);
    headers.set("access-control-allow-methods", methods);
    headers.set("access-control-allow-headers", ALLOWED_HEADERS);
    headers.set("access-control-max-age", String(PREFLIGHT_MAX_AGE));
  }
  return new Response(null, { status: 204, headers });
}

function appendVary(headers: Headers, name: string): void {
  const vary = headers.get("vary");
  if (vary === null) headers.set("vary", name);
  else if (!vary.split(",").some((v) => v.trim().toLowerCase() === name.toLowerCase())) {
    headers.set("vary", `${vary}, ${name}`);
  }
}

/** Options of {@linkcode ClientOriginIndex}. */
export interface ClientOriginIndexOptions {
  /** Rebuild at least this often, ms (default 30 s). */
  ttlMs?: number;
  /** On a miss, rebuild when the index is older than this, ms (default 1 s). */
  missRefreshMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

/** (tenant, namespace, environment) as one string. */
function tripleKey(t: string, ns: string, env: string): string {
  return `${t}\u0000${ns}\u0000${env}`;
}

/**
 * Which Origins the active `namespace-client` tokens list, and for which
 * bindings: the data behind preflight answers.
 *
 * @example
 * ```ts
 * import { ClientOriginIndex } from "./cors.ts";
 * const kv = await Deno.openKv(":memory:");
 * const index = new ClientOriginIndex(kv);
 * if (await index.allows("https://a.example")) throw new Error();
 * kv.close();
 * ```
 */
export class ClientOriginIndex {
  readonly #kv: Deno.Kv;
  readonly #ttl: number;
  readonly #missRefresh: number;
  readonly #now: () => number;
  #origins = new Map<string, Set<string>>();
  #builtAt = -Infinity;
  #building: Promise<void> | null = null;

  constructor(kv: Deno.Kv, options: ClientOriginIndexOptions = {}) {
    this.#kv = kv;
    this.#ttl = options.ttlMs ?? 30_000;
    this.#missRefresh = options.missRefreshMs ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Whether an active `namespace-client` token lists `origin`: any token,
   * or one bound to `triple` when given.
   *
   * @param origin the preflight's Origin
   * @param triple the binding the token must have
   * @returns whether to approve the preflight
   */
  async allows(
    origin: string,
    triple?: { tenant: string; namespace: string; environment: string },
  ): Promise<boolean> {
    if (this.#now() - this.#builtAt > this.#ttl) await this.#rebuild();
    if (this.#has(origin, triple)) return true;
    if (this.#now() - this.#builtAt > this.#missRefresh) {
      await this.#rebuild();
      return this.#has(origin, triple);
    }
    return false;
  }

  #has(
    origin: string,
    triple: { tenant: string; namespace: string; environment: string } | undefined,
  ): boolean {
    const bindings = this.#origins.get(origin);
    if (bindings === undefined) return false;
    return triple === undefined ||
      bindings.has(tripleKey(triple.tenant, triple.namespace, triple.environment));
  }

  #rebuild(): Promise<void> {
    this.#building ??= (async () => {
      try {
        const now = new Date(this.#now());
        const next = new Map<string, Set<string>>();
        for await (const e of this.#kv.list<TokenRecord>({ prefix: tokenPrefix() })) {
          const t = e.value;
          if (t.type !== "namespace-client" || effectiveStatus(t, now) !== "active") continue;
          if (t.tenant_slug === null || t.namespace_slug === null || t.environment_slug === null) {
            continue;
          }
          const key = tripleKey(t.tenant_slug, t.namespace_slug, t.environment_slug);
          for (const o of t.allowed_origins) {
            let set = next.get(o);
            if (set === undefined) next.set(o, set = new Set());
            set.add(key);
          }
        }
        this.#origins = next;
        this.#builtAt = this.#now();
      } finally {
        this.#building = null;
      }
    })();
    return this.#building;
  }
}
