/**
 * The people page and the audit log in real Chromium: a tenant admin
 * makes a person who signed in an admin of a namespace with the page's
 * form, sees them listed, then finds the sign-ins and that change in the
 * audit log with the type filter; both pages pass axe-core at both widths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { chromiumPath, startConsoleBrowser } from "./console_world.ts";

Deno.test({
  name: "a tenant admin adds a namespace admin and finds the sign-ins in the audit log",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const bea = await world.signIn("bea@acme.test"); // people exist after their first sign-in
    await bea.context.close();
    const { page, userId } = await world.signIn("ada@acme.test", { bypassCSP: true });
    await world.grant(userId, "tenant-admin");

    await page.goto(`${world.inst.url}/ui/t/acme/people`);
    await world.audit(page, "people");
    const field = page.getByLabel("Add an admin of web (email)");
    await field.fill("bea@acme.test");
    await page.locator("form", { has: field }).getByRole("button", { name: "Add" }).click();
    await page.waitForURL(/done=added/);
    assertStringIncludes(
      await page.getByRole("status").filter({ hasText: "bea@acme.test" }).textContent() ?? "",
      "bea@acme.test is an admin of namespace web",
    );
    const web = page.locator('section[aria-labelledby="ns-web"] table');
    assertStringIncludes(await web.textContent() ?? "", "bea@acme.test");
    const api = await page.request.get(
      `${world.inst.url}/api/v1/tenants/acme/namespaces/web/admins`,
    );
    assertEquals(
      ((await api.json()).admins as { user_id: string }[]).some((a) => a.user_id === bea.userId),
      true,
    );

    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", {
      name: "Audit log",
    }).click();
    await page.waitForURL(/\/audit$/);
    await world.audit(page, "audit");
    await page.getByLabel("Type", { exact: true }).fill("login.succeeded");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/type=login.succeeded/);
    const types = await page.locator("table.audit tbody td:nth-child(2) code").allTextContents();
    assertEquals(types.length >= 2, true, types.join());
    assertEquals(types.every((t) => t === "login.succeeded"), true, types.join());
    const actors = await page.locator("table.audit tbody td:nth-child(3)").allTextContents();
    assertEquals(actors.slice(0, 2).map((a) => a.trim()), ["ada@acme.test", "bea@acme.test"]);

    // the admin ada added with the form is in the log too, by her, about bea
    await page.getByLabel("Type", { exact: true }).fill("admin.added");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/type=admin.added/);
    const added = page.locator("table.audit tbody tr").first();
    assertEquals((await added.locator("td:nth-child(3)").textContent())?.trim(), "ada@acme.test");
    assertStringIncludes(
      await added.locator("td:nth-child(4)").textContent() ?? "",
      "namespace admin bea@acme.test",
    );
  },
});
