/**
 * Verified-email sign-in: the address form, and the routes under
 * `/auth/email`:
 *
 * | route | what |
 * |---|---|
 * | `POST /auth/email/start` | `tenant`, `email`, `next`: sends a link and a 6-digit code to an admitted address; always the same "check your mail" page, with the code form |
 * | `GET /auth/email/verify?token=…` | a confirm page for the link (a GET never signs in: mail scanners open links) |
 * | `POST /auth/email/verify` | `token` (the confirm button), or `code` (the code form, in the browser that started) |
 *
 * The answer to a start says nothing about the address: admitted, unknown,
 * outside the tenant's domains or over its rate limit, the page is the same
 * bytes, the browser gets a flow cookie all the same, and mail leaves in
 * the background (its time is not the answer's). The flow cookie ties a
 * code to the browser that asked for it (lib/login/email_codes.ts).
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import {
  EMAIL_CODE_TTL_MS,
  issueEmailSignIn,
  peekEmailLink,
  redeemEmailCode,
  redeemEmailLink,
  startEmailFlow,
} from "../../login/email_codes.ts";
import { countEmailStart, retryAfterSeconds } from "../../login/email_limits.ts";
import { createMailer, type Mailer, signInMessage } from "../../login/mailer.ts";
import { recordLoginFailure } from "../../login/sign_in.ts";
import { LoginError } from "../../errors.ts";
import { isPrintableAscii } from "../../ascii.ts";
import {
  emailInDomains,
  type EmailLoginPolicy,
  isPlainEmail,
  normalEmail,
} from "../../protocol/login_policy.ts";
import { signInPolicy } from "../../services/sign_in.ts";
import { authDeps } from "../authn.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { readForm } from "../body.ts";
import { SHAPES } from "../params.ts";
import {
  crossSite,
  finishBrowserSignIn,
  loginContext,
  refuseSignIn,
  safeNext,
} from "./browser_session.ts";
import { errorPage, html, pageResponse } from "./pages.ts";
import { secureOrigin, signInOrigin } from "./session_cookie.ts";

/** The flow cookie over HTTPS (`__Host-`: this exact origin, path `/`). */
export const SECURE_FLOW_COOKIE = "__Host-cfgtool_email_flow";
/** The flow cookie on plain HTTP. */
export const PLAIN_FLOW_COOKIE = "cfgtool_email_flow";

/** The longest email address accepted (RFC 5321 path limit). */
const MAX_EMAIL = 254;

/**
 * The page asking for an email address to sign in to a tenant. 503 when
 * the server has no way to send mail.
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @param tenant the tenant
 * @param _policy its email policy (the domains are not shown: no probing)
 * @param next where to go after sign-in
 * @returns the page
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { emailForm } from "./email.ts";
 * import type { AppEnv } from "../deps.ts";
 * import { randomTokenKey } from "../../auth/hmac_key.ts";
 * import { Runtime } from "../../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../../settings.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const deps = { kv, key, log: () => {}, settings: DEFAULT_SETTINGS, runtime, mail: { outboxDir: "/tmp/outbox", from: "x@y.test" } };
 * const app = new Hono<AppEnv>().get("/", (c) => emailForm(c, deps, "acme", { method: "email", domains: ["acme.test"] }, "/ui"));
 * const page = await (await app.request("/")).text();
 * if (!page.includes('action="/auth/email/start"') || !page.includes('value="/ui"')) throw new Error(page);
 * runtime.close();
 * kv.close();
 * ```
 */
export async function emailForm(
  c: Context<AppEnv>,
  deps: AppDeps,
  tenant: string,
  _policy: EmailLoginPolicy,
  next: string,
): Promise<Response> {
  if (deps.mail === undefined) return await mailUnavailable(c);
  return await addressPage(c, tenant, safeNext(next), undefined, 200);
}

