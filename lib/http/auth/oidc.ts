/**
 * OpenID Connect sign-in in the browser: {@linkcode beginOidc} sends the
 * person to the tenant's identity provider (after binding the sign-in's
 * `state` to the browser with a short-lived cookie), and
 * `GET /auth/oidc/callback` takes them back: a sign-in the flow admits
 * ends with a session cookie and a redirect to `next`; a refused one is
 * audited (`login.failed`, with its reason) and shown as a page. The
 * protocol itself is lib/login/oidc_flow.ts.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  completeOidcFlow,
  OIDC_FLOW_TTL_MS,
  type OidcFacts,
  startOidcFlow,
} from "../../login/oidc_flow.ts";
import { LoginError } from "../../errors.ts";
import type { OidcLoginPolicy } from "../../protocol/login_policy.ts";
import { authDeps } from "../authn.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { finishBrowserSignIn, refuseSignIn } from "./browser_session.ts";
import { flowCookie } from "./flow_cookie.ts";
import { signInOrigin } from "./session_cookie.ts";

/** The callback path, under the service's origin. */
export const OIDC_CALLBACK_PATH = "/auth/oidc/callback";

/**
 * Logs a refused callback for the operator, with what the check found
 * (the person's page says less).
 */
function logRefusal(deps: AppDeps, requestId: string, err: LoginError): void {
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  deps.log("info", "oidc sign-in refused", {
    request_id: requestId,
    reason: err.reason,
    ...(cause === undefined ? {} : { detail: cause }),
  });
}

/**
 * Starts an OIDC sign-in for a tenant: answers with the redirect (303) to
 * the identity provider's authorization endpoint and sets the flow cookie.
 * A provider that does not answer, or a client secret the server cannot
 * read, is a 503 page.
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @param tenant the tenant
 * @param policy its OIDC policy
 * @param next where to go once signed in (a same-origin path)
 * @returns the redirect
 *
 * @example
 * ```ts ignore
 * const res = await beginOidc(c, deps, "acme", policy, "/auth/signed-in");
 * assertEquals(res.status, 303);
 * ```
 */
export async function beginOidc(
  c: Context<AppEnv>,
  deps: AppDeps,
  tenant: string,
  policy: OidcLoginPolicy,
  next: string,
): Promise<Response> {
  try {
    const { url, state } = await startOidcFlow(authDeps(deps), tenant, policy, {
      redirectUri: signInOrigin(c.req.raw, deps.publicUrl) + OIDC_CALLBACK_PATH,
      next,
    });
    flowCookie("oidc", deps.publicUrl).set(c, state, OIDC_FLOW_TTL_MS);
    c.header("cache-control", "no-store");
    c.header("referrer-policy", "no-referrer");
    return c.redirect(url.href, 303);
  } catch (err) {
    return await refuseSignIn(c, deps, err, { tenant, method: "oidc" });
  }
}

/**
 * The routes under `/auth/oidc`: `GET /callback`, where the identity
 * provider sends the person back.
 *
 * @param deps the app dependencies
 * @returns the router
 *
 * @example
 * ```ts ignore
 * app.route("/auth/oidc", oidcRoutes(deps));
 * ```
 */
export function oidcRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/callback", async (c) => {
    const facts: OidcFacts = { method: "oidc" };
    const cookie = flowCookie("oidc", deps.publicUrl);
    const bound = cookie.read(c);
    let res: Response;
    try {
      const params = new URL(c.req.url).searchParams;
      const { flow, identity } = await completeOidcFlow(authDeps(deps), params, bound, facts);
      res = await finishBrowserSignIn(c, deps, identity, flow.next);
    } catch (err) {
      if (err instanceof LoginError) logRefusal(deps, c.get("requestId"), err);
      res = await refuseSignIn(c, deps, err, facts);
    }
    return bound === undefined ? res : cookie.clear(c, res);
  });
  return app;
}
