/**
 * OpenID Connect sign-in against real parts: a real `cfgtool serve`, a real
 * OpenID provider (npm `oidc-provider`, tests/e2e/oidc_provider.ts) whose own
 * login and consent forms a cookie-keeping client fills in, and the redirect
 * back to `/auth/oidc/callback`. A sign-in the tenant's policy admits ends
 * with a session cookie that `GET /api/v1/me` accepts; each refusal creates
 * no user and no session, leaves a `login.failed` audit entry with its
 * reason, and shows the person a readable page (400/403, no stack trace).
 *
 * How the forged ID tokens are made (nothing is hand-signed; every token is
 * issued by a real provider):
 * - another issuer: the tenant's issuer URL is a proxy (tests/e2e/oidc_proxy.ts)
 *   in front of provider A; provider B signs with the same key under its own
 *   issuer. The test signs in at B (with the nonce cfgtool chose) and the
 *   proxy hands B's ID token to cfgtool in place of A's at the token endpoint.
 * - another audience: the same proxy, and the ID token comes from A itself,
 *   issued to a second client of A.
 * - another key: provider C claims the tenant's issuer but signs with its own
 *   key; its token replaces A's (the proxy again).
 * - expired: the provider's clock runs two hours behind (its ID tokens live
 *   one hour), so the token it issues has already expired.
 */
import { assert, assertEquals } from "../assert.ts";
import { type Installation, startInstallation } from "./installation.ts";
import { generateSigningJwks, type OidcClient, startOidcProvider } from "./oidc_provider.ts";
import { startIssuerProxy } from "./oidc_proxy.ts";
import { obtainIdToken, type RelyingParty } from "./oidc_relying_party.ts";
import { signInAtProvider, WebClient, type WebResponse } from "./web_client.ts";

const CALLBACK = "/auth/oidc/callback";
const SECRET = "cfgtool-oidc-client-secret";
const ADA = {
  sub: "ada",
  email: "ada@acme.com",
  groups: ["eng", "flag-admins"],
  password: "ada-pw",
};
const BOB = { sub: "bob", email: "bob@acme.com", groups: ["eng"], password: "bob-pw" };
const EVE = { sub: "eve", email: "eve@other.example", groups: [], password: "eve-pw" };
const UNA = {
  sub: "una",
  email: "una@acme.com",
  email_verified: false,
  groups: [],
  password: "una-pw",
};
const USERS = [ADA, BOB, EVE, UNA];
const OTHER_CLIENT: RelyingParty = {
  client_id: "other-app",
  client_secret: "other-app-secret",
  redirect_uri: "http://127.0.0.1:9/other-app/callback", // never requested
};

/** An installation with tenant `acme` and the client secret in a file. */
interface Site {
  inst: Installation;
  /** `file:` reference to the client secret. */
  secretRef: string;
  /** cfgtool's registration at the provider. */
  client: OidcClient;
}

/** Runs `fn` on a fresh installation with tenant `acme`, then closes it. */
async function withSite(fn: (site: Site) => Promise<void>) {
  const inst = await startInstallation();
  try {
    const secretPath = `${inst.dir}/oidc-client-secret`;
    await Deno.writeTextFile(secretPath, `${SECRET}\n`);
    const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    await fn({
      inst,
      secretRef: `file:${secretPath}`,
      client: {
        client_id: "cfgtool",
        client_secret: SECRET,
        redirect_uris: [`${inst.url}${CALLBACK}`],
      },
    });
  } finally {
    await inst.close();
  }
}

