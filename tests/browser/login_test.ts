/**
 * Getting in, in real Chromium, one file (one test process loading the
 * browser driver once), each test with a server of its own:
 *
 * Signing in with OpenID Connect: a real `cfgtool serve`, a real OpenID
 * provider (npm `oidc-provider`) whose own login and consent pages the
 * browser fills in, the redirect back, the session cookie, and signing
 * out.
 *
 * Every sign-in page of the email login passes axe-core at both widths.
 *
 * Signing in with SAML, as in production: the identity provider
 * (tests/e2e/saml_idp.ts) is on `localhost` and cfgtool on `127.0.0.1`,
 * two sites, so the provider's form post to cfgtool's consumer service is
 * cross-site and carries no SameSite=Lax cookie. The sign-in must still
 * finish: the consumer service checks the response and redirects to
 * `/auth/saml/finish`, a top-level navigation that carries the browser's
 * flow cookie.
 *
 * The first run: a fresh `cfgtool serve` on loopback with a temp-dir KV
 * prints its one-time console link; the browser, sent to sign in, reads
 * how to get in on a new installation; it opens the printed link, gives
 * the operator's email, lands in the console as the operator and creates
 * the first tenant with the console's form. The sign-in page of the new
 * installation and the link's confirm page pass axe-core at both widths.
 *
 * Skipped (saying why) where no Chromium binary exists.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import { oidcTenant } from "../e2e/oidc_tenant.ts";
import { startSamlIdp } from "../e2e/saml_idp.ts";
import { startServer } from "../e2e/server_process.ts";
import { chromiumPath, launchChromium } from "./chromium.ts";
import { parseMail, signInSecrets } from "../e2e/smtp_capture.ts";
import { auditPage } from "./axe_audit.ts";

const path = chromiumPath();
Deno.test({
  name: "a person signs in through the OIDC provider in Chromium, reads /api/v1/me, and signs out",
  ignore: path === null,
  async fn() {
    const inst = await startInstallation();
    try {
      await using op = await oidcTenant(inst, [
        { sub: "ada", email: "ada@acme.com", groups: ["eng"], password: "ada-pw" },
      ]);

      await using browser = await launchChromium(path!);
      const page = await browser.newPage();
      await page.goto(`${inst.url}/auth/login`);
      await page.getByLabel("Tenant").fill("acme");
      await page.getByRole("button", { name: "Continue" }).click();
      // The provider's own interaction pages (oidc-provider's development forms).
      await page.waitForURL((u) => u.origin === new URL(op.url).origin);
      await page.locator('input[name="login"]').fill("ada@acme.com");
      await page.locator('input[name="password"]').fill("ada-pw");
      await page.locator('button[type="submit"]').click();
      await page.waitForLoadState();
      if (new URL(page.url()).origin === new URL(op.url).origin) {
        await page.locator('button[type="submit"]').click(); // consent
      }
      await page.waitForURL(`${inst.url}/auth/signed-in`);
      assertStringIncludes(await page.textContent("main") ?? "", "ada@acme.com");

      const cookies = await page.context().cookies(inst.url);
      const session = cookies.find((c) => c.name === "cfgtool_session");
      assert(session !== undefined, JSON.stringify(cookies.map((c) => c.name)));
      assertEquals([session.httpOnly, session.sameSite], [true, "Lax"]);

      const me = await page.goto(`${inst.url}/api/v1/me`);
      const body = await me!.json();
      assertEquals(body.principal.user.email, "ada@acme.com");
      assertEquals(body.principal.tenants, [{ slug: "acme", role: "member" }]);

      await page.goto(`${inst.url}/auth/signed-in`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForLoadState();
      assertStringIncludes(await page.textContent("main") ?? "", "Signed out");
      const after = await page.goto(`${inst.url}/api/v1/me`);
      assertEquals(after!.status(), 401);
    } finally {
      await inst.close();
    }
  },
});

Deno.test({
  name:
    "every sign-in page passes axe-core with no serious or critical violation, at 390 and 1280 px",
  ignore: path === null,
  async fn() {
    const inst = await startInstallation();
    try {
      assertEquals(
        (await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status,
        201,
      );
      const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
        method: "email",
        domains: ["acme.test"],
      });
      assertEquals(policy.status, 200);
      await using browser = await launchChromium(path!);
      // axe is injected as a script, which the pages' CSP would refuse: bypass it for the audit.
      const context = await browser.newContext({ bypassCSP: true });
      const page = await context.newPage();
      const audit = (what: string) => auditPage(page, what);
      await page.goto(`${inst.url}/auth/login`);
      await audit("the tenant page");
      await page.getByLabel("Tenant").fill("acme");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/tenant=acme/);
      await audit("the email form");
      const outbox = `${inst.dir}/outbox`;
      const before = mailFiles(outbox);
      await page.getByLabel(/email/i).fill("ana@acme.test");
      await page.getByRole("button").first().click();
      await page.waitForURL(/\/auth\/email\/start/);
      await audit("the check-your-mail page");
      const link = await mailedLink(outbox, before);
      await page.goto(link.href);
      await audit("the link's confirm page");
      await page.getByRole("button").first().click();
      await page.waitForURL(`${inst.url}/auth/signed-in`);
      await audit("the signed-in page");
      await context.close();
    } finally {
      await inst.close();
    }
  },
});

function mailFiles(outbox: string): Set<string> {
  try {
    return new Set([...Deno.readDirSync(outbox)].map((e) => e.name));
  } catch {
    return new Set();
  }
}

/** The sign-in link of the first message not in `before`. */
async function mailedLink(outbox: string, before: Set<string>): Promise<URL> {
  const end = Date.now() + 15_000;
  while (Date.now() < end) {
    const fresh = [...mailFiles(outbox)].find((n) => n.endsWith(".eml") && !before.has(n));
    if (fresh !== undefined) {
      return signInSecrets((await parseMail(await Deno.readFile(`${outbox}/${fresh}`))).text).link;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no sign-in mail in the outbox");
}

Deno.test({
  name:
    "a person signs in through a SAML identity provider on another site in Chromium, and reads /api/v1/me",
  ignore: path === null,
  async fn() {
    const inst = await startInstallation();
    try {
      await using idp = await startSamlIdp({
        users: [{ email: "ada@acme.com", password: "ada-pw", groups: ["eng"] }],
        host: "localhost",
      });
      assertEquals(new URL(idp.url).hostname, "localhost");
      assertEquals(new URL(inst.url).hostname, "127.0.0.1");
      const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
      assertEquals(created.status, 201, JSON.stringify(created.body));
      const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
        method: "saml",
        idp_metadata_xml: idp.metadata,
        allowed_email_domains: ["acme.com"],
      });
      assertEquals(policy.status, 200, JSON.stringify(policy.body));

      await using browser = await launchChromium(path!);
      const page = await browser.newPage();
      // The cookies Chromium sends to cfgtool's consumer service and finishing step.
      const sent = new Map<string, Promise<string>>();
      page.on("request", (req) => {
        const p = new URL(req.url()).pathname;
        if (p === "/auth/saml/acs" || p === "/auth/saml/finish") {
          sent.set(`${req.method()} ${p}`, req.allHeaders().then((h) => h["cookie"] ?? ""));
        }
      });

      await page.goto(`${inst.url}/auth/login`);
      await page.getByLabel("Tenant").fill("acme");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL((u) => u.origin === idp.url);
      await page.getByLabel("Username").fill("ada@acme.com");
      await page.getByLabel("Password").fill("ada-pw");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(`${inst.url}/auth/signed-in`);
      assertStringIncludes(await page.textContent("main") ?? "", "ada@acme.com");

      // The cross-site post came without the flow cookie; the redirect after it brought it.
      const acs = await sent.get("POST /auth/saml/acs");
      const finish = await sent.get("GET /auth/saml/finish");
      assert(acs !== undefined && finish !== undefined, JSON.stringify([...sent.keys()]));
      assert(!acs.includes("cfgtool_saml="), `the cross-site post carried ${acs}`);
      assert(finish.includes("cfgtool_saml="), `the finishing step carried ${finish}`);

      const cookies = await page.context().cookies(inst.url);
      const session = cookies.find((c) => c.name === "cfgtool_session");
      assert(session !== undefined, JSON.stringify(cookies.map((c) => c.name)));
      assertEquals([session.httpOnly, session.sameSite], [true, "Lax"]);

      const me = await page.goto(`${inst.url}/api/v1/me`);
      const body = await me!.json();
      assertEquals(body.principal.user.email, "ada@acme.com");
      assertEquals(body.principal.session.login_method, "saml");
      assertEquals(body.principal.tenants, [{ slug: "acme", role: "member" }]);
    } finally {
      await inst.close();
    }
  },
});

