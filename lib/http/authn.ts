/**
 * Authentication middleware for `/api/v1`: a request carries
 * `Authorization: Bearer <credential>`, or (a browser) the session cookie;
 * the principal is stored on the context. A cookie-authenticated request
 * that changes something must carry the session's CSRF token and come from
 * the service's own origin (lib/http/auth/session_cookie.ts), else 403.
 * Expiry, revocation and the namespace-client gate are checked by lib/auth
 * on every request.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { authenticateRequest } from "../auth/principal.ts";
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { clientIp } from "./client_ip.ts";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import { CSRF_HEADER, csrfAllowed, readSessionCookie } from "./auth/session_cookie.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Middleware that authenticates the request (401 on failure).
 *
 * @example
 * ```ts ignore
 * api.use("*", requireAuth(deps));
 * ```
 */
export function requireAuth(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async function authn(c, next) {
    const ip = clientIp(c);
    c.set("clientIp", ip);
    const header = c.req.header("authorization");
    const cookie = header === undefined ? readSessionCookie(c, deps.publicUrl) : undefined;
    const authenticated = await authenticateRequest(
      authDeps(deps),
      cookie === undefined ? header : `Bearer ${cookie}`,
      requestContext(c),
    );
    const p = authenticated.principal;
    if (cookie !== undefined && (p.kind !== "session" || p.client !== "browser")) {
      // Only a browser sign-in's session rides in the cookie (a CLI session
      // planted there would skip its own limits).
      throw new UnauthorizedError("The session cookie holds no browser session");
    }
    c.set("viaCookie", cookie !== undefined);
    if (cookie !== undefined && p.kind === "session" && !SAFE_METHODS.has(c.req.method)) {
      const ok = await csrfAllowed(
        c.req.raw,
        deps.key,
        p.session_id,
        c.req.header(CSRF_HEADER),
        deps.publicUrl,
      );
      if (!ok) {
        throw new ForbiddenError(
          "A change made with the session cookie needs the page's CSRF token (X-CSRF-Token) " +
            "and must come from this service's own origin",
          { details: { reason: "csrf" } },
        );
      }
    }
    c.set("principal", p);
    c.set("publicGateChecked", authenticated.publicGateChecked);
    await next();
  };
}

/**
 * The auth/ dependencies of the app.
 *
 * @example
 * ```ts ignore
 * await createToken(authDeps(deps), principal, input, requestContext(c));
 * ```
 */
export function authDeps(deps: AppDeps): AuthDeps {
  const { runtime } = deps;
  const base: AuthDeps = {
    kv: deps.kv,
    key: deps.key,
    credentials: runtime.credentials,
    headOf: (t, ns) => runtime.models.head(t, ns),
  };
  return deps.now ? { ...base, now: deps.now } : base;
}

/**
 * The request id and client address of a request, for audit entries.
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
