/**
 * Service tokens in real Chromium: a tenant admin creates a token, sees
 * its secret exactly once and copies it, finds it gone from the token's
 * page, then revokes the token with the confirmation box, after which the
 * API refuses the secret. The pages pass axe-core at both widths.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { chromiumPath, startConsoleBrowser } from "./console_world.ts";

const MANIFEST = "/api/v1/tenants/acme/namespaces/web/manifest";

Deno.test({
  name: "a tenant admin creates a token, sees its secret once, and revokes it",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page, context, userId } = await world.signIn("tess@acme.test", { bypassCSP: true });
    await world.grant(userId, "tenant-admin");
    const url = world.inst.url;
    await page.goto(`${url}/ui/t/acme/tokens`);
    await world.audit(page, "tokens");

    const form = page.getByRole("region", { name: "Create a token" });
    await form.getByLabel("Name", { exact: true }).fill("runtime");
    await form.getByLabel("Type").selectOption("namespace-read");
    await form.getByLabel("Namespace", { exact: true }).selectOption("web");
    await form.getByLabel("Expires", { exact: true }).selectOption("30");
    await form.getByRole("button", { name: "Create token" }).click();
    await page.locator("#token-secret").waitFor();
    const secret = (await page.locator("#token-secret").textContent())!.trim();
    assert(secret.startsWith("svc_read_"), secret);
    assertEquals((await page.content()).split(secret).length - 1, 1, "the secret, once");
    assertStringIncludes(await page.locator("main").innerText(), "You will not see this secret");
    await world.audit(page, "token-created");

    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
    const copy = page.getByRole("button", { name: "Copy" });
    await copy.click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    assertEquals(await page.evaluate("navigator.clipboard.readText()"), secret);

    const read = await world.inst.api("GET", MANIFEST, secret, undefined, {
      accept: "application/json",
    });
    assertEquals(read.status, 200);

    await page.getByRole("link", { name: "The token's page" }).click();
    await page.waitForURL(/\/ui\/t\/acme\/tokens\/tok_/);
    await page.reload();
    assert(!(await page.content()).includes(secret), "the secret is not shown again");
    await world.audit(page, "token");

    await page.getByLabel("Revoke runtime now").check();
    await page.getByRole("button", { name: "Revoke token" }).click();
    await page.getByText("This token is revoked").waitFor();
    assertEquals(await page.locator("#revoke-confirm").count(), 0);
    const refused = await world.inst.api("GET", MANIFEST, secret, undefined, {
      accept: "application/json",
    });
    assertEquals(refused.status, 401);
  },
});
