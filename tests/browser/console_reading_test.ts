/**
 * Two ways into the console that the other browser tests do not take:
 * a person whose browser runs no JavaScript reads every page (the
 * console is server-rendered; htmx only adds to it), and the operator
 * opens the console with a one-time link made on the server host, sees
 * every tenant and creates one.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli } from "../e2e/installation.ts";
import { chromiumPath, startConsoleBrowser } from "./console_world.ts";

/** Read pages, and a text each must show. */
const PAGES: [string, string][] = [
  ["/ui/t/acme", "web"],
  ["/ui/t/acme/ns/web/env/production", "new-checkout"],
  ["/ui/t/acme/ns/web/env/staging?state=off", "banner-text"],
  ["/ui/t/acme/ns/web/flags/new-checkout?env=production", "eu-customers"],
  ["/ui/t/acme/ns/web/segments/eu-customers", "account.country"],
  ["/ui/t/acme/ns/web/versions", "first flags"],
  ["/ui/t/acme/ns/web/versions/1", "flags/new-checkout.toml"],
  ["/ui/t/acme/ns/web/diff?from=0&to=1", "new-checkout"],
  ["/ui/t/acme/tokens", "Tokens"],
  ["/ui/t/acme/people", "People"],
  ["/ui/t/acme/audit", "login.succeeded"],
];

Deno.test({
  name: "without JavaScript a person reads every console page and uses the playground",
  ignore: chromiumPath() === null,
  async fn(t) {
    await using world = await startConsoleBrowser();
    await t.step("every read page renders on the server", async () => {
      const { page } = await world.signIn("ana@acme.test", { javaScriptEnabled: false });
      for (const [path, text] of PAGES) {
        const res = await page.goto(`${world.inst.url}${path}`);
        assertEquals(res?.status(), 200, path);
        assertStringIncludes(await page.locator("main").innerText(), text, path);
      }
      // the search is a plain GET form
      await page.goto(`${world.inst.url}/ui/t/acme/ns/web/env/production`);
      await page.getByLabel("Search").fill("banner");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/q=banner/);
      assertEquals(await page.locator("#flag-table tbody tr").count(), 1);
      // the playground is a plain POST form
      await page.goto(`${world.inst.url}/ui/t/acme/ns/web/env/production/playground`);
      await page.getByLabel("Context (JSON)").fill(
        '{"targeting_key": "u1", "user": {"beta": true}}',
      );
      await page.getByRole("button", { name: /evaluate/i }).first().click();
      await page.waitForLoadState();
      assertStringIncludes(await page.locator("main").innerText(), "TARGETING_MATCH");
    });

    await t.step("the operator opens the console with a link and creates a tenant", async () => {
      const made = await runCli([
        "admin",
        "console-link",
        "--kv",
        world.inst.kvPath,
        "--user",
        "ops@example.com",
        "--url",
        world.inst.url,
      ]);
      assertEquals(made.code, 0, made.stderr);
      const link = made.stdout.trim().split("\n").at(-1)!;
      const context = await world.browser.newContext({ bypassCSP: true });
      const page = await context.newPage();
      await page.goto(link);
      await page.getByRole("button", { name: "Open the console" }).click();
      await page.waitForURL(`${world.inst.url}/ui`);
      await world.audit(page, "tenants");
      await page.getByLabel("Slug").fill("globex");
      await page.getByLabel("Description").fill("Globex Corporation");
      await page.getByRole("button", { name: "Create tenant" }).click();
      await page.waitForURL(`${world.inst.url}/ui/t/globex`);
      const tenant = await world.inst.api("GET", "/api/v1/tenants/globex", world.inst.admin);
      assertEquals(tenant.status, 200);
      await context.close();
    });
  },
});
