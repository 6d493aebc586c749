/**
 * `cfgtool login`, `whoami` and `logout` as real CLI processes against a
 * real `cfgtool serve`, with the person's side played by a cookie-keeping
 * web client that signs in by email (the server has no SMTP server, so the
 * sign-in mail lands in the outbox beside its KV file): the device flow
 * (`--no-browser`) and the loopback flow (the "browser" is a `$BROWSER`
 * script that writes the URL to a file) end to end, the saved profile used
 * by other commands, `CFGTOOL_TOKEN` winning over it, logout ending the
 * session on the server, and the refusals (wrong verifier, replayed code,
 * a redirect_uri that is not the loopback listener, a denied or expired
 * device code).
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { createAcmeWeb, type Installation, runCli, startInstallation } from "./installation.ts";
import { parseForms, WebClient, type WebResponse } from "./web_client.ts";
import { parseMail, signInSecrets } from "./smtp_capture.ts";
import { spawnCli } from "./cli_live.ts";
import { createPkcePair } from "../../lib/client/sign_in.ts";
import { parse as parseToml } from "toml";

/** The messages in the outbox. */
function mailNames(outbox: string): Set<string> {
  try {
    return new Set(
      [...Deno.readDirSync(outbox)].map((e) => e.name).filter((n) => n.endsWith(".eml")),
    );
  } catch {
    return new Set();
  }
}

