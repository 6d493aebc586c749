/**
 * One flag, one segment and the evaluation playground in real Chromium:
 * a member finds out why a user gets a variation: the flag page shows the
 * rules and their segments, the segment page what its predicates read, and
 * the playground, for a typed context, the value, the reason and the rule
 * with its segment. Each page passes axe-core at both widths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { chromiumPath, startConsoleBrowser } from "./console_world.ts";

Deno.test({
  name: "a member finds out why a user gets a variation: flag page, segment, playground",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page } = await world.signIn("ana@acme.test", { bypassCSP: true });
    const base = `${world.inst.url}/ui/t/acme/ns/web`;

    await page.goto(`${base}/flags/new-checkout?env=production`);
    await world.audit(page, "flag");
    const rules = page.locator("#rules > li");
    assertEquals(await rules.count(), 2);
    assertStringIncludes(await rules.nth(1).textContent() ?? "", "on 25%");
    assertEquals(await page.locator("#change-links").count(), 0); // a member changes nothing

    await rules.nth(1).getByRole("link", { name: "eu-customers" }).click();
    await page.waitForURL(/\/segments\/eu-customers$/);
    await world.audit(page, "segment");
    assertStringIncludes(await page.locator("#users").textContent() ?? "", "new-checkout");

    await page.goto(`${base}/env/production/playground`);
    const box = page.getByLabel("Context (JSON)");
    assertEquals(JSON.parse(await box.inputValue()).user, { beta: true }); // the skeleton
    const context = '{"targeting_key": "ana", "user": {"beta": true}}';
    await box.fill(context);
    await page.getByRole("button", { name: "Evaluate in production" }).click();
    await page.locator("#results").waitFor();
    const row = page.locator("#results tbody tr", { hasText: "new-checkout" });
    const cells = await row.locator("th, td").allTextContents();
    assertEquals(cells.slice(0, 4).map((c) => c.trim()), [
      "new-checkout",
      "true",
      "on",
      "TARGETING_MATCH",
    ]);
    assertEquals(cells[4]!.trim(), "rule 1: segment beta-testers, serves on");
    assertEquals(await box.inputValue(), context); // the person's text is kept
    await world.audit(page, "playground");

    // the same text in staging: the banner is switched off there
    await page.getByRole("button", { name: "Evaluate in staging" }).click();
    await page.waitForURL(/\/env\/staging\/playground$/);
    const banner = page.locator("#results tbody tr", { hasText: "banner-text" });
    assertStringIncludes(await banner.textContent() ?? "", "DISABLED");
    assertEquals(await page.getByLabel("Context (JSON)").inputValue(), context);
  },
});
