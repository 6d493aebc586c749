/**
 * Reference cycles between segments: one problem per cycle, naming its
 * shortest loop through the byte-wise smallest segment (the shared,
 * stack-safe search of lib/graph_cycles.ts).
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";
import { findCycles } from "../graph_cycles.ts";

/**
 * Reports one cycle per group of segments that refer to each other, at the
 * reference from the group's byte-wise smallest segment that starts the
 * loop. References to segments not in `edges` are ignored.
 *
 * @param edges segment key → its references, each with the key path where it is made
 * @param problems where problems are added
 * @returns whether any cycle was found
 *
 * @example
 * ```ts
 * import { reportCycles } from "./_segment_cycles.ts";
 * import type { Problem } from "../errors.ts";
 * const ref = (target: string) => [{ target, key: "predicate[0].attribute" }];
 * const problems: Problem[] = [];
 * if (!reportCycles(new Map([["b", ref("a")], ["a", ref("b")]]), problems)) throw new Error();
 * if (problems[0]?.message !== "segment reference cycle: a -> b -> a") throw new Error();
 * ```
 */
export function reportCycles(
  edges: ReadonlyMap<string, { target: string; key: string }[]>,
  problems: Problem[],
): boolean {
  const nodes = [...edges.keys()].sort(compareUtf8);
  const cycles = findCycles(nodes, (v) => edges.get(v)!.map((e) => e.target));
  for (const cycle of cycles) {
    const start = cycle[0]!;
    const first = edges.get(start)!.find((e) => e.target === cycle[1]);
    problems.push({
      path: `segments/${start}.toml`,
      key: first?.key ?? "predicate",
      message: `segment reference cycle: ${cycle.join(" -> ")}`,
    });
  }
  return cycles.length > 0;
}
