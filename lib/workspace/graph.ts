/**
 * The qualifier reference graph: a `qualifier.<name>` predicate is an edge.
 * Dangling references, cycles and over-deep chains are problems; resolution
 * relies on this check but also stays cycle-safe on its own
 * (lib/workspace/resolve.ts). The graph walks are the shared, stack-safe
 * ones of lib/graph_cycles.ts and lib/graph_chains.ts.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { deepChains, showChain } from "../graph_chains.ts";
import { findCycles } from "../graph_cycles.ts";
import { didYouMean } from "../suggest.ts";
import type { QualifierModel } from "./model.ts";

/** The longest chain of `qualifier.<name>` references: every qualifier of it counts. */
export const MAX_QUALIFIER_DEPTH = 32;

/**
 * Reports every reference to a qualifier that does not exist and every
 * cycle. A cycle is reported once per group of qualifiers that refer to
 * each other, as its shortest loop through the group's first qualifier by
 * name (`qualifier cycle: a -> b -> a`), at the reference that closes the
 * loop. Without cycles, a chain of references longer than
 * {@linkcode MAX_QUALIFIER_DEPTH} qualifiers is reported once, at the
 * qualifier that starts it. A chain of any length is checked without
 * deepening the call stack.
 *
 * @param qualifiers the qualifiers by name
 * @returns the problems, qualifiers taken in name order
 *
 * @example
 * ```ts
 * import { graphProblems } from "./graph.ts";
 * const q = (name: string, ref: string) => ({
 *   name, path: `qualifiers/${name}.toml`, predicates: [], valid: true,
 *   refs: [{ name: ref, key: "predicate[0].attribute" }],
 * });
 * const problems = graphProblems(new Map([["a", q("a", "b")], ["b", q("b", "a")]]));
 * if (problems[0]?.message !== "qualifier cycle: a -> b -> a") throw new Error();
 * if (problems[0]?.path !== "qualifiers/b.toml") throw new Error();
 * ```
 */
export function graphProblems(qualifiers: ReadonlyMap<string, QualifierModel>): Problem[] {
  const problems: Problem[] = [];
  const names = [...qualifiers.keys()].sort();
  for (const name of names) {
    const q = qualifiers.get(name)!;
    for (const ref of q.refs) {
      if (!qualifiers.has(ref.name)) {
        problems.push({
          path: q.path,
          key: ref.key,
          message: `no qualifier "${ref.name}"${didYouMean(ref.name, names)}`,
        });
      }
    }
  }
  const refNames = (name: string) => qualifiers.get(name)!.refs.map((r) => r.name);
  const cycles = findCycles(names, refNames);
  for (const cycle of cycles) {
    const start = cycle[0]!;
    const closing = qualifiers.get(cycle[cycle.length - 2]!)!;
    problems.push({
      path: closing.path,
      key: closing.refs.find((r) => r.name === start)!.key,
      message: `qualifier cycle: ${cycle.join(" -> ")}`,
    });
  }
  if (cycles.length > 0) return problems;
  for (const { chain, edge } of deepChains(names, refNames, MAX_QUALIFIER_DEPTH)) {
    const q = qualifiers.get(chain[0]!)!;
    problems.push({
      path: q.path,
      key: q.refs[edge]!.key,
      message: `qualifier references nest ${chain.length} deep (${
        showChain(chain)
      }); the limit is ${MAX_QUALIFIER_DEPTH} qualifiers in a chain`,
    });
  }
  return problems;
}
