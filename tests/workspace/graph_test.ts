import { assertEquals } from "../assert.ts";
import { graphProblems } from "../../lib/workspace/graph.ts";
import type { QualifierModel } from "../../lib/workspace/model.ts";

function graph(edges: Record<string, string[]>): Map<string, QualifierModel> {
  return new Map(
    Object.entries(edges).map(([name, refs]) => [name, {
      name,
      path: `qualifiers/${name}.toml`,
      predicates: [],
      valid: true,
      refs: refs.map((r, i) => ({ name: r, key: `predicate[${i}].attribute` })),
    }]),
  );
}

const messages = (edges: Record<string, string[]>) =>
  graphProblems(graph(edges)).map((p) => `${p.path}: ${p.key}: ${p.message}`);

Deno.test("graphProblems() accepts a diamond", () => {
  assertEquals(messages({ a: ["b", "c"], b: ["d"], c: ["d"], d: [] }), []);
});

Deno.test("graphProblems() reports dangling references", () => {
  assertEquals(messages({ a: ["b", "x"], b: [] }), [
    'qualifiers/a.toml: predicate[1].attribute: no qualifier "x"',
  ]);
});

Deno.test("graphProblems() reports self references and longer cycles once", () => {
  assertEquals(messages({ a: ["a"] }), [
    "qualifiers/a.toml: predicate[0].attribute: qualifier cycle: a -> a",
  ]);
  assertEquals(messages({ a: ["b"], b: ["c"], c: ["a"], d: ["a"] }), [
    "qualifiers/c.toml: predicate[0].attribute: qualifier cycle: a -> b -> c -> a",
  ]);
});

Deno.test("graphProblems() reports two independent cycles", () => {
  assertEquals(messages({ a: ["b"], b: ["a"], c: ["d"], d: ["c"] }).length, 2);
});
