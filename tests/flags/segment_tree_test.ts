/**
 * A segment with its nested segments expanded (lib/flags/segment_tree.ts).
 */
import { assertEquals } from "../assert.ts";
import { type SegmentNode, segmentTree, type TreeNode } from "../../lib/flags/segment_tree.ts";
import type { Manifest, Segment } from "../../lib/flags/model.ts";

function seg(key: string, ...refs: (string | [string, boolean])[]): Segment {
  return {
    key,
    description: key === "root" ? "the root" : "",
    match: key === "root" ? "any" : "all",
    predicates: [
      { attribute: `${key}.attr`, op: "eq", value: key },
      ...refs.map((r) => {
        const [name, want] = typeof r === "string" ? [r, true] : r;
        return { attribute: `segment.${name}`, op: "eq" as const, value: want };
      }),
    ],
  };
}

function manifest(...segments: Segment[]): Manifest {
  return {
    namespace: { description: "", environments: {} },
    flags: {},
    segments: Object.fromEntries(segments.map((s) => [s.key, s])),
  };
}

/** The tree as text: one line per node, indented by depth. */
function outline(node: TreeNode, depth = 0): string[] {
  const pad = "  ".repeat(depth);
  if (node.kind === "predicate") return [`${pad}${node.attribute} ${node.op} ${node.value}`];
  const head = `${pad}${node.want ? "" : "not "}${node.key}${node.stop ? ` (${node.stop})` : ""}`;
  return [head, ...node.children.flatMap((c) => outline(c, depth + 1))];
}

Deno.test("nested segments are expanded under their predicate, recursively", () => {
  const m = manifest(
    seg("root", "mid", ["paying", false]),
    seg("mid", "leaf"),
    seg("leaf"),
    seg("paying"),
  );
  const tree = segmentTree(m, "root");
  assertEquals(tree.match, "any");
  assertEquals(tree.description, "the root");
  assertEquals(outline(tree), [
    "root",
    "  root.attr eq root",
    "  mid",
    "    mid.attr eq mid",
    "    leaf",
    "      leaf.attr eq leaf",
    "  not paying",
    "    paying.attr eq paying",
  ]);
});

Deno.test("a cycle is not opened again", () => {
  const tree = segmentTree(manifest(seg("a", "b"), seg("b", "a")), "a");
  assertEquals(outline(tree), ["a", "  a.attr eq a", "  b", "    b.attr eq b", "    a (cycle)"]);
});

Deno.test("a segment reached twice is expanded once", () => {
  const tree = segmentTree(
    manifest(seg("a", "b", "c"), seg("b", "d"), seg("c", "d"), seg("d")),
    "a",
  );
  assertEquals(outline(tree), [
    "a",
    "  a.attr eq a",
    "  b",
    "    b.attr eq b",
    "    d",
    "      d.attr eq d",
    "  c",
    "    c.attr eq c",
    "    d (repeat)",
  ]);
});

Deno.test("a missing segment and one past the depth limit are named, not expanded", () => {
  const missing = segmentTree(manifest(seg("a", "ghost")), "a");
  assertEquals(outline(missing), ["a", "  a.attr eq a", "  ghost (missing)"]);
  const deep = segmentTree(manifest(seg("a", "b"), seg("b", "c"), seg("c")), "a", { maxDepth: 2 });
  assertEquals(outline(deep), ["a", "  a.attr eq a", "  b", "    b.attr eq b", "    c (depth)"]);
  assertEquals(segmentTree(manifest(), "nope").stop, "missing");
});

Deno.test("a wide diamond of references stays within the node budget", () => {
  // 20 levels, each segment referring twice to the next: 2^20 paths without the bounds
  const segments = Array.from(
    { length: 20 },
    (_, i) => seg(`s${i}`, ...(i < 19 ? [`s${i + 1}`, `s${i + 1}`] : [])),
  );
  const budget = { left: 25 };
  const tree = segmentTree(manifest(...segments), "s0", { budget });
  const count = (n: TreeNode): number =>
    n.kind === "predicate" ? 1 : 1 + n.children.reduce((s, c) => s + count(c), 0);
  assertEquals(count(tree) <= 30, true, String(count(tree)));
  assertEquals(budget.left, 0);
  const stops: string[] = [];
  const walk = (n: TreeNode) => {
    if (n.kind === "segment") {
      if (n.stop) stops.push(n.stop);
      n.children.forEach(walk);
    }
  };
  walk(tree as SegmentNode);
  assertEquals(stops.includes("budget"), true, stops.join());
  // a second tree of the same page shows no more
  assertEquals(segmentTree(manifest(...segments), "s3", { budget }).stop, "budget");
});
