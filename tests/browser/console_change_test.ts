/**
 * Quick changes in real Chromium: a namespace admin turns new-checkout
 * off in production (form, preview, commit, the new version's page), then
 * a push from outside lands between their preview and their commit, and
 * the conflict page shows the other change with their message kept. The
 * form, the preview and the conflict page pass axe-core at both widths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { chromiumPath, FIXTURE, startConsoleBrowser } from "./console_world.ts";

Deno.test({
  name: "a namespace admin commits a quick change, then meets a push made in between",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page, userId } = await world.signIn("nia@acme.test", { bypassCSP: true });
    await world.grant(userId, "namespace-admin");
    const base = `${world.inst.url}/ui/t/acme/ns/web/flags/new-checkout/change`;

    await page.goto(`${base}?env=production&kind=toggle`);
    await world.audit(page, "change");
    await page.getByLabel("Message").fill("stop the new checkout");
    await page.getByRole("button", { name: "Turn off in production" }).click();
    await page.getByRole("heading", { name: "Preview: change new-checkout" }).waitFor();
    assertStringIncludes(await page.locator(".diff .add").textContent() ?? "", "+enabled = false");
    await world.audit(page, "change-preview");
    await page.getByRole("button", { name: "Commit version" }).click();
    await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/web/versions/2");

    await page.goto(`${base}?env=production&kind=weights`);
    await page.getByLabel("Weight of on").fill("50");
    await page.getByLabel("Weight of off").fill("50");
    await page.getByLabel("Message").fill("half and half");
    await page.getByRole("button", { name: "Preview" }).click();
    await page.getByRole("heading", { name: "Preview: change new-checkout" }).waitFor();
    const theirs = await world.push({
      ...FIXTURE,
      "flags/banner-text.toml": FIXTURE["flags/banner-text.toml"]!.replace(
        "Winter sale",
        "Spring sale",
      ),
    }, "spring banner");
    assertEquals(theirs, 3);
    await page.getByRole("button", { name: "Commit version" }).click();
    await page.getByRole("heading", { name: "Someone changed this since you opened it" }).waitFor();
    const main = await page.locator("main").textContent() ?? "";
    assertStringIncludes(main, "spring banner");
    assertStringIncludes(main, "flags/banner-text.toml");
    assertStringIncludes(main, "half and half");
    assertEquals(await page.locator('input[name="message"]').inputValue(), "half and half");
    await world.audit(page, "change-conflict");
    await page.getByRole("button", { name: "Commit version" }).click();
    await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/web/versions/4");
  },
});
