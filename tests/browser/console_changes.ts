/**
 * Change requests in real Chromium: steps of tests/browser/console_test.ts
 * in its one world, on a namespace of their own, acme/orders (it counts
 * versions), made with the fixture. Its production is protected (one
 * approval). A namespace admin (`nia@acme.test`) turns the new checkout off
 * in production with a quick change: the commit is refused, the preview
 * says why, and she proposes it for review; a tenant admin
 * (`ada@acme.test`) approves it on the request's page; nia applies it, and
 * version 2 holds it. The Changes page and the request's page (as the
 * author, then as the reviewer) pass axe-core at 390 and 1280 px.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import type { ConsoleBrowser } from "./console_world.ts";

const API = "/api/v1/tenants/acme/namespaces/orders";

/**
 * A change request from proposal to version: the steps above, in `world`.
 *
 * @example
 * ```ts ignore
 * await t.step(
 *   "an author proposes a protected change, an admin approves it, the author applies it",
 *   (t) => changeRequest(t, world),
 * );
 * ```
 */
export async function changeRequest(t: Deno.TestContext, world: ConsoleBrowser): Promise<void> {
  await world.namespace("orders", "Orders");
  const url = world.inst.url;
  const protectedEnv = await world.inst.api("PUT", `${API}/protection`, world.inst.admin, {
    environments: { production: { required_approvals: 1 } },
  });
  assertEquals(protectedEnv.status, 200, JSON.stringify(protectedEnv.body));
  const nia = () => world.person("nia@acme.test", { bypassCSP: true });
  const ada = () => world.person("ada@acme.test", { bypassCSP: true });
  let request = "";

  await t.step("the author's quick change is refused and proposed for review", async () => {
    const { page, userId } = await nia();
    await world.grant(userId, "namespace-admin", "orders");
    await page.goto(
      `${url}/ui/t/acme/ns/orders/flags/new-checkout/change?env=production&kind=toggle`,
    );
    await page.getByLabel("Message").fill("stop the new checkout");
    await page.getByRole("button", { name: "Turn off in production" }).click();
    await page.getByRole("button", { name: "Commit version" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assertStringIncludes(await alert.textContent() ?? "", "protected environment production");
    await page.getByRole("button", { name: "Propose for review" }).click();
    await page.waitForURL(/\/ui\/t\/acme\/ns\/orders\/changes\/cr_[0-9A-Z]{26}\?done=opened$/);
    request = new URL(page.url()).pathname;
    await page.getByRole("heading", { name: "Change request: stop the new checkout" }).waitFor();
    assertStringIncludes(
      await page.getByRole("status").filter({ hasText: "The change request is open" })
        .textContent() ?? "",
      "It needs 1 approval",
    );
    assertStringIncludes(
      await page.locator(".diff .add").textContent() ?? "",
      "+enabled = false",
    );
    await world.audit(page, "change-request");

    await page.getByRole("link", { name: "Changes", exact: true }).click();
    await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/orders/changes");
    await page.locator("#change-table tbody tr", { hasText: "stop the new checkout" }).waitFor();
    await world.audit(page, "changes");
  });

  await t.step("a tenant admin approves it on the request's page", async () => {
    const { page, userId } = await ada();
    await world.grant(userId, "tenant-admin");
    await page.goto(`${url}${request}`);
    await world.audit(page, "change-request-review");
    await page.getByLabel("Comment (optional)").fill("fine by me");
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await page.waitForURL((u) => u.search === "?done=approved");
    await page.getByText("You approved this change request.").waitFor();
    assertStringIncludes(
      await page.locator('section[aria-labelledby="review-heading"]').textContent() ?? "",
      "fine by me",
    );
  });

  await t.step("the author applies it, and version 2 holds it", async () => {
    const { page } = await nia();
    await page.goto(`${url}${request}`);
    await page.getByRole("button", { name: "Apply now" }).click();
    await page.waitForURL((u) => u.search === "?done=applied");
    await page.getByRole("link", { name: "version 2" }).first().click();
    await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/orders/versions/2");
    await page.getByRole("heading", { name: "Version 2 of orders" }).waitFor();
    const head = await world.inst.api("GET", `${API}/versions?limit=1`, world.inst.admin);
    const latest = (head.body as { versions: { version: number; message: string }[] })
      .versions[0]!;
    assertEquals(latest.version, 2);
    assertStringIncludes(latest.message, "stop the new checkout");
    const evaluated = await world.inst.api(
      "POST",
      `${API}/environments/production/evaluate`,
      world.inst.admin,
      { flag: "new-checkout", context: { targeting_key: "u1" } },
    );
    assertEquals((evaluated.body as { reason: string }).reason, "DISABLED");
  });
}
