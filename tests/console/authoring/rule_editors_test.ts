/**
 * A flag's rules in the console: the rules page lists them in order with
 * their segment, what they serve (rollouts as bars) and plain buttons;
 * adding a rule that serves a 30/70 rollout to a segment writes it and the
 * evaluation spreads contexts between both variations; weights that do
 * not add up are refused naming the weights; moving a rule up keeps the
 * file's comments; removing one; an environment's own rules; a reader
 * sees no form and a forged post writes nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { formFields, pressed } from "../forms.ts";
import { consoleTest, type ConsoleWorld, FIXTURE, type LoadedPage } from "../world.ts";
import {
  evaluate as evaluateFlag,
  fileText,
  forgedCommitRefused,
  manifest,
  previewThenCommit,
} from "./helpers.ts";

const RULES = "/ui/t/acme/ns/web/edit/flags/new-checkout/rules";

/** The head version of acme/web. */
const headVersion = async (w: ConsoleWorld): Promise<number> => (await manifest(w)).version;

/** Evaluates new-checkout in an environment for a context. */
const evaluate = (w: ConsoleWorld, env: string, context: Record<string, unknown>) =>
  evaluateFlag(w, env, "new-checkout", context);

/** Presses a button of a page by its text; it must be a `<button>`. */
function button(page: LoadedPage, label: string) {
  const found = [...page.doc.querySelectorAll("button")].find((b) =>
    b.textContent.trim() === label
  );
  assert(found !== undefined, `no button "${label}" in:\n${page.text}`);
  return found;
}

/** Presses the button labelled `label` and returns what its form posts. */
function press(
  page: LoadedPage,
  label: string,
): { action: string; fields: Record<string, string> } {
  const b = button(page, label);
  b.setAttribute("data-pressed", "yes");
  const fields = pressed(page, "button[data-pressed=yes]");
  return { action: b.closest("form").getAttribute("action"), fields };
}

/** The add form's fields as the rules page draws them (radios left to the caller). */
function addForm(page: LoadedPage): Record<string, string> {
  const fields = pressed(page, "section[aria-labelledby=add-rule] button[value=preview]");
  delete fields.serve;
  return fields;
}

consoleTest(
  "the rules page lists the rules in order, rollouts as bars, plain buttons",
  async (w) => {
    const page = await w.page(RULES, w.writer);
    assertEquals(page.status, 200, page.text);
    const items = page.doc.querySelectorAll("#rules > li");
    assertEquals(items.length, 2);
    assertStringIncludes(items[0].textContent, "beta-testers");
    assertStringIncludes(items[0].textContent, "serve on");
    assertStringIncludes(items[1].textContent, "eu-customers");
    assert(items[1].querySelector("svg.bar[role=img]"), "the rollout as a bar");
    assertStringIncludes(items[1].querySelector("svg.bar").getAttribute("aria-label"), "on 25%");
    // every reorder is a plain button in a form, named after the rule: no drag, no script
    for (const label of ["Move rule 2 up", "Move rule 1 down", "Remove rule 1", "Remove rule 2"]) {
      const b = button(page, label);
      assertEquals(b.tagName, "BUTTON");
      assertEquals(b.getAttribute("type"), "submit");
      assertEquals(b.closest("form").getAttribute("method"), "post");
    }
    assertEquals(page.doc.querySelectorAll("[draggable]").length, 0);
    assert(!page.text.includes("Move rule 1 up") && !page.text.includes("Move rule 2 down"));
    const edit = [...page.doc.querySelectorAll("a")].find((a) =>
      a.textContent.trim() === "Edit rule 2"
    );
    assertEquals(edit.getAttribute("href"), `${RULES}/replace?index=1`);
    // the add form: every segment, a weight per variation, summed as you type
    const segments = [...page.doc.querySelectorAll("#rule-segment option")].map((o) =>
      o.getAttribute("value")
    );
    assertEquals(segments, ["", "beta-testers", "eu-customers", "paying"]);
    const weights = page.doc.querySelectorAll("fieldset[data-weights] input[data-weight]");
    assertEquals(weights.length, 2);
    for (const input of weights) {
      const id = input.getAttribute("id");
      assert(page.doc.querySelector(`label[for="${id}"]`), `a label for ${id}`);
    }
    const sum = page.doc.querySelector("fieldset[data-weights] [data-weight-sum]");
    assertEquals(sum.getAttribute("aria-live"), "polite");
  },
);

