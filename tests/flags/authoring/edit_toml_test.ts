/**
 * The text editing every authoring edit shares (lib/flags/authoring/
 * edit_toml.ts): only what differs is rewritten, where the file writes it;
 * comments, blank lines and layout elsewhere stay; long lists change one
 * line per value; moved sections keep their comments; and whatever the
 * layout, the text reads back as the data asked for.
 */
import fc from "fast-check";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { InvalidRequestError } from "../../../lib/errors.ts";
import {
  type Doc,
  newToml,
  readData,
  rewriteToml,
  sameValue,
} from "../../../lib/flags/authoring/edit_toml.ts";
import { changedLines } from "./world.ts";

const NAMES = { file: "file test.toml", editor: "the console" };

/** The text rewritten after `change` edits its data. */
function edited(text: string, change: (doc: Doc) => void): string {
  const doc = readData(text, NAMES);
  change(doc);
  const out = rewriteToml(text, doc, NAMES);
  assert(sameValue(readData(out, NAMES), doc), out);
  return out;
}

const FLAG = `schema_version = 1
# Owned by the payments team.
description = "New checkout flow"
type    = "boolean"   # aligned on purpose
default = "off"

[variations]
on = true   # the new flow
off = false

# beta testers always get it
[[rule]]
segment = "beta-testers"
variation = "on"

# the EU split
[[rule]]
segment = "eu-customers"
rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]

[environments.production]
enabled = true # flipped at launch
default = "off"
`;

Deno.test("rewriteToml() changes a value in place, keeping its comment", () => {
  const out = edited(FLAG, (d) => d.environments.production.enabled = false);
  assertEquals(out, FLAG.replace("enabled = true # flipped", "enabled = false # flipped"));
});

Deno.test("rewriteToml() gives back the same text when nothing changes", () => {
  assert(rewriteToml(FLAG, readData(FLAG, NAMES), NAMES) === FLAG);
});

Deno.test("rewriteToml() writes a new key before the next key the file has", () => {
  const out = edited(FLAG, (d) => {
    const { production } = d.environments;
    d.environments.production = { enabled: production.enabled, rule: [], default: "off" };
  });
  assertEquals(changedLines(FLAG, out), { added: ["rule = []"], removed: [] });
  assert(out.includes('enabled = true # flipped at launch\nrule = []\ndefault = "off"\n'), out);
});

Deno.test("rewriteToml() removes a row with the comment lines right above it", () => {
  const out = edited(FLAG, (d) => delete d.description);
  assertEquals(changedLines(FLAG, out), {
    added: [],
    removed: ["# Owned by the payments team.", 'description = "New checkout flow"'],
  });
});

Deno.test("rewriteToml() inserts an array element before the next, with its own blank line", () => {
  const out = edited(FLAG, (d) => d.rule.splice(1, 0, { variation: "off" }));
  assertEquals(
    out,
    FLAG.replace("# the EU split", '[[rule]]\nvariation = "off"\n\n# the EU split'),
  );
});

Deno.test("rewriteToml() moves array elements with their comments", () => {
  const out = edited(FLAG, (d) => d.rule.reverse());
  const beta =
    '# beta testers always get it\n[[rule]]\nsegment = "beta-testers"\nvariation = "on"\n';
  const eu = '# the EU split\n[[rule]]\nsegment = "eu-customers"\n' +
    'rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]\n';
  assertEquals(out, FLAG.replace(`${beta}\n${eu}`, `${eu}\n${beta}`));
});

Deno.test("rewriteToml() edits a changed element in place, keeping its comment", () => {
  const out = edited(FLAG, (d) => d.rule[0] = { segment: "beta-testers", variation: "off" });
  assertEquals(changedLines(FLAG, out), {
    added: ['variation = "off"'],
    removed: ['variation = "on"'],
  });
});

Deno.test("rewriteToml() removes an element with its comment and one blank line", () => {
  const out = edited(FLAG, (d) => d.rule.splice(0, 1));
  assertEquals(
    out,
    FLAG.replace(
      '# beta testers always get it\n[[rule]]\nsegment = "beta-testers"\nvariation = "on"\n\n',
      "",
    ),
  );
});

Deno.test("rewriteToml() writes a new table as a section after its family", () => {
  const out = edited(FLAG, (d) => d.environments.staging = { enabled: false, rule: [] });
  assertEquals(out, `${FLAG}\n[environments.staging]\nenabled = false\nrule = []\n`);
});

Deno.test("rewriteToml() writes a new array of tables as sections before the next key's", () => {
  const text = 'schema_version = 1\ndefault = "off"\n\n[variations]\non = true\n\n' +
    "[environments.production]\nenabled = false\n";
  const out = edited(text, (d) => {
    const { environments, ...rest } = d;
    for (const k of Object.keys(d)) delete d[k];
    Object.assign(d, rest, { rule: [{ variation: "on" }], environments });
  });
  assertEquals(
    out,
    'schema_version = 1\ndefault = "off"\n\n[variations]\non = true\n\n' +
      '[[rule]]\nvariation = "on"\n\n[environments.production]\nenabled = false\n',
  );
});

Deno.test("rewriteToml() gives a table that only its sub-tables imply a header before them", () => {
  const text = 'schema_version = 1\n\n[[environments.production.rule]]\nvariation = "on"\n';
  const out = edited(text, (d) => {
    d.environments.production = { enabled: false, rule: d.environments.production.rule };
  });
  assertEquals(
    out,
    "schema_version = 1\n\n[environments.production]\nenabled = false\n\n" +
      '[[environments.production.rule]]\nvariation = "on"\n',
  );
});

