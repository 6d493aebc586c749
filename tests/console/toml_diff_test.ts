/**
 * TOML-aware changes (lib/console/toml_diff.ts): values compared by
 * dotted key path, not by line, listed in the new file's order.
 */
import { assertEquals } from "../assert.ts";
import { formatTomlValue, tomlChanges, tomlChangeText } from "../../lib/console/toml_diff.ts";
import { FIXTURE } from "./fixture.ts";

const lines = (before: string, after: string) => tomlChanges(before, after)?.map(tomlChangeText);

Deno.test("a flag turned off in production is one changed value", () => {
  const before = FIXTURE["flags/new-checkout.toml"]!;
  const after = before.replace("enabled = true", "enabled = false");
  assertEquals(lines(before, after), ["environments.production.enabled: true → false"]);
});

Deno.test("values in arrays of tables are named by index", () => {
  const before = FIXTURE["flags/new-checkout.toml"]!;
  const after = before.replace(
    '{ variation = "on", weight = 25 }, { variation = "off", weight = 75 }',
    '{ variation = "on", weight = 50 }, { variation = "off", weight = 50 }',
  );
  assertEquals(lines(before, after), [
    "rule[1].rollout[0].weight: 25 → 50",
    "rule[1].rollout[1].weight: 75 → 50",
  ]);
});

Deno.test("added and removed keys say so, removed ones where they stood", () => {
  assertEquals(
    lines(
      'a = 1\nold = "x"\nb = 2\n[t]\nk = true\n',
      "a = 1\nb = 3\nnew = [1, 2]\n[t]\nk = true\n[u]\n",
    ),
    [
      'old: removed (was "x")',
      "b: 2 → 3",
      "new: added = [1, 2]",
      "u: added = {}",
    ],
  );
});

Deno.test("arrays of plain values are one value", () => {
  assertEquals(lines('value = ["DE", "FR"]\n', 'value = ["DE", "FR", "NL"]\n'), [
    'value: ["DE", "FR"] → ["DE", "FR", "NL"]',
  ]);
});

Deno.test("comments and formatting alone change no value", () => {
  assertEquals(lines("a = 1\n[t]\nb = 'x'\n", '# note\na   = 1\n\n[t]\nb = "x"\n'), []);
  assertEquals(lines("a.b = 1\n", "[a]\nb = 1\n"), []);
});

Deno.test("keys that are not bare are quoted in paths", () => {
  assertEquals(lines('"a.b" = 1\n', '"a.b" = 2\n'), ['"a.b": 1 → 2']);
  assertEquals(lines('[x."y z"]\nk = 1\n', '[x."y z"]\nk = 2\n'), ['x."y z".k: 1 → 2']);
});

Deno.test("either side that does not parse gives no summary", () => {
  assertEquals(tomlChanges("a = 1\n", "a = \n"), null);
  assertEquals(tomlChanges("[[broken\n", "a = 1\n"), null);
});

Deno.test("values are written as TOML writes them", () => {
  assertEquals(formatTomlValue("off"), '"off"');
  assertEquals(formatTomlValue(false), "false");
  assertEquals(formatTomlValue(2.5), "2.5");
  assertEquals(formatTomlValue(Infinity), "inf");
  assertEquals(formatTomlValue([]), "[]");
  assertEquals(formatTomlValue({ a: { b: 1 } }), "{ a = { b = 1 } }");
});

Deno.test("dates compare as their text", () => {
  assertEquals(lines("d = 2026-01-01\n", "d = 2026-01-02\n"), [
    'd: "2026-01-01" → "2026-01-02"',
  ]);
});
