/**
 * Signing in from the command line: the routes under `/auth/cli`.
 *
 * | route | who | what |
 * |---|---|---|
 * | `GET /auth/cli/authorize?redirect_uri&state&code_challenge&code_challenge_method=S256[&tenant]` | browser | the confirm page (or sign-in first) |
 * | `POST /auth/cli/authorize` | browser (form, `_csrf`) | allow: 303 to the loopback `redirect_uri` with `code` and `state`; deny: with `error=access_denied` |
 * | `POST /auth/cli/device` `{tenant?}` | CLI (JSON) | a device code and a user code (RFC 8628 shape) |
 * | `GET /auth/cli/device[?user_code]` | browser | the code form, then the confirm page (or sign-in first) |
 * | `POST /auth/cli/device/confirm` | browser (form, `_csrf`) | allow or deny a user code |
 * | `POST /auth/cli/token` `{grant_type, …}` | CLI (JSON) | the CLI session, or an OAuth-style refusal |
 *
 * The `redirect_uri` must be the CLI's loopback listener
 * (`http://127.0.0.1:<port>/…` or `http://localhost:<port>/…`): anything
 * else is a 400 page and never a redirect. The grants themselves are
 * lib/login/cli_grants.ts.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  decideDeviceGrant,
  findUserCode,
  type GrantIdentity,
  grantIdentityOf,
  issueCodeGrant,
  pollDeviceGrant,
  redeemCodeGrant,
  startDeviceGrant,
  tokenError,
  withinCliRate,
} from "../../login/cli_grants.ts";
import type { SessionPrincipal } from "../../auth/principal.ts";
import { LoginError, RateLimitError } from "../../errors.ts";
import {
  CODE_GRANT,
  DEVICE_CODE_GRANT,
  type DeviceAuthorization,
  formatUserCode,
  isLoopbackRedirect,
  isPkceValue,
  normalizeUserCode,
} from "../../protocol/cli_sign_in.ts";
import { greetingName } from "../../services/sign_in.ts";
import { SLUG_PATTERN } from "../../protocol/slug.ts";
import { authDeps } from "../authn.ts";
import { readBodyBytes } from "../body.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { loginContext, refuseSignIn } from "./browser_session.ts";
import { browserPerson } from "../authn.ts";
import { html, pageResponse } from "./pages.ts";
import { readForm } from "../body.ts";
import { CSRF_FIELD, csrfAllowed, csrfToken, signInOrigin } from "./session_cookie.ts";

/** What `GET|POST /auth/cli/authorize` is asked. */
interface AuthorizeRequest {
  redirect_uri: string;
  state: string;
  code_challenge: string;
  tenant: string | undefined;
}

/** The largest JSON body of the CLI endpoints. */
const CLI_BODY_LIMIT = 16 * 1024;

/**
 * The routes under `/auth/cli` (see the module comment).
 *
 * @param deps the app dependencies
 * @returns the router
 *
 * @example
 * ```ts ignore
 * app.route("/auth/cli", cliRoutes(deps));
 * ```
 */
