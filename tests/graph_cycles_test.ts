import { assertEquals } from "./assert.ts";
import { findCycles } from "../lib/graph_cycles.ts";

const cycles = (refs: Record<string, string[]>, nodes = Object.keys(refs)) =>
  findCycles(nodes, (n) => refs[n] ?? []).map((c) => c.join(" -> "));

Deno.test("findCycles() finds nothing in a graph without cycles", () => {
  assertEquals(cycles({}), []);
  assertEquals(cycles({ a: ["b", "c"], b: ["d"], c: ["d"], d: [] }), []);
});

Deno.test("findCycles() reports a node that refers to itself", () => {
  assertEquals(cycles({ a: ["a"], b: ["a"] }), ["a -> a"]);
});

Deno.test("findCycles() reports one cycle per strongly connected component, in node order", () => {
  assertEquals(cycles({ c: ["d"], d: ["c"], a: ["b"], b: ["a"] }, ["a", "b", "c", "d"]), [
    "a -> b -> a",
    "c -> d -> c",
  ]);
  // Two loops through b make one component: one cycle, through its first node.
  assertEquals(cycles({ a: ["b"], b: ["a", "c"], c: ["b"] }), ["a -> b -> a"]);
});

Deno.test("findCycles() names the shortest loop through the component's first node", () => {
  assertEquals(cycles({ a: ["b", "c"], b: ["c"], c: ["a"] }), ["a -> c -> a"]);
  // The node order, not the order of references, decides ties and the start.
  assertEquals(cycles({ a: ["c", "b"], b: ["a"], c: ["a"] }), ["a -> b -> a"]);
  assertEquals(cycles({ a: ["b"], b: ["c"], c: ["a"] }, ["c", "a", "b"]), ["c -> a -> b -> c"]);
});

Deno.test("findCycles() ignores references to nodes it was not given", () => {
  assertEquals(cycles({ a: ["x", "b"], b: ["a"], x: ["a"] }, ["a", "b"]), ["a -> b -> a"]);
});

Deno.test("findCycles() works on any node type", () => {
  const next = [1, 2, 0, 3];
  assertEquals(findCycles([0, 1, 2, 3], (n) => [next[n]!]), [[0, 1, 2, 0], [3, 3]]);
});

Deno.test("findCycles() walks a 100,000-node chain with a cycle at its end without overflowing", () => {
  const n = 100_000;
  const next = (i: number) => (i < n - 1 ? [i + 1] : [n - 2]);
  const nodes = Array.from({ length: n }, (_, i) => i);
  assertEquals(findCycles(nodes, next), [[n - 2, n - 1, n - 2]]);
});

Deno.test("findCycles() names the whole loop of a 100,000-node ring", () => {
  const n = 100_000;
  const nodes = Array.from({ length: n }, (_, i) => i);
  const [loop, ...rest] = findCycles(nodes, (i) => [(i + 1) % n]);
  assertEquals(rest, []);
  assertEquals(loop!.length, n + 1);
  assertEquals([loop![0], loop![1], loop![n - 1], loop![n]], [0, 1, n - 1, 0]);
});
