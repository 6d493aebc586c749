/**
 * Signing in with OpenID Connect in real Chromium: a real `cfgtool serve`,
 * a real OpenID provider (npm `oidc-provider`) whose own login and consent
 * pages the browser fills in, the redirect back, the session cookie, and
 * signing out. Skipped (saying why) where no Chromium binary exists.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import { oidcTenant } from "../e2e/oidc_tenant.ts";
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