export function cliRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/authorize", async (c) => {
    let ask: AuthorizeRequest;
    try {
      ask = authorizeRequest(new URL(c.req.url).searchParams);
    } catch (err) {
      return await refuseSignIn(c, deps, err, { method: "cli" });
    }
    const person = browserPerson(c);
    const tenant = ask.tenant ?? person?.tenants[0];
    const identity = person === null || tenant === undefined
      ? null
      : await grantIdentityOf(deps, person, tenant);
    if (person === null || identity === null) return signInFirst(c, tenant);
    const email = await emailOf(deps, identity);
    const port = new URL(ask.redirect_uri).port;
    return await pageResponse(
      c,
      "Sign in cfgtool?",
      html`
        <p>Sign in cfgtool on this computer as <strong>${email}</strong> to <strong>${tenant}</strong>?</p>
        <p class="muted">The <code>cfgtool login</code> command on this computer asked for this (it waits on
        port ${port}). If you did not just run it, choose Deny.</p>
        <form method="post" action="/auth/cli/authorize">
          <input type="hidden" name="${CSRF_FIELD}" value="${await csrfToken(
            deps.key,
            person.session_id,
          )}">
          <input type="hidden" name="redirect_uri" value="${ask.redirect_uri}">
          <input type="hidden" name="state" value="${ask.state}">
          <input type="hidden" name="code_challenge" value="${ask.code_challenge}">
          <input type="hidden" name="code_challenge_method" value="S256">
          <input type="hidden" name="tenant" value="${tenant}">
          <button type="submit" name="decision" value="allow">Sign in cfgtool</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </form>
      `,
    );
  });

  app.post("/authorize", async (c) => {
    const form = await formOf(c);
    let ask: AuthorizeRequest;
    try {
      ask = authorizeRequest(form);
    } catch (err) {
      return await refuseSignIn(c, deps, err, { method: "cli" });
    }
    let tenant = ask.tenant;
    try {
      const person = await confirmingPerson(c, deps, form);
      tenant ??= person.tenants[0];
      const decision = decisionOf(form);
      const back = new URL(ask.redirect_uri);
      if (decision === "deny") {
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("state", ask.state);
        return noStoreRedirect(c, back);
      }
      const identity = tenant === undefined ? null : await grantIdentityOf(deps, person, tenant);
      if (identity === null) {
        throw new LoginError(
          "tenant",
          "Your browser session is not signed in to that tenant; run `cfgtool login` again",
        );
      }
      const code = await issueCodeGrant(authDeps(deps), identity, ask.code_challenge);
      back.searchParams.set("code", code);
      back.searchParams.set("state", ask.state);
      return noStoreRedirect(c, back);
    } catch (err) {
      return await refuseSignIn(c, deps, err, { tenant: tenant ?? null, method: "cli" });
    }
  });

  app.post("/device", async (c) => {
    const body = await optionalJson(c.req.raw);
    const tenant = body.tenant === undefined || body.tenant === null ? null : body.tenant;
    if (tenant !== null && (typeof tenant !== "string" || !SLUG_PATTERN.test(tenant))) {
      throw tokenError("invalid_request", "tenant must be a tenant slug such as acme");
    }
    const ip = loginContext(c).ip;
    if (ip !== undefined && !await withinCliRate(authDeps(deps), "cli_device", `ip:${ip}`)) {
      throw new RateLimitError(
        "Too many sign-ins started from this address; wait a few minutes",
        600,
      );
    }
    const grant = await startDeviceGrant(authDeps(deps), tenant);
    const verification = `${signInOrigin(c.req.raw, deps.publicUrl)}/auth/cli/device`;
    const answer: DeviceAuthorization = {
      ...grant,
      verification_uri: verification,
      verification_uri_complete: `${verification}?user_code=${encodeURIComponent(grant.user_code)}`,
    };
    c.header("cache-control", "no-store");
    return c.json(answer);
  });

  app.get("/device", async (c) => {
    const typed = c.req.query("user_code");
    if (typed === undefined || typed.trim() === "") return await codeForm(c, undefined);
    const code = normalizeUserCode(typed);
    if (code === null) {
      return await codeForm(
        c,
        "That is not a cfgtool sign-in code: it has 8 letters, like BCDF-GHJK",
      );
    }
    const person = browserPerson(c);
    await limitCodeLookups(c, deps, person);
    const found = await findUserCode(authDeps(deps), code);
    if (found === null) {
      return await codeForm(
        c,
        "This code is unknown, expired or already used; run `cfgtool login --no-browser` again",
      );
    }
    const tenant = found.tenant ?? person?.tenants[0];
    const identity = person === null || tenant === undefined
      ? null
      : await grantIdentityOf(deps, person, tenant);
    if (person === null || identity === null) return signInFirst(c, tenant);
    const email = await emailOf(deps, identity);
    return await pageResponse(
      c,
      "Sign in cfgtool?",
      html`
        <p>Sign in cfgtool on the device showing the code <strong><code>${formatUserCode(
          code,
        )}</code></strong> as <strong>${email}</strong> to <strong>${tenant}</strong>?</p>
        <p class="muted">Only confirm if you started <code>cfgtool login</code> yourself and it shows this
        same code. If someone sent you this link, choose Deny.</p>
        <form method="post" action="/auth/cli/device/confirm">
          <input type="hidden" name="${CSRF_FIELD}" value="${await csrfToken(
            deps.key,
            person.session_id,
          )}">
          <input type="hidden" name="user_code" value="${formatUserCode(code)}">
          <button type="submit" name="decision" value="allow">Sign in cfgtool</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </form>
      `,
    );
  });

  app.post("/device/confirm", async (c) => {
    const form = await formOf(c);
    let tenant: string | null = null;
    try {
      const person = await confirmingPerson(c, deps, form);
      const decision = decisionOf(form);
      await limitCodeLookups(c, deps, person);
      const found = await findUserCode(authDeps(deps), form.get("user_code") ?? "");
      if (found === null) {
        throw new LoginError(
          "code",
          "This code is unknown, expired or already used; run `cfgtool login --no-browser` again",
          { status: 400 },
        );
      }
      tenant = found.tenant ?? person.tenants[0] ?? null;
      const identity = tenant === null ? null : await grantIdentityOf(deps, person, tenant);
      if (identity === null) {
        throw new LoginError(
          "tenant",
          "Your browser session is not signed in to the tenant this code is for",
        );
      }
      const answer = decision === "allow"
        ? { decision: "allow" as const, identity }
        : { decision: "deny" as const };
      if (!await decideDeviceGrant(authDeps(deps), form.get("user_code") ?? "", answer)) {
        throw new LoginError("code", "This code was already answered or has expired", {
          status: 400,
        });
      }
      if (decision === "deny") {
        return await pageResponse(
          c,
          "Sign-in denied",
          html`<p>cfgtool was not signed in. The command will stop waiting.</p>
<p class="muted">You can close this tab.</p>`,
        );
      }
      return await pageResponse(
        c,
        "cfgtool is signed in",
        html`<p>cfgtool on your device is now signed in as <strong>${await emailOf(
          deps,
          identity,
        )}</strong> to <strong>${tenant}</strong>.</p>
<p class="muted">Go back to your terminal; you can close this tab.</p>`,
      );
    } catch (err) {
      return await refuseSignIn(c, deps, err, { tenant, method: "cli" });
    }
  });

  app.post("/token", async (c) => {
    c.header("cache-control", "no-store");
    const body = await optionalJson(c.req.raw);
    const times = { ttlMs: deps.settings.sessionTtlMs };
    const ctx = loginContext(c);
    switch (body.grant_type) {
      case CODE_GRANT: {
        if (typeof body.code !== "string" || body.code === "" || body.code.length > 128) {
          throw tokenError("invalid_request", "code is missing");
        }
        if (!isPkceValue(body.code_verifier)) {
          throw tokenError(
            "invalid_request",
            "code_verifier must be 43 to 128 unreserved characters (RFC 7636)",
          );
        }
        return c.json(
          await redeemCodeGrant(authDeps(deps), body.code, body.code_verifier, ctx, times),
        );
      }
      case DEVICE_CODE_GRANT: {
        if (typeof body.device_code !== "string" || body.device_code.length > 128) {
          throw tokenError("invalid_request", "device_code is missing");
        }
        return c.json(await pollDeviceGrant(authDeps(deps), body.device_code, ctx, times));
      }
      default:
        throw tokenError(
          "unsupported_grant_type",
          `grant_type must be "${CODE_GRANT}" or "${DEVICE_CODE_GRANT}"`,
        );
    }
  });

  return app;
}

