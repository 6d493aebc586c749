import { assertEquals } from "./assert.ts";
import { describe, FieldChecker, keyPath } from "../lib/toml_fields.ts";
import { validateManifest } from "../lib/flags/validate.ts";
import { loadModel } from "../lib/workspace/load.ts";

/** Runs `check` on a fresh checker and returns its result and its problem lines. */
function run<T>(check: (c: FieldChecker) => T): [T, string[]] {
  const c = new FieldChecker("x.toml");
  const out = check(c);
  return [out, c.problems.map((p) => `${p.key ?? ""}: ${p.message}`)];
}

Deno.test("keyPath() joins keys with dots, indices in brackets, and quotes keys that are not bare", () => {
  assertEquals(keyPath("", "resolve"), "resolve");
  assertEquals(keyPath(keyPath("resolve", "rule"), 0), "resolve.rule[0]");
  assertEquals(keyPath("namespace.environments", "Prod env"), 'namespace.environments."Prod env"');
});

Deno.test("describe() names a value's type and shows short values", () => {
  assertEquals(describe("x"), 'the string "x"');
  assertEquals(describe("y".repeat(50)), `the string "${"y".repeat(37)}..."`);
  assertEquals(describe(3), "the integer 3");
  assertEquals(describe(2.5), "the number 2.5");
  assertEquals([describe(NaN), describe(Infinity), describe(-Infinity)], ["nan", "inf", "-inf"]);
  assertEquals(describe(false), "the boolean false");
  assertEquals([describe([1]), describe({})], ["an array", "a table"]);
});

Deno.test("unknownKeys() reports each key not allowed, listing the allowed ones", () => {
  const [, lines] = run((c) => c.unknownKeys({ a: 1, typo: 2, "b c": 3 }, "t", ["a"]));
  assertEquals(lines, [
    't.typo: unknown key "typo" (allowed: a)',
    't."b c": unknown key "b c" (allowed: a)',
  ]);
});

Deno.test("schemaVersion() requires the supported integer", () => {
  const lines = (t: Record<string, unknown>) => run((c) => c.schemaVersion(t, 1))[1];
  assertEquals(lines({ schema_version: 1 }), []);
  assertEquals(lines({}), ["schema_version: required field is missing (use schema_version = 1)"]);
  assertEquals(lines({ schema_version: "1" }), [
    'schema_version: expected an integer, found the string "1"',
  ]);
  assertEquals(lines({ schema_version: 1.5 }), [
    "schema_version: expected an integer, found the number 1.5",
  ]);
  assertEquals(lines({ schema_version: 2 }), [
    "schema_version: unsupported schema_version 2 (this cfgtool reads schema_version 1)",
  ]);
});

Deno.test("string(), integer() and boolean() return the value, or report it missing or wrong", () => {
  const t = { s: "x", i: 7, b: true };
  assertEquals(run((c) => [c.string(t, "", "s", true), c.integer(t, "", "i", true)]), [
    ["x", 7],
    [],
  ]);
  assertEquals(run((c) => c.boolean(t, "", "b", true)), [true, []]);
  assertEquals(run((c) => c.string({}, "p", "s", false)), [undefined, []]);
  assertEquals(run((c) => c.string({}, "p", "s", true)), [undefined, [
    "p.s: required field is missing",
  ]]);
  assertEquals(run((c) => c.string(t, "", "i", true)), [undefined, [
    "i: expected a string, found the integer 7",
  ]]);
  assertEquals(run((c) => c.integer({ i: 2.5 }, "", "i", false)), [undefined, [
    "i: expected an integer, found the number 2.5",
  ]]);
  assertEquals(run((c) => c.boolean({ b: "yes" }, "", "b", false)), [undefined, [
    'b: expected a boolean, found the string "yes"',
  ]]);
});

Deno.test("integer() with a range reports values outside it", () => {
  const range = { min: 0, max: 100 };
  assertEquals(run((c) => c.integer({ w: 100 }, "", "w", true, range)), [100, []]);
  assertEquals(run((c) => c.integer({ w: 101 }, "", "w", true, range)), [undefined, [
    "w: expected an integer from 0 to 100, found the integer 101",
  ]]);
});

Deno.test("present() reports a missing field that the caller checks itself", () => {
  assertEquals(run((c) => c.present({ a: 1 }, "", "a")), [true, []]);
  assertEquals(run((c) => c.present({}, "t", "a")), [false, ["t.a: required field is missing"]]);
});