consoleTest(
  "a writer adds a 30/70 rollout on a segment: written, and contexts spread",
  async (w) => {
    const page = await w.page(RULES, w.writer);
    const fields: Record<string, string> = {
      ...addForm(page),
      at: "0",
      segment: "paying",
      serve: "rollout",
      "rollout.0.weight": "30",
      "rollout.1.weight": "70",
      message: "Try the new checkout on paying customers",
    };
    assertEquals(fields["rollout.0.variation"], "on");
    assertEquals(fields["rollout.1.variation"], "off");
    const add = `${RULES}/add`;
    const preview = await w.post(add, w.writer, fields);
    assertEquals(preview.status, 200, preview.text);
    assertStringIncludes(preview.text, "flags/new-checkout.toml");
    assertStringIncludes(preview.doc.querySelector("pre.diff").textContent, '+segment = "paying"');
    // the preview draws the rollout as the bar the flag page shows
    assertStringIncludes(preview.doc.querySelector("svg.bar").getAttribute("aria-label"), "on 30%");
    const done = await w.post(add, w.writer, { ...formFields(preview, "commit") });
    assertEquals(done.status, 303, done.text);
    assertEquals(done.headers.get("location"), RULES);
    const file = await fileText(w, "flags/new-checkout.toml");
    assertStringIncludes(
      file!,
      '[[rule]]\nsegment = "paying"\nrollout = [\n  { variation = "on", weight = 30 },\n' +
        '  { variation = "off", weight = 70 },\n]\n',
    );
    assert(file!.indexOf('"paying"') < file!.indexOf('"beta-testers"'), "added first");
    // the rules page shows it first, as a bar
    const after = await w.page(RULES, w.writer);
    const first = after.doc.querySelector("#rules > li");
    assertStringIncludes(first.textContent, "paying");
    assertStringIncludes(first.querySelector("svg.bar").getAttribute("aria-label"), "on 30%");
    // paying customers are spread between both variations, about 30/70
    const served = { on: 0, off: 0 } as Record<string, number>;
    const n = 300;
    for (let i = 0; i < n; i++) {
      const r = await evaluate(w, "production", {
        targeting_key: `customer-${i}`,
        account: { plan: "pro" },
      });
      assertEquals(r.reason, "SPLIT", JSON.stringify(r));
      assertEquals(r.rule_index, 0);
      served[r.variation] = (served[r.variation] ?? 0) + 1;
    }
    assert(served.on! > 0 && served.off! > 0, JSON.stringify(served));
    assert(
      served.on! > n * 0.18 && served.on! < n * 0.42,
      `about 30% on: ${JSON.stringify(served)}`,
    );
  },
);

consoleTest("weights that do not add up are refused naming the weights, inputs kept", async (w) => {
  const page = await w.page(RULES, w.writer);
  const before = await headVersion(w);
  const refused = await w.post(`${RULES}/add`, w.writer, {
    ...addForm(page),
    segment: "paying",
    serve: "rollout",
    "rollout.0.weight": "30",
    "rollout.1.weight": "60",
    bucket_by: "user.id",
    message: "Bad split",
  });
  assertEquals(refused.status, 400, refused.text);
  assertStringIncludes(refused.doc.querySelector("#edit-refusal").textContent, "sum to 90");
  for (const input of refused.doc.querySelectorAll("input[data-weight]")) {
    assertEquals(input.getAttribute("aria-invalid"), "true");
    assertStringIncludes(input.getAttribute("aria-describedby"), "edit-refusal");
  }
  assertEquals(refused.doc.querySelector("#rule-weight-1").getAttribute("value"), "60");
  assertEquals(refused.doc.querySelector("#rule-bucket-by").getAttribute("value"), "user.id");
  assertStringIncludes(refused.doc.querySelector("[data-weight-sum]").textContent, "90");
  // a weight that is not a whole number names its own input
  const notNumber = await w.post(`${RULES}/add`, w.writer, {
    ...addForm(page),
    serve: "rollout",
    "rollout.0.weight": "thirty",
    "rollout.1.weight": "70",
    message: "Bad weight",
  });
  assertEquals(notNumber.status, 400);
  assertEquals(notNumber.doc.querySelector("#rule-weight-0").getAttribute("aria-invalid"), "true");
  assertEquals(notNumber.doc.querySelector("#rule-weight-1").getAttribute("aria-invalid"), null);
  // serving a variation without choosing one names the variation
  const none = await w.post(`${RULES}/add`, w.writer, {
    ...addForm(page),
    serve: "variation",
    variation: "",
    message: "No variation",
  });
  assertEquals(none.status, 400);
  assertEquals(none.doc.querySelector("#rule-variation").getAttribute("aria-invalid"), "true");
  assertEquals(await headVersion(w), before, "nothing committed");
});

