/**
 * Who uses a segment: the flags whose rules reach it (naming it, or naming
 * a segment that refers to it, transitively) and the segments that refer
 * to it directly. The reverse of lib/flags/reach.ts, for pages that start
 * from a segment.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Manifest } from "./model.ts";
import { flagSegments, segmentRefs } from "./reach.ts";

/** A flag that reaches a segment. */
export interface SegmentUser {
  /** The flag key. */
  flag: string;
  /** Whether a rule of the flag (base or an environment's) names the segment itself. */
  direct: boolean;
  /** The segments the flag's rules name that refer to the segment, transitively (sorted). */
  through: string[];
}

/**
 * The flags that reach segment `key`, sorted by flag key. A reference to
 * a segment missing from the model is skipped and a cycle cannot loop, so
 * hand-built models are fine too.
 *
 * @param model a validated manifest
 * @param key the segment key
 * @returns the flags, with how each reaches the segment
 *
 * @example
 * ```ts
 * import { segmentUsers } from "./segment_use.ts";
 * const flag = (key: string, segment: string) => ({
 *   key, description: "", type: "boolean" as const, default: "off",
 *   variations: { on: true, off: false },
 *   rules: [{ segment, variation: "on", bucket_by: "targeting_key" }], environments: {},
 * });
 * const users = segmentUsers({
 *   namespace: { description: "", environments: {} },
 *   flags: { a: flag("a", "eu"), b: flag("b", "paying") },
 *   segments: {
 *     eu: { key: "eu", description: "", match: "all",
 *       predicates: [{ attribute: "segment.paying", op: "eq", value: true }] },
 *     paying: { key: "paying", description: "", match: "all",
 *       predicates: [{ attribute: "plan", op: "eq", value: "pro" }] },
 *   },
 * }, "paying");
 * if (JSON.stringify(users) !== JSON.stringify([
 *   { flag: "a", direct: false, through: ["eu"] },
 *   { flag: "b", direct: true, through: [] },
 * ])) throw new Error(JSON.stringify(users));
 * ```
 */
export function segmentUsers(model: Manifest, key: string): SegmentUser[] {
  const reaches = new Map<string, boolean>();
  const out: SegmentUser[] = [];
  for (const flagKey of Object.keys(model.flags).sort(compareUtf8)) {
    const named = flagSegments(model.flags[flagKey]!);
    const direct = named.includes(key);
    const through = named.filter((s) => s !== key && reachesSegment(model, s, key, reaches));
    if (direct || through.length > 0) out.push({ flag: flagKey, direct, through });
  }
  return out;
}

/**
 * The segments whose predicates refer to segment `key` directly, sorted.
 *
 * @param model a validated manifest
 * @param key the segment key
 * @returns segment keys
 *
 * @example
 * ```ts
 * import { segmentsIncluding } from "./segment_use.ts";
 * const keys = segmentsIncluding({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: {
 *     eu: { key: "eu", description: "", match: "all",
 *       predicates: [{ attribute: "segment.paying", op: "eq", value: true }] },
 *     paying: { key: "paying", description: "", match: "all",
 *       predicates: [{ attribute: "plan", op: "eq", value: "pro" }] },
 *   },
 * }, "paying");
 * if (keys.join() !== "eu") throw new Error();
 * ```
 */
export function segmentsIncluding(model: Manifest, key: string): string[] {
  return Object.keys(model.segments)
    .filter((s) => segmentRefs(model.segments[s]!).includes(key))
    .sort(compareUtf8);
}

/** Whether segment `from` refers to `target`, transitively (memoized per target in `memo`). */
function reachesSegment(
  model: Manifest,
  from: string,
  target: string,
  memo: Map<string, boolean>,
): boolean {
  const known = memo.get(from);
  if (known !== undefined) return known;
  const seen = new Set<string>([from]);
  const queue = [from];
  let found = false;
  while (queue.length > 0 && !found) {
    const s = queue.pop()!;
    if (!Object.hasOwn(model.segments, s)) continue;
    for (const r of segmentRefs(model.segments[s]!)) {
      if (r === target) found = true;
      if (!seen.has(r)) {
        seen.add(r);
        queue.push(r);
      }
    }
  }
  memo.set(from, found);
  return found;
}
