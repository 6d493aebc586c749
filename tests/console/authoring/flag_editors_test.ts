/**
 * Editing a flag in the console: its description, default and variations
 * in one form, prefilled as written, in one commit (a renamed variation
 * renamed wherever a rule serves it, comments kept); removing a variation
 * a rule serves is refused naming the rule; deleting a flag asks for its
 * key, then applications get FLAG_NOT_FOUND; a reader gets no form and a
 * forged post writes nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { FIXTURE } from "../fixture.ts";
import { consoleTest } from "../world.ts";
import {
  evaluate,
  filled,
  forgedCommitRefused,
  manifest,
  previewThenCommit,
  refusedAt,
  wellLabelled,
} from "./helpers.ts";

const EDIT = "/ui/t/acme/ns/web/edit/flags";

const THEME = `schema_version = 1
description = "Site theme"
type = "string"
default = "light"
[variations]
light = "Light" # the classic
dark = "Dark"
[[rule]]
segment = "beta-testers"
variation = "dark" # the beta sees it first
`;

consoleTest(
  "a writer edits description, default, a name a rule serves and a value in one commit",
  async (w) => {
    await w.push({ ...FIXTURE, "flags/theme.toml": THEME });
    const form = await w.page(`${EDIT}/theme`, w.writer);
    assertEquals(form.status, 200, form.text);
    assertEquals(form.doc.querySelector("#flag-description").getAttribute("value"), "Site theme");
    assertEquals(form.doc.querySelector("#variation-1-name").getAttribute("value"), "dark");
    assertEquals(
      form.doc.querySelector("input[name='variations.1.was']").getAttribute("value"),
      "dark",
    );
    assert(form.doc.querySelector("#variation-0-default").hasAttribute("checked"), "default light");
    assertStringIncludes(form.text, "cannot change here");
    wellLabelled(form);
    assert(!form.doc.querySelector("[name=type]"), "the type is shown, not posted");
    const before = await manifest(w);
    const fields = {
      ...filled(form, "button[name=step][value=preview]"),
      description: "Colour theme",
      "variations.0.value": "Bright",
      "variations.1.name": "night",
      default: "1",
      message: "Night theme by default",
    };
    const preview = await w.post(`${EDIT}/theme`, w.writer, fields);
    assertEquals(preview.status, 200, preview.text);
    assertStringIncludes(preview.text, "flags/theme.toml");
    const done = await w.post(`${EDIT}/theme`, w.writer, {
      ...filled(preview, "button[name=step][value=commit]"),
      step: "commit",
    });
    assertEquals(done.status, 303, done.text);
    assertEquals(done.headers.get("location"), "/ui/t/acme/ns/web/flags/theme");
    const after = await manifest(w);
    assertEquals(after.version, before.version + 1, "one commit");
    assertEquals(
      after.files["flags/theme.toml"],
      `schema_version = 1
description = "Colour theme"
type = "string"
default = "night"
[variations]
light = "Bright" # the classic
night = "Dark"
[[rule]]
segment = "beta-testers"
variation = "night" # the beta sees it first
`,
    );
    const beta = await evaluate(w, "production", "theme", { user: { beta: true } });
    assertEquals([beta.variation, beta.value], ["night", "Dark"]);
  },
);

consoleTest("removing a variation a rule serves is refused naming the rule", async (w) => {
  const form = await w.page(`${EDIT}/new-checkout`, w.writer);
  assertEquals(form.status, 200, form.text);
  const before = await manifest(w);
  const refused = await w.post(`${EDIT}/new-checkout`, w.writer, {
    ...filled(form, "button[name=step][value=preview]"),
    "variations.0.name": "",
    "variations.0.value": "",
    message: "Drop on",
  });
  assertEquals(refused.status, 400, refused.text);
  assertStringIncludes(refused.doc.querySelector("#edit-refusal").textContent, "rule 1");
  assertEquals(refused.doc.querySelector("#variation-0-name").getAttribute("aria-invalid"), "true");
  const listed = refused.doc.querySelector("#referenced-by").textContent;
  assertStringIncludes(listed, "new-checkout");
  assertStringIncludes(listed, "the rollout of rule 2");
  // the emptied row stays empty, its name as written kept in the form
  assertEquals(refused.doc.querySelector("#variation-0-name").getAttribute("value"), "");
  assertEquals(
    refused.doc.querySelector("input[name='variations.0.was']").getAttribute("value"),
    "on",
  );
  assertEquals((await manifest(w)).version, before.version, "nothing committed");
});

consoleTest("an unused variation is removed and a new one added", async (w) => {
  const form = await w.page(`${EDIT}/max-items`, w.writer);
  const done = await w.post(`${EDIT}/max-items`, w.writer, {
    ...filled(form, "button[name=step][value=preview]"),
    "variations.1.name": "",
    "variations.1.value": "",
    "variations.2.name": "hundred",
    "variations.2.value": "100",
    message: "Limits",
    step: "commit",
  });
  assertEquals(done.status, 303, done.text);
  const text = (await manifest(w)).files["flags/max-items.toml"]!;
  assert(!text.includes("fifty"), text);
  assertStringIncludes(text, "ten = 10\nhundred = 100\n");
});

consoleTest(
  "deleting a flag: the key typed wrong is refused, then applications get FLAG_NOT_FOUND",
  async (w) => {
    const form = await w.page(`${EDIT}/max-items/delete`, w.writer);
    assertEquals(form.status, 200, form.text);
    wellLabelled(form);
    assertStringIncludes(
      form.doc.querySelector("#delete-consequences").textContent,
      "FLAG_NOT_FOUND",
    );
    const fields = { ...filled(form, "button[name=step][value=preview]"), message: "Unused" };
    await refusedAt(
      w,
      `${EDIT}/max-items/delete`,
      { ...fields, confirm: "max-item", step: "commit" },
      "delete-confirm",
    );
    assert("flags/max-items.toml" in (await manifest(w)).files, "not deleted");
    const done = await previewThenCommit(w, `${EDIT}/max-items/delete`, {
      ...fields,
      confirm: "max-items",
    });
    assertEquals(done.status, 303, done.text);
    assertEquals(done.headers.get("location"), "/ui/t/acme/ns/web");
    assert(!("flags/max-items.toml" in (await manifest(w)).files), "deleted");
    assertEquals((await evaluate(w, "production", "max-items")).error_code, "FLAG_NOT_FOUND");
    // nothing in a manifest refers to a flag, so no deletion is refused for that;
    // a flag the version lacks is a 404
    assertEquals((await w.page(`${EDIT}/max-items/delete`, w.writer)).status, 404);
  },
);

consoleTest("a reader gets no form and forged posts write nothing", async (w) => {
  assertEquals((await w.page(`${EDIT}/banner-text`, w.member)).status, 403);
  assertEquals((await w.page(`${EDIT}/banner-text/delete`, w.member)).status, 403);
  const before = await manifest(w);
  await forgedCommitRefused(w, `${EDIT}/banner-text`, {
    description: "sneaky",
    "variations.0.was": "plain",
    "variations.0.name": "plain",
    "variations.0.value": "Welcome",
    "variations.1.was": "sale",
    "variations.1.name": "sale",
    "variations.1.value": "Winter sale",
    default: "1",
  });
  await forgedCommitRefused(w, `${EDIT}/banner-text/delete`, { confirm: "banner-text" });
  const after = await manifest(w);
  assertEquals(after.version, before.version);
  assertEquals(after.files["flags/banner-text.toml"], FIXTURE["flags/banner-text.toml"]);
});