/**
 * Reads and checks an authorize request (query or form): a loopback
 * `redirect_uri`, a `state`, an S256 `code_challenge`, maybe a tenant.
 * A 400 `LoginError` otherwise, before anything redirects.
 */
function authorizeRequest(params: URLSearchParams | Map<string, string>): AuthorizeRequest {
  const bad = (reason: string, message: string) => new LoginError(reason, message, { status: 400 });
  const redirectUri = params.get("redirect_uri");
  if (!isLoopbackRedirect(redirectUri)) {
    throw bad(
      "redirect_uri",
      "This sign-in can only return to the cfgtool command on this computer " +
        "(http://127.0.0.1:<port>/… or http://localhost:<port>/…); nothing was sent anywhere",
    );
  }
  const state = params.get("state");
  if (state === null || state === undefined || !/^[\x21-\x7e]{8,256}$/.test(state)) {
    throw bad("state", "state is missing or malformed; run `cfgtool login` again");
  }
  if (params.get("code_challenge_method") !== "S256") {
    throw bad("code_challenge", "code_challenge_method must be S256");
  }
  const challenge = params.get("code_challenge");
  if (!isPkceValue(challenge)) {
    throw bad("code_challenge", "code_challenge is missing or malformed");
  }
  const tenant = params.get("tenant")?.trim().toLowerCase() || undefined;
  if (tenant !== undefined && !SLUG_PATTERN.test(tenant)) {
    throw bad("tenant", `"${tenant}" is not a tenant name`);
  }
  return { redirect_uri: redirectUri, state, code_challenge: challenge, tenant };
}

