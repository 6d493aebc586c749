/**
 * The server side of `cfgtool login` (`/auth/cli/*`), in-process: the
 * loopback flow (authorize page, confirm, code for the loopback URI, code
 * redeemed once with its PKCE verifier), the device flow (codes, pending,
 * slow_down, confirm or deny in the browser, expiry), and every refusal.
 * The browser side signs in with a session made by the same `signIn` every
 * sign-in method ends with, sent as the `cfgtool_session` cookie.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../assert.ts";
import { listAudit } from "../../../lib/store/audit.ts";
import { base64url, DEVICE_CODE_GRANT, pkceChallenge } from "../../../lib/protocol/cli_sign_in.ts";
import { type CallOptions, ORIGIN, signInTest, type SignInWorld } from "./world.ts";

const LOOPBACK = "http://127.0.0.1:53682/callback";

/** The world of these tests: a browser's form posts carry the service's Origin. */
type World = SignInWorld;

/**
 * A test on a world whose clock starts at 2030-01-01 and whose tenants
 * sign people in by email (a CLI grant re-checks the policy).
 */
function cliTest(name: string, fn: (w: World) => Promise<void>): void {
  signInTest(name, (w) => {
    const call = (method: string, path: string, o: CallOptions = {}) =>
      w.call(method, path, {
        ...o,
        headers: o.form !== undefined && !(o.headers && "origin" in o.headers)
          ? { origin: ORIGIN, ...o.headers }
          : o.headers ?? {},
      });
    return fn({ ...w, call });
  }, {
    start: Date.parse("2030-01-01T00:00:00Z"),
    emailPolicies: { acme: ["acme.test"], other: ["other.test"] },
  });
}

/** A PKCE pair as `cfgtool login` makes it. */
async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: await pkceChallenge(verifier) };
}

function authorizePath(params: Record<string, string>): string {
  return `/auth/cli/authorize?${new URLSearchParams(params)}`;
}

/** The value of a hidden field of a page. */
function hidden(page: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  assert(m, `no field ${name} in\n${page}`);
  return m[1]!.replaceAll("&amp;", "&");
}

/** Runs the loopback flow up to the code: authorize page, allow. */
async function codeFor(w: World, cookie: string, challenge: string, state = "state-12345") {
  const page = await w.call(
    "GET",
    authorizePath({
      redirect_uri: LOOPBACK,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      tenant: "acme",
    }),
    { cookie },
  );
  assertEquals(page.status, 200);
  const text = await page.text();
  const res = await w.call("POST", "/auth/cli/authorize", {
    cookie,
    form: {
      _csrf: hidden(text, "_csrf"),
      redirect_uri: hidden(text, "redirect_uri"),
      state: hidden(text, "state"),
      code_challenge: hidden(text, "code_challenge"),
      code_challenge_method: "S256",
      tenant: hidden(text, "tenant"),
      decision: "allow",
    },
  });
  assertEquals(res.status, 303, await res.clone().text());
  const back = new URL(res.headers.get("location")!);
  assertEquals(back.origin + back.pathname, LOOPBACK);
  assertEquals(back.searchParams.get("state"), state);
  return back.searchParams.get("code")!;
}

