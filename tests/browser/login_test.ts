/**
 * Signing in with OpenID Connect in real Chromium: a real `cfgtool serve`,
 * a real OpenID provider (npm `oidc-provider`) whose own login and consent
 * pages the browser fills in, the redirect back, the session cookie, and
 * signing out. Skipped (saying why) where no Chromium binary exists.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import { startOidcProvider } from "../e2e/oidc_provider.ts";
import { chromiumPath, launchChromium } from "./chromium.ts";

const path = chromiumPath();
const SECRET = "browser-test-client-secret";

Deno.test({
  name: "a person signs in through the OIDC provider in Chromium, reads /api/v1/me, and signs out",
  ignore: path === null,
  async fn() {
    const inst = await startInstallation();
    try {
      const secretFile = `${inst.dir}/oidc-secret`;
      await Deno.writeTextFile(secretFile, SECRET);
      assertEquals(
        (await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status,
        201,
      );
      await using op = await startOidcProvider({
        clients: [{
          client_id: "cfgtool",
          client_secret: SECRET,
          redirect_uris: [`${inst.url}/auth/oidc/callback`],
        }],
        users: [{ sub: "ada", email: "ada@acme.com", groups: ["eng"], password: "ada-pw" }],
      });
      const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
        method: "oidc",
        issuer: op.issuer,
        client_id: "cfgtool",
        client_secret_ref: `file:${secretFile}`,
        allowed_email_domains: ["acme.com"],
      });
      assertEquals(policy.status, 200, JSON.stringify(policy.body));

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