/** The string fields of a posted form. */
function formOf(c: Context<AppEnv>): Promise<Map<string, string>> {
  return readForm(c.req.raw);
}

/** `allow` or `deny`, else a 400 refusal. */
function decisionOf(form: Map<string, string>): "allow" | "deny" {
  const decision = form.get("decision");
  if (decision === "allow" || decision === "deny") return decision;
  throw new LoginError("decision", "Choose Sign in cfgtool or Deny", { status: 400 });
}

/** The signed-in person behind a confirm form, whose CSRF token must match. */
async function confirmingPerson(
  c: Context<AppEnv>,
  deps: AppDeps,
  form: Map<string, string>,
): Promise<SessionPrincipal> {
  const person = browserPerson(c);
  if (person === null) {
    throw new LoginError(
      "session",
      "Your browser is not signed in any more; run `cfgtool login` again",
    );
  }
  const allowed = await csrfAllowed(
    c.req.raw,
    deps.key,
    person.session_id,
    form.get(CSRF_FIELD),
    deps.publicUrl,
  );
  if (!allowed) {
    throw new LoginError(
      "csrf",
      "This confirmation did not come from a cfgtool page; nothing changed",
    );
  }
  return person;
}

/** 429 once a person (or, before sign-in, an address) looked up too many codes. */
async function limitCodeLookups(
  c: Context<AppEnv>,
  deps: AppDeps,
  person: SessionPrincipal | null,
): Promise<void> {
  const ip = loginContext(c).ip;
  const who = person !== null ? `user:${person.user_id}` : ip !== undefined ? `ip:${ip}` : null;
  if (who !== null && !await withinCliRate(authDeps(deps), "cli_user_code", who)) {
    throw new RateLimitError("Too many codes tried; wait a few minutes", 600);
  }
}

/** Sends the person to sign in (to `tenant` when known), then back here. */
function signInFirst(c: Context<AppEnv>, tenant: string | undefined): Response {
  const here = new URL(c.req.url);
  const query = new URLSearchParams();
  if (tenant !== undefined) query.set("tenant", tenant);
  query.set("next", here.pathname + here.search);
  c.header("cache-control", "no-store");
  return c.redirect(`/auth/login?${query}`, 303);
}

/** A 303 to the CLI's loopback listener, kept out of caches and referrers. */
function noStoreRedirect(c: Context<AppEnv>, to: URL): Response {
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  return c.redirect(to.href, 303);
}

/** The email of a grant's user (its id when the record is gone). */
async function emailOf(deps: AppDeps, identity: GrantIdentity): Promise<string> {
  return await greetingName(deps, identity.user_id);
}

/** The page asking for the code the CLI printed. */
function codeForm(c: Context<AppEnv>, problem: string | undefined): Promise<Response> {
  return pageResponse(
    c,
    "Sign in cfgtool",
    html`
      ${problem === undefined ? "" : html`<p class="error" role="alert">${problem}</p>`}
      <form method="get" action="/auth/cli/device">
        <label for="user_code">Code shown by <code>cfgtool login</code></label>
        <input type="text" id="user_code" name="user_code" required autocomplete="off"
          autocapitalize="characters" spellcheck="false" aria-describedby="code-help">
        <p class="muted" id="code-help">Eight letters, like <code>BCDF-GHJK</code>.</p>
        <button type="submit">Continue</button>
      </form>
    `,
    problem === undefined ? 200 : 400,
  );
}

/** A JSON object body, or `{}` when the body is empty. */
async function optionalJson(req: Request): Promise<Record<string, unknown>> {
  const bytes = await readBodyBytes(req, CLI_BODY_LIMIT);
  if (bytes.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw tokenError("invalid_request", "the body must be a JSON object");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw tokenError("invalid_request", "the body must be a JSON object");
  }
  return value as Record<string, unknown>;
}
