/**
 * The first run in real Chromium: a fresh `cfgtool serve` on loopback with
 * a temp-dir KV prints its one-time console link; the browser, sent to
 * sign in, reads how to get in on a new installation; it opens the printed
 * link, gives the operator's email, lands in the console as the operator
 * and creates the first tenant with the console's form. The sign-in page
 * of the new installation and the link's confirm page pass axe-core at
 * both widths. Skipped (saying why) where no Chromium binary exists.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startServer } from "../e2e/server_process.ts";
import { chromiumPath, launchChromium } from "./chromium.ts";
import { auditPage } from "./axe_audit.ts";

const path = chromiumPath();

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