Deno.test("rewriteToml() follows a file without blank lines between sections", () => {
  const text = 'default = "off"\n[variations]\non = true\n[[rule]]\nvariation = "on"\n';
  const out = edited(text, (d) => d.rule.unshift({ variation: "off" }));
  assertEquals(
    out,
    'default = "off"\n[variations]\non = true\n[[rule]]\nvariation = "off"\n[[rule]]\nvariation = "on"\n',
  );
});

const LIST = `[[predicate]]
attribute = "user.id"
op = "in"
value = [
  "u-1",
  "u-2", # the founder
  "u-3",
]
`;

Deno.test("rewriteToml() changes one value of a long list on its own line", () => {
  const out = edited(LIST, (d) => d.predicate[0].value[1] = "u-22");
  assertEquals(changedLines(LIST, out), {
    added: ['  "u-22", # the founder'],
    removed: ['  "u-2", # the founder'],
  });
});

Deno.test("rewriteToml() adds and removes values of a long list one line each", () => {
  const added = edited(LIST, (d) => d.predicate[0].value.splice(1, 0, "u-15"));
  assertEquals(changedLines(LIST, added), { added: ['  "u-15",'], removed: [] });
  const appended = edited(LIST, (d) => d.predicate[0].value.push("u-4"));
  assertEquals(changedLines(LIST, appended), { added: ['  "u-4",'], removed: [] });
  const removed = edited(LIST, (d) => d.predicate[0].value.splice(2, 1));
  assertEquals(changedLines(LIST, removed), { added: [], removed: ['  "u-3",'] });
});

Deno.test("rewriteToml() keeps a list without a trailing comma that way", () => {
  const text = 'value = [\n  "a",\n  "b"\n]\n';
  const out = edited(text, (d) => d.value.push("c"));
  assertEquals(out, 'value = [\n  "a",\n  "b",\n  "c"\n]\n');
});

Deno.test("rewriteToml() breaks a list that no longer fits on its line into one value a line", () => {
  const text = 'value = ["a"]\n';
  const ids = Array.from({ length: 12 }, (_, i) => `user-${i}`);
  const out = edited(text, (d) => d.value = ids);
  assertEquals(out, `value = [\n${ids.map((id) => `  "${id}",\n`).join("")}]\n`);
  assertEquals(edited(text, (d) => d.value = ["a", "b"]), 'value = ["a", "b"]\n');
});

Deno.test("rewriteToml() renames a key where it stands", () => {
  const out = edited(FLAG, (d) => {
    d.variations = { yes: true, off: false };
  });
  assertEquals(changedLines(FLAG, out), {
    added: ["yes = true   # the new flow"],
    removed: ["on = true   # the new flow"],
  });
  const banner = "[variations.none]\nshow = false\n\n[variations.promo]\nshow = true\n";
  const renamed = edited(
    banner,
    (d) => d.variations = { none: d.variations.none, sale: { show: true } },
  );
  assertEquals(renamed, banner.replace("[variations.promo]", "[variations.sale]"));
});

Deno.test("rewriteToml() keeps CRLF line endings and tab indentation", () => {
  const text = "[t]\r\n\ta = 1\r\n\tb = 2\r\n";
  const out = edited(text, (d) => d.t.c = 3);
  assertEquals(out, "[t]\r\n\ta = 1\r\n\tb = 2\r\n\tc = 3\r\n");
});

Deno.test("rewriteToml() falls back to toml-patch for layouts it does not edit", () => {
  const text = "environments = { production = { enabled = true } } # inline\n";
  const out = edited(text, (d) => d.environments.production.rule = [{ variation: "on" }]);
  assert(out.includes("# inline"), out);
});

Deno.test("rewriteToml() refuses a text that is not TOML", () => {
  assertThrows(() => rewriteToml("a = = 1\n", {}, NAMES), InvalidRequestError, "not valid TOML");
});

Deno.test("newToml() writes a readable file: top-level values, then sections", () => {
  assertEquals(
    newToml({
      schema_version: 1,
      description: "Banner",
      type: "object",
      default: "none",
      variations: { none: { show: false }, promo: { show: true, tags: ["a", "b"] } },
    }),
    'schema_version = 1\ndescription = "Banner"\ntype = "object"\ndefault = "none"\n\n' +
      '[variations.none]\nshow = false\n\n[variations.promo]\nshow = true\ntags = ["a", "b"]\n',
  );
});

/** Random TOML-shaped data: tables of scalars, arrays, sub-tables and arrays of tables. */
const key = fc.constantFrom("a", "b", "c", "d", "rule", "with space", "x.y");
const scalar = fc.oneof(
  fc.string({ maxLength: 8 }).filter((s) => s.isWellFormed()),
  fc.integer({ min: -1000, max: 1000 }),
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
);
const { table } = fc.letrec<{ table: Doc; value: unknown }>((tie) => ({
  table: fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(scalar, { maxLength: 14 }),
    tie("table"),
    fc.array(tie("table"), { minLength: 1, maxLength: 3 }),
  ),
}));

Deno.test("rewriteToml() always reads back as the data asked for (random documents and edits)", () => {
  const arrays = (path: readonly (string | number)[]) => path.length === 1 && path[0] === "rule";
  fc.assert(
    fc.property(table, table, (before, after) => {
      const text = newToml(before as Doc, arrays);
      assert(sameValue(readData(text, NAMES), before), text);
      const out = rewriteToml(text, after as Doc, { ...NAMES, arrays });
      assert(sameValue(readData(out, NAMES), after), `${text}\n=>\n${out}`);
      // And back again, from the edited layout.
      const back = rewriteToml(out, before as Doc, { ...NAMES, arrays });
      assert(sameValue(readData(back, NAMES), before), `${out}\n=>\n${back}`);
    }),
    { numRuns: 300 },
  );
});
