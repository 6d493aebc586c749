/**
 * The console in real Chromium as acme's admins use it: steps of
 * tests/browser/console_test.ts in its one world, one after another,
 * `nia@acme.test` (a namespace admin) signed in once and given a fresh tab
 * by each of her steps; versions are counted per namespace, so the steps
 * that count them have namespaces of their own (`store`, `app`).
 *
 * Quick changes: a namespace admin turns new-checkout off in production
 * (form, preview, commit, the new version's page), then a push from outside
 * lands between their preview and their commit, and the conflict page shows
 * the other change with their message kept. The form, the preview and the
 * conflict page pass axe-core at both widths.
 *
 * Versions, diff and rollback: a namespace admin signed in by email lists
 * the versions, compares the first two with the compare form, opens the
 * first and rolls back to it (message and confirmation), and lands on the
 * new version; each page passes axe-core at both widths.
 *
 * Service tokens: a tenant admin creates a token, sees its secret exactly
 * once and copies it, finds it gone from the token's page, then revokes the
 * token with the confirmation box, after which the API refuses the secret.
 * The pages pass axe-core at both widths.
 *
 * The people page and the audit log: a tenant admin finds everyone who
 * signed in listed with their last sign-in, makes one of them an admin of
 * a namespace with the page's form and a tenant admin from their row,
 * sees the roles listed, then finds the sign-ins and that change in the
 * audit log with the type filter; both pages (the row's role changes
 * open) pass axe-core at both widths.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type ConsoleBrowser, FIXTURE } from "./console_world.ts";

const MANIFEST = "/api/v1/tenants/acme/namespaces/web/manifest";

/**
 * acme's admins at work: the steps above, in `world`. Run it before anyone
 * else signs `ada@acme.test` in: its last step reads her sign-in as the
 * tenant's newest.
 *
 * @example
 * ```ts ignore
 * await t.step("acme's admins change, roll back, issue tokens and add people in Chromium", (t) =>
 *   adminsWork(t, world));
 * ```
 */
