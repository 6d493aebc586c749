/**
 * Authentication middleware for `/api/v1`: every request carries
 * `Authorization: Bearer <credential>`; the principal is stored on the
 * context. Expiry, revocation and the namespace-client gate are checked by
 * lib/auth on every request.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { authenticateRequest } from "../auth/principal.ts";
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { clientIp } from "./client_ip.ts";

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
    const authenticated = await authenticateRequest(
      authDeps(deps),
      c.req.header("authorization"),
      requestContext(c),
    );
    c.set("principal", authenticated.principal);
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
