/**
 * The one door of authentication: the only module that reads a request's
 * credential (the `Authorization: Bearer` header, the browser session
 * cookie, or a `token` query parameter where a client cannot set headers).
 * {@linkcode authenticate} is a middleware factory; each part of the
 * service mounts it with its options and its handlers read the verified
 * principal from the context (`c.get("principal")`):
 *
 * | where | credentials | CSRF on changes by cookie | without a credential |
 * |---|---|---|---|
 * | `/api/v1` | bearer, or the browser session cookie | `X-CSRF-Token` | 401 |
 * | `/ofrep/v1` | bearer | (no cookie) | 401, in OFREP's shape (its sub-app's error handler) |
 * | the OFREP event stream | the `token` query parameter | (no cookie) | 401 |
 * | the closure endpoint | bearer | (no cookie) | none: a signed token in the query may stand in |
 * | `/ui` (the console) | the browser session cookie | `X-CSRF-Token` or the `_csrf` form field | a page load goes to sign-in; else 401 |
 * | `/auth` (sign-in pages) | bearer, or the browser session cookie | checked by each form | none |
 *
 * A cookie counts only when it holds a session a browser sign-in made (a
 * CLI session planted in a cookie would skip its own limits); a cookie that
 * no longer authenticates counts as no credential where one is optional. A
 * credential presented in a header is never ignored: when it fails, the
 * request fails (401, or 403 for a `namespace-client` token whose
 * environment is not public). Errors are thrown; the error handler of the
 * sub-app gives them their shape.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import {
  authenticateCredential,
  type Principal,
  type SessionPrincipal,
} from "../auth/principal.ts";
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import { authDepsOf } from "../services/deps.ts";
import { bearerCredential } from "../auth/bearer.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { clientIp } from "./client_ip.ts";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import {
  CSRF_FIELD,
  CSRF_HEADER,
  csrfAllowed,
  PLAIN_COOKIE,
  SECURE_COOKIE,
  secureOrigin,
} from "./auth/session_cookie.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Where a credential may come from. */
export type CredentialSource = "bearer" | "cookie" | "query";

/** Options of {@linkcode authenticate}. */
export interface AuthnOptions {
  /** Where a credential is read, in this order of precedence (default bearer, then cookie). */
  from?: readonly CredentialSource[];
  /**
   * Whether a request must carry a credential (default true: 401 without
   * one). When false, a request without one (or with a session cookie that
   * no longer authenticates) goes on with no principal.
   */
  required?: boolean;
  /**
   * Where the CSRF token of a change made with the session cookie is read:
   * the `X-CSRF-Token` header (default), also the `_csrf` field of the
   * form the route stored as `form` on the context (the console), or
   * nowhere (`false`: each route checks its own, as the sign-in forms do).
   */
  csrf?: "header" | "header-or-form" | false;
  /**
   * What to answer when a required credential is missing, instead of a 401
   * (the console sends a page load to sign-in); `undefined` keeps the 401.
   */
  unauthenticated?: (c: Context<AppEnv>) => Response | undefined;
}

/** A credential as read from a request, and where it was. */
interface Presented {
  credential: string;
  via: CredentialSource;
}

/**
 * The authentication middleware (see the module documentation for the
 * options of each part of the service). It sets `principal` (when there
 * is one), `viaCookie` and `clientIp` on the context.
 *
 * @param deps the app dependencies
 * @param options where credentials come from and what a missing one means
 * @returns the middleware
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { authenticate } from "./authn.ts";
 * import type { AppEnv } from "./deps.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const deps = { kv, key, log: () => {}, settings: DEFAULT_SETTINGS, runtime };
 * const { secret } = await bootstrapSuperadmin(kv, key);
 * const app = new Hono<AppEnv>()
 *   .use("*", async (c, next) => { c.set("requestId", "r1"); await next(); })
 *   .use("*", authenticate(deps))
 *   .get("/", (c) => c.text(c.get("principal").kind));
 * app.onError((err, c) => c.text(err.message, (err as { status?: 401 }).status ?? 500));
 * const ok = await app.request("/", { headers: { authorization: `Bearer ${secret}` } });
 * if (await ok.text() !== "token") throw new Error();
 * if ((await app.request("/")).status !== 401) throw new Error("no credential");
 * runtime.close();
 * kv.close();
 * ```
 */