consoleTest("moving rule 2 up swaps the rules and keeps the file's comments", async (w) => {
  const commented = FIXTURE["flags/new-checkout.toml"]!
    .replace(
      '[[rule]]\nsegment = "beta-testers"',
      '# beta first\n[[rule]]\nsegment = "beta-testers"',
    )
    .replace(
      '[[rule]]\nsegment = "eu-customers"',
      '# then the EU\n[[rule]]\nsegment = "eu-customers"',
    );
  await w.push({ ...FIXTURE, "flags/new-checkout.toml": commented }, "comments");
  const page = await w.page(RULES, w.writer);
  const { action, fields } = press(page, "Move rule 2 up");
  assertEquals(action, `${RULES}/move`);
  assertEquals(fields.step, "preview");
  assertEquals(fields.message, "Move rule 2 of new-checkout up");
  const preview = await w.post(action, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  assert(preview.doc.querySelector("button[name=step][value=commit]"), "one more press commits");
  const done = await w.post(action, w.writer, formFields(preview, "commit"));
  assertEquals(done.status, 303, done.text);
  assertEquals(done.headers.get("location"), RULES);
  const file = (await fileText(w, "flags/new-checkout.toml"))!;
  assertStringIncludes(
    file,
    '# then the EU\n[[rule]]\nsegment = "eu-customers"\nrollout = [ { variation = "on", weight = 25 }, ' +
      '{ variation = "off", weight = 75 } ]\n# beta first\n[[rule]]\nsegment = "beta-testers"\n',
  );
  const eu = await evaluate(w, "production", {
    targeting_key: "k",
    user: { beta: true },
    account: { country: "DE", plan: "pro" },
  });
  assertEquals(eu.rule_index, 0);
});

consoleTest("removing a rule: the button's preview, then the commit", async (w) => {
  const page = await w.page(RULES, w.writer);
  const { action, fields } = press(page, "Remove rule 1");
  assertEquals(action, `${RULES}/remove`);
  const preview = await w.post(action, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  assertStringIncludes(preview.text, "Remove rule 1 of new-checkout");
  const done = await w.post(action, w.writer, formFields(preview, "commit"));
  assertEquals(done.status, 303, done.text);
  const file = (await fileText(w, "flags/new-checkout.toml"))!;
  assert(!file.includes("beta-testers"), file);
  assertStringIncludes(file, 'segment = "eu-customers"');
  const after = await w.page(RULES, w.writer);
  assertEquals(after.doc.querySelectorAll("#rules > li").length, 1);
});

consoleTest("editing a rule: the form shows it as written, and replaces it", async (w) => {
  const url = `${RULES}/replace?index=1`;
  const form = await w.page(url, w.writer);
  assertEquals(form.status, 200, form.text);
  assertEquals(form.doc.querySelector("#rule-serve-rollout").hasAttribute("checked"), true);
  assertEquals(form.doc.querySelector("#rule-weight-0").getAttribute("value"), "25");
  assertEquals(
    form.doc.querySelector("#rule-segment option[selected]").getAttribute("value"),
    "eu-customers",
  );
  const fields = pressed(form, "button[value=preview]");
  const done = await previewThenCommit(w, `${RULES}/replace`, {
    ...fields,
    serve: "variation",
    variation: "off",
    message: "EU customers stay on the old checkout",
  });
  assertEquals(done.status, 303, done.text);
  const file = (await fileText(w, "flags/new-checkout.toml"))!;
  assertStringIncludes(file, '[[rule]]\nsegment = "eu-customers"\nvariation = "off"\n');
  const missing = await w.page(`${RULES}/replace?index=7`, w.writer);
  assertStringIncludes(missing.text, "has no rule 8");
});

consoleTest("an environment follows the flag's rules until it gets its own", async (w) => {
  const staging = `${RULES}?env=staging`;
  const page = await w.page(staging, w.writer);
  assertEquals(page.status, 200, page.text);
  assertStringIncludes(page.doc.querySelector("#follows-flag").textContent, "the flag's rules");
  assertEquals(page.doc.querySelectorAll("ol.rules > li").length, 2);
  const { action, fields } = press(page, "Give staging rules of its own");
  const done = await previewThenCommit(w, action, fields);
  assertEquals(done.status, 303, done.text);
  assertEquals(done.headers.get("location"), staging);
  // staging's own rules: add one for everyone, first
  const own = await w.page(staging, w.writer);
  assertEquals(own.doc.querySelectorAll("#rules > li").length, 2);
  const add = `${RULES}/add?env=staging`;
  const preview2 = await w.post(add, w.writer, {
    ...addForm(own),
    at: "0",
    serve: "variation",
    variation: "on",
    message: "Everyone in staging",
  });
  assertEquals(preview2.status, 200, preview2.text);
  assertStringIncludes(preview2.text, "staging");
  const done2 = await w.post(add, w.writer, formFields(preview2, "commit"));
  assertEquals(done2.status, 303, done2.text);
  const file = (await fileText(w, "flags/new-checkout.toml"))!;
  assertStringIncludes(file, '[[environments.staging.rule]]\nvariation = "on"\n');
  assertEquals((await evaluate(w, "staging", { targeting_key: "anyone" })).variation, "on");
  assertEquals((await evaluate(w, "production", { targeting_key: "anyone" })).variation, "off");
  const unknown = await w.page(`${RULES}?env=qa`, w.writer);
  assertEquals(unknown.status, 404);
});

consoleTest("a reader sees no rules editor and a forged post writes nothing", async (w) => {
  for (const path of [RULES, `${RULES}/add`, `${RULES}/replace?index=0`, `${RULES}/move`]) {
    assertEquals((await w.page(path, w.member)).status, 403, path);
  }
  const before = await fileText(w, "flags/new-checkout.toml");
  const version = String(await headVersion(w));
  await forgedCommitRefused(w, `${RULES}/move`, { from: "1", to: "0" });
  await forgedCommitRefused(w, `${RULES}/remove`, { index: "0" });
  await forgedCommitRefused(w, `${RULES}/add`, { serve: "variation", variation: "on" });
  assertEquals(await fileText(w, "flags/new-checkout.toml"), before);
  assertEquals(String(await headVersion(w)), version);
});