/** Sets acme's policy: OIDC through `issuer`, acme.com only, `flag-admins` are admins. */
async function setPolicy(site: Site, issuer: string) {
  const res = await site.inst.api("PUT", "/api/v1/tenants/acme/login", site.inst.admin, {
    method: "oidc",
    issuer,
    client_id: site.client.client_id,
    client_secret_ref: site.secretRef,
    allowed_email_domains: ["acme.com"],
    admin_groups: ["flag-admins"],
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
}

/** A browser stand-in. */
function browser(): WebClient {
  return new WebClient({ accept: "text/html,application/xhtml+xml", "user-agent": "login-test" });
}

/** Opens cfgtool's sign-in for acme and returns the provider URL it redirects to. */
async function beginSignIn(site: Site, web: WebClient, next?: string): Promise<URL> {
  const query = new URLSearchParams({ tenant: "acme" });
  if (next !== undefined) query.set("next", next);
  const res = await web.request(`${site.inst.url}/auth/login?${query}`);
  assertEquals(res.status, 303, res.text);
  assert(res.location !== null);
  assert(res.location.origin !== site.inst.url, res.location.href);
  return res.location;
}

/** The `login.failed` / `login.succeeded` entries of acme's audit log. */
async function loginAudit(site: Site, type: "login.failed" | "login.succeeded") {
  const res = await site.inst.api(
    "GET",
    `/api/v1/audit?tenant=acme&type=${type}`,
    site.inst.admin,
  );
  assertEquals(res.status, 200, JSON.stringify(res.body));
  // deno-lint-ignore no-explicit-any
  return res.body.entries as any[];
}

/**
 * Signs `person` in at the provider of the tenant's policy and checks that
 * cfgtool refuses the callback as `expect` says.
 */
async function refusePerson(
  site: Site,
  person: { email: string; password: string },
  expect: { status: 400 | 403; reason: string; says: string },
): Promise<void> {
  const web = browser();
  const back = await signInAtProvider(web, await beginSignIn(site, web), {
    login: person.email,
    password: person.password,
  });
  await assertRefused(site, web, await web.request(back), expect);
}

/**
 * Signs in at the tenant's provider through the proxy, has the proxy hand
 * cfgtool `forged(nonce)` in place of the real ID token, and checks the
 * refusal.
 */
async function refuseSwappedToken(
  site: Site,
  proxy: { substituteNextIdToken(t: string): void; substitutions(): number },
  forged: (nonce: string) => Promise<string>,
  expect: { status: 400 | 403; reason: string; says: string },
): Promise<void> {
  const web = browser();
  const authorize = await beginSignIn(site, web);
  const token = await forged(authorize.searchParams.get("nonce")!);
  const back = await signInAtProvider(web, authorize, {
    login: ADA.email,
    password: ADA.password,
  });
  proxy.substituteNextIdToken(token);
  const res = await web.request(back);
  assertEquals(proxy.substitutions(), 1);
  await assertRefused(site, web, res, expect);
}

/**
 * Checks a refusal: the status, a readable page with `says` and no stack
 * trace, no session cookie, no user, and a `login.failed` entry with `reason`.
 */
async function assertRefused(
  site: Site,
  web: WebClient,
  res: WebResponse,
  expected: { status: 400 | 403; reason: string; says: string },
) {
  assertEquals(res.status, expected.status, res.text);
  assert(
    res.headers.get("content-type")?.startsWith("text/html"),
    res.headers.get("content-type")!,
  );
  assert(res.text.includes("Sign-in failed"), res.text);
  assert(res.text.includes(expected.says), res.text);
  for (const leak of [/\bat .*:\d+:\d+/, /Error:/, /OAUTH_/, /oauth4webapi/, /node_modules/]) {
    assert(!leak.test(res.text), `page leaks ${leak}: ${res.text}`);
  }
  assertEquals(await web.cookie(site.inst.url, "cfgtool_session"), null);
  const users = await site.inst.api("GET", "/api/v1/users", site.inst.admin);
  assertEquals(users.body.users, [], "a refused sign-in made a user");
  assertEquals(await loginAudit(site, "login.succeeded"), []);
  const failed = await loginAudit(site, "login.failed");
  assertEquals(failed.map((e) => e.details.reason), [expected.reason]);
  assertEquals(failed[0].details.method, "oidc");
  assertEquals(failed[0].result, "failure");
  const logs = await site.inst.server.logsSettled();
  const refusal = logs.split("\n").filter((l) => l.includes("oidc sign-in refused"));
  assertEquals(refusal.length, 1, logs);
  assertEquals(JSON.parse(refusal[0]!).reason, expected.reason);
}

Deno.test("OIDC: signing in through the provider's forms gives a session cookie; /me shows the user and tenant", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    const web = browser();
    const authorize = await beginSignIn(site, web, "/api/v1/me");
    assertEquals(authorize.searchParams.get("code_challenge_method"), "S256");
    assertEquals(authorize.searchParams.get("redirect_uri"), `${site.inst.url}${CALLBACK}`);
    assert(authorize.searchParams.get("state"));
    assert(authorize.searchParams.get("nonce"));
    const back = await signInAtProvider(web, authorize, {
      login: ADA.email,
      password: ADA.password,
    });
    assertEquals(`${back.origin}${back.pathname}`, `${site.inst.url}${CALLBACK}`);
    const landed = await web.request(back);
    assertEquals(landed.status, 303, landed.text);
    assertEquals(landed.location?.href, `${site.inst.url}/api/v1/me`);
    const cookie = await web.cookie(site.inst.url, "cfgtool_session");
    assert(cookie?.startsWith("ses_"), String(cookie));
    const setCookie = landed.headers.getSetCookie().find((c) => c.startsWith("cfgtool_session="))!;
    assert(/HttpOnly/i.test(setCookie) && /SameSite=Lax/i.test(setCookie), setCookie);

    const me = await web.request(landed.location!);
    assertEquals(me.status, 200, me.text);
    const principal = JSON.parse(me.text).principal;
    assertEquals(principal.type, "user");
    assertEquals(principal.user.email, ADA.email);
    assert(principal.user.id.startsWith("usr_"), principal.user.id);
    assertEquals(principal.tenants, [{ slug: "acme", role: "admin" }]);
    assertEquals(principal.session.login_method, "oidc");

    const [entry] = await loginAudit(site, "login.succeeded");
    assertEquals(entry.details.method, "oidc");
    assertEquals(await loginAudit(site, "login.failed"), []);

    // ada is one of acme's people now: a tenant admin through her group
    const people = await site.inst.api("GET", "/api/v1/users?tenant=acme", site.inst.admin);
    assertEquals(people.status, 200, JSON.stringify(people.body));
    assertEquals(people.body.users.map((u: { email: string }) => u.email), [ADA.email]);
    const [ada] = people.body.users;
    assertEquals([ada.id, ada.last_sign_in_method, ada.last_sign_in_client], [
      principal.user.id,
      "oidc",
      "browser",
    ]);
    assertEquals(ada.last_sign_in_at, principal.session.created_at);
    assertEquals(ada.roles, [{ role: "tenant_admin", via: "group", groups: ["flag-admins"] }]);
  });
});

