import { assert, assertEquals } from "../assert.ts";
import { compileSchema, pointerToKeyPath } from "../../lib/workspace/schemas.ts";
import type { Problem } from "../../lib/errors.ts";

const S = "schemas/s.schema.json";
const E = "catalogs/s-entries/e.toml";

function validator(schema: unknown) {
  const r = compileSchema(JSON.stringify(schema), S);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return (entry: unknown) => r.validate(entry, E).map((p) => `${p.key}: ${p.message}`);
}

function refused(text: string): Problem[] {
  const r = compileSchema(text, S);
  if (r.ok) throw new Error("expected the schema to be refused");
  return r.problems;
}

Deno.test("compileSchema() reports every entry error with its key path (allErrors)", () => {
  const v = validator({
    type: "object",
    additionalProperties: false,
    required: ["mode"],
    properties: {
      mode: { enum: ["a", "b"] },
      tags: { type: "array", items: { enum: ["x", "y"] } },
      n: { type: "integer", minimum: 1 },
      nested: { type: "object", properties: { k: { const: 1 } } },
    },
  });
  assertEquals(v({ mode: "a" }), []);
  assertEquals(v({ tags: ["x", "z"], n: 0, nested: { k: 2 }, extra: true }), [
    "mode: required field is missing",
    "extra: unknown key (the catalog schema does not allow it)",
    'tags[1]: must be one of "x", "y"',
    "n: must be >= 1",
    "nested.k: must be 1",
  ]);
});

Deno.test("compileSchema() reports then-errors of if/then without the bare if error", () => {
  const v = validator({
    type: "object",
    if: { properties: { d: { const: "digest" } }, required: ["d"] },
    then: { required: ["hours"] },
  });
  assertEquals(v({ d: "digest" }), ["hours: required field is missing"]);
  assertEquals(v({ d: "immediate" }), []);
});

Deno.test("compileSchema() gives invalid JSON a line and column", () => {
  const [p] = refused('{\n  "type": "object",\n}');
  assertEquals({ line: p!.line, column: p!.column }, { line: 3, column: 1 });
  assert(p!.message.startsWith("invalid JSON: "), p!.message);
  const [q] = refused("");
  assertEquals(q!.line, 1);
});

Deno.test("compileSchema() refuses documents that are not draft 2020-12 schemas", () => {
  assertEquals(refused('{"type": "objec"}').map((p) => p.key), ["type"]);
  assertEquals(refused('{"minimum": "1"}').map((p) => p.key), ["minimum"]);
  assert(refused('{"requried": ["a"]}')[0]!.message.includes('unknown keyword: "requried"'));
  assertEquals(refused('{"$ref": "#/$defs/missing"}').length, 1);
  assertEquals(refused("[1]")[0]!.message, "a JSON Schema must be an object or a boolean");
  assertEquals(
    refused('{"$schema": "http://json-schema.org/draft-07/schema#"}')[0]!.key,
    "$schema",
  );
});

Deno.test("compileSchema() accepts the same $id twice (schemas are not kept)", () => {
  const text = '{"$id": "https://example.com/s", "type": "object"}';
  assert(compileSchema(text, S).ok);
  assert(compileSchema(text, S).ok);
});

Deno.test("pointerToKeyPath() distinguishes indexes from numeric keys", () => {
  assertEquals(pointerToKeyPath("", {}), "");
  assertEquals(pointerToKeyPath("/a/0/b", { a: [{ b: 1 }] }), "a[0].b");
  assertEquals(pointerToKeyPath("/a/0", { a: { "0": 1 } }), "a.0");
  assertEquals(pointerToKeyPath("/we ird", {}), '"we ird"');
});
