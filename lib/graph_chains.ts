/**
 * Chains of references that nest too deep (a qualifier that refers to one
 * that refers to another…, likewise segments): the longest chain below each
 * node, measured without recursion so that a chain of any length cannot
 * overflow the call stack, and the words that show a long chain in a
 * message.
 *
 * @module
 */

/** A chain of references longer than the limit, from a node nothing refers to. */
export interface DeepChain<N> {
  /** The longest chain, from its first node down; its length is the depth. */
  chain: N[];
  /** Where the edge to `chain[1]` is in `successors(chain[0])` (-1 for a chain of one node). */
  edge: number;
}

/**
 * Finds every chain of references longer than `limit` nodes, once per node
 * that starts one (a node that no node refers to), following at each step
 * the first successor with the longest chain below it. The graph must be
 * free of cycles (find those first with `findCycles`): a successor met
 * again on the current path counts as depth 0. Successors that are not in
 * `nodes` are ignored.
 *
 * @param nodes every node, in the order the results are wanted
 * @param successors the nodes a node refers to
 * @param limit the longest chain allowed, counted in nodes
 * @returns the over-deep chains, in the order of their first node in `nodes`
 *
 * @example
 * ```ts
 * import { deepChains } from "./graph_chains.ts";
 * const refs: Record<string, string[]> = { a: ["x", "b"], b: ["c"], c: [], d: ["c"] };
 * const deep = deepChains(Object.keys(refs), (n) => refs[n] ?? [], 2);
 * if (JSON.stringify(deep) !== '[{"chain":["a","b","c"],"edge":1}]') throw new Error();
 * ```
 */
export function deepChains<N>(
  nodes: readonly N[],
  successors: (node: N) => readonly N[],
  limit: number,
): DeepChain<N>[] {
  const out = new Map<N, readonly N[]>();
  for (const n of nodes) if (!out.has(n)) out.set(n, successors(n));
  const depth = new Map<N, number>();
  /** The index of the successor that leads down the longest chain. */
  const via = new Map<N, number>();
  for (const root of out.keys()) {
    if (depth.has(root)) continue;
    const path = [root];
    const tried = [0];
    const onPath = new Set([root]);
    while (path.length > 0) {
      const top = path.length - 1;
      const v = path[top]!;
      const next = out.get(v)!;
      const j = tried[top]!;
      if (j < next.length) {
        tried[top] = j + 1;
        const w = next[j]!;
        if (out.has(w) && !depth.has(w) && !onPath.has(w)) {
          onPath.add(w);
          path.push(w);
          tried.push(0);
        }
        continue;
      }
      let d = 1;
      next.forEach((w, i) => {
        const below = depth.get(w) ?? 0;
        if (below + 1 > d) {
          d = below + 1;
          via.set(v, i);
        }
      });
      depth.set(v, d);
      onPath.delete(v);
      path.pop();
      tried.pop();
    }
  }

  const referenced = new Set<N>();
  for (const next of out.values()) for (const w of next) referenced.add(w);
  const chains: DeepChain<N>[] = [];
  for (const v of out.keys()) {
    if (depth.get(v)! <= limit || referenced.has(v)) continue;
    const chain = [v];
    for (let u = v, i = via.get(u); i !== undefined; i = via.get(u)) {
      u = out.get(u)![i]!;
      chain.push(u);
    }
    chains.push({ chain, edge: via.get(v) ?? -1 });
  }
  return chains;
}

/**
 * Shows a chain in a message: `a -> b -> c`, and for more than six nodes
 * the first four, how many are left out, and the last.
 *
 * @param chain the node names, in order
 * @returns the words for it
 *
 * @example
 * ```ts
 * import { showChain } from "./graph_chains.ts";
 * if (showChain(["a", "b"]) !== "a -> b") throw new Error();
 * const long = showChain(["q0", "q1", "q2", "q3", "q4", "q5", "q6"]);
 * if (long !== "q0 -> q1 -> q2 -> q3 -> … (2 more) -> q6") throw new Error(long);
 * ```
 */
export function showChain(chain: readonly string[]): string {
  const shown = chain.length > 6
    ? [...chain.slice(0, 4), `… (${chain.length - 5} more)`, chain[chain.length - 1]!]
    : chain;
  return shown.join(" -> ");
}
