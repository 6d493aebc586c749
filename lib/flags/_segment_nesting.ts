/**
 * The nesting limit of segment references: a chain of `segment.<key>`
 * references (a refers to b, b to c, …) holds at most
 * {@linkcode MAX_SEGMENT_DEPTH} segments.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";
import { MAX_SEGMENT_DEPTH } from "./model.ts";

/**
 * Reports every chain of segment references longer than
 * {@linkcode MAX_SEGMENT_DEPTH} segments, once per segment that starts one
 * (an over-deep segment that no other segment references), at the reference
 * that leads down the longest chain. The graph must be free of cycles
 * (report those first); the walk is iterative, so a chain of any length is
 * measured without deepening the call stack.
 *
 * @param edges segment key → its references, each with the key path where it is made
 * @param problems where problems are added
 */
export function reportNesting(
  edges: ReadonlyMap<string, { target: string; key: string }[]>,
  problems: Problem[],
): void {
  const nodes = [...edges.keys()].sort(compareUtf8);
  const depth = new Map<string, number>();
  /** The reference that leads down the longest chain from a segment. */
  const via = new Map<string, { target: string; key: string }>();
  const refs = new Map(
    nodes.map((v) => [v, (edges.get(v) ?? []).filter((e) => edges.has(e.target))]),
  );
  const targets = (v: string) => refs.get(v)!;
  for (const root of nodes) {
    if (depth.has(root)) continue;
    const path = [root];
    const next = [0];
    const onPath = new Set([root]);
    while (path.length > 0) {
      const top = path.length - 1;
      const v = path[top]!;
      const out = targets(v);
      const j = next[top]!;
      if (j < out.length) {
        next[top] = j + 1;
        const w = out[j]!.target;
        if (!depth.has(w) && !onPath.has(w)) {
          onPath.add(w);
          path.push(w);
          next.push(0);
        }
        continue;
      }
      let d = 1;
      for (const e of out) {
        const dw = depth.get(e.target) ?? 0; // 0 only on a cycle, which is reported elsewhere
        if (dw + 1 > d) {
          d = dw + 1;
          via.set(v, e);
        }
      }
      depth.set(v, d);
      onPath.delete(v);
      path.pop();
      next.pop();
    }
  }

  const referenced = new Set<string>();
  for (const v of nodes) for (const e of targets(v)) referenced.add(e.target);
  for (const v of nodes) {
    const d = depth.get(v)!;
    if (d <= MAX_SEGMENT_DEPTH || referenced.has(v)) continue;
    const chain: string[] = [v];
    for (let w = via.get(v); w !== undefined; w = via.get(w.target)) chain.push(w.target);
    const shown = chain.length > 6
      ? [...chain.slice(0, 4), `… (${chain.length - 5} more)`, chain[chain.length - 1]!]
      : chain;
    problems.push({
      path: `segments/${v}.toml`,
      key: via.get(v)?.key ?? "predicate",
      message: `segment references nest ${d} deep (${
        shown.join(" -> ")
      }); the limit is ${MAX_SEGMENT_DEPTH} segments in a chain`,
    });
  }
}