export function authenticate(
  deps: AppDeps,
  options: AuthnOptions = {},
): MiddlewareHandler<AppEnv> {
  const from = options.from ?? ["bearer", "cookie"];
  const required = options.required ?? true;
  const csrf = options.csrf ?? "header";
  return async function authn(c, next) {
    c.set("clientIp", clientIp(c));
    c.set("viaCookie", false);
    const presented = credentialOf(c, deps, from);
    if (presented === null) {
      if (required) {
        const instead = options.unauthenticated?.(c);
        if (instead !== undefined) return instead;
        throw new UnauthorizedError(missingMessage(from));
      }
      return await next();
    }
    const viaCookie = presented.via === "cookie";
    let principal;
    try {
      principal = await authenticateCredential(
        authDeps(deps),
        presented.credential,
        requestContext(c),
      );
      if (viaCookie && (principal.kind !== "session" || principal.client !== "browser")) {
        // Only a browser sign-in's session rides in the cookie (a CLI
        // session planted there would skip its own limits).
        throw new UnauthorizedError("The session cookie holds no browser session");
      }
    } catch (err) {
      if (!viaCookie || !(err instanceof UnauthorizedError)) throw err;
      // A cookie that no longer authenticates is no credential.
      if (!required) return await next();
      const instead = options.unauthenticated?.(c);
      if (instead !== undefined) return instead;
      throw err;
    }
    if (viaCookie && csrf !== false && !SAFE_METHODS.has(c.req.method)) {
      const token = c.req.header(CSRF_HEADER) ??
        (csrf === "header-or-form" ? c.get("form")?.get(CSRF_FIELD) : undefined);
      const sessionId = (principal as SessionPrincipal).session_id;
      if (!await csrfAllowed(c.req.raw, deps.key, sessionId, token, deps.publicUrl)) {
        throw new ForbiddenError(
          csrf === "header-or-form"
            ? "This change did not come from a page of this service (its CSRF token is " +
              "missing or wrong): reload the page and try again"
            : "A change made with the session cookie needs the page's CSRF token " +
              "(X-CSRF-Token) and must come from this service's own origin",
          { details: { reason: "csrf" } },
        );
      }
    }
    c.set("principal", principal);
    c.set("viaCookie", viaCookie);
    await next();
  };
}

/** The first credential the request presents among `from`, or null. */
function credentialOf(
  c: Context<AppEnv>,
  deps: AppDeps,
  from: readonly CredentialSource[],
): Presented | null {
  for (const via of from) {
    if (via === "bearer") {
      // An empty header is no credential (the closure endpoint's signed token then applies).
      const bearer = presentedBearer(c);
      if (bearer !== null) return { credential: bearer, via };
    } else if (via === "cookie") {
      const cookie = readSessionCookie(c, deps.publicUrl);
      if (cookie !== undefined) return { credential: cookie, via };
    } else {
      const token = c.req.query("token");
      if (token !== undefined) return { credential: token, via };
    }
  }
  return null;
}

function missingMessage(from: readonly CredentialSource[]): string {
  if (from.length === 1 && from[0] === "cookie") return "Your session has ended: sign in again";
  if (from.length === 1 && from[0] === "query") {
    return "Missing credential: pass the namespace-client token as the token parameter";
  }
  return "Missing credential: send Authorization: Bearer <token>";
}

/**
 * The browser session of the request, when the authentication middleware
 * found one in the cookie (not in a header): the person a sign-in page is
 * talking to.
 *
 * @param c the hono context, after {@linkcode authenticate}
 * @returns the person, or null
 *
 * @example
 * ```ts ignore
 * const person = browserPerson(c);
 * if (person === null) return c.redirect("/auth/login", 303);
 * ```
 */
export function browserPerson(c: Context<AppEnv>): SessionPrincipal | null {
  const p = c.get("principal");
  return c.get("viaCookie") && p?.kind === "session" ? p : null;
}

/**
 * The bearer credential of a request that authenticates something other
 * than a principal (the metrics token), or null when it sends none; 401
 * when the `Authorization` header is malformed.
 *
 * @param c the hono context
 * @returns the credential, or null
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { presentedBearer } from "./authn.ts";
 * const app = new Hono().get("/", (c) => c.text(presentedBearer(c) ?? "none"));
 * if (await (await app.request("/", { headers: { authorization: "Bearer m3" } })).text() !== "m3") {
 *   throw new Error();
 * }
 * if (await (await app.request("/")).text() !== "none") throw new Error();
 * ```
 */
