/**
 * Cycles of a directed graph (qualifier references in a workspace, segment
 * references in a flag manifest), found without recursion so that a chain
 * of any length cannot overflow the call stack: one cycle per strongly
 * connected component that has one (Tarjan's algorithm, iterative), given
 * as the shortest loop through the component's first node.
 *
 * @module
 */

/**
 * Finds one cycle per strongly connected component that holds a cycle (two
 * or more nodes, or one node that refers to itself). Each cycle starts and
 * ends at the component's node that comes first in `nodes`, and is the
 * shortest loop through it (neighbours tried in the order of `nodes`, so
 * the result does not depend on the order `successors` returns them in).
 * Successors that are not in `nodes` are ignored. Time and memory are
 * linear in the size of the graph, and the call stack stays flat.
 *
 * @param nodes every node, in the order that decides which node a cycle starts at
 * @param successors the nodes a node refers to
 * @returns the cycles, ordered by their first node's place in `nodes`; `[a, b, a]` for a → b → a
 *
 * @example
 * ```ts
 * import { findCycles } from "./graph_cycles.ts";
 * const refs: Record<string, string[]> = { a: ["b"], b: ["c"], c: ["a"], d: ["d"], e: ["a"] };
 * const cycles = findCycles(Object.keys(refs), (n) => refs[n]!);
 * if (JSON.stringify(cycles) !== '[["a","b","c","a"],["d","d"]]') throw new Error();
 * ```
 */
export function findCycles<N>(nodes: readonly N[], successors: (node: N) => Iterable<N>): N[][] {
  const rank = new Map<N, number>();
  for (const n of nodes) if (!rank.has(n)) rank.set(n, rank.size);
  const ids = [...rank.keys()];
  const adj: number[][] = ids.map((n) => {
    const out: number[] = [];
    for (const w of successors(n)) {
      const j = rank.get(w);
      if (j !== undefined) out.push(j);
    }
    return out;
  });

  const components = stronglyConnected(adj);
  const cycles: N[][] = [];
  for (const comp of components) {
    const start = comp.reduce((a, b) => Math.min(a, b));
    const selfLoop = adj[start]!.includes(start);
    if (comp.length === 1 && !selfLoop) continue;
    const loop = selfLoop ? [start, start] : shortestLoop(adj, start, new Set(comp));
    cycles.push(loop.map((i) => ids[i]!));
  }
  return cycles.sort((x, y) => rank.get(x[0]!)! - rank.get(y[0]!)!);
}

/** Tarjan's strongly connected components over node indices, with an explicit stack. */
function stronglyConnected(adj: readonly (readonly number[])[]): number[][] {
  const n = adj.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;
  // The depth-first path: a node and how many of its successors were tried.
  const path: number[] = [];
  const tried: number[] = [];
  const open = (v: number) => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    path.push(v);
    tried.push(0);
  };
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    open(root);
    while (path.length > 0) {
      const top = path.length - 1;
      const v = path[top]!;
      const out = adj[v]!;
      if (tried[top]! < out.length) {
        const w = out[tried[top]!++]!;
        if (index[w] === -1) open(w);
        else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      path.pop();
      tried.pop();
      if (path.length > 0) {
        const parent = path[path.length - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const comp: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          comp.push(w);
        } while (w !== v);
        components.push(comp);
      }
    }
  }
  return components;
}

/**
 * The shortest loop from `start` back to itself inside `members`
 * (breadth-first, smaller indices first): `[start, …, start]`.
 */
function shortestLoop(
  adj: readonly (readonly number[])[],
  start: number,
  members: ReadonlySet<number>,
): number[] {
  const prev = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    const next = [...new Set(adj[v]!)].filter((w) => members.has(w)).sort((a, b) => a - b);
    for (const w of next) {
      if (w === start) {
        const loop = [start];
        for (let u = v; u !== start; u = prev.get(u)!) loop.push(u);
        loop.push(start);
        return loop.reverse();
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  // Unreachable: every member of a component with two or more nodes lies on a loop.
  throw new Error("no loop through the component's first node");
}
