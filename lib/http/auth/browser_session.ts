/**
 * What the sign-in routes share: where a person may be sent after signing
 * in (same-origin paths only: no open redirect), finishing a browser
 * sign-in (session, cookie, redirect), answering a refused one (audited,
 * shown as a page), and reading the browser session of a request.
 *
 * @module
 */
import type { Context } from "hono";
import { actorOf } from "../../auth/principal.ts";
import { endSession } from "../../auth/sessions.ts";
import { recordLoginFailure, signIn, type VerifiedIdentity } from "../../login/sign_in.ts";
import { LoginError } from "../../errors.ts";
import { authDeps, browserPerson, requestContext } from "../authn.ts";
import { clientIp } from "../client_ip.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { errorPage } from "./pages.ts";
import { ownOrigin, setSessionCookie } from "./session_cookie.ts";

/** Where a signed-in person lands when no `next` was given. */
export const DEFAULT_NEXT = "/auth/signed-in";

/**
 * A `next` parameter reduced to a same-origin path: it must start with one
 * `/` (not `//` nor `/\`), carry no scheme, control character or
 * backslash; anything else gives {@linkcode DEFAULT_NEXT}.
 *
 * @param next the requested destination
 * @returns a safe path
 *
 * @example
 * ```ts
 * import { safeNext } from "./browser_session.ts";
 * if (safeNext("/ui/acme?x=1") !== "/ui/acme?x=1") throw new Error();
 * for (const bad of ["//evil.example", "https://evil.example", "/\\evil.example", "javascript:x", undefined]) {
 *   if (safeNext(bad) !== "/auth/signed-in") throw new Error(String(bad));
 * }
 * ```
 */
export function safeNext(next: string | undefined | null): string {
  if (typeof next !== "string" || next.length > 2048) return DEFAULT_NEXT;
  // deno-lint-ignore no-control-regex
  if (!/^\/(?![/\\])/.test(next) || /[\\\u0000-\u001f\u007f]/.test(next)) return DEFAULT_NEXT;
  const url = new URL(next, "http://same.invalid");
  const path = url.pathname + url.search + url.hash;
  // Normalising may make `//host` of `/.//host` or `/%2e%2e//host`: check again.
  return url.origin === "http://same.invalid" && /^\/(?![/\\])/.test(path) ? path : DEFAULT_NEXT;
}

/**
 * Finishes a browser sign-in: makes the session, sets the cookie and sends
 * the person on to `next` (303).
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @param identity what the method verified
 * @param next where to go (already stored by the method; checked again here)
 * @returns the redirect
 *
 * @example
 * ```ts ignore
 * return await finishBrowserSignIn(c, deps, identity, flow.next);
 * ```
 */
export async function finishBrowserSignIn(
  c: Context<AppEnv>,
  deps: AppDeps,
  identity: VerifiedIdentity,
  next: string | undefined,
): Promise<Response> {
  const previous = browserPerson(c);
  const { session, secret } = await signIn(
    authDeps(deps),
    identity,
    "browser",
    loginContext(c),
    { ttlMs: deps.settings.sessionTtlMs, idleMs: deps.settings.sessionIdleMs },
  );
  if (previous !== null) {
    // The cookie now holds the new session: the old one must not live on unseen.
    await endSession(
      authDeps(deps),
      previous.session_id,
      actorOf(previous, c.get("requestId")),
      "replaced",
    )
      .catch(() => {});
  }
  setSessionCookie(c, secret, new Date(session.expires_at), deps.publicUrl);
  return c.redirect(safeNext(next), 303);
}

/**
 * Answers a refused sign-in: audits `login.failed` with the error's
 * reason, and shows the person a page with the message (403, or 400 for a
 * malformed request). Errors other than {@linkcode LoginError} are thrown
 * on to the app's error handler.
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @param err what went wrong
 * @param facts the tenant, method and email, when known
 * @returns the error page
 *
 * @example
 * ```ts ignore
 * try { … } catch (err) { return await refuseSignIn(c, deps, err, { tenant, method: "oidc" }); }
 * ```
 */
export async function refuseSignIn(
  c: Context<AppEnv>,
  deps: AppDeps,
  err: unknown,
  facts: { tenant?: string | null; method?: string; email?: string },
): Promise<Response> {
  if (!(err instanceof LoginError)) throw err;
  await recordLoginFailure(authDeps(deps), { ...facts, reason: err.reason }, loginContext(c));
  return await errorPage(err.status, err.message, c.get("requestId"));
}

/**
 * Whether a sign-in form post came from another site (its `Sec-Fetch-Site`
 * or `Origin` says so): such a post must not sign the browser in (login
 * CSRF).
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @returns true when the post is cross-site
 *
 * @example
 * ```ts ignore
 * if (crossSite(c, deps)) return await refuseSignIn(c, deps, crossSiteError(), { method: "email" });
 * ```
 */
export function crossSite(c: Context<AppEnv>, deps: AppDeps): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") return true;
  const origin = c.req.header("origin");
  if (origin === "null") return site !== "same-origin";
  return origin !== undefined && origin !== ownOrigin(c.req.raw, deps.publicUrl);
}

/**
 * The request context of a sign-in route (which runs outside `/api/v1`'s
 * authentication middleware): request id and client IP.
 *
 * @param c the hono context
 * @returns the request context
 *
 * @example
 * ```ts ignore
 * await recordLoginFailure(deps, failure, loginContext(c));
 * ```
 */
export function loginContext(c: Context<AppEnv>): { requestId: string; ip?: string } {
  if (c.get("clientIp") === undefined) c.set("clientIp", clientIp(c));
  return requestContext(c);
}
