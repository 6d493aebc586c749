/**
 * Versions, diff and rollback in real Chromium: a namespace admin signed
 * in by email lists the versions, compares the first two with the compare
 * form, opens the first and rolls back to it (message and confirmation),
 * and lands on the new version; each page passes axe-core at both widths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { chromiumPath, FIXTURE, startConsoleBrowser } from "./console_world.ts";

Deno.test({
  name: "a namespace admin compares two versions and rolls back to the first",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page, userId } = await world.signIn("nia@acme.test", { bypassCSP: true });
    await world.grant(userId, "namespace-admin");
    const second = {
      ...FIXTURE,
      "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
        "enabled = true",
        "enabled = false",
      ),
    };
    assertEquals(await world.push(second, "switch the new checkout off"), 2);

    await page.goto(`${world.inst.url}/ui/t/acme/ns/web/versions`);
    await page.locator("#version-table tbody tr", { hasText: "switch the new checkout off" })
      .waitFor();
    await world.audit(page, "versions");

    await page.getByLabel("From version").fill("1");
    await page.getByLabel("To version").fill("2");
    await page.getByRole("button", { name: "Compare", exact: true }).click();
    await page.waitForURL(/\/diff\?from=1&to=2$/);
    await page.getByText("environments.production.enabled: true → false").waitFor();
    await world.audit(page, "diff");

    await page.getByRole("link", { name: "version 1", exact: true }).click();
    await page.waitForURL(/\/versions\/1$/);
    await world.audit(page, "version");
    await page.getByLabel("Message: why roll back?").fill("the new checkout is fine after all");
    await page.getByLabel("I understand this makes a new version whose files equal version 1")
      .check();
    await page.getByRole("button", { name: "Roll back to version 1" }).click();
    await page.waitForURL(/\/versions\/3\?done=rollback&from=1$/);
    assertStringIncludes(
      await page.locator(".notice").first().textContent() ?? "",
      "Version 3 was made by a rollback to version 1",
    );

    const head = await world.inst.api(
      "GET",
      "/api/v1/tenants/acme/namespaces/web/versions?limit=1",
      world.inst.admin,
    );
    const latest = (head.body as { versions: { version: number; message: string }[] })
      .versions[0]!;
    assertEquals(latest.version, 3);
    assertEquals(latest.message, "the new checkout is fine after all");
  },
});
