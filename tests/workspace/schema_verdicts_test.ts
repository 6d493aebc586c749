import fc from "fast-check";
import { assert, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import type { SchemaChecker } from "../../lib/workspace/schema_check.ts";
import {
  encodeEntry,
  parseVerdictRecord,
  recordingChecker,
  renderVerdictRecord,
  VERDICT_FORMAT,
  verdictChecker,
  VerdictMissingError,
  type VerdictRecord,
} from "../../lib/workspace/schema_verdicts.ts";
import { ajvSchemaChecker } from "../../lib/workspace/schemas.ts";

const SCHEMA = JSON.stringify({
  type: "object",
  required: ["n"],
  properties: { n: { type: "integer", minimum: 0 } },
});
const S = "schemas/s.schema.json";
const E = "catalogs/s-entries/e.toml";

/** A record that vouches for `entries` under SCHEMA. */
function recordOf(entries: unknown[], checker = "id"): VerdictRecord {
  return {
    checker,
    schemas: new Map([[SCHEMA, new Set(entries.map((e) => encodeEntry(e)!))]]),
  };
}

/** The values a TOML entry can hold (after lib/toml.ts), nested. */
const tomlValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.string(),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 4 }),
    // spread: plain objects, as lib/toml.ts returns them (own "__proto__" keys stay keys)
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 4 }).map((d) => ({ ...d })),
  ),
})).value;

Deno.test("encodeEntry() gives one encoding to equal values and another to different ones", () => {
  fc.assert(
    fc.property(tomlValue, tomlValue, (a, b) => {
      const ea = encodeEntry(a);
      const eb = encodeEntry(b);
      assert(ea !== undefined && eb !== undefined);
      assertEquals(encodeEntry(structuredClone(a)), ea);
      if (ea === eb) assertEquals(a, b);
    }),
    { numRuns: 500 },
  );
});

Deno.test("encodeEntry() tells apart values that JSON would merge", () => {
  const pairs: [unknown, unknown][] = [
    [1, "1"],
    [0, -0],
    [NaN, null],
    [Infinity, null],
    [true, "true"],
    [[], {}],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }],
    [["a,b"], ["a", "b"]],
    [{ "a": "b" }, { "a:s": "b" }],
    [1n, 1],
  ];
  for (const [a, b] of pairs) assertNotEquals(encodeEntry(a), encodeEntry(b));
});

Deno.test("encodeEntry() refuses what is not plain data, so it is never taken from the cache", () => {
  for (const v of [new Date(0), undefined, [undefined], { a: () => 1 }, new Map(), [, 1]]) {
    assertEquals(encodeEntry(v), undefined);
  }
  assertEquals(encodeEntry(Object.assign(Object.create(null), { a: 1 })), '{"a":n1}');
});

Deno.test("a cached checker accepts only the exact schema text and entries it records", () => {
  const checker = verdictChecker(recordOf([{ n: 1 }]));
  const r = checker.compile(SCHEMA, S);
  assert(r.ok);
  assertEquals(r.validate({ n: 1 }, E), []);
  for (const other of [{ n: -1 }, { n: 1, m: 2 }, { n: "1" }, {}, { n: new Date(0) }]) {
    const e = assertThrows(() => r.validate(other, E), VerdictMissingError);
    assertEquals(e.code, "schema_verdict_missing");
  }
  assertThrows(() => checker.compile(SCHEMA + " ", S), VerdictMissingError);
  assertThrows(() => checker.compile("{}", S), VerdictMissingError);
});

Deno.test("a recording checker passes Ajv's results through and records only what Ajv accepts", () => {
  const rec = recordingChecker(ajvSchemaChecker, "id");
  const r = rec.checker.compile(SCHEMA, S);
  assert(r.ok);
  assertEquals(r.validate({ n: 1 }, E), []);
  assertEquals(r.validate({ n: -1 }, E).map((p) => `${p.key}: ${p.message}`), ["n: must be >= 0"]);
  assertEquals(r.validate({}, E).length, 1);
  const bad = rec.checker.compile('{"type": 5}', S);
  assert(!bad.ok);
  const record = rec.record();
  assertEquals(record.checker, "id");
  assertEquals([...record.schemas.keys()], [SCHEMA]);
  assertEquals([...record.schemas.get(SCHEMA)!], [encodeEntry({ n: 1 })]);
});

Deno.test("what a recording checker saw, a cached checker answers alike, and nothing more", () => {
  fc.assert(
    fc.property(fc.array(fc.dictionary(fc.constantFrom("n", "m"), tomlValue)), (entries) => {
      const rec = recordingChecker(ajvSchemaChecker, "id");
      const live = rec.checker.compile(SCHEMA, S);
      assert(live.ok);
      const verdicts = entries.map((e) => live.validate(e, E).length === 0);
      const cached = verdictChecker(rec.record()).compile(SCHEMA, S);
      assert(cached.ok);
      entries.forEach((e, i) => {
        if (verdicts[i]) assertEquals(cached.validate(e, E), []);
        else assertThrows(() => cached.validate(e, E), VerdictMissingError);
      });
    }),
    { numRuns: 200 },
  );
});

Deno.test("a record reads back as written", () => {
  const record = recordOf([{ n: 1 }, { n: 2 }]);
  assertEquals(parseVerdictRecord(renderVerdictRecord(record), "id"), record);
  assertEquals(JSON.parse(renderVerdictRecord(record)).format, VERDICT_FORMAT);
});

Deno.test("a record made under another checker identity is not read", () => {
  assertEquals(
    parseVerdictRecord(renderVerdictRecord(recordOf([{ n: 1 }], "ajv@8.1")), "ajv@8.2"),
    undefined,
  );
});

Deno.test("truncated, corrupt or foreign record text is not read", () => {
  const text = renderVerdictRecord(recordOf([{ n: 1 }]));
  const doc = JSON.parse(text);
  const variants = [
    "",
    "\u0000\u0001",
    text.slice(0, text.length / 2),
    text.replace(VERDICT_FORMAT, "cfgtool-schema-verdicts/0"),
    JSON.stringify({ ...doc, schemas: {} }),
    JSON.stringify({ ...doc, schemas: [{ text: SCHEMA, entries: [1] }] }),
    JSON.stringify({ ...doc, schemas: [{ text: 5, entries: [] }] }),
    JSON.stringify({ ...doc, schemas: [{ text: SCHEMA }] }),
    JSON.stringify([doc]),
    "null",
  ];
  for (const v of variants) assertEquals(parseVerdictRecord(v, "id"), undefined, v);
});

Deno.test("a checker that throws something else is not mistaken for a missing verdict", () => {
  const failing: SchemaChecker = {
    compile: () => {
      throw new TypeError("boom");
    },
  };
  assertThrows(() => recordingChecker(failing, "id").checker.compile("{}", S), TypeError);
});
