/**
 * The sign-in pages and routes outside `/api/v1`:
 *
 * | route | what |
 * |---|---|
 * | `GET /auth/login[?tenant=T][&next=/path]` | choose a tenant; then its method: the redirect to the OIDC or SAML provider, or the email form |
 * | `/auth/oidc/…`, `/auth/saml/…`, `/auth/email/…`, `/auth/cli/…` | each method's own steps, and the command-line sign-in |
 * | `POST /auth/logout` | ends the session: the cookie's (with the page's CSRF token) or a bearer `ses_…` |
 * | `GET /auth/signed-in` | who is signed in, with a sign-out button (where sign-in lands without `next`) |
 * | `GET /auth/assets/style.css` | the pages' stylesheet |
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { FORM_BODY_LIMIT, readForm, tooLarge } from "../body.ts";
import { actorOf, type Principal } from "../../auth/principal.ts";
import { endSession } from "../../auth/sessions.ts";
import { ForbiddenError, NotFoundError } from "../../errors.ts";
import {
  countSignInStart,
  greetingName,
  isNewInstallation,
  signInTarget,
} from "../../services/sign_in.ts";
import { authDeps, authenticate, browserPerson } from "../authn.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { SHAPES } from "../params.ts";
import { loginContext, safeNext } from "./browser_session.ts";
import { cliRoutes } from "./cli.ts";
import { operatorRoutes } from "./operator.ts";
import { beginOidc, oidcRoutes } from "./oidc.ts";
import { beginSaml, samlRoutes } from "./saml.ts";
import { emailForm, emailRoutes } from "./email.ts";
import { html, pageResponse, STYLESHEET } from "./pages.ts";
import { clearSessionCookie, CSRF_FIELD, csrfAllowed, csrfToken } from "./session_cookie.ts";

/**
 * The `/auth` routes, mounted at the root of the app.
 *
 * @example
 * ```ts ignore
 * app.route("/auth", authRoutes(deps));
 * ```
 */
export function authRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const formLimit = bodyLimit({
    maxSize: FORM_BODY_LIMIT,
    onError: () => {
      throw tooLarge(FORM_BODY_LIMIT);
    },
  });
  // The SAML consumer service takes larger posts (its own limit).
  app.use("*", (c, next) => c.req.path === "/auth/saml/acs" ? next() : formLimit(c, next));
  // Whoever is signed in already (a browser's cookie, or a CLI's bearer
  // session); each form checks its own CSRF token.
  app.use("*", authenticate(deps, { required: false, csrf: false }));

  app.get("/assets/style.css", (c) =>
    c.body(STYLESHEET, 200, {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=3600",
      "x-content-type-options": "nosniff",
    }));

  app.get("/login", async (c) => {
    const next = safeNext(c.req.query("next"));
    const tenant = c.req.query("tenant")?.trim().toLowerCase();
    if (tenant === undefined || tenant === "") {
      if (await isNewInstallation(deps)) return await newInstallationPage(c, undefined);
      return await tenantChooser(c, next, undefined);
    }
    if (!SHAPES.slug.pattern.test(tenant)) {
      return await tenantChooser(c, next, `"${tenant}" is not a tenant name`);
    }
    const target = await signInTarget(deps, tenant);
    if (target.kind !== "policy") {
      // Telling an unknown tenant from one without sign-in names tenants: each such
      // answer counts against the same per-address limit as a started sign-in.
      const { ip } = loginContext(c);
      if (ip !== undefined) await countSignInStart(deps, ip);
      if (target.kind === "new_installation") return await newInstallationPage(c, tenant);
      return await tenantChooser(
        c,
        next,
        target.kind === "no_tenant"
          ? `No such tenant: ${tenant}. Check the name with whoever runs cfgtool for you.`
          : `Tenant ${tenant} has no sign-in set up: its admins choose how its people sign in ` +
            "(a login policy).",
        404,
      );
    }
    const policy = target.policy;
    const site = c.req.header("sec-fetch-site");
    if (site === "cross-site" || site === "same-site") {
      // Another site sent the browser here: starting a sign-in on its word
      // could sign the person in to a tenant they did not choose. Ask first.
      return await pageResponse(
        c,
        "Sign in",
        html`
          <p>Continue to sign in to <strong>${tenant}</strong>?</p>
          <form method="get" action="/auth/login">
            <input type="hidden" name="tenant" value="${tenant}">
            <input type="hidden" name="next" value="${next}">
            <button type="submit">Continue</button>
          </form>
        `,
      );
    }
    const { ip } = loginContext(c);
    // Each start stores a flow record: bounded per client address.
    if (ip !== undefined) await countSignInStart(deps, ip);
    switch (policy.method) {
      case "oidc":
        return await beginOidc(c, deps, tenant, policy, next);
      case "saml":
        return await beginSaml(c, deps, tenant, policy, next);
      case "email":
        return await emailForm(c, deps, tenant, policy, next);
      default:
        throw new NotFoundError("not_found", `Tenant ${tenant} has no usable sign-in method`);
    }
  });

  app.route("/oidc", oidcRoutes(deps));
  app.route("/saml", samlRoutes(deps));
  app.route("/email", emailRoutes(deps));
  app.route("/cli", cliRoutes(deps));
  app.route("/operator", operatorRoutes(deps));

  app.post("/logout", async (c) => {
    const principal = c.get("principal") as Principal | undefined;
    const person = browserPerson(c);
    if (principal !== undefined && person === null) {
      // A bearer session (the CLI) ends itself.
      if (principal.kind !== "session") {
        throw new ForbiddenError("Only a session can sign out; revoke a service token instead");
      }
      const ended = await endSession(
        authDeps(deps),
        principal.session_id,
        actorOf(principal, c.get("requestId")),
        "logout",
      );
      return c.json({
        session: { id: ended.id, status: "revoked" },
        request_id: c.get("requestId"),
      });
    }
    if (person === null) {
      clearSessionCookie(c, deps.publicUrl);
      return c.redirect("/auth/login", 303);
    }
    const presented = (await readForm(c.req.raw)).get(CSRF_FIELD);
    if (!await csrfAllowed(c.req.raw, deps.key, person.session_id, presented, deps.publicUrl)) {
      throw new ForbiddenError("This sign-out did not come from a cfgtool page; nothing changed", {
        details: { reason: "csrf" },
      });
    }
    await endSession(
      authDeps(deps),
      person.session_id,
      actorOf(person, c.get("requestId")),
      "logout",
    );
    clearSessionCookie(c, deps.publicUrl);
    return await pageResponse(
      c,
      "Signed out",
      html`
        <p>You are signed out.</p>
        <p><a class="button" href="/auth/login">Sign in again</a></p>
      `,
    );
  });

  app.get("/signed-in", async (c) => {
    const person = browserPerson(c);
    if (person === null) return c.redirect("/auth/login", 303);
    const name = await greetingName(deps, person.user_id);
    const token = await csrfToken(deps.key, person.session_id);
    return await pageResponse(
      c,
      "Signed in",
      html`
        <p>You are signed in as <strong>${name}</strong>${person.tenants.length > 0
          ? html`
            to <strong>${person.tenants.join(", ")}</strong>
          `
          : ""}.</p>
        <form method="post" action="/auth/logout">
          <input type="hidden" name="${CSRF_FIELD}" value="${token}">
          <button type="submit" class="secondary">Sign out</button>
        </form>
      `,
    );
  });

  return app;
}

