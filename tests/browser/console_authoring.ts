/**
 * Authoring in real Chromium, from nothing to production without a
 * terminal: a tenant admin (`ada@acme.test`) creates namespace `shop`,
 * declares staging and production, creates a string flag with three
 * variations and a segment with a date predicate, gives staging a rule
 * serving a 30/70 rollout to that segment, and promotes the flag from
 * staging to production, which is protected: the promotion opens a change
 * request, a second admin (`bob@acme.test`) approves it, ada applies it,
 * and the SDK and OFREP then serve in production what the console shows.
 * A segment still in use cannot be deleted; an edit made on a version
 * someone else moved past meets the conflict page with its inputs kept;
 * a member's forged post is refused and writes nothing. The new pages pass
 * axe-core at 390 and 1280 px. Steps of tests/browser/console_test.ts, in
 * its one world.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { FlagClient } from "../../lib/client/flag_client.ts";
import { waitFor } from "../client/fixture.ts";
import type { ConsoleBrowser, Page } from "./console_world.ts";

const SHOP = "/ui/t/acme/ns/shop";
const API = "/api/v1/tenants/acme/namespaces/shop";

/** Fills the required message, previews, and commits; waits to leave the preview. */
async function previewAndCommit(page: Page, message: string) {
  await page.getByLabel("Message").fill(message);
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await page.getByRole("heading", { name: "What this edit does" }).waitFor();
  await page.getByRole("button", { name: "Commit version" }).click();
  await page.getByRole("heading", { name: "What this edit does" }).waitFor({ state: "detached" });
}

/**
 * Authoring from nothing to production: the steps above, in `world`.
 *
 * @example
 * ```ts ignore
 * await t.step(
 *   "a person builds a namespace's flags and segments from nothing to production",
 *   (t) => authoring(t, world),
 * );
 * ```
 */
