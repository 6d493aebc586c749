/**
 * The browser session cookie and its CSRF token. The cookie is
 * `__Host-cfgtool_session` when the service is reached over HTTPS (Secure,
 * path `/`, no domain: the browser keeps it to this exact origin) and
 * `cfgtool_session` on plain HTTP (a loopback development server); always
 * HttpOnly and SameSite=Lax. A request that changes something with the
 * cookie must also send the session's CSRF token (header `X-CSRF-Token`,
 * or form field `_csrf`) and, when the browser sends `Origin`, come from
 * the service's own origin.
 *
 * @module
 */
import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { digestsEqual, hmacHex } from "../../auth/digest.ts";
import { UnavailableError } from "../../errors.ts";
import { isLoopbackHost } from "../../net/loopback.ts";

/** Cookie name over HTTPS. */
export const SECURE_COOKIE = "__Host-cfgtool_session";
/** Cookie name on plain HTTP. */
export const PLAIN_COOKIE = "cfgtool_session";
/** Header that carries the CSRF token on API calls. */
export const CSRF_HEADER = "x-csrf-token";
/** Form field that carries the CSRF token on page forms. */
export const CSRF_FIELD = "_csrf";

/**
 * The service's own origin for a request: the configured public URL's, or
 * the request's.
 *
 * @param req the request
 * @param publicUrl the configured public origin, if any
 * @returns an origin like `https://flags.example.com`
 *
 * @example
 * ```ts
 * import { ownOrigin } from "./session_cookie.ts";
 * if (ownOrigin(new Request("http://127.0.0.1:8080/x")) !== "http://127.0.0.1:8080") throw new Error();
 * if (ownOrigin(new Request("http://a/x"), "https://flags.example.com") !== "https://flags.example.com") throw new Error();
 * ```
 */
export function ownOrigin(req: Request, publicUrl?: string): string {
  return new URL(publicUrl ?? req.url).origin;
}

/**
 * The origin that sign-in puts into URLs that leave the server (the link
 * in a sign-in mail, the OIDC redirect URI, the CLI's verification URL):
 * the configured public URL; without one, the request's own origin only
 * when it names a loopback host. Any other `Host` could be forged (a mail
 * whose link points at an attacker's site), so sign-in then answers 503
 * `login_unavailable`, asking the operator for `--public-url`.
 *
 * @param req the request
 * @param publicUrl the configured public origin, if any
 * @returns the origin to build URLs with
 *
 * @example
 * ```ts
 * import { signInOrigin } from "./session_cookie.ts";
 * if (signInOrigin(new Request("http://127.0.0.1:8080/x")) !== "http://127.0.0.1:8080") throw new Error();
 * let code = "";
 * try { signInOrigin(new Request("http://evil.example/x")); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "login_unavailable") throw new Error(code);
 * ```
 */
export function signInOrigin(req: Request, publicUrl?: string): string {
  if (publicUrl !== undefined) return new URL(publicUrl).origin;
  const url = new URL(req.url);
  if (isLoopbackHost(url.hostname)) return url.origin;
  throw new UnavailableError(
    "login_unavailable",
    "Sign-in needs the service's public URL: start cfgtool serve with --public-url " +
      "(for example https://flags.example.com)",
  );
}

/**
 * Whether the session cookie is the `__Host-` (HTTPS) one for this request.
 *
 * @param req the request
 * @param publicUrl the configured public origin, if any
 * @returns true over HTTPS
 *
 * @example
 * ```ts
 * import { secureOrigin } from "./session_cookie.ts";
 * if (secureOrigin(new Request("http://127.0.0.1/"))) throw new Error();
 * if (!secureOrigin(new Request("http://x/"), "https://flags.example.com")) throw new Error();
 * ```
 */
export function secureOrigin(req: Request, publicUrl?: string): boolean {
  return ownOrigin(req, publicUrl).startsWith("https:");
}

