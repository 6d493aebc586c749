/**
 * An environment's override of a flag in the console: turning the flag
 * off in staging makes staging's evaluation DISABLED and leaves production
 * alone; back to "as without an override" removes the override; a default
 * and rules of its own in one edit, then back to the flag's rules; a
 * refusal names its control; a reader sees no form and a forged post
 * writes nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { pressed } from "../forms.ts";
import { consoleTest, type ConsoleWorld } from "../world.ts";
import {
  evaluate as evaluateFlag,
  fileText as manifestFile,
  forgedCommitRefused,
  previewThenCommit,
  refusedAt,
} from "./helpers.ts";

const OVERRIDE = "/ui/t/acme/ns/web/edit/flags/new-checkout/override?env=staging";

/** The text of new-checkout's file. */
async function fileText(w: ConsoleWorld): Promise<string> {
  return (await manifestFile(w, "flags/new-checkout.toml"))!;
}

/** Evaluates new-checkout in `env` for someone, with more of a context. */
function evaluate(w: ConsoleWorld, env: string, context: Record<string, unknown> = {}) {
  return evaluateFlag(w, env, "new-checkout", { targeting_key: "someone", ...context });
}

/** Previews then commits the override form with `changes`; returns the redirect. */
async function commitOverride(
  w: ConsoleWorld,
  changes: Record<string, string>,
): Promise<string | null> {
  const form = await w.page(OVERRIDE, w.writer);
  assertEquals(form.status, 200, form.text);
  const done = await previewThenCommit(w, OVERRIDE, {
    ...pressed(form, "button[value=preview]"),
    ...changes,
  });
  assertEquals(done.status, 303, done.text);
  return done.headers.get("location");
}

consoleTest(
  "turning new-checkout off in staging: staging says DISABLED, production does not",
  async (w) => {
    const form = await w.page(OVERRIDE, w.writer);
    for (const id of ["inherit", "on", "off"]) {
      assert(form.doc.querySelector(`label[for="override-enabled-${id}"]`), id);
    }
    assertEquals(form.doc.querySelector("#override-enabled-inherit").hasAttribute("checked"), true);
    assertEquals(form.doc.querySelector("#override-rules-flag").hasAttribute("checked"), true);
    const where = await commitOverride(w, {
      enabled: "off",
      default: "",
      rules: "flag",
      message: "Hold the new checkout in staging",
    });
    assertEquals(where, "/ui/t/acme/ns/web/flags/new-checkout?env=staging");
    assertStringIncludes(await fileText(w), "[environments.staging]\nenabled = false\n");
    const staging = await evaluate(w, "staging", { user: { beta: true } });
    assertEquals(staging.reason, "DISABLED");
    assertEquals(staging.variation, "off");
    const production = await evaluate(w, "production", { user: { beta: true } });
    assertEquals(production.reason, "TARGETING_MATCH");
    assertEquals(production.variation, "on");
    // the rules page of staging says so
    const rules = await w.page(
      "/ui/t/acme/ns/web/edit/flags/new-checkout/rules?env=staging",
      w.writer,
    );
    assertStringIncludes(rules.doc.querySelector("#scope-disabled").textContent, "off in staging");
    // as without an override again: the table goes away
    await commitOverride(w, {
      enabled: "inherit",
      default: "",
      rules: "flag",
      message: "Staging follows the flag again",
    });
    assert(!(await fileText(w)).includes("[environments.staging]"));
    assertEquals((await evaluate(w, "staging", { user: { beta: true } })).variation, "on");
  },
);

consoleTest(
  "a default and rules of its own in one edit, then the flag's rules again",
  async (w) => {
    const where = await commitOverride(w, {
      enabled: "inherit",
      default: "on",
      rules: "own",
      message: "Staging serves on by default, with its own rules",
    });
    assertEquals(where, "/ui/t/acme/ns/web/flags/new-checkout?env=staging");
    const file = await fileText(w);
    assertStringIncludes(file, '[environments.staging]\ndefault = "on"\n');
    assertStringIncludes(file, '[[environments.staging.rule]]\nsegment = "beta-testers"\n');
    assertEquals((await evaluate(w, "staging")).variation, "on");
    assertEquals((await evaluate(w, "production")).variation, "off");
    const form = await w.page(OVERRIDE, w.writer);
    assertEquals(form.doc.querySelector("#override-rules-own").hasAttribute("checked"), true);
    assertEquals(
      form.doc.querySelector("#override-default option[selected]").getAttribute("value"),
      "on",
    );
    await commitOverride(w, {
      enabled: "inherit",
      default: "on",
      rules: "flag",
      message: "Staging follows the flag's rules again",
    });
    const after = await fileText(w);
    assert(!after.includes("environments.staging.rule"), after);
    assertStringIncludes(after, '[environments.staging]\ndefault = "on"\n');
  },
);

consoleTest(
  "override refusals name their control; an unchanged form commits nothing",
  async (w) => {
    const form = await w.page(OVERRIDE, w.writer);
    const fields = pressed(form, "button[value=preview]");
    await refusedAt(w, OVERRIDE, { ...fields, enabled: "maybe" }, "override-enabled-off");
    await refusedAt(
      w,
      OVERRIDE,
      { ...fields, enabled: "inherit", default: "sometimes", rules: "flag" },
      "override-default",
    );
    const same = await w.post(OVERRIDE, w.writer, {
      ...fields,
      enabled: "inherit",
      default: "",
      rules: "flag",
    });
    assertEquals(same.status, 200);
    assertStringIncludes(same.text, "This edit changes nothing");
    // no environment chosen: a plain GET form chooses one
    const choose = await w.page("/ui/t/acme/ns/web/edit/flags/new-checkout/override", w.writer);
    assertEquals(choose.status, 200);
    assertEquals(choose.doc.querySelector("form[method=get] select[name=env]").tagName, "SELECT");
  },
);

consoleTest("a reader sees no override form and a forged post writes nothing", async (w) => {
  assertEquals((await w.page(OVERRIDE, w.member)).status, 403);
  const before = await fileText(w);
  await forgedCommitRefused(w, OVERRIDE, { enabled: "off" });
  assertEquals(await fileText(w), before);
  assertEquals((await evaluate(w, "staging")).reason === "DISABLED", false);
});
