/**
 * The nesting limit of segment references: a chain of `segment.<key>`
 * references (a refers to b, b to c, …) holds at most
 * {@linkcode MAX_SEGMENT_DEPTH} segments (measured by the shared,
 * stack-safe walk of lib/graph_chains.ts).
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";
import { deepChains, showChain } from "../graph_chains.ts";
import { MAX_SEGMENT_DEPTH } from "./model.ts";

/**
 * Reports every chain of segment references longer than
 * {@linkcode MAX_SEGMENT_DEPTH} segments, once per segment that starts one
 * (an over-deep segment that no other segment references), at the reference
 * that leads down the longest chain. The graph must be free of cycles
 * (report those first); a chain of any length is measured without
 * deepening the call stack.
 *
 * @param edges segment key → its references, each with the key path where it is made
 * @param problems where problems are added
 *
 * @example
 * ```ts
 * import { reportNesting } from "./_segment_nesting.ts";
 * import type { Problem } from "../errors.ts";
 * const edges = new Map(Array.from({ length: 40 }, (_, i) => [
 *   `s${i}`,
 *   i < 39 ? [{ target: `s${i + 1}`, key: "predicate[0].attribute" }] : [],
 * ]));
 * const problems: Problem[] = [];
 * reportNesting(edges, problems);
 * if (problems.length !== 1 || problems[0]!.path !== "segments/s0.toml") throw new Error();
 * ```
 */
export function reportNesting(
  edges: ReadonlyMap<string, { target: string; key: string }[]>,
  problems: Problem[],
): void {
  const nodes = [...edges.keys()].sort(compareUtf8);
  const targets = (v: string) => edges.get(v)!.map((e) => e.target);
  for (const { chain, edge } of deepChains(nodes, targets, MAX_SEGMENT_DEPTH)) {
    const start = chain[0]!;
    problems.push({
      path: `segments/${start}.toml`,
      key: edges.get(start)![edge]?.key ?? "predicate",
      message: `segment references nest ${chain.length} deep (${
        showChain(chain)
      }); the limit is ${MAX_SEGMENT_DEPTH} segments in a chain`,
    });
  }
}
