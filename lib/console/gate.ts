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
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import { findUser } from "../store/users.ts";
import { readForm } from "../http/body.ts";
import { clientIp } from "../http/client_ip.ts";
import type { AppDeps, AppEnv } from "../http/deps.ts";
import { browserSession } from "../http/auth/browser_session.ts";
import { CSRF_FIELD, CSRF_HEADER, csrfAllowed, csrfToken } from "../http/auth/session_cookie.ts";
import type { ConsoleEnv } from "./env.ts";

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Middleware that admits a signed-in person (see the module comment).
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
  return async function consoleGate(c, next) {
    c.set("clientIp", clientIp(c));
    const person = await browserSession(c as unknown as Context<AppEnv>, deps);
    if (person === null) {
      if (SAFE_METHODS.has(c.req.method) && c.req.header("hx-request") !== "true") {
        const url = new URL(c.req.url);
        const next = encodeURIComponent(url.pathname + url.search);
        return c.redirect(`/auth/login?next=${next}`, 303);
      }
      throw new UnauthorizedError("Your session has ended: sign in again");
    }
    const form = SAFE_METHODS.has(c.req.method)
      ? new Map<string, string>()
      : await formOf(c.req.raw);
    if (!SAFE_METHODS.has(c.req.method)) {
      const presented = c.req.header(CSRF_HEADER) ?? form.get(CSRF_FIELD);
      if (!await csrfAllowed(c.req.raw, deps.key, person.session_id, presented, deps.publicUrl)) {
        throw new ForbiddenError(
          "This change did not come from a console page of this service (its CSRF token " +
            "is missing or wrong): reload the page and try again",
          { details: { reason: "csrf" } },
        );
      }
    }
    c.set("principal", person);
    c.set("person", person);
    c.set("viaCookie", true);
    c.set("csrf", await csrfToken(deps.key, person.session_id));
    c.set("form", form);
    c.set("email", (await findUser(deps.kv, person.user_id))?.email ?? person.user_id);
    await next();
  };
}

/** A post's form fields; a body that is not a form has none (the CSRF check then refuses). */
async function formOf(req: Request): Promise<Map<string, string>> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return new Map();
  return await readForm(req);
}
