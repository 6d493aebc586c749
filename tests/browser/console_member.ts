/**
 * The console in real Chromium as a member of acme reads it: steps of
 * tests/browser/console_test.ts in its one world, the first there (they
 * count the flags and versions of `web` as the world made them),
 * `ana@acme.test` signed in once and given a fresh tab by each.
 *
 * The flags of an environment, live: a person signed in by email sees the
 * flags; a push from the CLI appears on the open page without a reload;
 * the search narrows the list; the page passes axe-core at both widths.
 * Live updates cost at most one event stream per tab, closed when the page
 * is left. Browsers allow six HTTP/1.1 connections per host: a stream that
 * outlived its page would hold one of them, and after a few clicks every
 * load would wait for a connection that never frees. So the same person
 * then opens ten live pages in a row in one tab, then ten more taking turns
 * between three tabs of the same browser (one connection pool); every load
 * must finish well within its timeout (with leaked streams the pool runs
 * dry and loads hang), every tab still follows its namespace, and a fourth
 * stream still opens at once.
 *
 * One flag, one segment and the evaluation playground: a member finds out
 * why a user gets a variation: the flag page shows the rules and their
 * segments, the segment page what its predicates read, and the playground,
 * for a typed context, the value, the reason and the rule with its
 * segment. Each page passes axe-core at both widths.
 *
 * Two ways into the console that the other browser tests do not take: a
 * person whose browser runs no JavaScript reads every page (the console is
 * server-rendered; htmx only adds to it), and the operator opens the
 * console with a one-time link made on the server host, sees every tenant
 * and creates one.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import type { Request } from "npm:playwright-core@^1.65.1";
import { runCli } from "../e2e/installation.ts";
import { type ConsoleBrowser, FIXTURE, PLAIN_FLAG } from "./console_world.ts";

const LIVE_PAGES = [
  "/ui/t/acme/ns/web/env/production",
  "/ui/t/acme/ns/web/env/staging",
  "/ui/t/acme/ns/web/env/production?q=new",
  "/ui/t/acme/ns/web/env/staging?state=off",
];

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
  ["/ui/t/acme/ns/web/changes", "Protected environments"],
  ["/ui/t/acme/tokens", "Tokens"],
  ["/ui/t/acme/people", "People"],
  ["/ui/t/acme/audit", "login.succeeded"],
];

/**
 * A member of acme reads the console: the steps above, in `world`, whose
 * namespace `web` is still as the world made it.
 *
 * @example
 * ```ts ignore
 * await t.step("a member of acme reads the console in Chromium", (t) => memberReads(t, world));
 * ```
 */
export async function memberReads(t: Deno.TestContext, world: ConsoleBrowser): Promise<void> {
  const ana = () => world.person("ana@acme.test", { bypassCSP: true });

  // first: it counts the flags and versions of `web` as the world made them
  await t.step(
    "the flags page follows its namespace live, over one stream per tab",
    async (t) => {
      const { page, context } = await ana();

      await t.step(
        "a push from the CLI appears on an open flags page without a reload",
        async () => {
          await page.goto(`${world.inst.url}/ui/t/acme/ns/web/env/production`);
          await world.audit(page, "flags");
          assertEquals(await page.locator("#flag-table tbody tr").count(), 3);
          await page.evaluate("window.__marker = 1"); // gone if the page reloads

          const dir = await Deno.makeTempDir();
          try {
            for (const [path, text] of Object.entries(FIXTURE)) {
              await Deno.mkdir(`${dir}/${path.split("/").slice(0, -1).join("/")}`, {
                recursive: true,
              });
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
          assertStringIncludes(
            await page.locator("#live-status").textContent() ?? "",
            "Version 2",
          );

          await page.getByLabel("Search").fill("dark");
          await page.waitForFunction(
            "document.querySelectorAll('#flag-table tbody tr').length === 1",
          );
          assertStringIncludes(page.url(), "q=dark"); // the filtered list has an address
        },
      );

      await t.step(
        "ten live pages in a row, in one tab and in three tabs, never wait on a connection",
        async () => {
          const opened: string[] = [];
          const onRequest = (r: Request) => {
            if (new URL(r.url()).pathname === "/ui/live") opened.push(r.url());
          };
          context.on("request", onRequest);
          try {
            const visit = async (p: typeof page, i: number) => {
              // 5 s per load: a load queued behind six held connections would never finish
              await p.goto(`${world.inst.url}${LIVE_PAGES[i % LIVE_PAGES.length]}`, {
                timeout: 5_000,
              });
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
          } finally {
            context.off("request", onRequest);
          }
        },
      );
    },
  );

  await t.step(
    "a member finds out why a user gets a variation: flag page, segment, playground",
    async () => {
      const { page } = await ana();
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
      await page.close();
    },
  );

  await t.step(
    "without JavaScript a person reads every console page and uses the playground",
    async (t) => {
      await t.step("every read page renders on the server", async () => {
        const { page } = await world.person("ana@acme.test", { javaScriptEnabled: false });
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

      await t.step(
        "the operator opens the console with a link and creates a tenant",
        async () => {
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
        },
      );
    },
  );
}
