/**
 * The console in real Chromium, in one world (tests/browser/console_world.ts:
 * one `cfgtool serve`, one SMTP capture, one Chromium) started once for all
 * of it: a member reads it (tests/browser/console_member.ts), acme's admins
 * change, roll back, issue tokens and add people
 * (tests/browser/console_admin.ts), a change request goes from proposal to
 * version (tests/browser/console_changes.ts), and a person authors a
 * namespace from nothing to production (tests/browser/console_authoring.ts).
 * Each part is a step named as it was when each had a world of its own, so
 * a failure names the part and its step; each person signs in once and
 * keeps their browser context, and a part that counts versions has a
 * namespace of its own. The order matters: the member first (the world's
 * `web` as it was made), the admins before anyone else signs
 * `ada@acme.test` in (they read her sign-in as the newest).
 */
import { chromiumPath, startConsoleBrowser } from "./console_world.ts";
import { memberReads } from "./console_member.ts";
import { adminsWork } from "./console_admin.ts";
import { changeRequest } from "./console_changes.ts";
import { authoring } from "./console_authoring.ts";

Deno.test({
  name: "the console in Chromium: members, admins, change requests and authoring in one world",
  ignore: chromiumPath() === null,
  async fn(t) {
    await using world = await startConsoleBrowser();
    await t.step("a member of acme reads the console in Chromium", (t) => memberReads(t, world));
    await t.step(
      "acme's admins change, roll back, issue tokens and add people in Chromium",
      (t) => adminsWork(t, world),
    );
    await t.step(
      "an author proposes a protected change, an admin approves it, the author applies it",
      (t) => changeRequest(t, world),
    );
    await t.step(
      "a person builds a namespace's flags and segments from nothing to production",
      (t) => authoring(t, world),
    );
  },
});