export async function authoring(t: Deno.TestContext, world: ConsoleBrowser): Promise<void> {
  const url = world.inst.url;
  const ada = () => world.person("ada@acme.test", { bypassCSP: true });
  const bob = () => world.person("bob@acme.test", { bypassCSP: true });
  let request = "";

  await t.step("a tenant admin creates a namespace and declares its environments", async () => {
    const { page, userId } = await ada();
    await world.grant(userId, "tenant-admin");
    await page.goto(`${url}/ui/t/acme`);
    await page.getByLabel("Slug").fill("shop");
    await page.getByRole("button", { name: "Create namespace" }).click();
    await page.waitForURL((u) => u.pathname === SHOP);
    const empty = page.locator("#empty-namespace");
    assertStringIncludes(await empty.textContent() ?? "", "shop is empty (version 0)");
    await world.audit(page, "authoring-empty-namespace");
    await empty.getByRole("link", { name: "Add an environment" }).click();
    await page.waitForURL((u) => u.pathname === `${SHOP}/edit/environments`);
    for (const env of ["staging", "production"]) {
      await page.getByLabel("Key", { exact: true }).fill(env);
      await previewAndCommit(page, `Add ${env}`);
      await page.waitForURL((u) => u.pathname === `${SHOP}/edit/environments`);
    }
    await page.locator("#environments", { hasText: "production" }).waitFor();
    await world.audit(page, "authoring-environments");
  });

  await t.step("a flag with three variations", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}`);
    await page.getByRole("link", { name: "New flag" }).first().click();
    await page.getByLabel(/^string/).check();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Key", { exact: true }).fill("banner");
    await page.getByLabel("Description (optional)").fill("The home page banner");
    const variations = [["plain", "Welcome"], ["sale", "Winter sale"], ["launch", "New!"]];
    for (const [i, [name, value]] of variations.entries()) {
      await page.locator(`#variation-${i}-name`).fill(name!);
      await page.locator(`#variation-${i}-value`).fill(value!);
    }
    await page.locator("#variation-0-default").check();
    await world.audit(page, "authoring-new-flag");
    await previewAndCommit(page, "Add the banner");
    await page.waitForURL((u) => u.pathname === `${SHOP}/flags/banner`);
    assertStringIncludes(await page.locator("#variations").textContent() ?? "", "Winter sale");
  });

  await t.step("a segment with a date predicate", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/segments`);
    await world.audit(page, "authoring-segments-empty");
    await page.getByRole("link", { name: "New segment" }).first().click();
    await page.getByLabel("Key", { exact: true }).fill("early-adopters");
    await page.locator("#predicate-0-attribute").fill("user.created_at");
    await page.locator("#predicate-0-op").selectOption("after");
    await page.locator("#predicate-0-value").fill("2026-01-01T00:00:00Z");
    await world.audit(page, "authoring-segment");
    await previewAndCommit(page, "People who joined this year");
    const file = await world.inst.api("GET", `${API}/manifest`, world.inst.admin, undefined, {
      accept: "application/json",
    });
    assertStringIncludes(
      (file.body as { files: Record<string, string> }).files["segments/early-adopters.toml"]!,
      'op = "after"',
    );
  });

  await t.step("staging gets its own rule: a 30/70 rollout to the segment", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/edit/flags/banner/rules?env=staging`);
    await page.getByRole("button", { name: "Give staging rules of its own" }).click();
    await page.getByRole("button", { name: "Commit version" }).click();
    await page.waitForURL((u) => u.search === "?env=staging" && u.pathname.endsWith("/rules"));
    await page.getByLabel("Who it applies to").selectOption("early-adopters");
    await page.getByLabel("A rollout: each variation to a share of them").check();
    await page.getByLabel("Weight of sale").fill("30");
    await page.getByLabel("Weight of launch").fill("70");
    assertStringIncludes(
      await page.locator("[data-weight-sum]").textContent() ?? "",
      "100",
    );
    await world.audit(page, "authoring-rules");
    await page.getByLabel("Message").fill("Try the launch banner on early adopters");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.locator("svg.bar").first().waitFor();
    await page.getByRole("button", { name: "Commit version" }).click();
    await page.waitForURL((u) => u.pathname.endsWith("/rules"));
    const rules = page.locator("#rules");
    assertStringIncludes(await rules.textContent() ?? "", "early-adopters");
  });

  await t.step("promoting to protected production opens a change request", async () => {
    const protect = await world.inst.api("PUT", `${API}/protection`, world.inst.admin, {
      environments: { production: { required_approvals: 1 } },
    });
    assertEquals(protect.status, 200, JSON.stringify(protect.body));
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/edit/flags/banner/promote?from=staging&to=production`);
    await world.audit(page, "authoring-promote");
    await page.getByLabel("Message").fill("Launch banner for early adopters everywhere");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    assertStringIncludes(await page.locator("#edit-impact").textContent() ?? "", "production");
    await page.getByRole("button", { name: "Propose for review" }).click();
    await page.waitForURL(/\/ui\/t\/acme\/ns\/shop\/changes\/cr_[0-9A-Z]{26}\?done=opened$/);
    request = new URL(page.url()).pathname;
  });

  await t.step("a second admin approves, the author applies", async () => {
    const second = await bob();
    await world.grant(second.userId, "tenant-admin");
    await second.page.goto(`${url}${request}`);
    await second.page.getByRole("button", { name: "Approve", exact: true }).click();
    await second.page.waitForURL((u) => u.search === "?done=approved");
    const { page } = await ada();
    await page.goto(`${url}${request}`);
    await page.getByRole("button", { name: "Apply now" }).click();
    await page.waitForURL((u) => u.search === "?done=applied");
  });

  await t.step("the SDK and OFREP serve in production what the console shows", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/flags/banner?env=production`);
    const shown = await page.locator("#rules").textContent() ?? "";
    assertStringIncludes(shown, "early-adopters");
    const token = await world.inst.api("POST", "/api/v1/tokens", world.inst.admin, {
      type: "namespace-read",
      name: "app",
      tenant_slug: "acme",
      namespace_slug: "shop",
    });
    assertEquals(token.status, 201, JSON.stringify(token.body));
    const secret = (token.body as { secret: string }).secret;
    const client = new FlagClient({
      server: url,
      token: secret,
      namespaces: ["shop:banner"],
      readyTimeoutMs: 10_000,
    });
    try {
      await client.ready();
      const head = await world.inst.api("GET", `${API}/versions?limit=1`, world.inst.admin);
      const version = (head.body as { versions: { version: number }[] }).versions[0]!.version;
      await waitFor(() => client.closure("shop")?.version === version, `version ${version}`);
      const served = new Map<string, number>();
      for (let i = 0; i < 200; i++) {
        const context = { targetingKey: `u${i}`, user: { created_at: "2026-03-01T00:00:00Z" } };
        const local = client.evaluate("shop", "production", "banner", {
          targeting_key: context.targetingKey,
          user: context.user,
        });
        const wire = await fetch(`${url}/ofrep/v1/evaluate/flags/banner`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${secret}`,
            "content-type": "application/json",
            "x-cfgtool-tenant": "acme",
            "x-cfgtool-namespace": "shop",
            "x-cfgtool-environment": "production",
          },
          body: JSON.stringify({ context }),
        });
        const o = await wire.json() as { value: unknown; variant: string; reason: string };
        assertEquals([o.value, o.variant, o.reason], [
          local.value,
          local.variation,
          local.reason,
        ]);
        served.set(o.variant, (served.get(o.variant) ?? 0) + 1);
      }
      assertEquals([...served.keys()].sort(), ["launch", "sale"]);
      assert(served.get("launch")! > served.get("sale")!, JSON.stringify([...served]));
      const before = client.evaluate("shop", "production", "banner", {
        targeting_key: "old",
        user: { created_at: "2025-06-01T00:00:00Z" },
      });
      assertEquals([before.variation, before.reason], ["plain", "DEFAULT"]);
    } finally {
      await client.close();
    }
  });

  await t.step("a segment still in use cannot be deleted", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/segments/early-adopters`);
    await page.getByRole("link", { name: "Delete it…" }).click();
    await page.waitForURL((u) => u.pathname.endsWith("/edit/segments/early-adopters/delete"));
    // nothing to confirm while a rule names it: the page says which, linked
    assertStringIncludes(await page.locator("#edit-refusal").textContent() ?? "", "banner");
    await page.locator("#segment-references").getByRole("link", { name: /banner/ }).first()
      .waitFor();
    assertEquals(await page.getByRole("button", { name: "Commit version" }).count(), 0);
    await world.audit(page, "authoring-segment-delete");
  });

  await t.step("an edit made on an old version meets the conflict page", async () => {
    const { page } = await ada();
    await page.goto(`${url}${SHOP}/edit/flags/banner`);
    await page.getByLabel("Description (optional)").fill("The banner, said better");
    await page.getByLabel("Message").fill("Better words");
    const files = await world.inst.api("GET", `${API}/manifest`, world.inst.admin, undefined, {
      accept: "application/json",
    });
    const now = (files.body as { files: Record<string, string> }).files;
    await world.push(
      { ...now, "flags/banner.toml": now["flags/banner.toml"]! + "# touched by CI\n" },
      "CI touched the banner",
      "shop",
    );
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await page.getByText(/was committed after the version/).waitFor();
    await world.audit(page, "authoring-conflict");
    // the edit made again on the head keeps the person's words
    assertStringIncludes(
      await page.locator(".diff").last().textContent() ?? "",
      "The banner, said better",
    );
  });

  await t.step("a member's forged post is refused and writes nothing", async () => {
    const { page } = await world.person("ana@acme.test", { bypassCSP: true });
    await page.goto(`${url}${SHOP}`);
    const csrf = await page.locator("input[name=_csrf]").first().getAttribute("value");
    const head = await world.inst.api("GET", `${API}/versions?limit=1`, world.inst.admin);
    const before = (head.body as { versions: { version: number }[] }).versions[0]!.version;
    const forged = await page.request.post(`${url}${SHOP}/edit/flags/_new`, {
      headers: { origin: url },
      form: {
        _csrf: csrf ?? "",
        base: String(before),
        type: "boolean",
        key: "sneaky",
        "variations.0.name": "on",
        "variations.0.value": "true",
        default: "0",
        message: "sneak",
        step: "commit",
      },
    });
    assertEquals(forged.status(), 403);
    const after = await world.inst.api("GET", `${API}/versions?limit=1`, world.inst.admin);
    assertEquals(
      (after.body as { versions: { version: number }[] }).versions[0]!.version,
      before,
    );
  });
}