/**
 * The sign-in page of an installation with no tenant yet: nobody can sign
 * in to a tenant, so it says how the operator gets in to create one.
 */
function newInstallationPage(c: Context<AppEnv>, tenant: string | undefined): Promise<Response> {
  return pageResponse(
    c,
    "Sign in",
    html`
      ${tenant === undefined
        ? ""
        : html`<p class="error" role="alert">No such tenant: ${tenant}.</p>`}
      <p>This installation has no tenant yet, so there is no one to sign in. Its operator opens the
      console first and creates a tenant there, with a one-time link:</p>
      <ul>
        <li>the link <code>cfgtool serve</code> printed after its listening line when it started on
        this new store (it works once, for 10 minutes);</li>
        <li>or a new one, made on the server host: <code>cfgtool admin console-link --user
        you@example.com</code>, with the server's store (the same <code>CFGTOOL_KV</code>) and
        <code>--url</code> with this server's address.</li>
      </ul>
      <p class="muted">People then sign in here to the tenants the operator creates, once each
      tenant has a login policy.</p>
    `,
    tenant === undefined ? 200 : 404,
  );
}

/** The first page: which tenant to sign in to. */
function tenantChooser(
  c: Context<AppEnv>,
  next: string,
  problem: string | undefined,
  status: 200 | 400 | 404 = problem === undefined ? 200 : 400,
): Promise<Response> {
  return pageResponse(
    c,
    "Sign in",
    html`
      ${problem === undefined ? "" : html`<p class="error" role="alert">${problem}</p>`}
      <form method="get" action="/auth/login">
        <label for="tenant">Tenant</label>
        <input type="text" id="tenant" name="tenant" autocomplete="organization" required
          pattern="[a-z0-9][a-z0-9._\\-]{0,62}" aria-describedby="tenant-help">
        <p class="muted"
          id="tenant-help">Your organisation's name in cfgtool, such as <code>acme</code>.</p>
        <input type="hidden" name="next" value="${next}">
        <button type="submit">Continue</button>
      </form>
    `,
    status,
  );
}
