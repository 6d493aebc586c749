/**
 * The qualifier reference graph: a `qualifier.<name>` predicate is an edge.
 * Dangling references and cycles are problems; resolution relies on this
 * check but also stays cycle-safe on its own (lib/workspace/resolve.ts).
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import type { QualifierModel } from "./model.ts";

/**
 * Reports every reference to a qualifier that does not exist and every
 * cycle. A cycle is reported once, at the reference that closes it, as
 * `qualifier cycle: a -> b -> a`.
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
 * ```
 */
export function graphProblems(qualifiers: ReadonlyMap<string, QualifierModel>): Problem[] {
  const problems: Problem[] = [];
  const names = [...qualifiers.keys()].sort();
  for (const name of names) {
    const q = qualifiers.get(name)!;
    for (const ref of q.refs) {
      if (!qualifiers.has(ref.name)) {
        problems.push({ path: q.path, key: ref.key, message: `no qualifier "${ref.name}"` });
      }
    }
  }
  // Depth-first search; an edge to a node on the current stack closes a cycle.
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const visit = (name: string) => {
    state.set(name, "active");
    stack.push(name);
    const q = qualifiers.get(name)!;
    for (const ref of q.refs) {
      if (!qualifiers.has(ref.name)) continue;
      const s = state.get(ref.name);
      if (s === "active") {
        const cycle = [...stack.slice(stack.indexOf(ref.name)), ref.name];
        problems.push({
          path: q.path,
          key: ref.key,
          message: `qualifier cycle: ${cycle.join(" -> ")}`,
        });
      } else if (s === undefined) {
        visit(ref.name);
      }
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const name of names) if (!state.has(name)) visit(name);
  return problems;
}
