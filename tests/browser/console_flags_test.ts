/**
 * The flags of an environment in real Chromium, live.
 *
 * A person signed in by email sees the flags; a push from the CLI appears
 * on the open page without a reload; the search narrows the list; the page
 * passes axe-core at both widths.
 *
 * Live updates cost at most one event stream per tab, closed when the page
 * is left. Browsers allow six HTTP/1.1 connections per host: a stream that
 * outlived its page would hold one of them, and after a few clicks every
 * load would wait for a connection that never frees. So the same person
 * then opens ten live pages in a row in one tab, then ten more taking turns
 * between three tabs of the same browser (one connection pool); every load
 * must finish well within its timeout (with leaked streams the pool runs
 * dry and loads hang), every tab still follows its namespace, and a fourth
 * stream still opens at once.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli } from "../e2e/installation.ts";
import { chromiumPath, FIXTURE, PLAIN_FLAG, startConsoleBrowser } from "./console_world.ts";

const LIVE_PAGES = [
  "/ui/t/acme/ns/web/env/production",
  "/ui/t/acme/ns/web/env/staging",
  "/ui/t/acme/ns/web/env/production?q=new",
  "/ui/t/acme/ns/web/env/staging?state=off",
];

Deno.test({
  name: "the flags page follows its namespace live, over one stream per tab",
  ignore: chromiumPath() === null,
  async fn(t) {
    await using world = await startConsoleBrowser();
    const { page, context } = await world.signIn("ana@acme.test", { bypassCSP: true });

    await t.step("a push from the CLI appears on an open flags page without a reload", async () => {
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
    });

    await t.step(
      "ten live pages in a row, in one tab and in three tabs, never wait on a connection",
      async () => {
        const opened: string[] = [];
        context.on("request", (r) => {
          if (new URL(r.url()).pathname === "/ui/live") opened.push(r.url());
        });
        const visit = async (p: typeof page, i: number) => {
          // 5 s per load: a load queued behind six held connections would never finish
          await p.goto(`${world.inst.url}${LIVE_PAGES[i % LIVE_PAGES.length]}`, { timeout: 5_000 });
          await p.locator("#flag-table").waitFor({ timeout: 5_000 });
          // the page's stream is open before the next click
          await p.waitForFunction("document.body.dataset.live !== undefined", null, {
            timeout: 5_000,
          });
        };
        for (let i = 0; i < 10; i++) await visit(page, i);

        const tabs = [page, await context.newPage(), await context.newPage()];
        // ten more loads, taking turns between the three tabs (each tab holds its page's stream)
        for (let i = 0; i < 10; i++) await visit(tabs[i % tabs.length]!, i);
        assertEquals(opened.length >= 20, true, `streams opened: ${opened.length}`);
        // every tab still follows its namespace: one push reaches all three
        const v = await world.push({
          ...FIXTURE,
          "flags/late.toml": PLAIN_FLAG,
        });
        for (const tab of tabs) {
          await tab.locator("#live-status", { hasText: `Version ${v}` }).waitFor({
            timeout: 10_000,
          });
        }
        const open = await tabs[0]!.evaluate(async (url) => {
          // a fourth stream in the same pool must still open at once: three are held, not six
          const es = new EventSource(url);
          const ok = await new Promise<boolean>((resolve) => {
            es.onopen = () => resolve(true);
            setTimeout(() => resolve(false), 3000);
          });
          es.close();
          return ok;
        }, "/ui/live?tenant=acme&namespace=web");
        assertEquals(open, true);
      },
    );
  },
});
