/**
 * Live updates cost at most one event stream per tab, closed when the page
 * is left. Browsers allow six HTTP/1.1 connections per host: a stream that
 * outlived its page would hold one of them, and after a few clicks every
 * load would wait for a connection that never frees. Here a person opens
 * ten live pages in a row in one tab, then in three tabs of the same
 * browser (one connection pool); every load must finish well within its
 * timeout (with leaked streams the pool runs dry and loads hang), every
 * tab still follows its namespace, and a fourth stream still opens at once.
 */
import { assertEquals } from "../assert.ts";
import { chromiumPath, FIXTURE, PLAIN_FLAG, startConsoleBrowser } from "./console_world.ts";

const LIVE_PAGES = [
  "/ui/t/acme/ns/web/env/production",
  "/ui/t/acme/ns/web/env/staging",
  "/ui/t/acme/ns/web/env/production?q=new",
  "/ui/t/acme/ns/web/env/staging?state=off",
];

Deno.test({
  name: "ten live pages in a row, in one tab and in three tabs, never wait on a connection",
  ignore: chromiumPath() === null,
  async fn() {
    await using world = await startConsoleBrowser();
    const { page, context } = await world.signIn("ana@acme.test");
    const opened: string[] = [];
    context.on("request", (r) => {
      if (new URL(r.url()).pathname === "/ui/live") opened.push(r.url());
    });
    const visit = async (p: typeof page, i: number) => {
      // 5 s per load: a load queued behind six held connections would never finish
      await p.goto(`${world.inst.url}${LIVE_PAGES[i % LIVE_PAGES.length]}`, { timeout: 5_000 });
      await p.locator("#flag-table").waitFor({ timeout: 5_000 });
      // the page's stream is open before the next click
      await p.waitForFunction("document.body.dataset.live !== undefined", null, { timeout: 5_000 });
    };
    for (let i = 0; i < 10; i++) await visit(page, i);

    const tabs = [page, await context.newPage(), await context.newPage()];
    for (let i = 0; i < 10; i++) {
      for (const [t, tab] of tabs.entries()) await visit(tab, i + t);
    }
    assertEquals(opened.length >= 40, true, `streams opened: ${opened.length}`);
    // every tab still follows its namespace: one push reaches all three
    const v = await world.push({
      ...FIXTURE,
      "flags/late.toml": PLAIN_FLAG,
    });
    for (const tab of tabs) {
      await tab.locator("#live-status", { hasText: `Version ${v}` }).waitFor({ timeout: 10_000 });
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
});
