/**
 * Authentication at a relay: the client's own bearer token (or, for the
 * OFREP event stream, its `token` query parameter), checked against the
 * relay's verdict cache (lib/relay/verdicts.ts) instead of the store. The
 * credential is read through lib/http/authn.ts, the service's one reader of
 * the `Authorization` header; the principal the routes read
 * (`c.get("principal")`) is the token principal of the verdict. Sessions
 * (cookies, `ses_…`) are not relayed.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { UnauthorizedError } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";
import { presentedBearer } from "../http/authn.ts";
import { clientIp } from "../http/client_ip.ts";
import type { AppEnv } from "../http/deps.ts";
import type { RelayDeps } from "./deps.ts";
import { principalOf, type Verdict } from "./verdicts.ts";

const verdicts = new WeakMap<Principal, Verdict>();

/**
 * The middleware: sets `principal` (when a credential is presented),
 * `clientIp` and `viaCookie` (always false).
 *
 * @param deps the relay's dependencies
 * @param options where the credential is read; whether one is required (default true)
 * @returns the middleware
 *
 * @example
 * ```ts ignore
 * app.post("/evaluate", relayAuthn(deps, { from: "bearer" }), handler);
 * ```
 */
export function relayAuthn(
  deps: Pick<RelayDeps, "verdicts">,
  options: { from: "bearer" | "query"; required?: boolean },
): MiddlewareHandler<AppEnv> {
  const required = options.required ?? true;
  return async function relayAuthn(c, next) {
    c.set("clientIp", clientIp(c));
    c.set("viaCookie", false);
    const credential = presentedCredential(c, options.from);
    if (credential === null) {
      if (!required) return await next();
      throw new UnauthorizedError(
        options.from === "query"
          ? "Missing credential: pass the namespace-client token as the token parameter"
          : "Missing credential: send Authorization: Bearer <token>",
      );
    }
    const v = await deps.verdicts.check(credential);
    const p = principalOf(v);
    verdicts.set(p, v);
    c.set("principal", p);
    await next();
  };
}

/**
 * The credential a request presents where `from` says, or null.
 *
 * @param c the hono context
 * @param from the bearer header or the `token` query parameter
 * @returns the credential, or null
 *
 * @example
 * ```ts ignore
 * const token = presentedCredential(c, "bearer");
 * ```
 */
export function presentedCredential(c: Context, from: "bearer" | "query"): string | null {
  return from === "bearer" ? presentedBearer(c) : c.req.query("token") ?? null;
}

/**
 * The verdict behind the request's principal (after {@linkcode relayAuthn}).
 *
 * @param c the hono context
 * @returns the verdict
 *
 * @example
 * ```ts ignore
 * assertMayRead(verdictOf(c), { tenant, namespace });
 * ```
 */
export function verdictOf(c: Context<AppEnv>): Verdict {
  const v = verdicts.get(c.get("principal"));
  if (v === undefined) throw new UnauthorizedError("Missing credential");
  return v;
}