/** The link of the server's first-run line, once printed. */
async function printedLink(stdout: () => string): Promise<string> {
  const end = Date.now() + 20_000;
  while (true) {
    const m = /^new installation: .*: (http:\/\/\S+\/auth\/operator\?code=\w+)$/m.exec(stdout());
    if (m) return m[1]!;
    if (Date.now() > end) throw new Error(`no first-run line in:\n${stdout()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

Deno.test({
  name: "the first run in Chromium: the printed link opens the console, which creates a tenant",
  ignore: path === null,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-first-run-" });
    const server = await startServer({ kv: `${dir}/kv.sqlite3` });
    try {
      const link = await printedLink(server.stdout);
      await using browser = await launchChromium(path!);
      const context = await browser.newContext({ bypassCSP: true });
      const page = await context.newPage();

      // Someone who opens the console first is told how to get in.
      await page.goto(`${server.url}/ui`);
      await page.waitForURL((u) => u.pathname === "/auth/login");
      await page.getByText("This installation has no tenant yet").waitFor();
      assertStringIncludes(await page.textContent("main") ?? "", "cfgtool admin console-link");
      await auditPage(page, "the sign-in page of a new installation");

      await page.goto(link);
      await page.getByRole("heading", { name: "Open the console as operator" }).waitFor();
      await auditPage(page, "the first-run link's confirm page");
      await page.getByLabel("Your email").fill("ops@example.com");
      await page.getByRole("button", { name: "Open the console" }).click();
      await page.waitForURL((u) => u.pathname === "/ui");
      await page.getByText("No tenant yet.").waitFor();

      await page.getByLabel("Slug").fill("acme");
      await page.getByLabel("Description").fill("ACME Corp");
      await page.getByRole("button", { name: "Create tenant" }).click();
      await page.waitForURL((u) => u.pathname === "/ui/t/acme");

      const me = await (await page.request.get(`${server.url}/api/v1/me`)).json();
      assertEquals(me.principal.user.email, "ops@example.com");
      assertEquals(me.principal.session.login_method, "operator");
      const tenant = await page.request.get(`${server.url}/api/v1/tenants/acme`);
      assertEquals(tenant.status(), 200);
      assertEquals((await tenant.json()).tenant.description, "ACME Corp");

      // The link worked once.
      const again = await page.goto(link);
      assertEquals(again!.status(), 403);
      assertStringIncludes(await page.textContent("main") ?? "", "used already");
      assert(!server.logs().includes(new URL(link).searchParams.get("code")!));
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