Deno.test("OIDC: a person outside admin_groups signs in as a member", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    const web = browser();
    const back = await signInAtProvider(web, await beginSignIn(site, web), {
      login: BOB.email,
      password: BOB.password,
    });
    const landed = await web.request(back);
    assertEquals(landed.status, 303, landed.text);
    assertEquals(landed.location?.pathname, "/auth/signed-in");
    const me = JSON.parse((await web.request(`${site.inst.url}/api/v1/me`)).text);
    assertEquals(me.principal.user.email, BOB.email);
    assertEquals(me.principal.tenants, [{ slug: "acme", role: "member" }]);
  });
});

Deno.test("OIDC refuses a callback whose state is not the one this browser started", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    const web = browser();
    const back = await signInAtProvider(web, await beginSignIn(site, web), {
      login: ADA.email,
      password: ADA.password,
    });
    back.searchParams.set("state", "forged-state-value-0123456789");
    const res = await web.request(back);
    await assertRefused(site, web, res, {
      status: 403,
      reason: "state",
      says: "does not match a sign-in in progress",
    });
  });
});

Deno.test("OIDC refuses a replayed callback: the code and state work once", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    const web = browser();
    const back = await signInAtProvider(web, await beginSignIn(site, web), {
      login: ADA.email,
      password: ADA.password,
    });
    assertEquals((await web.request(back)).status, 303);
    // The same callback URL again, from the same browser and from another one.
    for (const replayer of [web, browser()]) {
      const res = await replayer.request(back);
      assertEquals(res.status, 403, res.text);
      assert(res.text.includes("used already"), res.text);
    }
    assertEquals(await browser().cookie(site.inst.url, "cfgtool_session"), null);
    assertEquals((await loginAudit(site, "login.succeeded")).length, 1);
    const failed = await loginAudit(site, "login.failed");
    assertEquals(failed.map((e) => e.details.reason), ["code", "code"]);
  });
});