async function token(w: World, body: Record<string, unknown>) {
  const res = await w.call("POST", "/auth/cli/token", { json: body });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

cliTest("authorize without a browser session sends the person to sign in, then back", async (w) => {
  const { challenge } = await pkce();
  const path = authorizePath({
    redirect_uri: LOOPBACK,
    state: "state-12345",
    code_challenge: challenge,
    code_challenge_method: "S256",
    tenant: "acme",
  });
  const res = await w.call("GET", path, { headers: { accept: "text/html" } });
  assertEquals(res.status, 303);
  const to = new URL(res.headers.get("location")!, ORIGIN);
  assertEquals(to.pathname, "/auth/login");
  assertEquals(to.searchParams.get("tenant"), "acme");
  assertEquals(to.searchParams.get("next"), path);
});

cliTest(
  "authorize with a session shows who signs in where, and a CSRF-protected form",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { challenge } = await pkce();
    const res = await w.call(
      "GET",
      authorizePath({
        redirect_uri: LOOPBACK,
        state: "state-12345",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
      { cookie: ana.cookie },
    );
    assertEquals(res.status, 200);
    assertMatch(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    const page = await res.text();
    assertStringIncludes(
      page,
      "Sign in cfgtool on this computer as <strong>ana@acme.test</strong>",
    );
    assertStringIncludes(page, "to <strong>acme</strong>");
    assertEquals(hidden(page, "_csrf"), ana.csrf);
    assertEquals(hidden(page, "tenant"), "acme"); // the session's tenant when none was asked
  },
);

cliTest(
  "authorize for another tenant than the session's asks to sign in to that tenant",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { challenge } = await pkce();
    const res = await w.call(
      "GET",
      authorizePath({
        redirect_uri: LOOPBACK,
        state: "state-12345",
        code_challenge: challenge,
        code_challenge_method: "S256",
        tenant: "other",
      }),
      { cookie: ana.cookie },
    );
    assertEquals(res.status, 303);
    assertEquals(new URL(res.headers.get("location")!, ORIGIN).searchParams.get("tenant"), "other");
  },
);

cliTest(
  "a redirect_uri that is not the loopback listener is a 400 page, never a redirect",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { challenge } = await pkce();
    for (
      const uri of [
        "https://evil.example/callback",
        "http://evil.example:53682/callback",
        "http://127.0.0.1/callback", // no port
        "http://127.0.0.1:53682@evil.example/callback",
        "http://127.0.0.1.evil.example:53682/callback",
        "https://127.0.0.1:53682/callback",
        "//127.0.0.1:53682/callback",
        "javascript:alert(1)",
      ]
    ) {
      const params = {
        redirect_uri: uri,
        state: "state-12345",
        code_challenge: challenge,
        code_challenge_method: "S256",
      };
      const res = await w.call("GET", authorizePath(params), { cookie: ana.cookie });
      assertEquals(res.status, 400, uri);
      assertEquals(res.headers.get("location"), null, uri);
      assertStringIncludes(await res.text(), "only return to the cfgtool command on this computer");
      const posted = await w.call("POST", "/auth/cli/authorize", {
        cookie: ana.cookie,
        form: { ...params, tenant: "acme", decision: "allow", _csrf: ana.csrf },
      });
      assertEquals(posted.status, 400, uri);
      assertEquals(posted.headers.get("location"), null, uri);
      await posted.body?.cancel();
    }
    const audit = await listAudit(w.kv, {});
    assert(
      audit.items.some((e) => e.type === "login.failed" && e.details.reason === "redirect_uri"),
    );
  },
);

cliTest(
  "authorize refuses a missing state, a plain challenge and a malformed challenge",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { challenge } = await pkce();
    const good = {
      redirect_uri: LOOPBACK,
      state: "state-12345",
      code_challenge: challenge,
      code_challenge_method: "S256",
    };
    for (
      const params of [
        { ...good, state: "" },
        { ...good, code_challenge_method: "plain" },
        { ...good, code_challenge: "short" },
      ]
    ) {
      const res = await w.call("GET", authorizePath(params), { cookie: ana.cookie });
      assertEquals(res.status, 400, JSON.stringify(params));
      await res.body?.cancel();
    }
  },
);

cliTest("the loopback flow gives a CLI session once, for the verifier's owner", async (w) => {
  const ana = await w.browser("ana@acme.test", "acme");
  const { verifier, challenge } = await pkce();
  const code = await codeFor(w, ana.cookie, challenge);

  const ok = await token(w, { grant_type: "authorization_code", code, code_verifier: verifier });
  assertEquals(ok.status, 200, JSON.stringify(ok.body));
  assertEquals(ok.headers.get("cache-control"), "no-store");
  assertMatch(ok.body.session_token, /^ses_/);
  assertEquals(ok.body.tenant, "acme");
  assertEquals(ok.body.user.email, "ana@acme.test");
  assertMatch(ok.body.session.id, /^ssn_/);

  const me = await w.call("GET", "/api/v1/me", { bearer: ok.body.session_token });
  assertEquals(me.status, 200);
  const principal = (await me.json()).principal;
  assertEquals(principal.session.client, "cli");
  assertEquals(principal.session.idle_timeout_ms, null);
  assertEquals(principal.session.login_method, "email");

  const replay = await token(w, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
  });
  assertEquals(replay.status, 400);
  assertEquals(replay.body.code, "login_failed");
  assertEquals(replay.body.details.error, "invalid_grant");
  assertEquals(replay.body.details.reason, "code");

  const audit = (await listAudit(w.kv, { tenant: "acme" })).items;
  assert(audit.some((e) => e.type === "login.succeeded" && e.details.client === "cli"));
});

