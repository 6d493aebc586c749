/**
 * What every console route reads from the hono context: the signed-in
 * person (a browser session), the page's CSRF token, and, for a form
 * post, the fields the gate already read to check that token.
 *
 * @module
 */
import type { SessionPrincipal } from "../auth/principal.ts";
import type { AppEnv } from "../http/deps.ts";

/** The hono environment of the console routes. */
export type ConsoleEnv = {
  Variables: AppEnv["Variables"] & {
    /** The person signed in with the browser session cookie. */
    person: SessionPrincipal;
    /** Their email, for the page header. */
    email: string;
    /** The session's CSRF token: every form of a page carries it. */
    csrf: string;
    /** A form post's fields (read once, by the gate). */
    form: Map<string, string>;
  };
};