Deno.test("OIDC refuses an ID token whose nonce is not the one cfgtool sent", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    const web = browser();
    const authorize = await beginSignIn(site, web);
    authorize.searchParams.set("nonce", "a-nonce-cfgtool-never-issued");
    const back = await signInAtProvider(web, authorize, {
      login: ADA.email,
      password: ADA.password,
    });
    const res = await web.request(back);
    await assertRefused(site, web, res, {
      status: 403,
      reason: "nonce",
      says: "does not belong to the sign-in this browser started",
    });
  });
});

Deno.test("OIDC refuses an ID token from another issuer (same signing key, delivered at the token endpoint)", async () => {
  await withSite(async (site) => {
    const jwks = await generateSigningJwks();
    await using proxy = await startIssuerProxy();
    await using op = await startOidcProvider({
      clients: [site.client],
      users: USERS,
      jwks,
      issuer: proxy.url,
    });
    proxy.forwardTo(op.url);
    await using other = await startOidcProvider({
      clients: [{ ...site.client, redirect_uris: [OTHER_CLIENT.redirect_uri] }],
      users: USERS,
      jwks,
    });
    await setPolicy(site, proxy.url);
    await refuseSwappedToken(site, proxy, (nonce) =>
      obtainIdToken(
        other.issuer,
        { ...OTHER_CLIENT, client_id: site.client.client_id, client_secret: SECRET },
        { login: ADA.email, password: ADA.password },
        nonce,
      ), { status: 403, reason: "issuer", says: "issued by another identity provider" });
  });
});

Deno.test("OIDC refuses an ID token issued by the tenant's issuer to another client", async () => {
  await withSite(async (site) => {
    await using proxy = await startIssuerProxy();
    await using op = await startOidcProvider({
      clients: [site.client, {
        client_id: OTHER_CLIENT.client_id,
        client_secret: OTHER_CLIENT.client_secret,
        redirect_uris: [OTHER_CLIENT.redirect_uri],
      }],
      users: USERS,
      issuer: proxy.url,
    });
    proxy.forwardTo(op.url);
    await setPolicy(site, proxy.url);
    await refuseSwappedToken(
      site,
      proxy,
      (nonce) =>
        obtainIdToken(proxy.url, OTHER_CLIENT, { login: ADA.email, password: ADA.password }, nonce),
      { status: 403, reason: "audience", says: "issued for another application" },
    );
  });
});

Deno.test("OIDC refuses an ID token not signed with the issuer's keys", async () => {
  await withSite(async (site) => {
    await using proxy = await startIssuerProxy();
    await using op = await startOidcProvider({
      clients: [site.client],
      users: USERS,
      issuer: proxy.url,
    });
    proxy.forwardTo(op.url);
    // Claims the tenant's issuer, signs with a key of its own.
    await using impostor = await startOidcProvider({
      clients: [{ ...site.client, redirect_uris: [OTHER_CLIENT.redirect_uri] }],
      users: USERS,
      issuer: proxy.url,
    });
    await setPolicy(site, proxy.url);
    await refuseSwappedToken(site, proxy, (nonce) =>
      obtainIdToken(
        proxy.url,
        { ...OTHER_CLIENT, client_id: site.client.client_id, client_secret: SECRET },
        { login: ADA.email, password: ADA.password },
        nonce,
        impostor.url,
      ), { status: 403, reason: "signature", says: "is not signed by this tenant" });
  });
});

Deno.test("OIDC refuses an expired ID token (the provider's clock is two hours behind)", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({
      clients: [site.client],
      users: USERS,
      clockOffsetMs: -2 * 3600_000,
    });
    await setPolicy(site, op.issuer);
    await refusePerson(site, ADA, { status: 403, reason: "expired", says: "has expired" });
  });
});

Deno.test("OIDC refuses a verified email outside the tenant's allowed domains", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    await refusePerson(site, EVE, {
      status: 403,
      reason: "email_domain",
      says: "does not admit eve@other.example",
    });
    const [entry] = await loginAudit(site, "login.failed");
    assertEquals(entry.details.email_domain, "other.example");
  });
});

Deno.test("OIDC refuses an email the provider has not verified", async () => {
  await withSite(async (site) => {
    await using op = await startOidcProvider({ clients: [site.client], users: USERS });
    await setPolicy(site, op.issuer);
    await refusePerson(site, UNA, {
      status: 403,
      reason: "email_unverified",
      says: "has not verified the email address una@acme.com",
    });
  });
});