/**
 * The routes under `/auth/email` (start, verify).
 *
 * @param deps the app dependencies
 * @returns the sub-app
 *
 * @example
 * ```ts
 * import { emailRoutes } from "./email.ts";
 * import { randomTokenKey } from "../../auth/hmac_key.ts";
 * import { Runtime } from "../../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../../settings.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const app = emailRoutes({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS, runtime, mail: { outboxDir: "/tmp/outbox", from: "x@y.test" } });
 * const res = await app.request("/start", { method: "POST", body: new URLSearchParams({ tenant: "nope", email: "a@b.test" }) });
 * if (res.status !== 404) throw new Error("a tenant without email sign-in");
 * runtime.close();
 * kv.close();
 * ```
 */
export function emailRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const mailer = deps.mail === undefined ? undefined : createMailer(deps.mail);
  const ttlMs = deps.settings.emailCodeTtlMs ?? EMAIL_CODE_TTL_MS;
  const now = () => (deps.now?.() ?? new Date()).getTime();

  app.post("/start", async (c) => {
    if (mailer === undefined) return await mailUnavailable(c);
    if (crossSite(c, deps)) {
      return await refuseSignIn(c, deps, crossSiteError(), { method: "email" });
    }
    const form = await readForm(c.req.raw);
    const tenant = field(form, "tenant").trim().toLowerCase();
    const next = safeNext(field(form, "next"));
    const policy = SHAPES.slug.pattern.test(tenant) ? await signInPolicy(deps, tenant) : undefined;
    if (policy?.method !== "email") {
      return await errorPage(404, `Tenant ${tenant} has no email sign-in`, c.get("requestId"));
    }
    // The address is keyed, checked against the domains and mailed in one
    // form only: ASCII-trimmed and ASCII-lower-cased, plain ASCII (a Unicode
    // look-alike such as the Kelvin sign for `k` must not reach kate's account).
    const email = normalEmail(field(form, "email"));
    if (!plausibleEmail(email)) {
      return await addressPage(
        c,
        tenant,
        next,
        isPrintableAscii(email)
          ? "Enter an email address, like ana@example.com"
          : "Enter a plain ASCII email address, like ana@example.com: cfgtool does not " +
            "accept addresses with other characters",
        400,
      );
    }
    const origin = signInOrigin(c.req.raw, deps.publicUrl); // before anything differs by address
    const { ip } = loginContext(c);
    const at = now();
    if (!await countEmailStart(deps, "ip", ip ?? "unknown", at)) {
      deps.log("info", "email sign-in start refused: too many from this client", { tenant });
      const res = await errorPage(
        429,
        "Too many sign-in requests from this network. Wait a few minutes, then try again.",
        c.get("requestId"),
      );
      res.headers.set("retry-after", String(retryAfterSeconds("ip", at)));
      return res;
    }
    // Every valid start counts against its address, admitted or not. Over the
    // limit, the answer stays the one of a normal start (saying "too many"
    // would tell who is admitted) but no mail is sent.
    const withinLimit = await countEmailStart(deps, "address", email, at);
    const flow = await startEmailFlow(deps, tenant, ttlMs, at);
    setFlowCookie(c, deps, flow, ttlMs);
    if (emailInDomains(email, policy.domains)) {
      if (withinLimit) {
        const { token, code } = await issueEmailSignIn(
          deps,
          flow,
          { tenant, email, next },
          ttlMs,
          at,
        );
        const link = `${origin}/auth/email/verify?token=${token}`;
        const message = signInMessage(email, { tenant, link, code, minutes: minutes(ttlMs) });
        sendInBackground(deps, mailer, message, tenant);
      } else {
        deps.log("info", "email sign-in start: address over its limit, no mail sent", { tenant });
      }
    }
    return await checkMailPage(c, tenant, next, minutes(ttlMs), undefined, 200);
  });

  app.get("/verify", async (c) => {
    const token = c.req.query("token") ?? "";
    const grant = await peekEmailLink(deps, token, now());
    if (grant === null) {
      return await refuseSignIn(c, deps, usedLink(), { method: "email" });
    }
    return await pageResponse(
      c,
      "Confirm sign-in",
      html`
        <p>Sign in to <strong>${grant.tenant}</strong> as <strong>${grant.email}</strong>?</p>
        <form method="post" action="/auth/email/verify">
          <input type="hidden" name="token" value="${token}">
          <button type="submit">Sign in</button>
        </form>
        <p class="muted">If you did not ask to sign in, close this page: nothing happens
        without the button.</p>
      `,
    );
  });

  app.post("/verify", async (c) => {
    if (crossSite(c, deps)) {
      return await refuseSignIn(c, deps, crossSiteError(), { method: "email" });
    }
    const form = await readForm(c.req.raw);
    const token = field(form, "token");
    if (token !== "") {
      let grant;
      try {
        grant = await redeemEmailLink(deps, token, now());
        await stillAdmitted(deps, grant.tenant, grant.email);
      } catch (err) {
        return await refuseSignIn(c, deps, err, { tenant: grant?.tenant ?? null, method: "email" });
      }
      clearFlowCookie(c, deps);
      return await finishBrowserSignIn(c, deps, {
        tenant: grant.tenant,
        email: grant.email,
        method: "email",
        assurance: ["email-link"],
        groups: [],
      }, grant.next);
    }
    let grant;
    try {
      grant = await redeemEmailCode(deps, readFlowCookie(c, deps), field(form, "code"), now());
      await stillAdmitted(deps, grant.tenant, grant.email);
    } catch (err) {
      const left = err instanceof LoginError ? err.details?.attempts_left : undefined;
      const tenant = err instanceof LoginError ? err.details?.tenant : undefined;
      if (typeof left === "number" && left > 0 && typeof tenant === "string") {
        // A mistyped code: audited, and the form again (this flow has tries left).
        await recordLoginFailure(
          authDeps(deps),
          { tenant, method: "email", reason: (err as LoginError).reason },
          loginContext(c),
        );
        return await checkMailPage(
          c,
          tenant,
          undefined,
          minutes(ttlMs),
          (err as Error).message,
          403,
        );
      }
      clearFlowCookie(c, deps);
      return await refuseSignIn(c, deps, err, {
        tenant: grant?.tenant ?? (typeof tenant === "string" ? tenant : null),
        method: "email",
      });
    }
    clearFlowCookie(c, deps);
    return await finishBrowserSignIn(c, deps, {
      tenant: grant.tenant,
      email: grant.email,
      method: "email",
      assurance: ["email-code"],
      groups: [],
    }, grant.next);
  });

  return app;
}

