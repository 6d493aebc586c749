/**
 * The console's door: every `/ui` page needs a browser session (the cookie
 * a browser sign-in set); without one, a page load goes to sign-in and
 * comes back (`next`), anything else is refused. A form post or htmx
 * request that changes something must carry the session's CSRF token (the
 * `_csrf` field or the `X-CSRF-Token` header) and come from this origin,
 * as the API asks of cookie requests. The person then acts through the
 * same services, with the same permission checks, as the API.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { SessionPrincipal } from "../auth/principal.ts";
import { signedInUser } from "../services/users.ts";
import { readForm } from "../http/body.ts";
import type { AppDeps, AppEnv } from "../http/deps.ts";
import { authenticate } from "../http/authn.ts";
import { csrfToken } from "../http/auth/session_cookie.ts";
import type { ConsoleEnv } from "./env.ts";

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Middleware that admits a signed-in person (see the module comment):
 * reads a post's form once (where the CSRF token may be), then the one
 * authentication middleware with the browser session cookie as the only
 * credential, then the page's CSRF token and the person's email.
 *
 * @param deps the app dependencies
 * @returns the middleware
 *
 * @example
 * ```ts ignore
 * console.use("*", consoleGate(deps));
 * ```
 */
export function consoleGate(deps: AppDeps): MiddlewareHandler<ConsoleEnv> {
  const authn = authenticate(deps, {
    from: ["cookie"],
    csrf: "header-or-form",
    unauthenticated: toSignIn,
  }) as unknown as MiddlewareHandler<ConsoleEnv>;
  return async function consoleGate(c, next) {
    c.set("form", SAFE_METHODS.has(c.req.method) ? new Map() : await formOf(c.req.raw));
    return await authn(c, async () => {
      const person = c.get("principal") as SessionPrincipal;
      c.set("person", person);
      c.set("csrf", await csrfToken(deps.key, person.session_id));
      c.set("email", (await signedInUser(deps, person)).email ?? person.user_id);
      await next();
    });
  };
}

/** Without a session, a page load goes to sign-in and comes back (`next`); anything else is 401. */
function toSignIn(c: Context<AppEnv>): Response | undefined {
  if (!SAFE_METHODS.has(c.req.method) || c.req.header("hx-request") === "true") return undefined;
  const url = new URL(c.req.url);
  const next = encodeURIComponent(url.pathname + url.search);
  return c.redirect(`/auth/login?next=${next}`, 303);
}

/** A post's form fields; a body that is not a form has none (the CSRF check then refuses). */
async function formOf(req: Request): Promise<Map<string, string>> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return new Map();
  return await readForm(req);
}
