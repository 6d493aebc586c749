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
 * The Origin → bindings index behind preflights (lib/runtime/client_origins.ts)
 * is one scan of the token records per process, rebuilt every 30 s, and at
 * most once a second on a miss, so a new token's origins are honoured by
 * preflights within about a second.
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";

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
 * @param allowed whether the origin index (lib/runtime/client_origins.ts) approved it
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
