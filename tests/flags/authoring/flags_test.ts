/**
 * Authoring flags (lib/flags/authoring/flags.ts): a new flag is a clean
 * file a reviewer can read; edits change only the lines they must and keep
 * every comment; renaming a variation rewrites its uses, removing a used
 * one is refused naming them; every result validates.
 */
import { assert, assertEquals } from "../../assert.ts";
import { compileManifest, evaluateFlag } from "../../../lib/flags/evaluate.ts";
import {
  addVariation,
  createFlag,
  deleteFlag,
  removeVariation,
  renameVariation,
  setFlagDefault,
  setFlagDescription,
  setVariationValue,
  variationValueFromInput,
} from "../../../lib/flags/authoring/flags.ts";
import { applied, changedLines, exampleTexts, NAMESPACE, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const CHECKOUT = texts.get("flags/new-checkout.toml")!;
const BANNER = texts.get("flags/payment-banner.toml")!;

Deno.test("createFlag() writes a clean boolean flag", () => {
  const edits = createFlag(texts, {
    key: "dark-mode",
    type: "boolean",
    description: "Dark theme of the checkout",
    variations: [{ name: "on", value: true }, { name: "off", value: false }],
    default: "off",
  });
  const [path, text] = only(edits);
  assertEquals(path, "flags/dark-mode.toml");
  assertEquals(
    text,
    `schema_version = 1
description = "Dark theme of the checkout"
type = "boolean"
default = "off"

[variations]
on = true
off = false
`,
  );
  const m = applied(texts, edits);
  assertEquals(m.get("flags/dark-mode.toml"), text);
});

Deno.test("createFlag() writes strings and numbers as TOML reads them back", () => {
  const [, strings] = only(createFlag(texts, {
    key: "greeting",
    type: "string",
    variations: [{ name: "plain", value: 'Say "hi"\n\ttwice' }, { name: "none", value: "" }],
    default: "none",
  }));
  assertEquals(
    strings,
    'schema_version = 1\ntype = "string"\ndefault = "none"\n\n' +
      '[variations]\nplain = "Say \\"hi\\"\\n\\ttwice"\nnone = ""\n',
  );
  const [, numbers] = only(createFlag(texts, {
    key: "limits",
    type: "number",
    variations: [
      { name: "small", value: 20 },
      { name: "ratio", value: 0.25 },
      { name: "huge", value: 1e21 },
      { name: "negative", value: -3 },
    ],
    default: "small",
  }));
  const m = applied(texts, new Map([["flags/limits.toml", numbers]]));
  assert(m.has("flags/limits.toml"));
  assertEquals(
    numbers.slice(numbers.indexOf("[variations]")),
    "[variations]\nsmall = 20\nratio = 0.25\nhuge = 1e+21\nnegative = -3\n",
  );
});

Deno.test("createFlag() writes an object flag's variations as sections, as the examples do", () => {
  const edits = createFlag(texts, {
    key: "promo-banner",
    type: "object",
    variations: [
      { name: "none", value: { show: false } },
      {
        name: "promo",
        value: { show: true, text: "Pay in 3", colors: ["#fff", "#000"], size: { w: 3 } },
      },
    ],
    default: "none",
  });
  const [, text] = only(edits);
  assertEquals(
    text,
    `schema_version = 1
type = "object"
default = "none"

[variations.none]
show = false

[variations.promo]
show = true
text = "Pay in 3"
colors = ["#fff", "#000"]
size = { w = 3 }
`,
  );
  const model = compileManifest(valid(applied(texts, edits)), 1);
  assertEquals(evaluateFlag(model, "production", "promo-banner", {}).value, { show: false });
});

Deno.test("createFlag() in a manifest without namespace.toml creates it too", () => {
  const edits = createFlag(new Map(), {
    key: "a",
    type: "boolean",
    variations: [{ name: "on", value: true }],
    default: "on",
  });
  assertEquals([...edits.keys()], ["flags/a.toml", "namespace.toml"]);
  assertEquals(edits.get("namespace.toml"), "schema_version = 1\n");
  applied(new Map(), edits);
});

Deno.test("createFlag() refuses each field that is wrong, naming it", () => {
  const ok = {
    key: "x",
    type: "boolean" as const,
    variations: [{ name: "on", value: true }, { name: "off", value: false }],
    default: "off",
  };
  refused(() => createFlag(texts, { ...ok, key: "new-checkout" }), {
    message: "There is already a flag new-checkout",
    field: "key",
  });
  refused(() => createFlag(texts, { ...ok, key: "New Checkout" }), {
    message: "is not a valid flag key",
    field: "key",
  });
  refused(() => createFlag(texts, { ...ok, type: "json" as "object" }), {
    message: "Choose the flag's type",
    field: "type",
  });
  refused(() => createFlag(texts, { ...ok, variations: [] }), {
    message: "at least one variation",
    field: "variations",
  });
  refused(
    () =>
      createFlag(texts, { ...ok, variations: [...ok.variations, { name: "on", value: false }] }),
    { message: "Two variations are named on", field: "variations.2.name" },
  );
  refused(() => createFlag(texts, { ...ok, variations: [{ name: "1st", value: true }] }), {
    message: "is not a valid variation name",
    field: "variations.0.name",
  });
  refused(
    () =>
      createFlag(texts, {
        ...ok,
        variations: [{ name: "on", value: "yes" as unknown as boolean }],
      }),
    { message: "A boolean flag's value is true or false", field: "variations.0.value" },
  );
  refused(
    () =>
      createFlag(texts, {
        ...ok,
        type: "object",
        variations: [{ name: "a", value: { a: { b: null } } as never }],
        default: "a",
      }),
    { message: "value.a.b is null, which TOML cannot hold", field: "variations.0.value" },
  );
  refused(
    () =>
      createFlag(texts, {
        ...ok,
        type: "number",
        variations: [{ name: "a", value: Number.NaN }],
        default: "a",
      }),
    { message: "finite number", field: "variations.0.value" },
  );
  refused(() => createFlag(texts, { ...ok, default: "maybe" }), {
    message: 'Unknown variation "maybe" (variations: on, off)',
    field: "default",
  });
});

Deno.test("setFlagDescription() changes one line, and removes it for an empty description", () => {
  const [, text] = only(
    setFlagDescription(texts, { flag: "new-checkout", description: "Checkout v2" }),
  );
  assertEquals(changedLines(CHECKOUT, text), {
    added: ['description = "Checkout v2"'],
    removed: ['description = "New checkout flow"'],
  });
  const [, none] = only(setFlagDescription(texts, { flag: "new-checkout", description: "" }));
  assertEquals(changedLines(CHECKOUT, none), {
    added: [],
    removed: ['description = "New checkout flow"'],
  });
  const back = applied(texts, new Map([["flags/new-checkout.toml", none]]));
  const [, again] = only(
    setFlagDescription(back, { flag: "new-checkout", description: "New checkout flow" }),
  );
  assertEquals(again, CHECKOUT);
  assertEquals(
    setFlagDescription(texts, { flag: "new-checkout", description: "New checkout flow" }).size,
    0,
  );
});

Deno.test("setFlagDefault() changes the default line, refusing unknown variations", () => {
  const [, text] = only(setFlagDefault(texts, { flag: "new-checkout", variation: "on" }));
  assertEquals(changedLines(CHECKOUT, text), {
    added: ['default = "on"'],
    removed: ['default = "off"'],
  });
  refused(() => setFlagDefault(texts, { flag: "new-checkout", variation: "maybe" }), {
    message: 'Unknown variation "maybe" (variations: on, off)',
    field: "variation",
  });
  refused(() => setFlagDefault(texts, { flag: "nope", variation: "on" }), {
    message: "There is no flag nope",
    field: "flag",
  });
});

Deno.test("addVariation() appends a row, or a section for an object flag", () => {
  const [, text] = only(addVariation(texts, { flag: "max-cart-items", name: "huge", value: 1000 }));
  assertEquals(changedLines(texts.get("flags/max-cart-items.toml")!, text), {
    added: ["huge = 1000"],
    removed: [],
  });
  assert(text.includes("large = 200\nhuge = 1000\n\n[[rule]]"), text);
  const [, banner] = only(
    addVariation(texts, {
      flag: "payment-banner",
      name: "sale",
      value: { show: true, text: "-20 %" },
    }),
  );
  assert(
    banner.includes(
      'dismissible = true\n\n[variations.sale]\nshow = true\ntext = "-20 %"\n\n[[rule]]',
    ),
    banner,
  );
  const m = valid(applied(texts, new Map([["flags/payment-banner.toml", banner]])));
  assertEquals(Object.keys(m.flags["payment-banner"]!.variations), ["none", "promo", "sale"]);
  refused(() => addVariation(texts, { flag: "max-cart-items", name: "large", value: 1 }), {
    message: "max-cart-items already has a variation large",
    field: "name",
  });
  refused(
    () => addVariation(texts, { flag: "max-cart-items", name: "x", value: "many" as never }),
    {
      message: "finite number",
      field: "value",
    },
  );
});

Deno.test("renameVariation() renames in place and rewrites every use, in every scope", () => {
  const [, text] = only(
    renameVariation(texts, { flag: "new-checkout", variation: "off", name: "disabled" }),
  );
  assertEquals(changedLines(CHECKOUT, text), {
    added: [
      'default = "disabled"',
      "disabled = false",
      '  { variation = "disabled", weight = 75 },',
      'default = "disabled"',
      'variation = "disabled"',
    ],
    removed: [
      'default = "off"',
      "off = false",
      '  { variation = "off", weight = 75 },',
      'default = "off"',
      'variation = "off"',
    ],
  });
  const before = compileManifest(valid(texts), 1);
  const after = compileManifest(
    valid(applied(texts, new Map([["flags/new-checkout.toml", text]]))),
    1,
  );
  for (let i = 0; i < 200; i++) {
    const ctx = {
      targeting_key: `u-${i}`,
      user: { id: `u-${i}`, beta_opt_in: i % 7 === 0, email: i % 11 === 0 ? "a@example.com" : "" },
      account: { country: ["DE", "US"][i % 2], plan: ["pro", "free"][i % 3 % 2] },
      user_agent: i % 5 === 0 ? "Trident/7.0" : "Firefox",
    };
    for (const env of ["production", "staging"]) {
      const a = evaluateFlag(before, env, "new-checkout", ctx);
      const b = evaluateFlag(after, env, "new-checkout", ctx);
      assertEquals({ ...b, variation: b.variation === "disabled" ? "off" : b.variation }, a);
    }
  }
  assertEquals(
    renameVariation(texts, { flag: "new-checkout", variation: "on", name: "on" }).size,
    0,
  );
  refused(() => renameVariation(texts, { flag: "new-checkout", variation: "on", name: "off" }), {
    message: "new-checkout already has a variation off",
    field: "name",
  });
});

Deno.test("setVariationValue() changes the value's lines only", () => {
  const [, text] = only(
    setVariationValue(texts, {
      flag: "payment-banner",
      variation: "promo",
      value: { show: true, text: "Pay in 4", color: "#0a7d32", dismissible: true },
    }),
  );
  assertEquals(changedLines(BANNER, text), {
    added: ['text = "Pay in 4"'],
    removed: ['text = "Pay in 3 instalments, no fees"'],
  });
  refused(
    () => setVariationValue(texts, { flag: "payment-banner", variation: "promo", value: true }),
    { message: "An object flag's value is a JSON object", field: "value" },
  );
});

Deno.test("removeVariation() removes an unused variation and refuses a used one, naming its uses", () => {
  const err = refused(() => removeVariation(texts, { flag: "new-checkout", variation: "on" }), {
    message:
      "Variation on is used by flag new-checkout (rule 1, the rollout of rule 2, the default in staging): " +
      "remove those first",
    field: "variation",
  });
  assertEquals(err.details?.referenced_by, [
    { kind: "flag", key: "new-checkout", where: "rule 1", path: "rule[0]" },
    { kind: "flag", key: "new-checkout", where: "the rollout of rule 2", path: "rule[1]" },
    {
      kind: "override",
      key: "new-checkout",
      where: "the default in staging",
      path: "environments.staging.default",
    },
  ]);
  const [, text] = only(removeVariation(texts, { flag: "max-cart-items", variation: "small" }));
  assertEquals(changedLines(texts.get("flags/max-cart-items.toml")!, text), {
    added: [],
    removed: ["small = 20"],
  });
  applied(texts, new Map([["flags/max-cart-items.toml", text]]));
  const one = new Map([
    ["namespace.toml", NAMESPACE],
    [
      "flags/a.toml",
      'schema_version = 1\ntype = "boolean"\ndefault = "on"\n[variations]\non = true\n',
    ],
  ]);
  refused(() => removeVariation(one, { flag: "a", variation: "on" }), {
    message: "Variation on is used by flag a (the default)",
    field: "variation",
  });
});

Deno.test("deleteFlag() deletes the flag's file and nothing else", () => {
  const edits = deleteFlag(texts, { flag: "new-checkout" });
  assertEquals([...edits], [["flags/new-checkout.toml", null]]);
  const m = applied(texts, edits);
  assertEquals(m.size, texts.size - 1);
  refused(() => deleteFlag(texts, { flag: "nope" }), {
    message: "There is no flag nope",
    field: "flag",
  });
});

Deno.test("variationValueFromInput() reads a form's text as a value of the flag's type", () => {
  assertEquals(variationValueFromInput("boolean", "false", "v"), false);
  assertEquals(variationValueFromInput("string", " as typed ", "v"), " as typed ");
  assertEquals(variationValueFromInput("number", "-1e3", "v"), -1000);
  assertEquals(variationValueFromInput("object", '{"a": [1, "b"]}', "v"), { a: [1, "b"] });
  refused(() => variationValueFromInput("number", "ten", "variations.1.value"), {
    message: '"ten" is not a number',
    field: "variations.1.value",
  });
  refused(() => variationValueFromInput("object", "[1]", "value"), {
    message: "An object flag's value is a JSON object",
    field: "value",
  });
  refused(() => variationValueFromInput("object", "{", "value"), {
    message: "The value is not JSON",
    field: "value",
  });
});
