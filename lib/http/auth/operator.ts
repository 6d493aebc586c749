/**
 * The operator's way into the web console (lib/login/operator_link.ts):
 *
 * | route | does |
 * |---|---|
 * | `GET /auth/operator?code=…` | a confirm page naming the operator (a GET never signs in) |
 * | `POST /auth/operator` | `code`: redeems the link, sets the session cookie, goes to `/ui` |
 *
 * A post from another site is refused (login CSRF), as on every sign-in
 * form; a used, expired or unknown code is refused and audited as
 * `login.failed`.
 *
 * @module
 */
import { Hono } from "hono";
import { peekOperatorLink, redeemOperatorLink } from "../../login/operator_link.ts";
import { endSession } from "../../auth/sessions.ts";
import { actorOf } from "../../auth/principal.ts";
import { LoginError } from "../../errors.ts";
import { authDeps } from "../authn.ts";
import { readForm } from "../body.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { crossSite, loginContext, refuseSignIn } from "./browser_session.ts";
import { browserPerson } from "../authn.ts";
import { html, pageResponse } from "./pages.ts";
import { setSessionCookie } from "./session_cookie.ts";

const METHOD = { method: "operator" };

function usedLink(): LoginError {
  return new LoginError(
    "state",
    "This console link was used already, has expired or is unknown: make a new one on the " +
      "server host (cfgtool admin console-link)",
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
    const user = code === "" ? null : await peekOperatorLink(auth, code);
    if (user === null) return await refuseSignIn(c, deps, usedLink(), METHOD);
    return await pageResponse(
      c,
      "Open the console as operator",
      html`
        <p>Sign in as <strong>${user.email}</strong>, the installation's operator? This session
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
    const code = (await readForm(c.req.raw)).get("code") ?? "";
    const previous = browserPerson(c);
    let made;
    try {
      made = await redeemOperatorLink(auth, code, loginContext(c));
    } catch (err) {
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
