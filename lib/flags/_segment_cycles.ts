/**
 * Reference cycles between segments: one problem per cycle, naming its
 * shortest loop through the byte-wise smallest segment.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";

/**
 * Reports one cycle per strongly connected component of segment references.
 *
 * @returns whether any cycle was found
 */
export function reportCycles(
  edges: ReadonlyMap<string, { target: string; key: string }[]>,
  problems: Problem[],
): boolean {
  let anyCycle = false;
  const nodes = [...edges.keys()].sort(compareUtf8);
  // Tarjan's algorithm, iterative so that a long reference chain cannot
  // overflow the call stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const targets = (v: string) =>
    (edges.get(v) ?? []).map((e) => e.target).filter((w) => edges.has(w));
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { v: string; next: string[]; i: number }[] = [];
    const open = (v: string) => {
      index.set(v, counter);
      low.set(v, counter);
      counter++;
      stack.push(v);
      onStack.add(v);
      work.push({ v, next: targets(v), i: 0 });
    };
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.next.length) {
        const w = frame.next[frame.i++]!;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      const v = frame.v;
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(v)!));
      if (low.get(v) === index.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        components.push(comp);
      }
    }
  }

  for (const comp of components) {
    const members = new Set(comp);
    const start = [...comp].sort(compareUtf8)[0]!;
    const selfEdge = (edges.get(start) ?? []).find((e) => e.target === start);
    if (comp.length === 1 && !selfEdge) continue;
    // Shortest cycle through `start` inside the component (BFS, sorted neighbours).
    const prev = new Map<string, string>();
    const queue: string[] = [start];
    let found = selfEdge !== undefined;
    while (!found && queue.length > 0) {
      const v = queue.shift()!;
      const next = [...new Set((edges.get(v) ?? []).map((e) => e.target))]
        .filter((w) => members.has(w)).sort(compareUtf8);
      for (const w of next) {
        if (w === start) {
          prev.set(start, v);
          found = true;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    const cycle: string[] = [start];
    if (!selfEdge) {
      let v = prev.get(start)!;
      while (v !== start) {
        cycle.unshift(v);
        v = prev.get(v)!;
      }
      cycle.unshift(start);
    } else {
      cycle.push(start);
    }
    const first = (edges.get(start) ?? []).find((e) => e.target === cycle[1]);
    problems.push({
      path: `segments/${start}.toml`,
      key: first?.key ?? "predicate",
      message: `segment reference cycle: ${cycle.join(" -> ")}`,
    });
    anyCycle = true;
  }
  return anyCycle;
}