/** The address form, with a problem to show when there is one. */
function addressPage(
  c: Context<AppEnv>,
  tenant: string,
  next: string,
  problem: string | undefined,
  status: 200 | 400,
): Promise<Response> {
  return pageResponse(
    c,
    "Sign in",
    html`
      ${problem === undefined ? "" : html`<p class="error" role="alert">${problem}</p>`}
      <p>Sign in to <strong>${tenant}</strong> with your email address: we send you a link and a code.</p>
      <form method="post" action="/auth/email/start">
        <label for="email">Email address</label>
        <input type="email" id="email" name="email" autocomplete="email" required maxlength="${MAX_EMAIL}">
        <input type="hidden" name="tenant" value="${tenant}">
        <input type="hidden" name="next" value="${next}">
        <button type="submit">Send me a sign-in link</button>
      </form>
    `,
    status,
  );
}

/**
 * "Check your mail" with the code form: the same bytes for every address
 * (it never shows the address). `next` is undefined when the page is shown
 * again after a mistyped code.
 */
function checkMailPage(
  c: Context<AppEnv>,
  tenant: string,
  next: string | undefined,
  ttlMinutes: number,
  problem: string | undefined,
  status: 200 | 403,
): Promise<Response> {
  const again = `/auth/login?tenant=${encodeURIComponent(tenant)}` +
    (next === undefined ? "" : `&next=${encodeURIComponent(next)}`);
  return pageResponse(
    c,
    "Check your mail",
    html`
      ${problem === undefined ? "" : html`<p class="error" role="alert">${problem}</p>`}
      <p>If this address may sign in to <strong>${tenant}</strong>, a message with a sign-in link and a
      6-digit code is on its way to it. Open the link, or type the code here. Both work once, for
      ${ttlMinutes === 1 ? "1 minute" : `${ttlMinutes} minutes`}.</p>
      <form method="post" action="/auth/email/verify">
        <label for="code">6-digit code</label>
        <input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code"
          pattern="[0-9]{6}" maxlength="6" required>
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">No mail after a few minutes? Look in your spam folder, or
      <a href="${again}">start again</a>.</p>
    `,
    status,
  );
}

