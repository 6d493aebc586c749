/**
 * The operator's way into the web console (lib/login/operator_link.ts):
 *
 * | route | does |
 * |---|---|
 * | `GET /auth/operator?code=…` | a confirm page naming the operator, or asking the opener's email for the first-run link (a GET never signs in) |
 * | `POST /auth/operator` | `code` (and `email` for the first-run link): redeems the link, sets the session cookie, goes to `/ui` |
 *
 * A post from another site is refused (login CSRF), as on every sign-in
 * form; a used, expired or unknown code is refused, saying which (an
 * unknown one was most likely made against another store), and audited
 * as `login.failed`. A first-run email that is not a plain address shows
 * the form again and leaves the link usable.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { deadLinkError, peekOperatorLink, redeemOperatorLink } from "../../login/operator_link.ts";
import { endSession } from "../../auth/sessions.ts";
import { actorOf } from "../../auth/principal.ts";
import { InvalidRequestError, LoginError } from "../../errors.ts";
import { authDeps } from "../authn.ts";
import { readForm } from "../body.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { crossSite, loginContext, refuseSignIn } from "./browser_session.ts";
import { browserPerson } from "../authn.ts";
import { html, pageResponse } from "./pages.ts";
import { setSessionCookie } from "./session_cookie.ts";

const METHOD = { method: "operator" };

const TITLE = "Open the console as operator";

/** The confirm page of the first-run link: the opener names themselves. */
function firstRunPage(
  c: Context<AppEnv>,
  code: string,
  refusal?: { message: string; email: string },
): Promise<Response> {
  const described = refusal === undefined ? "email-help" : "email-error email-help";
  const invalid = refusal === undefined ? "" : html`aria-invalid="true"`;
  return pageResponse(
    c,
    TITLE,
    html`
      <p>This link was printed by <code>cfgtool serve</code> when it started on a new store. It opens
      the console as the installation's operator, who may do everything a superadmin may, in every
      tenant: create the first tenant there.</p>
      ${refusal === undefined
        ? ""
        : html`<p class="error" role="alert" id="email-error">${refusal.message}</p>`}
      <form method="post" action="/auth/operator">
        <input type="hidden" name="code" value="${code}">
        <label for="email">Your email</label>
        <input type="email" id="email" name="email" required autocomplete="email"
          value="${refusal?.email ?? ""}" aria-describedby="${described}" ${invalid}>
        <p class="muted" id="email-help">It names you in the audit log and the session list.</p>
        <button type="submit">Open the console</button>
      </form>
      <p class="muted">If you did not start this server, close this page: nothing happens without the
      button.</p>
    `,
    refusal === undefined ? 200 : 400,
  );
}

/**
 * The routes under `/auth/operator`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * app.route("/operator", operatorRoutes(deps));
 * ```
 */
export function operatorRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const auth = authDeps(deps);

  app.get("/", async (c) => {
    const code = c.req.query("code") ?? "";
    const look = code === "" ? { state: "unknown" as const } : await peekOperatorLink(auth, code);
    if (look.state !== "live") {
      return await refuseSignIn(c, deps, deadLinkError(look.state), METHOD);
    }
    if (look.user === null) return await firstRunPage(c, code);
    return await pageResponse(
      c,
      TITLE,
      html`
        <p>Sign in as <strong>${look.user.email}</strong>, the installation's operator? This session
        may do everything a superadmin may, in every tenant.</p>
        <form method="post" action="/auth/operator">
          <input type="hidden" name="code" value="${code}">
          <button type="submit">Open the console</button>
        </form>
        <p class="muted">If you did not make this link on the server host, close this page:
        nothing happens without the button.</p>
      `,
    );
  });

  app.post("/", async (c) => {
    if (crossSite(c, deps)) {
      return await refuseSignIn(
        c,
        deps,
        new LoginError("csrf", "This sign-in did not come from a cfgtool page."),
        METHOD,
      );
    }
    const form = await readForm(c.req.raw);
    const code = form.get("code") ?? "";
    const email = form.get("email") ?? undefined;
    const previous = browserPerson(c);
    let made;
    try {
      made = await redeemOperatorLink(auth, code, loginContext(c), email);
    } catch (err) {
      if (err instanceof InvalidRequestError && err.details?.field === "email") {
        return await firstRunPage(c, code, { message: err.message, email: email ?? "" });
      }
      return await refuseSignIn(c, deps, err, METHOD);
    }
    if (previous !== null) {
      await endSession(auth, previous.session_id, actorOf(previous, c.get("requestId")), "replaced")
        .catch(() => {});
    }
    setSessionCookie(c, made.secret, new Date(made.session.expires_at), deps.publicUrl);
    return c.redirect("/ui", 303);
  });

  return app;
}