/**
 * Sets the session cookie on the response (expires with the session).
 *
 * @param c the hono context
 * @param secret the session token
 * @param expiresAt the session's absolute end
 * @param publicUrl the configured public origin, if any
 * @returns nothing
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { setSessionCookie } from "./session_cookie.ts";
 * const app = new Hono().get("/", (c) => {
 *   setSessionCookie(c, "ses_x", new Date(Date.now() + 60_000));
 *   return c.text("ok");
 * });
 * const cookie = (await app.request("http://127.0.0.1/")).headers.get("set-cookie") ?? "";
 * if (!cookie.startsWith("cfgtool_session=ses_x") || !/HttpOnly/.test(cookie)) throw new Error(cookie);
 * ```
 */
export function setSessionCookie(
  c: Context,
  secret: string,
  expiresAt: Date,
  publicUrl?: string,
): void {
  const secure = secureOrigin(c.req.raw, publicUrl);
  setCookie(c, secure ? SECURE_COOKIE : PLAIN_COOKIE, secret, {
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "Lax",
    expires: expiresAt,
  });
}

/**
 * Removes the session cookie (sign-out).
 *
 * @param c the hono context
 * @param publicUrl the configured public origin, if any
 * @returns nothing
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { clearSessionCookie } from "./session_cookie.ts";
 * const app = new Hono().get("/", (c) => { clearSessionCookie(c); return c.text("ok"); });
 * const cookie = (await app.request("http://127.0.0.1/")).headers.get("set-cookie") ?? "";
 * if (!/cfgtool_session=;/.test(cookie) || !/Max-Age=0/.test(cookie)) throw new Error(cookie);
 * ```
 */
export function clearSessionCookie(c: Context, publicUrl?: string): void {
  const secure = secureOrigin(c.req.raw, publicUrl);
  setCookie(c, secure ? SECURE_COOKIE : PLAIN_COOKIE, "", {
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "Lax",
    maxAge: 0,
  });
}

/**
 * The CSRF token of a session: a keyed digest of its id, so it needs no
 * storage and is useless without the session cookie it belongs to.
 *
 * @param key the token HMAC key
 * @param sessionId the session id
 * @returns the token (hex)
 *
 * @example
 * ```ts
 * import { csrfToken } from "./session_cookie.ts";
 * import { randomTokenKey } from "../../auth/hmac_key.ts";
 * const key = await randomTokenKey();
 * if (await csrfToken(key, "ssn_1") === await csrfToken(key, "ssn_2")) throw new Error();
 * ```
 */
export async function csrfToken(key: CryptoKey, sessionId: string): Promise<string> {
  return (await hmacHex(key, `csrf:${sessionId}`)).slice(0, 40);
}

/**
 * Whether a cookie-authenticated request that changes something is the
 * service's own page: the presented CSRF token matches the session's (in
 * constant time), and `Origin`, when sent, is the service's origin (a
 * `Sec-Fetch-Site` other than `same-origin` also refuses).
 *
 * @param req the request
 * @param key the token HMAC key
 * @param sessionId the cookie's session
 * @param presented the token the request carries (header or form field)
 * @param publicUrl the configured public origin, if any
 * @returns whether the request may proceed
 *
 * @example
 * ```ts
 * import { csrfAllowed, csrfToken } from "./session_cookie.ts";
 * import { randomTokenKey } from "../../auth/hmac_key.ts";
 * const key = await randomTokenKey();
 * const token = await csrfToken(key, "ssn_1");
 * const own = new Request("http://127.0.0.1/x", { method: "POST", headers: { origin: "http://127.0.0.1" } });
 * const evil = new Request("http://127.0.0.1/x", { method: "POST", headers: { origin: "https://evil.example" } });
 * if (!await csrfAllowed(own, key, "ssn_1", token)) throw new Error();
 * if (await csrfAllowed(evil, key, "ssn_1", token)) throw new Error("cross-site");
 * if (await csrfAllowed(own, key, "ssn_1", undefined)) throw new Error("no token");
 * ```
 */
export async function csrfAllowed(
  req: Request,
  key: CryptoKey,
  sessionId: string,
  presented: string | undefined,
  publicUrl?: string,
): Promise<boolean> {
  const origin = req.headers.get("origin");
  if (origin !== null && origin !== ownOrigin(req, publicUrl)) return false;
  const site = req.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  if (presented === undefined || presented === "") return false;
  return digestsEqual(presented, await csrfToken(key, sessionId));
}