export function presentedBearer(c: Context): string | null {
  const header = c.req.header("authorization");
  return header === undefined || header.trim() === "" ? null : bearerCredential(header);
}

/**
 * The bearer credential of a request's headers for the data plane
 * (lib/http/data_plane.ts), or null when the request presents none, a
 * blank one or a malformed `Authorization` header (the router then
 * answers it, with its 401).
 *
 * @param headers the request's headers
 * @returns the credential, or null
 *
 * @example
 * ```ts
 * import { bearerOrNull } from "./authn.ts";
 * if (bearerOrNull(new Headers({ authorization: "Bearer t1" })) !== "t1") throw new Error();
 * if (bearerOrNull(new Headers({ authorization: "Basic x" })) !== null) throw new Error();
 * if (bearerOrNull(new Headers()) !== null) throw new Error();
 * ```
 */
export function bearerOrNull(headers: Headers): string | null {
  const header = headers.get("authorization");
  if (header === null || header.trim() === "") return null;
  try {
    return bearerCredential(header);
  } catch {
    return null;
  }
}

/**
 * Authenticates a bearer credential outside the router, as the
 * middleware's bearer branch does: the data plane's door
 * (lib/server/data_plane.ts).
 *
 * @param deps the app dependencies
 * @param credential the presented credential
 * @param ctx the request id and client address, for audit entries
 * @returns the principal
 * @throws {UnauthorizedError} (401) or {ForbiddenError} (403, a
 *   `namespace-client` token whose environment is not public)
 *
 * @example
 * ```ts ignore
 * const p = await authenticateBearer(deps, x.credential, { requestId: x.requestId });
 * ```
 */
export function authenticateBearer(
  deps: AppDeps,
  credential: string,
  ctx: RequestContext,
): Promise<Principal> {
  return authenticateCredential(authDeps(deps), credential, ctx);
}

/**
 * The `namespace-client` token the request authenticated with, as the
 * client presented it: the OFREP bulk answer names its event stream with
 * it (such tokens are public by design; no other credential is ever
 * handed back).
 *
 * @param c the hono context, after {@linkcode authenticate}
 * @returns the token, or null for any other principal
 *
 * @example
 * ```ts ignore
 * const token = presentedClientToken(c);
 * ```
 */
export function presentedClientToken(c: Context<AppEnv>): string | null {
  const p = c.get("principal");
  if (p?.kind !== "token" || p.token.type !== "namespace-client") return null;
  return presentedBearer(c) ?? c.req.query("token") ?? null;
}

/**
 * The session cookie of a request, or undefined. Only the name that fits
 * the origin counts: `__Host-…` over HTTPS, the plain name on HTTP (over
 * HTTPS, a plain-named cookie could have been planted by a sibling
 * subdomain or an `http://` page of the same domain).
 */
function readSessionCookie(c: Context, publicUrl?: string): string | undefined {
  const name = secureOrigin(c.req.raw, publicUrl) ? SECURE_COOKIE : PLAIN_COOKIE;
  const value = getCookie(c, name);
  return value !== undefined && value.startsWith("ses_") ? value : undefined;
}

/**
 * The auth/ dependencies of the app (see `authDepsOf` of lib/services/deps.ts).
 *
 * @param deps the app dependencies
 * @returns store, key, clock, credential cache and head reader
 *
 * @example
 * ```ts ignore
 * await recordLoginFailure(authDeps(deps), failure, loginContext(c));
 * ```
 */
export function authDeps(deps: AppDeps): AuthDeps {
  return authDepsOf(deps);
}

/**
 * The request id and client address of a request, for audit entries.
 *
 * @param c the hono context
 * @returns the request context
 *
 * @example
 * ```ts ignore
 * const ctx = requestContext(c);
 * ```
 */
export function requestContext(c: Context<AppEnv>): RequestContext {
  const ip = c.get("clientIp");
  return ip === undefined
    ? { requestId: c.get("requestId") }
    : { requestId: c.get("requestId"), ip };
}
