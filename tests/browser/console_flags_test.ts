/**
 * The flags of an environment in real Chromium: a person signed in by
 * email sees them, a push from the CLI appears on the open page without a
 * reload, the search narrows the list, and the page passes axe-core at
 * both widths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli } from "../e2e/installation.ts";
import { chromiumPath, FIXTURE, startConsoleBrowser } from "./console_world.ts";

Deno.test({
  name: "a push from the CLI appears on an open flags page without a reload",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page } = await world.signIn("ana@acme.test", { bypassCSP: true });
    await page.goto(`${world.inst.url}/ui/t/acme/ns/web/env/production`);
    await world.audit(page, "flags");
    assertEquals(await page.locator("#flag-table tbody tr").count(), 3);
    await page.evaluate("window.__marker = 1"); // gone if the page reloads

    const dir = await Deno.makeTempDir();
    try {
      for (const [path, text] of Object.entries(FIXTURE)) {
        await Deno.mkdir(`${dir}/${path.split("/").slice(0, -1).join("/")}`, { recursive: true });
        await Deno.writeTextFile(`${dir}/${path}`, text);
      }
      await Deno.writeTextFile(
        `${dir}/flags/dark-mode.toml`,
        'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
      );
      const push = await runCli([
        "push",
        "--server",
        world.inst.url,
        "--token",
        world.inst.admin,
        "--tenant",
        "acme",
        "--namespace",
        "web",
        "--message",
        "dark mode",
        dir,
      ]);
      assertEquals(push.code, 0, push.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    await page.locator("#flag-table tbody tr", { hasText: "dark-mode" }).waitFor();
    assertEquals(await page.locator("#flag-table tbody tr").count(), 4);
    assertEquals(await page.evaluate("window.__marker"), 1);
    assertStringIncludes(await page.locator("#live-status").textContent() ?? "", "Version 2");

    await page.getByLabel("Search").fill("dark");
    await page.waitForFunction(
      "document.querySelectorAll('#flag-table tbody tr').length === 1",
    );
    assertStringIncludes(page.url(), "q=dark"); // the filtered list has an address
  },
});