cliTest("a wrong code_verifier is refused and uses the code up", async (w) => {
  const ana = await w.browser("ana@acme.test", "acme");
  const { verifier, challenge } = await pkce();
  const code = await codeFor(w, ana.cookie, challenge);
  const other = await pkce();
  const wrong = await token(w, {
    grant_type: "authorization_code",
    code,
    code_verifier: other.verifier,
  });
  assertEquals(wrong.status, 400);
  assertEquals(wrong.body.details.error, "invalid_grant");
  assertEquals(wrong.body.details.reason, "code_verifier");
  const after = await token(w, { grant_type: "authorization_code", code, code_verifier: verifier });
  assertEquals(after.body.details.reason, "code");
  const audit = (await listAudit(w.kv, { tenant: "acme" })).items;
  assert(audit.some((e) => e.type === "login.failed" && e.details.reason === "code_verifier"));
});

cliTest("a code expires after 2 minutes", async (w) => {
  const ana = await w.browser("ana@acme.test", "acme");
  const { verifier, challenge } = await pkce();
  const code = await codeFor(w, ana.cookie, challenge);
  w.advance(2 * 60 * 1000 + 1);
  const late = await token(w, { grant_type: "authorization_code", code, code_verifier: verifier });
  assertEquals(late.body.details.error, "invalid_grant");
});

cliTest(
  "confirming without the page's CSRF token, or from another origin, is refused",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { challenge } = await pkce();
    const form = {
      redirect_uri: LOOPBACK,
      state: "state-12345",
      code_challenge: challenge,
      code_challenge_method: "S256",
      tenant: "acme",
      decision: "allow",
    };
    const none = await w.call("POST", "/auth/cli/authorize", { cookie: ana.cookie, form });
    assertEquals(none.status, 403);
    assertEquals(none.headers.get("location"), null);
    await none.body?.cancel();
    const cross = await w.call("POST", "/auth/cli/authorize", {
      cookie: ana.cookie,
      form: { ...form, _csrf: ana.csrf },
      headers: { origin: "https://evil.example" },
    });
    assertEquals(cross.status, 403);
    await cross.body?.cancel();
    const anonymous = await w.call("POST", "/auth/cli/authorize", {
      form: { ...form, _csrf: ana.csrf },
    });
    assertEquals(anonymous.status, 403);
    await anonymous.body?.cancel();
  },
);

cliTest("denying sends access_denied (and the state) back to the CLI, with no code", async (w) => {
  const ana = await w.browser("ana@acme.test", "acme");
  const { challenge } = await pkce();
  const res = await w.call("POST", "/auth/cli/authorize", {
    cookie: ana.cookie,
    form: {
      redirect_uri: LOOPBACK,
      state: "state-12345",
      code_challenge: challenge,
      code_challenge_method: "S256",
      tenant: "acme",
      decision: "deny",
      _csrf: ana.csrf,
    },
  });
  assertEquals(res.status, 303);
  const back = new URL(res.headers.get("location")!);
  assertEquals(back.searchParams.get("error"), "access_denied");
  assertEquals(back.searchParams.get("state"), "state-12345");
  assertEquals(back.searchParams.get("code"), null);
});

cliTest("the token endpoint refuses unknown grant types and malformed bodies", async (w) => {
  const unknown = await token(w, { grant_type: "password" });
  assertEquals(unknown.status, 400);
  assertEquals(unknown.body.details.error, "unsupported_grant_type");
  const noVerifier = await token(w, { grant_type: "authorization_code", code: "x" });
  assertEquals(noVerifier.body.details.error, "invalid_request");
  const res = await w.call("POST", "/auth/cli/token", {
    headers: { "content-type": "application/json" },
  });
  assertEquals((await res.json()).details.error, "unsupported_grant_type");
});

/** Starts a device sign-in. */
async function startDevice(w: World, body: unknown = { tenant: "acme" }) {
  const res = await w.call("POST", "/auth/cli/device", { json: body });
  assertEquals(res.status, 200);
  return await res.json();
}