Deno.test("table() and asTable() return tables and report other values", () => {
  assertEquals(run((c) => c.table({ t: { a: 1 } }, "", "t", true)), [{ a: 1 }, []]);
  assertEquals(run((c) => c.table({}, "", "t", true)), [undefined, [
    "t: required table is missing",
  ]]);
  assertEquals(run((c) => c.table({ t: [1] }, "", "t", false)), [undefined, [
    "t: expected a table, found an array",
  ]]);
  assertEquals(run((c) => c.asTable(3, "a.b")), [undefined, [
    "a.b: expected a table, found the integer 3",
  ]]);
});

Deno.test("tables() keeps a slot per item, naming the [[header]] to write", () => {
  assertEquals(run((c) => c.tables({ rule: [{ a: 1 }, 2] }, "resolve", "rule", true)), [
    [{ a: 1 }, undefined],
    ["resolve.rule[1]: expected a table, found the integer 2"],
  ]);
  assertEquals(run((c) => c.tables({}, "resolve", "rule", true)), [undefined, [
    "resolve.rule: required field is missing (add at least one [[resolve.rule]])",
  ]]);
  assertEquals(run((c) => c.tables({}, "", "rule", false)), [undefined, []]);
  assertEquals(run((c) => c.tables({ rule: "x" }, "", "rule", false)), [undefined, [
    'rule: expected an array of tables ([[rule]]), found the string "x"',
  ]]);
});

Deno.test("report() leaves out an empty key path", () => {
  const c = new FieldChecker("x.toml");
  c.report("", "whole file");
  c.report("k", "one key");
  assertEquals(c.problems, [
    { path: "x.toml", message: "whole file" },
    { path: "x.toml", key: "k", message: "one key" },
  ]);
});

// The same mistake reads the same in a workspace and in a flag manifest.

const enc = new TextEncoder();
const workspaceMessages = (path: string, text: string) =>
  loadModel(new Map([[path, enc.encode(text)]])).problems.filter((p) => p.path === path)
    .map((p) => `${p.key}: ${p.message}`);
const manifestMessages = (path: string, text: string) =>
  validateManifest(
    new Map([["namespace.toml", enc.encode("schema_version = 1\n")], [path, enc.encode(text)]]),
  ).problems.filter((p) => p.path === path).map((p) => `${p.key}: ${p.message}`);

const PREDICATE = '[[predicate]]\nattribute = "plan"\nop = "eq"\nvalue = "pro"\n';

Deno.test("the workspace loader and the flag validator word the same mistakes the same way", () => {
  const cases: [string, string[]][] = [
    [`schema_version = 2\n${PREDICATE}`, [
      "schema_version: unsupported schema_version 2 (this cfgtool reads schema_version 1)",
    ]],
    [`schema_version = "1"\n${PREDICATE}`, [
      'schema_version: expected an integer, found the string "1"',
    ]],
    [`description = 'x'\n${PREDICATE}`, [
      "schema_version: required field is missing (use schema_version = 1)",
    ]],
    [`schema_version = 1\ndescription = 3\n${PREDICATE}`, [
      "description: expected a string, found the integer 3",
    ]],
    ["schema_version = 1\n", [
      "predicate: required field is missing (add at least one [[predicate]])",
    ]],
    ['schema_version = 1\npredicate = "x"\n', [
      'predicate: expected an array of tables ([[predicate]]), found the string "x"',
    ]],
    ["schema_version = 1\npredicate = [1]\n", [
      "predicate[0]: expected a table, found the integer 1",
    ]],
  ];
  for (const [text, expected] of cases) {
    assertEquals(workspaceMessages("qualifiers/q.toml", text), expected, text);
    assertEquals(manifestMessages("segments/q.toml", text), expected, text);
  }
  const typo = 'unknown key "typo" (allowed: schema_version, description';
  assertEquals(
    workspaceMessages("qualifiers/q.toml", `schema_version = 1\ntypo = 1\n${PREDICATE}`),
    [`typo: ${typo}, predicate)`],
  );
  assertEquals(
    manifestMessages("segments/q.toml", `schema_version = 1\ntypo = 1\n${PREDICATE}`),
    [`typo: ${typo}, match, predicate)`],
  );
});