export async function adminsWork(t: Deno.TestContext, world: ConsoleBrowser): Promise<void> {
  // versions are counted per namespace: the quick changes and the rollback have their own
  await world.namespace("store", "Online store");
  await world.namespace("app", "Mobile app");
  const nia = () => world.person("nia@acme.test", { bypassCSP: true });

  await t.step(
    "a namespace admin commits a quick change, then meets a push made in between",
    async () => {
      const { page, userId } = await nia();
      await world.grant(userId, "namespace-admin", "store");
      const base = `${world.inst.url}/ui/t/acme/ns/store/flags/new-checkout/change`;

      await page.goto(`${base}?env=production&kind=toggle`);
      await world.audit(page, "change");
      await page.getByLabel("Message").fill("stop the new checkout");
      await page.getByRole("button", { name: "Turn off in production" }).click();
      await page.getByRole("heading", { name: "Preview: change new-checkout" }).waitFor();
      assertStringIncludes(
        await page.locator(".diff .add").textContent() ?? "",
        "+enabled = false",
      );
      await world.audit(page, "change-preview");
      await page.getByRole("button", { name: "Commit version" }).click();
      await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/store/versions/2");

      await page.goto(`${base}?env=production&kind=weights`);
      await page.getByLabel("Weight of on").fill("50");
      await page.getByLabel("Weight of off").fill("50");
      await page.getByLabel("Message").fill("half and half");
      await page.getByRole("button", { name: "Preview" }).click();
      await page.getByRole("heading", { name: "Preview: change new-checkout" }).waitFor();
      const theirs = await world.push(
        {
          ...FIXTURE,
          "flags/banner-text.toml": FIXTURE["flags/banner-text.toml"]!.replace(
            "Winter sale",
            "Spring sale",
          ),
        },
        "spring banner",
        "store",
      );
      assertEquals(theirs, 3);
      await page.getByRole("button", { name: "Commit version" }).click();
      await page.getByRole("heading", { name: "Someone changed this since you opened it" })
        .waitFor();
      const main = await page.locator("main").textContent() ?? "";
      assertStringIncludes(main, "spring banner");
      assertStringIncludes(main, "flags/banner-text.toml");
      assertStringIncludes(main, "half and half");
      assertEquals(await page.locator('input[name="message"]').inputValue(), "half and half");
      await world.audit(page, "change-conflict");
      await page.getByRole("button", { name: "Commit version" }).click();
      await page.waitForURL((u) => u.pathname === "/ui/t/acme/ns/store/versions/4");
    },
  );

  await t.step(
    "a namespace admin compares two versions and rolls back to the first",
    async () => {
      const { page, userId } = await nia();
      await world.grant(userId, "namespace-admin", "app");
      const second = {
        ...FIXTURE,
        "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
          "enabled = true",
          "enabled = false",
        ),
      };
      assertEquals(await world.push(second, "switch the new checkout off", "app"), 2);

      await page.goto(`${world.inst.url}/ui/t/acme/ns/app/versions`);
      await page.locator("#version-table tbody tr", { hasText: "switch the new checkout off" })
        .waitFor();
      await world.audit(page, "versions");

      await page.getByLabel("From version").fill("1");
      await page.getByLabel("To version").fill("2");
      await page.getByRole("button", { name: "Compare", exact: true }).click();
      await page.waitForURL(/\/diff\?from=1&to=2$/);
      await page.getByText("environments.production.enabled: true → false").waitFor();
      await world.audit(page, "diff");

      await page.getByRole("link", { name: "version 1", exact: true }).click();
      await page.waitForURL(/\/versions\/1$/);
      await world.audit(page, "version");
      await page.getByLabel("Message: why roll back?").fill("the new checkout is fine after all");
      await page.getByLabel("I understand this makes a new version whose files equal version 1")
        .check();
      await page.getByRole("button", { name: "Roll back to version 1" }).click();
      await page.waitForURL(/\/versions\/3\?done=rollback&from=1$/);
      assertStringIncludes(
        await page.locator(".notice").first().textContent() ?? "",
        "Version 3 was made by a rollback to version 1",
      );

      const head = await world.inst.api(
        "GET",
        "/api/v1/tenants/acme/namespaces/app/versions?limit=1",
        world.inst.admin,
      );
      const latest = (head.body as { versions: { version: number; message: string }[] })
        .versions[0]!;
      assertEquals(latest.version, 3);
      assertEquals(latest.message, "the new checkout is fine after all");
      await page.close();
    },
  );

  await t.step(
    "a tenant admin creates a token, sees its secret once, and revokes it",
    async () => {
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
      assertStringIncludes(
        await page.locator("main").innerText(),
        "You will not see this secret",
      );
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
      await context.close();
    },
  );

  // last: it reads the two newest sign-ins of the tenant, its own
  await t.step(
    "a tenant admin adds a namespace admin and finds the sign-ins in the audit log",
    async () => {
      const bea = await world.signIn("bea@acme.test"); // people exist after their first sign-in
      await bea.context.close();
      // her first sign-in: later steps of the world reuse her browser context
      const { page, userId } = await world.person("ada@acme.test", { bypassCSP: true });
      await world.grant(userId, "tenant-admin");

      await page.goto(`${world.inst.url}/ui/t/acme/people`);
      // everyone who signed in, with their last sign-in: bea is no admin yet
      const people = page.getByRole("table", { name: "People of acme" });
      const beaRow = people.getByRole("row").filter({ hasText: "bea@acme.test" });
      assertStringIncludes(await beaRow.textContent() ?? "", "member");
      assertStringIncludes(await beaRow.textContent() ?? "", "email, browser");
      await beaRow.getByText("Roles").click(); // the row's role changes, opened for the audit
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
      // then a tenant admin, from her row
      const row = page.getByRole("table", { name: "People of acme" }).getByRole("row")
        .filter({ hasText: "bea@acme.test" });
      await row.getByText("Roles").click();
      await row.getByRole("button", { name: /^Make tenant admin/ }).click();
      await page.waitForURL(/done=added/);
      assertStringIncludes(
        await page.getByRole("status").filter({ hasText: "bea@acme.test" }).textContent() ?? "",
        "bea@acme.test is a tenant admin of acme",
      );
      assertStringIncludes(
        await page.getByRole("table", { name: "People of acme" }).getByRole("row")
          .filter({ hasText: "bea@acme.test" }).textContent() ?? "",
        "tenant admin, admin of web",
      );
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
      const types = await page.locator("table.audit tbody td:nth-child(2) code")
        .allTextContents();
      assertEquals(types.length >= 2, true, types.join());
      assertEquals(types.every((t) => t === "login.succeeded"), true, types.join());
      const actors = await page.locator("table.audit tbody td:nth-child(3)").allTextContents();
      assertEquals(actors.slice(0, 2).map((a) => a.trim()), ["ada@acme.test", "bea@acme.test"]);

      // the admin ada added with the form is in the log too, by her, about bea
      await page.getByLabel("Type", { exact: true }).fill("admin.added");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/type=admin.added/);
      // newest first: the tenant admin from bea's row, then the namespace admin
      const [asTenantAdmin, asNamespaceAdmin] = [0, 1].map((i) =>
        page.locator("table.audit tbody tr").nth(i)
      );
      for (const added of [asTenantAdmin!, asNamespaceAdmin!]) {
        assertEquals(
          (await added.locator("td:nth-child(3)").textContent())?.trim(),
          "ada@acme.test",
        );
      }
      const target = async (row: typeof asTenantAdmin) =>
        await row!.locator("td:nth-child(4)").textContent() ?? "";
      assertStringIncludes(await target(asNamespaceAdmin), "namespace admin bea@acme.test");
      assert(!(await target(asTenantAdmin)).includes("namespace"), await target(asTenantAdmin));
      assertStringIncludes(await target(asTenantAdmin), "bea@acme.test");
    },
  );
}
