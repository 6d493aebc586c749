import { assert, assertEquals } from "../assert.ts";
import { graphProblems, MAX_QUALIFIER_DEPTH } from "../../lib/workspace/graph.ts";
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

Deno.test("graphProblems() suggests the nearest qualifier for a misspelt reference", () => {
  assertEquals(
    messages({ "active-incidents": ["enterprise-acounts"], "enterprise-accounts": [] }),
    [
      "qualifiers/active-incidents.toml: predicate[0].attribute: no qualifier " +
      '"enterprise-acounts"; did you mean "enterprise-accounts"?',
    ],
  );
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

/** A chain of `n` qualifiers q0 → q1 → … → q(n-1). */
function chain(n: number): Record<string, string[]> {
  const edges: Record<string, string[]> = {};
  for (let i = 0; i < n; i++) edges[`q${i}`] = i < n - 1 ? [`q${i + 1}`] : [];
  return edges;
}

Deno.test("graphProblems() refuses a 5,000-deep qualifier chain once, naming it", () => {
  assertEquals(messages(chain(5000)), [
    "qualifiers/q0.toml: predicate[0].attribute: qualifier references nest 5000 deep " +
    "(q0 -> q1 -> q2 -> q3 -> … (4995 more) -> q4999); the limit is 32 qualifiers in a chain",
  ]);
});

Deno.test("graphProblems() accepts a qualifier chain of 32, the limit", () => {
  assertEquals(MAX_QUALIFIER_DEPTH, 32);
  assertEquals(messages(chain(32)), []);
  assertEquals(messages(chain(33)).length, 1);
});

Deno.test("graphProblems() finds a cycle closing a 20,000-long qualifier chain", () => {
  const edges = chain(20_000);
  edges.q19999 = ["q19998"];
  assertEquals(messages(edges), [
    "qualifiers/q19999.toml: predicate[0].attribute: qualifier cycle: q19998 -> q19999 -> q19998",
  ]);
});

Deno.test("graphProblems() walks a 100,000-deep qualifier chain without overflowing the stack", () => {
  const edges = chain(100_000);
  edges.q99999 = ["q99998"];
  assertEquals(messages(edges), [
    "qualifiers/q99999.toml: predicate[0].attribute: qualifier cycle: q99998 -> q99999 -> q99998",
  ]);
  edges.q99999 = [];
  assertEquals(messages(edges), [
    "qualifiers/q0.toml: predicate[0].attribute: qualifier references nest 100000 deep " +
    "(q0 -> q1 -> q2 -> q3 -> … (99995 more) -> q99999); the limit is 32 qualifiers in a chain",
  ]);
});

Deno.test("graphProblems() reports a cycle closing back to the start of a 100,000-long chain", () => {
  const edges = chain(100_000);
  edges.q99999 = ["q0"];
  const [line, ...rest] = messages(edges);
  assertEquals(rest, []);
  assert(
    line!.startsWith(
      "qualifiers/q99999.toml: predicate[0].attribute: qualifier cycle: q0 -> q1 -> ",
    ),
  );
  assert(line!.endsWith(" -> q99999 -> q0"));
});

Deno.test("graphProblems() reports one cycle per group of qualifiers that refer to each other", () => {
  // a -> b -> a and b -> c -> b are one group: one problem, its shortest loop through a.
  assertEquals(messages({ a: ["b"], b: ["a", "c"], c: ["b"] }), [
    "qualifiers/b.toml: predicate[0].attribute: qualifier cycle: a -> b -> a",
  ]);
  // The shortest loop is named, whichever reference comes first.
  assertEquals(messages({ a: ["b", "c"], b: ["c"], c: ["a"] }), [
    "qualifiers/c.toml: predicate[0].attribute: qualifier cycle: a -> c -> a",
  ]);
});
