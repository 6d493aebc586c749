/**
 * Test helper: the accessibility and layout audit every browser-tested page
 * passes, at a phone's width (390 px) and a desktop's (1280 px): axe-core
 * finds no serious or critical violation, and nothing scrolls sideways.
 * axe is injected as a script, which the pages' Content-Security-Policy
 * refuses: the page must come from a browser context with `bypassCSP: true`.
 *
 * Cheap where it costs nothing in what it finds: axe is evaluated in the
 * page once per document (not added as a script tag, which parses its
 * half-megabyte source twice), and the rules whose impact is fixed below
 * serious (axe gives every result of such a rule the rule's own impact)
 * are switched off, as the audit would drop whatever they find.
 *
 * @module
 */
import type { Page } from "npm:playwright-core@^1.65.1";
// the minified build: the same axe, a third of the script to parse in every audited page
import axe from "npm:axe-core@^4.14.1/axe.min.js";
import { assertEquals } from "../assert.ts";

/** The widths every page is audited at, px. */
export const AUDIT_WIDTHS = [1280, 390] as const;

/** The impacts the audit fails on. */
const FAILING = ["serious", "critical"];
/** axe's other impacts: a rule fixed at one of these is not run. */
const BELOW = ["minor", "moderate"];

/** What axe.run() answers, as far as the audit reads it. */
interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[];
}

/**
 * Audits the page as it is now at each width: no serious or critical axe
 * violation, no sideways scroll; with `screenshots`, a JPEG of the viewport
 * at each width (`<dir>/<name>-<width>.jpg`). The page is left at 1280 px.
 *
 * @param page the page (from a context with `bypassCSP: true`)
 * @param name what the page is, for failure messages and file names
 * @param options `screenshots`: the directory to write them to
 *
 * @example
 * ```ts ignore
 * const context = await browser.newContext({ bypassCSP: true });
 * const page = await context.newPage();
 * await page.goto(`${inst.url}/auth/login`);
 * await auditPage(page, "the tenant page");
 * ```
 */
export async function auditPage(
  page: Page,
  name: string,
  options: { screenshots?: string } = {},
): Promise<void> {
  for (const width of AUDIT_WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    // once per document: the script is large, and a resize keeps the document
    if (!await page.evaluate("typeof globalThis.axe === 'object'")) {
      await page.evaluate(axe.source);
    }
    const result = await page.evaluate((below) => {
      const a = (globalThis as unknown as {
        axe: {
          run(context: unknown, options: unknown): Promise<AxeResult>;
          _audit?: { rules?: { id: string; impact?: string }[] };
        };
      }).axe;
      // a rule whose impact is fixed below serious finds nothing the audit reports
      const quiet = (a._audit?.rules ?? []).filter((r) => below.includes(r.impact ?? ""));
      return a.run((globalThis as unknown as { document: unknown }).document, {
        resultTypes: ["violations"],
        rules: Object.fromEntries(quiet.map((r) => [r.id, { enabled: false }])),
      });
    }, BELOW);
    const bad = result.violations.filter((v) => FAILING.includes(v.impact ?? ""));
    assertEquals(
      bad.map((v) => `${v.id}: ${v.help} ${JSON.stringify(v.nodes.map((n) => n.target))}`),
      [],
      `${name} at ${width} px`,
    );
    // runs in the page: `document` is the page's
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth > document.documentElement.clientWidth",
    );
    assertEquals(overflow, false, `${name} scrolls sideways at ${width} px`);
    if (options.screenshots !== undefined) {
      await page.screenshot({
        path: `${options.screenshots}/${name}-${width}.jpg`,
        type: "jpeg",
        quality: 70,
        fullPage: false,
      });
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
