/**
 * Test helper for the console in real Chromium: a real `cfgtool serve`
 * sending sign-in mail to a real SMTP server (tests/e2e/smtp_capture.ts),
 * tenant `acme` with the email login policy and namespace `web` holding
 * the console fixture, and people who sign in the way a person does: the
 * email form, the mailed link, the confirm button. `audit` is
 * tests/browser/axe_audit.ts's audit (axe-core and no sideways scroll at
 * 390 and 1280 px), with a JPEG screenshot at each width into
 * `CFGTOOL_SCREENSHOTS` when that is set (`deno task screenshots` writes
 * docs/console/; no screenshot otherwise: nothing would look at it).
 *
 * One world serves every step of tests/browser/console_test.ts, one after
 * another: a part that needs a namespace of its own (it counts versions)
 * makes one with `namespace`, and `person` signs someone in once and gives
 * each later step a fresh tab of the same browser context.
 *
 * @module
 */
import type { Browser, BrowserContext, Page } from "npm:playwright-core@^1.65.1";
import { assertEquals } from "../assert.ts";
import { type Installation, startInstallation } from "../e2e/installation.ts";
import {
  parseMail,
  signInSecrets,
  type SmtpCapture,
  startSmtpCapture,
} from "../e2e/smtp_capture.ts";
import { FIXTURE, PLAIN_FLAG } from "../console/fixture.ts";
import { auditPage } from "./axe_audit.ts";
import { chromiumPath, launchChromium } from "./chromium.ts";

export { chromiumPath, FIXTURE, PLAIN_FLAG };
export type { Page };

/** A running console with a browser. */
export interface ConsoleBrowser extends AsyncDisposable {
  inst: Installation;
  smtp: SmtpCapture;
  browser: Browser;
  /**
   * Signs `email` in (a new browser context: its own cookies) and returns
   * its page, on the console home; the person's user id too.
   */
  signIn(
    email: string,
    options?: { bypassCSP?: boolean; javaScriptEnabled?: boolean },
  ): Promise<SignedIn>;
  /**
   * The person `email`, signed in on the first call (as `signIn`), in a
   * fresh tab of that same browser context on every call: the tabs an
   * earlier call opened are closed first (their live streams with them).
   */
  person(
    email: string,
    options?: { bypassCSP?: boolean; javaScriptEnabled?: boolean },
  ): Promise<SignedIn>;
  /**
   * Makes a signed-in person tenant admin of acme, or namespace admin of
   * `namespace` (default `web`).
   */
  grant(
    userId: string,
    role: "tenant-admin" | "namespace-admin",
    namespace?: string,
  ): Promise<void>;
  /** Pushes files to acme/`namespace` (default `web`) as the superadmin; returns the version. */
  push(files: Record<string, string>, message?: string, namespace?: string): Promise<number>;
  /** Makes namespace acme/`slug` holding the fixture as version 1 ("first flags"). */
  namespace(slug: string, description: string): Promise<void>;
  /**
   * axe-core at both widths, and a screenshot at each when
   * `CFGTOOL_SCREENSHOTS` is set (the page must come from `bypassCSP: true`).
   */
  audit(page: Page, name: string): Promise<void>;
}

/** A person in the browser. */
export interface SignedIn {
  page: Page;
  context: BrowserContext;
  userId: string;
}

/**
 * Starts the console world (the caller checks {@linkcode chromiumPath} first).
 *
 * @example
 * ```ts ignore
 * await using world = await startConsoleBrowser();
 * const { page } = await world.signIn("ana@acme.test");
 * ```
 */
export async function startConsoleBrowser(): Promise<ConsoleBrowser> {
  const smtp = await startSmtpCapture();
  const inst = await startInstallation({ args: ["--smtp-url", smtp.url] });
  const browser = await launchChromium(chromiumPath()!);
  const shots = Deno.env.get("CFGTOOL_SCREENSHOTS") || undefined;
  if (shots) await Deno.mkdir(shots, { recursive: true });
  const ok = (status: number, what: string) => assertEquals(status < 300, true, what);
  ok((await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status, "tenant");
  ok(
    (await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
      method: "email",
      domains: ["acme.test"],
    })).status,
    "policy",
  );
  const push = async (
    files: Record<string, string>,
    message = "pushed by the test",
    namespace = "web",
  ) => {
    const res = await inst.api(
      "PUT",
      `/api/v1/tenants/acme/namespaces/${namespace}/manifest`,
      inst.admin,
      { files, message },
    );
    ok(res.status, JSON.stringify(res.body));
    return res.body.version as number;
  };
  const namespace = async (slug: string, description: string) => {
    ok(
      (await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, {
        slug,
        description,
      })).status,
      `namespace ${slug}`,
    );
    assertEquals(await push(FIXTURE, "first flags", slug), 1);
  };
  await namespace("web", "Web shop");
  const sent = new Map<string, number>();

  const signIn: ConsoleBrowser["signIn"] = async (email, options = {}) => {
    const context = await browser.newContext({
      bypassCSP: options.bypassCSP ?? false,
      javaScriptEnabled: options.javaScriptEnabled ?? true,
    });
    const page = await context.newPage();
    await page.goto(`${inst.url}/ui`);
    await page.getByLabel("Tenant").fill("acme");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel(/email/i).fill(email);
    await page.getByRole("button").first().click();
    await page.waitForURL(/\/auth\/email\/start/);
    const n = (sent.get(email) ?? 0) + 1;
    sent.set(email, n);
    const mail = await smtp.waitFor(email, n);
    const { link } = signInSecrets((await parseMail(mail.raw)).text);
    await page.goto(link.href);
    await page.getByRole("button").first().click();
    await page.waitForURL((u) => u.pathname.startsWith("/ui"));
    const me = await page.request.get(`${inst.url}/api/v1/me`);
    const userId = (await me.json()).principal.user.id as string;
    return { page, context, userId };
  };
  const people = new Map<string, SignedIn>();

  return {
    inst,
    smtp,
    browser,
    push,
    namespace,
    signIn,
    async person(email, options = {}) {
      const key = JSON.stringify([
        email,
        options.bypassCSP ?? false,
        options.javaScriptEnabled ?? true,
      ]);
      const known = people.get(key);
      if (known === undefined) {
        const first = await signIn(email, options);
        people.set(key, first);
        return first;
      }
      for (const open of known.context.pages()) await open.close();
      return { ...known, page: await known.context.newPage() };
    },
    async grant(userId, role, namespace = "web") {
      const path = role === "tenant-admin"
        ? "/api/v1/tenants/acme/admins"
        : `/api/v1/tenants/acme/namespaces/${namespace}/admins`;
      ok((await inst.api("POST", path, inst.admin, { user_id: userId })).status, role);
    },
    audit(page, name) {
      return auditPage(page, name, shots ? { screenshots: shots } : {});
    },
    async [Symbol.asyncDispose]() {
      await browser.close();
      await inst.close();
      await smtp.close();
    },
  };
}
