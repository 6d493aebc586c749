/**
 * A segment with its nested segments expanded, as pages show it: its
 * predicates, where a `segment.<key>` predicate becomes that segment's own
 * predicates, recursively. Validation forbids reference cycles and long
 * chains, but the tree stays bounded anyway: a segment already open on the
 * path is not opened again (a cycle), nor one already shown in the same
 * tree (a diamond: shown once), nor one deeper than the chain limit, and a
 * shared budget caps how many nodes one page shows. Pure.
 *
 * @module
 */
import { refName, type Scalar } from "./conditions.ts";
import { type Manifest, MAX_SEGMENT_DEPTH, type Predicate } from "./model.ts";

/** Most nodes the trees of one page show, by default. */
export const TREE_BUDGET = 500;

/** A predicate that reads the context. */
export interface PredicateNode {
  kind: "predicate";
  attribute: string;
  op: Predicate["op"];
  value: Scalar | Scalar[];
}

/** Why a segment node shows no predicates. */
export type StopReason =
  /** No such segment in the manifest. */
  | "missing"
  /** It is open on the path from the root (a reference cycle). */
  | "cycle"
  /** Already expanded elsewhere in this tree. */
  | "repeat"
  /** Deeper than the longest chain of references. */
  | "depth"
  /** The page's budget of nodes is spent. */
  | "budget";

/** A segment: the root, or a `segment.<key>` predicate. */
export interface SegmentNode {
  kind: "segment";
  key: string;
  /** True: the context must be in the segment; false (`eq false`): must not be. */
  want: boolean;
  /** How its predicates combine (absent when the segment is missing). */
  match?: "all" | "any";
  /** Its description, when it has one. */
  description?: string;
  /** Its predicates, expanded (empty when `stop` says why). */
  children: TreeNode[];
  /** Why it was not expanded. */
  stop?: StopReason;
}

/** One node of a segment tree. */
export type TreeNode = PredicateNode | SegmentNode;

/** Options of {@linkcode segmentTree}. */
export interface TreeOptions {
  /** Deepest segment level expanded (the root is 1; default {@linkcode MAX_SEGMENT_DEPTH}). */
  maxDepth?: number;
  /** Nodes left to show, shared by every tree of a page (default: a fresh {@linkcode TREE_BUDGET}). */
  budget?: { left: number };
}

/**
 * Segment `key` of a manifest as a tree (see the module comment).
 *
 * @param manifest a manifest
 * @param key the segment key
 * @param options depth limit and node budget
 * @returns the root node
 *
 * @example
 * ```ts
 * import { segmentTree } from "./segment_tree.ts";
 * const tree = segmentTree({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: {
 *     eu: { key: "eu", description: "", match: "all", predicates: [
 *       { attribute: "country", op: "eq", value: "DE" },
 *       { attribute: "segment.paying", op: "eq", value: true },
 *     ] },
 *     paying: { key: "paying", description: "", match: "all",
 *       predicates: [{ attribute: "plan", op: "eq", value: "pro" }] },
 *   },
 * }, "eu");
 * const nested = tree.children[1];
 * if (nested?.kind !== "segment" || nested.key !== "paying") throw new Error();
 * if (nested.children[0]?.kind !== "predicate" || nested.children[0].attribute !== "plan") throw new Error();
 * ```
 */
export function segmentTree(
  manifest: Manifest,
  key: string,
  options: TreeOptions = {},
): SegmentNode {
  const maxDepth = options.maxDepth ?? MAX_SEGMENT_DEPTH;
  const budget = options.budget ?? { left: TREE_BUDGET };
  const shown = new Set<string>();
  const open = new Set<string>();

  const expand = (segKey: string, want: boolean, depth: number): SegmentNode => {
    if (!Object.hasOwn(manifest.segments, segKey)) {
      return { kind: "segment", key: segKey, want, children: [], stop: "missing" };
    }
    const seg = manifest.segments[segKey]!;
    const node: SegmentNode = {
      kind: "segment",
      key: segKey,
      want,
      match: seg.match,
      children: [],
      ...(seg.description === "" ? {} : { description: seg.description }),
    };
    const stop: StopReason | undefined = open.has(segKey)
      ? "cycle"
      : shown.has(segKey)
      ? "repeat"
      : depth > maxDepth
      ? "depth"
      : budget.left <= 0
      ? "budget"
      : undefined;
    if (stop !== undefined) return { ...node, stop };
    shown.add(segKey);
    open.add(segKey);
    for (const p of seg.predicates) {
      if (budget.left <= 0) {
        node.stop = "budget";
        break;
      }
      budget.left--;
      const ref = refName(p.attribute, "segment");
      node.children.push(
        ref === undefined
          ? { kind: "predicate", attribute: p.attribute, op: p.op, value: p.value }
          : expand(ref, p.value === true, depth + 1),
      );
    }
    open.delete(segKey);
    return node;
  };

  return expand(key, true, 1);
}