/** The person opens the verification URL and answers. */
async function answerDevice(
  w: World,
  cookie: string,
  url: string,
  decision: "allow" | "deny",
): Promise<Response> {
  const target = new URL(url);
  const page = await w.call("GET", target.pathname + target.search, { cookie });
  assertEquals(page.status, 200);
  const text = await page.text();
  return await w.call("POST", "/auth/cli/device/confirm", {
    cookie,
    form: { _csrf: hidden(text, "_csrf"), user_code: hidden(text, "user_code"), decision },
  });
}

cliTest(
  "the device flow: codes, pending, slow_down, confirm in the browser, the session once",
  async (w) => {
    const d = await startDevice(w);
    assertMatch(d.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assertEquals(d.expires_in, 600);
    assertEquals(d.interval, 2);
    assertEquals(d.verification_uri, `${ORIGIN}/auth/cli/device`);
    assertEquals(
      d.verification_uri_complete,
      `${ORIGIN}/auth/cli/device?user_code=${encodeURIComponent(d.user_code)}`,
    );
    const poll = () => token(w, { grant_type: DEVICE_CODE_GRANT, device_code: d.device_code });

    assertEquals((await poll()).body.details.error, "authorization_pending");
    const fast = await poll();
    assertEquals(fast.body.details.error, "slow_down");
    assertEquals(fast.body.details.interval, 7);
    w.advance(7_000);
    assertEquals((await poll()).body.details.error, "authorization_pending");

    // Not signed in yet: the page sends the person to sign in to the code's tenant, then back.
    const anonymous = await w.call(
      "GET",
      new URL(d.verification_uri_complete).pathname +
        new URL(d.verification_uri_complete).search,
    );
    assertEquals(anonymous.status, 303);
    const login = new URL(anonymous.headers.get("location")!, ORIGIN);
    assertEquals(login.searchParams.get("tenant"), "acme");
    assertEquals(
      login.searchParams.get("next"),
      `/auth/cli/device?user_code=${encodeURIComponent(d.user_code)}`,
    );

    const ana = await w.browser("ana@acme.test", "acme");
    const confirmed = await answerDevice(w, ana.cookie, d.verification_uri_complete, "allow");
    assertEquals(confirmed.status, 200);
    assertStringIncludes(await confirmed.text(), "Go back to your terminal");

    w.advance(7_000);
    const done = await poll();
    assertEquals(done.status, 200, JSON.stringify(done.body));
    assertMatch(done.body.session_token, /^ses_/);
    assertEquals(done.body.user.email, "ana@acme.test");
    assertEquals(done.body.tenant, "acme");
    const me = await w.call("GET", "/api/v1/me", { bearer: done.body.session_token });
    assertEquals(me.status, 200);
    await me.body?.cancel();

    w.advance(7_000);
    assertEquals((await poll()).body.details.error, "expired_token"); // used
  },
);

cliTest("a typed user code works in any case and with or without its dash", async (w) => {
  const d = await startDevice(w, {});
  const ana = await w.browser("ana@acme.test", "acme");
  const form = await w.call("GET", "/auth/cli/device", { cookie: ana.cookie });
  assertEquals(form.status, 200);
  assertStringIncludes(await form.text(), 'name="user_code"');
  const typed = d.user_code.replace("-", "").toLowerCase();
  const res = await answerDevice(
    w,
    ana.cookie,
    `${ORIGIN}/auth/cli/device?user_code=${typed}`,
    "allow",
  );
  assertEquals(res.status, 200);
  await res.body?.cancel();
  w.advance(2_000);
  const done = await token(w, { grant_type: DEVICE_CODE_GRANT, device_code: d.device_code });
  assertEquals(done.body.tenant, "acme"); // no tenant asked: the browser session's
});

cliTest("a denied device code answers access_denied and is audited", async (w) => {
  const d = await startDevice(w);
  const ana = await w.browser("ana@acme.test", "acme");
  const denied = await answerDevice(w, ana.cookie, d.verification_uri_complete, "deny");
  assertEquals(denied.status, 200);
  assertStringIncludes(await denied.text(), "cfgtool was not signed in");
  const res = await token(w, { grant_type: DEVICE_CODE_GRANT, device_code: d.device_code });
  assertEquals(res.status, 400);
  assertEquals(res.body.details.error, "access_denied");
  w.advance(2_000);
  const again = await token(w, { grant_type: DEVICE_CODE_GRANT, device_code: d.device_code });
  assertEquals(again.body.details.error, "expired_token");
  const audit = (await listAudit(w.kv, { tenant: "acme" })).items;
  assert(audit.some((e) => e.type === "login.failed" && e.details.reason === "access_denied"));
});

cliTest("device codes expire after 10 minutes; unknown ones read as expired", async (w) => {
  const d = await startDevice(w);
  w.advance(10 * 60 * 1000 + 1);
  const res = await token(w, { grant_type: DEVICE_CODE_GRANT, device_code: d.device_code });
  assertEquals(res.body.details.error, "expired_token");
  const ana = await w.browser("ana@acme.test", "acme");
  const page = await w.call("GET", `/auth/cli/device?user_code=${d.user_code}`, {
    cookie: ana.cookie,
  });
  assertEquals(page.status, 400);
  assertStringIncludes(await page.text(), "unknown, expired or already used");
  const made = await token(w, { grant_type: DEVICE_CODE_GRANT, device_code: "made-up" });
  assertEquals(made.body.details.error, "expired_token");
});

cliTest(
  "a user code is answered once, with the page's CSRF token, by a person of its tenant",
  async (w) => {
    const d = await startDevice(w, { tenant: "other" });
    const ana = await w.browser("ana@acme.test", "acme");
    // Ana's session is for acme: she is asked to sign in to "other" first.
    const page = await w.call("GET", `/auth/cli/device?user_code=${d.user_code}`, {
      cookie: ana.cookie,
    });
    assertEquals(page.status, 303);
    const posted = await w.call("POST", "/auth/cli/device/confirm", {
      cookie: ana.cookie,
      form: { _csrf: ana.csrf, user_code: d.user_code, decision: "allow" },
    });
    assertEquals(posted.status, 403);
    await posted.body?.cancel();

    const bo = await w.browser("bo@other.test", "other");
    const noCsrf = await w.call("POST", "/auth/cli/device/confirm", {
      cookie: bo.cookie,
      form: { user_code: d.user_code, decision: "allow" },
    });
    assertEquals(noCsrf.status, 403);
    await noCsrf.body?.cancel();
    const ok = await answerDevice(w, bo.cookie, d.verification_uri_complete, "allow");
    assertEquals(ok.status, 200);
    await ok.body?.cancel();
    const twice = await w.call("POST", "/auth/cli/device/confirm", {
      cookie: bo.cookie,
      form: { _csrf: bo.csrf, user_code: d.user_code, decision: "deny" },
    });
    assertEquals(twice.status, 400);
    await twice.body?.cancel();
  },
);

cliTest("the device start refuses a tenant that is not a slug", async (w) => {
  const res = await w.call("POST", "/auth/cli/device", { json: { tenant: "Not A Slug" } });
  assertEquals(res.status, 400);
  assertEquals((await res.json()).details.error, "invalid_request");
});

cliTest("a CLI session ends no later than the browser sign-in it came from", async (w) => {
  const ana = await w.browser("ana@acme.test", "acme");
  w.advance(90 * 60 * 1000); // 10.5 h of the browser session's 12 h are left
  const { verifier, challenge } = await pkce();
  const code = await codeFor(w, ana.cookie, challenge);
  const ok = await token(w, { grant_type: "authorization_code", code, code_verifier: verifier });
  assertEquals(ok.status, 200, JSON.stringify(ok.body));
  const me = await (await w.call("GET", "/api/v1/me", { cookie: ana.cookie })).json();
  assertEquals(ok.body.session.expires_at, me.principal.session.expires_at);
});

cliTest(
  "a CLI session placed in the cookie is no browser session: it cannot renew itself",
  async (w) => {
    const ana = await w.browser("ana@acme.test", "acme");
    const { verifier, challenge } = await pkce();
    const code = await codeFor(w, ana.cookie, challenge);
    const cli = await token(w, { grant_type: "authorization_code", code, code_verifier: verifier });
    const planted = `cfgtool_session=${cli.body.session_token}`;
    assertEquals((await w.call("GET", "/api/v1/me", { cookie: planted })).status, 401);
    const page = await w.call(
      "GET",
      authorizePath({
        redirect_uri: LOOPBACK,
        state: "state-12345",
        code_challenge: challenge,
        code_challenge_method: "S256",
        tenant: "acme",
      }),
      { cookie: planted },
    );
    assertEquals(page.status, 303, "sent to sign in, as with no session");
    assertStringIncludes(page.headers.get("location") ?? "", "/auth/login?");
  },
);
