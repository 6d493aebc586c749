/**
 * A new flag in the console: the type first, then controls that fit it;
 * the preview shows the file; the commit writes a flag the evaluation
 * serves; a refusal names the row and keeps what was typed; a reader's
 * forged post is refused and writes nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { consoleTest, FIXTURE } from "../world.ts";

const NEW = "/ui/t/acme/ns/web/edit/flags/_new";

consoleTest("a writer creates an object flag: type, variations, preview, commit", async (w) => {
  const choice = await w.page(NEW, w.writer);
  assertEquals(choice.status, 200);
  assert(choice.doc.querySelector("input[name=type][value=object]"), "the type choice");
  const form = await w.page(`${NEW}?type=object`, w.writer);
  assertEquals(form.status, 200);
  assert(form.doc.querySelector("textarea[name='variations.0.value'][data-json=object]"));
  const base = form.doc.querySelector("input[name=base]").getAttribute("value");
  const fields = {
    base,
    type: "object",
    key: "checkout-settings",
    description: "Checkout knobs",
    "variations.0.name": "small",
    "variations.0.value": '{"max": 3}',
    "variations.1.name": "",
    "variations.1.value": "",
    "variations.2.name": "large",
    "variations.2.value": '{"max": 30, "express": true}',
    default: "0",
    message: "Add checkout settings",
  };
  const preview = await w.post(NEW, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  assertStringIncludes(preview.text, "flags/checkout-settings.toml");
  assertStringIncludes(preview.text, "express = true");
  const done = await w.post(NEW, w.writer, { ...fields, step: "commit" });
  assertEquals(done.status, 303, done.text);
  assertEquals(done.headers.get("location"), "/ui/t/acme/ns/web/flags/checkout-settings");
  const evaluated = await w.json(
    "POST",
    "/api/v1/tenants/acme/namespaces/web/environments/production/evaluate",
    { bearer: w.admin, json: { flag: "checkout-settings", context: {} } },
  );
  assertEquals(evaluated.status, 200, JSON.stringify(evaluated.body));
  assertEquals((evaluated.body as { value: unknown }).value, { max: 3 });
});

consoleTest(
  "a value that is not of the type is refused naming its row, the input kept",
  async (w) => {
    const form = await w.page(`${NEW}?type=number`, w.writer);
    const base = form.doc.querySelector("input[name=base]").getAttribute("value");
    const refused = await w.post(NEW, w.writer, {
      base,
      type: "number",
      key: "limit",
      "variations.0.name": "ten",
      "variations.0.value": "10",
      "variations.1.name": "lots",
      "variations.1.value": "many",
      default: "0",
      message: "Add limit",
    });
    assertEquals(refused.status, 400);
    assertStringIncludes(refused.text, "is not a number");
    const value = refused.doc.querySelector("#variation-1-value");
    assertEquals(value.getAttribute("aria-invalid"), "true");
    assertEquals(value.getAttribute("value"), "many");
    assertEquals(refused.doc.querySelector("#flag-key").getAttribute("value"), "limit");
    // two variations of the same name: the second row is named
    const twice = await w.post(NEW, w.writer, {
      base,
      type: "number",
      key: "limit",
      "variations.0.name": "ten",
      "variations.0.value": "10",
      "variations.3.name": "ten",
      "variations.3.value": "11",
      default: "0",
      message: "Add limit",
    });
    assertEquals(twice.status, 400, twice.text);
    assertEquals(twice.doc.querySelector("#variation-3-name").getAttribute("aria-invalid"), "true");
  },
);

consoleTest("a reader sees no form and a forged post writes nothing", async (w) => {
  const page = await w.page(`${NEW}?type=boolean`, w.member);
  assertEquals(page.status, 403);
  const forged = await w.post(NEW, w.member, {
    base: "1",
    type: "boolean",
    key: "sneaky",
    "variations.0.name": "on",
    "variations.0.value": "true",
    "variations.1.name": "off",
    "variations.1.value": "false",
    default: "1",
    message: "sneak",
    step: "commit",
  });
  assertEquals(forged.status, 403);
  const manifest = await w.json("GET", "/api/v1/tenants/acme/namespaces/web/manifest", {
    bearer: w.admin,
    headers: { accept: "application/json" },
  });
  assertEquals(manifest.status, 200);
  assert(!("flags/sneaky.toml" in (manifest.body as { files: object }).files), "nothing written");
});

consoleTest("a flag whose key is `new` has its own edit page", async (w) => {
  await w.push({
    ...FIXTURE,
    "flags/new.toml":
      'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
  });
  const edit = await w.page("/ui/t/acme/ns/web/edit/flags/new", w.writer);
  assertEquals(edit.status, 200);
  assertEquals(edit.doc.querySelector("input[name=type]"), null, "not the new-flag form");
  assert(edit.doc.querySelector("#variation-0-name"), "the flag's variations");
});
