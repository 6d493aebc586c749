import { assertEquals } from "./assert.ts";
import { deepChains, showChain } from "../lib/graph_chains.ts";

const deep = (refs: Record<string, string[]>, limit: number) =>
  deepChains(Object.keys(refs), (n) => refs[n] ?? [], limit);

/** A chain of `n` nodes q0 → q1 → … → q(n-1). */
function chain(n: number): Record<string, string[]> {
  const refs: Record<string, string[]> = {};
  for (let i = 0; i < n; i++) refs[`q${i}`] = i < n - 1 ? [`q${i + 1}`] : [];
  return refs;
}

Deno.test("deepChains() accepts chains of the limit and refuses longer ones", () => {
  assertEquals(deep(chain(3), 3), []);
  assertEquals(deep(chain(4), 3), [{ chain: ["q0", "q1", "q2", "q3"], edge: 0 }]);
});

Deno.test("deepChains() reports a chain once, from the node nothing refers to", () => {
  const refs = { ...chain(5), top: ["q1"] };
  assertEquals(deep(refs, 3), [
    { chain: ["q0", "q1", "q2", "q3", "q4"], edge: 0 },
    { chain: ["top", "q1", "q2", "q3", "q4"], edge: 0 },
  ]);
});

Deno.test("deepChains() follows the first reference with the longest chain below it", () => {
  const refs = {
    a: ["x", "short", "long1", "long2"],
    short: [],
    long1: ["c"],
    long2: ["c"],
    c: [],
  };
  // "x" is not a node and is skipped; edge counts every reference of "a".
  assertEquals(deep(refs, 2), [{ chain: ["a", "long1", "c"], edge: 2 }]);
});

Deno.test("deepChains() measures a 100,000-node chain without overflowing the stack", () => {
  const n = 100_000;
  const nodes = Array.from({ length: n }, (_, i) => i);
  const [found, ...rest] = deepChains(nodes, (i) => (i < n - 1 ? [i + 1] : []), 32);
  assertEquals(rest, []);
  assertEquals([found!.chain.length, found!.chain[0], found!.chain[n - 1], found!.edge], [
    n,
    0,
    n - 1,
    0,
  ]);
});

Deno.test("showChain() shows up to six nodes, and longer chains shortened", () => {
  assertEquals(showChain(["a"]), "a");
  assertEquals(showChain(["a", "b", "c", "d", "e", "f"]), "a -> b -> c -> d -> e -> f");
  assertEquals(
    showChain(["a", "b", "c", "d", "e", "f", "g"]),
    "a -> b -> c -> d -> … (2 more) -> g",
  );
});
