/**
 * The qualifier reference graph: a `qualifier.<name>` predicate is an edge.
 * Dangling references and cycles are problems; resolution relies on this
 * check but also stays cycle-safe on its own (lib/workspace/resolve.ts).
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { didYouMean } from "../text/suggest.ts";
import type { QualifierModel } from "./model.ts";

/**
 * Reports every reference to a qualifier that does not exist and every
 * cycle. A cycle is reported once, at the reference that closes it, as
 * `qualifier cycle: a -> b -> a`. Without cycles, a chain of references
 * longer than {@linkcode MAX_QUALIFIER_DEPTH} qualifiers is reported once,
 * at the qualifier that starts it.
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
        problems.push({
          path: q.path,
          key: ref.key,
          message: `no qualifier "${ref.name}"${didYouMean(ref.name, names)}`,
        });
      }
    }
  }
  // Depth-first search, iterative so that a long reference chain cannot
  // overflow the call stack; an edge to a node on the current stack closes a
  // cycle. Without cycles, each qualifier's chain depth is measured too.
  const state = new Map<string, "active" | "done">();
  const depth = new Map<string, { depth: number; next?: string; key?: string }>();
  let cyclic = false;
  const stack: string[] = [];
  const cursor: number[] = [];
  for (const root of names) {
    if (state.has(root)) continue;
    state.set(root, "active");
    stack.push(root);
    cursor.push(0);
    while (stack.length > 0) {
      const top = stack.length - 1;
      const q = qualifiers.get(stack[top]!)!;
      const ref = q.refs[cursor[top]!];
      if (ref !== undefined) {
        cursor[top]!++;
        if (!qualifiers.has(ref.name)) continue;
        const s = state.get(ref.name);
        if (s === "active") {
          cyclic = true;
          const cycle = [...stack.slice(stack.indexOf(ref.name)), ref.name];
          problems.push({
            path: q.path,
            key: ref.key,
            message: `qualifier cycle: ${cycle.join(" -> ")}`,
          });
        } else if (s === undefined) {
          state.set(ref.name, "active");
          stack.push(ref.name);
          cursor.push(0);
        }
        continue;
      }
      let d: { depth: number; next?: string; key?: string } = { depth: 1 };
      for (const r of q.refs) {
        const below = depth.get(r.name)?.depth ?? 0;
        if (below + 1 > d.depth) d = { depth: below + 1, next: r.name, key: r.key };
      }
      depth.set(q.name, d);
      stack.pop();
      cursor.pop();
      state.set(q.name, "done");
    }
  }
  if (!cyclic) problems.push(...nestingProblems(qualifiers, names, depth));
  return problems;
}

/** The longest chain of `qualifier.<name>` references: every qualifier of it counts. */
export const MAX_QUALIFIER_DEPTH = 32;

/** One problem per over-deep chain, at the qualifier that starts it (no qualifier refers to it). */
function nestingProblems(
  qualifiers: ReadonlyMap<string, QualifierModel>,
  names: readonly string[],
  depth: ReadonlyMap<string, { depth: number; next?: string; key?: string }>,
): Problem[] {
  const referenced = new Set<string>();
  for (const q of qualifiers.values()) for (const r of q.refs) referenced.add(r.name);
  const out: Problem[] = [];
  for (const name of names) {
    const d = depth.get(name)!;
    if (d.depth <= MAX_QUALIFIER_DEPTH || referenced.has(name)) continue;
    const chain = [name];
    for (let n = d.next; n !== undefined; n = depth.get(n)?.next) chain.push(n);
    const shown = chain.length > 6
      ? [...chain.slice(0, 4), `… (${chain.length - 5} more)`, chain[chain.length - 1]!]
      : chain;
    out.push({
      path: qualifiers.get(name)!.path,
      key: d.key!,
      message: `qualifier references nest ${d.depth} deep (${
        shown.join(" -> ")
      }); the limit is ${MAX_QUALIFIER_DEPTH} qualifiers in a chain`,
    });
  }
  return out;
}