/** Waits for a message not in `seen`; its sign-in link. */
async function nextMailLink(outbox: string, seen: Set<string>): Promise<URL> {
  const end = Date.now() + 15_000;
  while (true) {
    const fresh = [...mailNames(outbox)].find((n) => !seen.has(n));
    if (fresh !== undefined) {
      return signInSecrets((await parseMail(await Deno.readFile(`${outbox}/${fresh}`))).text).link;
    }
    if (Date.now() > end) throw new Error("no sign-in mail in the outbox");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Plays the person: from `start`, follow to the email form if sign-in is
 * needed, sign in as `email` with the mailed link, and return the page
 * sign-in leads back to (the CLI confirm page).
 */
async function signInThrough(
  inst: Installation,
  web: WebClient,
  start: string | URL,
  email: string,
): Promise<WebResponse> {
  const origin = { origin: inst.url };
  const first = await web.follow(start);
  assert(!first.stopped);
  let page = first.response;
  const start_ = parseForms(page.text, page.url).find((f) =>
    f.action.pathname === "/auth/email/start"
  );
  if (start_ === undefined) return page; // already signed in
  const outbox = `${inst.dir}/outbox`;
  const seen = mailNames(outbox);
  const sent = await web.submit(start_, { email }, { headers: origin });
  assertEquals(sent.status, 200, sent.text);
  const link = await nextMailLink(outbox, seen);
  const confirm = await web.request(link);
  assertEquals(confirm.status, 200, confirm.text);
  const form = parseForms(confirm.text, confirm.url).find((f) =>
    f.action.pathname === "/auth/email/verify"
  )!;
  const signedIn = await web.submit(form, {}, { headers: origin });
  assertEquals(signedIn.status, 303, signedIn.text);
  const back = await web.follow(signedIn);
  assert(!back.stopped);
  page = back.response;
  return page;
}

/** The confirm form of a CLI confirm page. */
function confirmForm(page: WebResponse, action: string) {
  const form = parseForms(page.text, page.url).find((f) => f.action.pathname === action);
  assert(form, `no ${action} form on ${page.url.href} (${page.status}):\n${page.text}`);
  return form;
}

Deno.test("cfgtool login, whoami and logout against a real server", async (t) => {
  const inst = await startInstallation();
  const config = `${inst.dir}/config`;
  const credentials = `${config}/cfgtool/credentials.toml`;
  const env = {
    XDG_CONFIG_HOME: config,
    CFGTOOL_TOKEN: "",
    CFGTOOL_SERVER: "",
    CFGTOOL_PROFILE: "",
    BROWSER: "/nonexistent/browser",
  };
  const profileName = new URL(inst.url).host;
  try {
    await createAcmeWeb(inst);
    const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
      method: "email",
      domains: ["acme.test"],
    });
    assertEquals(policy.status, 200, JSON.stringify(policy.body));
    const web = new WebClient();
    let anaToken = "";
    let boToken = "";

    await t.step(
      "login --no-browser: the person confirms the code, the profile is saved 0600",
      async () => {
        const cli = spawnCli(
          ["login", "--server", inst.url, "--tenant", "acme", "--no-browser"],
          env,
        );
        const [, url] = await cli.waitFor(/\(or open (\S+) \)/);
        const [, code] = await cli.waitFor(/enter the code +([A-Z]{4}-[A-Z]{4})/);
        assertEquals(new URL(url!).searchParams.get("user_code"), code);
        const page = await signInThrough(inst, web, url!, "ana@acme.test");
        assertEquals(page.status, 200, page.text);
        assertStringIncludes(page.text, code!);
        assertStringIncludes(page.text, "ana@acme.test");
        const done = await web.submit(
          confirmForm(page, "/auth/cli/device/confirm"),
          { decision: "allow" },
          { headers: { origin: inst.url } },
        );
        assertEquals(done.status, 200, done.text);
        const r = await cli.done();
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, `Signed in to ${inst.url} as ana@acme.test (tenant acme)`);
        assertStringIncludes(r.stdout, `Saved as profile "${profileName}" in ${credentials}`);

        assertEquals((await Deno.stat(credentials)).mode! & 0o777, 0o600);
        assertEquals((await Deno.stat(`${config}/cfgtool`)).mode! & 0o777, 0o700);
        const saved = parseToml(await Deno.readTextFile(credentials)) as {
          profiles: Record<string, Record<string, string>>;
        };
        const profile = saved.profiles[profileName]!;
        assertEquals(profile.server, inst.url);
        assertEquals(profile.user, "ana@acme.test");
        assertEquals(profile.tenant, "acme");
        assertMatch(profile.session_id!, /^ssn_/);
        assertMatch(profile.session_token!, /^ses_/);
        assert(Date.parse(profile.expires_at!) > Date.now());
        anaToken = profile.session_token!;
        assert(!r.stdout.includes(anaToken) && !r.stderr.includes(anaToken), "token printed");
      },
    );

    await t.step(
      "whoami and remote commands use the saved profile without CFGTOOL_TOKEN",
      async () => {
        const who = await runCli(["whoami"], { env });
        assertEquals(who.code, 0, who.stderr);
        assertMatch(who.stdout, /^user: +ana@acme\.test \(usr_/m);
        assertMatch(who.stdout, /^tenants: +acme \(member\)/m);
        assertMatch(who.stdout, /^session: +ssn_\S+ \(cli, email\)/m);
        assertMatch(who.stdout, new RegExp(`^credential: +profile ${profileName}`, "m"));
        assert(!who.stdout.includes(anaToken));
        const json = await runCli(["whoami", "--json"], { env });
        assertEquals(json.code, 0, json.stderr);
        const me = JSON.parse(json.stdout);
        assertEquals(me.principal.type, "user");
        assertEquals(me.principal.session.client, "cli");
        assertEquals(me.server, inst.url);

        const list = await runCli(["namespace", "list", "--tenant", "acme"], { env });
        assertEquals(list.code, 0, list.stderr);
        assertStringIncludes(list.stdout, "web");
        // --server names the profile's server: the same profile
        const named = await runCli(["tenant", "list", "--server", `${inst.url}/`], { env });
        assertEquals(named.code, 0, named.stderr);
        assertStringIncludes(named.stdout, "acme");
      },
    );

    await t.step("CFGTOOL_TOKEN wins over the saved profile", async () => {
      const admin = await runCli(["whoami"], { env: { ...env, CFGTOOL_TOKEN: inst.admin } });
      assertEquals(admin.code, 0, admin.stderr);
      assertMatch(admin.stdout, /^type: +superadmin/m);
      assertMatch(admin.stdout, /^credential: +\$CFGTOOL_TOKEN/m);
      const bad = await runCli(["whoami"], {
        env: { ...env, CFGTOOL_TOKEN: "svc_read_NotARealTokenNotARealTokenNotARealTok" },
      });
      assertEquals(bad.code, 1, bad.stderr); // no fallback to the profile
      assertStringIncludes(bad.stderr, "rejected");
    });

    await t.step(
      "the loopback flow: $BROWSER gets the authorize URL, the browser hands back a code",
      async () => {
        const urlFile = `${inst.dir}/browser-url.txt`;
        const browser = `${inst.dir}/browser.sh`;
        await Deno.writeTextFile(browser, `#!/bin/sh\nprintf '%s' "$1" > '${urlFile}'\n`);
        await Deno.chmod(browser, 0o755);
        const cli = spawnCli(["login", "--server", inst.url, "--tenant", "acme"], {
          ...env,
          BROWSER: browser,
        });
        await cli.waitFor(/Waiting for the browser/);
        let authorize = "";
        for (let i = 0; i < 200 && authorize === ""; i++) {
          authorize = await Deno.readTextFile(urlFile).catch(() => "");
          if (authorize === "") await new Promise((r) => setTimeout(r, 50));
        }
        const asked = new URL(authorize);
        assertEquals(asked.origin + asked.pathname, `${inst.url}/auth/cli/authorize`);
        assertMatch(
          asked.searchParams.get("redirect_uri")!,
          /^http:\/\/127\.0\.0\.1:\d+\/callback$/,
        );
        assertEquals(asked.searchParams.get("code_challenge_method"), "S256");
        // A new browser: the person signs in (as bo), then confirms.
        const browserOfBo = new WebClient();
        const page = await signInThrough(inst, browserOfBo, asked, "bo@acme.test");
        assertEquals(page.status, 200, page.text);
        assertStringIncludes(
          page.text,
          "Sign in cfgtool on this computer as <strong>bo@acme.test</strong>",
        );
        const allowed = await browserOfBo.submit(
          confirmForm(page, "/auth/cli/authorize"),
          { decision: "allow" },
          { headers: { origin: inst.url } },
        );
        assertEquals(allowed.status, 303, allowed.text);
        const back = allowed.location!;
        assertEquals(back.origin, new URL(asked.searchParams.get("redirect_uri")!).origin);
        const landing = await browserOfBo.request(back);
        assertEquals(landing.status, 200, landing.text);
        assertStringIncludes(landing.text, "You can close this tab");
        const r = await cli.done();
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, "as bo@acme.test (tenant acme)");
        const who = await runCli(["whoami"], { env });
        assertMatch(who.stdout, /^user: +bo@acme\.test/m);
        assertEquals((await Deno.stat(credentials)).mode! & 0o777, 0o600);
        // one profile per server: bo's replaced ana's, whose session was ended
        const saved = parseToml(await Deno.readTextFile(credentials)) as {
          profiles: Record<string, Record<string, string>>;
        };
        assertEquals(Object.keys(saved.profiles), [profileName]);
        assertEquals((await inst.api("GET", "/api/v1/me", anaToken)).status, 401);
        boToken = saved.profiles[profileName]!.session_token!;
      },
    );

    await t.step("logout ends the session on the server and removes the profile", async () => {
      assertEquals((await inst.api("GET", "/api/v1/me", boToken)).status, 200);
      const r = await runCli(["logout"], { env });
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.stdout, `Signed out of ${inst.url} (session ssn_`);
      assertStringIncludes(r.stdout, `Removed profile "${profileName}"`);
      const me = await inst.api("GET", "/api/v1/me", boToken);
      assertEquals(me.status, 401);
      let gone = false;
      try {
        await Deno.stat(credentials);
      } catch (err) {
        gone = err instanceof Deno.errors.NotFound;
      }
      assert(gone, "no profile left: the file is removed");
      const again = await runCli(["whoami"], { env });
      assertEquals(again.code, 2, again.stderr);
      assertStringIncludes(again.stderr, "cfgtool login --server");
    });

    await t.step(
      "logout with the server unreachable removes the profile and says so",
      async () => {
        await Deno.mkdir(`${config}/cfgtool`, { recursive: true });
        await Deno.writeTextFile(
          credentials,
          '[profiles.dead]\nserver = "http://127.0.0.1:9"\nsession_token = "ses_x"\n' +
            'session_id = "ssn_1"\nuser = "a@acme.test"\nuser_id = "usr_1"\ntenant = "acme"\n' +
            'expires_at = "2099-01-01T00:00:00.000Z"\n',
          { mode: 0o600 },
        );
        const r = await runCli(["logout", "--profile", "dead"], { env });
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stderr, "could not end the session on http://127.0.0.1:9");
        assertStringIncludes(r.stdout, "on this computer only");
        assertEquals(await Deno.readTextFile(credentials).catch(() => "gone"), "gone");
      },
    );

    await t.step(
      "a device code denied in the browser stops the CLI with exit 1, nothing saved",
      async () => {
        const cli = spawnCli(["login", "--server", inst.url, "--no-browser"], env);
        const [, url] = await cli.waitFor(/\(or open (\S+) \)/);
        const page = await signInThrough(inst, web, url!, "ana@acme.test");
        const denied = await web.submit(
          confirmForm(page, "/auth/cli/device/confirm"),
          { decision: "deny" },
          { headers: { origin: inst.url } },
        );
        assertEquals(denied.status, 200, denied.text);
        const r = await cli.done();
        assertEquals(r.code, 1, r.stderr);
        assertStringIncludes(r.stderr, "error: The sign-in was denied in the browser");
        assertEquals(await Deno.readTextFile(credentials).catch(() => "gone"), "gone");
      },
    );

    await t.step(
      "refusals of the token endpoint: wrong verifier, replayed code, unknown or expired device code",
      async () => {
        const loopback = "http://127.0.0.1:1/callback";
        const codeFor = async (challenge: string) => {
          const start = new URL(`${inst.url}/auth/cli/authorize`);
          start.search = new URLSearchParams({
            redirect_uri: loopback,
            state: "state-0123456789",
            code_challenge: challenge,
            code_challenge_method: "S256",
            tenant: "acme",
          }).toString();
          const page = await signInThrough(inst, web, start, "ana@acme.test");
          const res = await web.submit(
            confirmForm(page, "/auth/cli/authorize"),
            { decision: "allow" },
            { headers: { origin: inst.url } },
          );
          assertEquals(res.status, 303);
          return res.location!.searchParams.get("code")!;
        };
        const pair = await createPkcePair();
        const other = await createPkcePair();
        const token = (body: unknown) => inst.api("POST", "/auth/cli/token", null, body);

        const code = await codeFor(pair.challenge);
        const wrong = await token({
          grant_type: "authorization_code",
          code,
          code_verifier: other.verifier,
        });
        assertEquals(wrong.status, 400);
        assertEquals(wrong.body.details.error, "invalid_grant");
        assertEquals(wrong.body.details.reason, "code_verifier");
        const after = await token({
          grant_type: "authorization_code",
          code,
          code_verifier: pair.verifier,
        });
        assertEquals(after.body.details.error, "invalid_grant"); // the wrong try used it up

        const fresh = await codeFor(pair.challenge);
        const ok = await token({
          grant_type: "authorization_code",
          code: fresh,
          code_verifier: pair.verifier,
        });
        assertEquals(ok.status, 200, JSON.stringify(ok.body));
        const replay = await token({
          grant_type: "authorization_code",
          code: fresh,
          code_verifier: pair.verifier,
        });
        assertEquals(replay.status, 400);
        assertEquals(replay.body.details.reason, "code");

        const expired = await token({
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
          device_code: "NoSuchDeviceCodeNoSuchDeviceCodeNoSuchDevice",
        });
        assertEquals(expired.status, 400);
        assertEquals(expired.body.details.error, "expired_token");
      },
    );

    await t.step(
      "a redirect_uri that is not the loopback listener is a 400 page, no redirect",
      async () => {
        const start = new URL(`${inst.url}/auth/cli/authorize`);
        start.search = new URLSearchParams({
          redirect_uri: "https://evil.example/callback",
          state: "state-0123456789",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
          tenant: "acme",
        }).toString();
        const res = await web.request(start, { headers: { accept: "text/html" } });
        assertEquals(res.status, 400);
        assertEquals(res.location, null);
        assertStringIncludes(res.text, "only return to the cfgtool command on this computer");
      },
    );
  } finally {
    await inst.close();
  }
});