/** 503: the server has neither an SMTP server nor an outbox. */
function mailUnavailable(c: Context<AppEnv>): Promise<Response> {
  return errorPage(
    503,
    "Email sign-in is not set up on this server: it has no way to send mail.",
    c.get("requestId"),
  );
}

/** Sends a message after the answer; failures are logged, never shown (no probing). */
function sendInBackground(
  deps: AppDeps,
  mailer: Mailer,
  message: ReturnType<typeof signInMessage>,
  tenant: string,
): void {
  mailer.send(message).then(
    (sent) =>
      deps.log("info", "sign-in mail sent", {
        tenant,
        via: mailer.describe,
        ...(sent.path === undefined ? {} : { path: sent.path }),
      }),
    (err) =>
      deps.log("warn", "sign-in mail not sent", {
        tenant,
        via: mailer.describe,
        error: err instanceof Error ? err.message : String(err),
      }),
  );
}

/** The tenant's policy still admits the address (it may have changed since the mail). */
async function stillAdmitted(deps: AppDeps, tenant: string, email: string): Promise<void> {
  const policy = await signInPolicy(deps, tenant);
  if (policy?.method !== "email" || !emailInDomains(email, policy.domains)) {
    throw new LoginError("email_domain", `This address may no longer sign in to ${tenant}.`);
  }
}

/**
 * A form post from another site: `Sec-Fetch-Site` says so, or `Origin` is
 * not ours. Our pages send their referrer to our own origin only, so a
 * browser posting one of our forms sends our `Origin`; `Origin: null`
 * (a page that hides its origin) counts as ours only when `Sec-Fetch-Site`
 * vouches for it.
 */
function crossSiteError(): LoginError {
  return new LoginError("csrf", "This sign-in did not come from a cfgtool page.");
}

function usedLink(): LoginError {
  return new LoginError(
    "code",
    "This sign-in link was already used or has expired. Start again to get a new one.",
  );
}

function flowCookieName(c: Context<AppEnv>, deps: AppDeps): string {
  return secureOrigin(c.req.raw, deps.publicUrl) ? SECURE_FLOW_COOKIE : PLAIN_FLOW_COOKIE;
}

function setFlowCookie(c: Context<AppEnv>, deps: AppDeps, flow: string, ttlMs: number): void {
  const secure = secureOrigin(c.req.raw, deps.publicUrl);
  setCookie(c, flowCookieName(c, deps), flow, {
    path: "/",
    httpOnly: true,
    secure,
    sameSite: "Strict",
    maxAge: Math.max(1, Math.ceil(ttlMs / 1000)),
  });
}

function clearFlowCookie(c: Context<AppEnv>, deps: AppDeps): void {
  const secure = secureOrigin(c.req.raw, deps.publicUrl);
  deleteCookie(c, flowCookieName(c, deps), { path: "/", secure });
}

/** The flow cookie of the name that fits the origin (see readSessionCookie). */
function readFlowCookie(c: Context<AppEnv>, deps: AppDeps): string | undefined {
  return getCookie(c, flowCookieName(c, deps));
}

/** A form field as a string ("" when absent or a file). */
function field(form: Map<string, string>, name: string): string {
  return form.get(name) ?? "";
}

/** Something like an address: plain ASCII, one `@`, no space, no angle brackets, a dot in the domain. */
function plausibleEmail(value: string): boolean {
  return value.length <= MAX_EMAIL && isPlainEmail(value) &&
    /^[^@<>()[\]\\,;:"]+@[^@<>()[\]\\,;:"]+\.[^@<>()[\]\\,;:".]+$/.test(value);
}

/** Whole minutes of a lifetime, at least 1, for the page and the mail. */
function minutes(ms: number): number {
  return Math.max(1, Math.round(ms / 60_000));
}
