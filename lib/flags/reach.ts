/**
 * Segment reachability, the graph the closure of docs/events.md follows: a
 * flag reaches the segments its rules name (base rules and every
 * environment's override rules); a segment reaches the segments its
 * `segment.<key>` predicates name, transitively.
 *
 * @module
 */
import { refName } from "./conditions.ts";
import { compareUtf8 } from "../bytes.ts";
import type { Flag, Manifest, Segment } from "./model.ts";

/**
 * The segments a flag's rules name directly (base rules and environment
 * override rules), sorted and without repeats.
 *
 * @param flag a validated flag
 * @returns segment keys, sorted byte-wise
 *
 * @example
 * ```ts
 * import { flagSegments } from "./reach.ts";
 * const keys = flagSegments({
 *   key: "f", description: "", type: "boolean", default: "off",
 *   variations: { on: true, off: false },
 *   rules: [{ segment: "beta", variation: "on", bucket_by: "targeting_key" }],
 *   environments: {},
 * });
 * if (keys.join() !== "beta") throw new Error();
 * ```
 */
export function flagSegments(flag: Flag): string[] {
  const out = new Set<string>();
  const add = (rules: Flag["rules"] | undefined) => {
    for (const r of rules ?? []) if (r.segment !== undefined) out.add(r.segment);
  };
  add(flag.rules);
  for (const env of Object.values(flag.environments)) add(env.rules);
  return [...out].sort(compareUtf8);
}

/**
 * The segments a segment's predicates reference directly
 * (`attribute = "segment.<key>"`), sorted and without repeats.
 *
 * @param segment a validated segment
 * @returns segment keys, sorted byte-wise
 *
 * @example
 * ```ts
 * import { segmentRefs } from "./reach.ts";
 * const refs = segmentRefs({
 *   key: "eu", description: "", match: "all",
 *   predicates: [{ attribute: "segment.paying", op: "eq", value: true }],
 * });
 * if (refs.join() !== "paying") throw new Error();
 * ```
 */
export function segmentRefs(segment: Segment): string[] {
  const out = new Set<string>();
  for (const p of segment.predicates) {
    const name = refName(p.attribute, "segment");
    if (name !== undefined) out.add(name);
  }
  return [...out].sort(compareUtf8);
}

/**
 * Every segment reachable from the given flags, following segment-to-segment
 * references transitively. Flag keys absent from the manifest are ignored
 * (the closure omits them). References to segments missing from the model
 * are skipped, and a cycle cannot loop, so this also works on models that a
 * caller assembled by hand.
 *
 * @param model a validated manifest
 * @param flagKeys the flags to start from
 * @returns the reachable segment keys, sorted byte-wise
 *
 * @example
 * ```ts
 * import { reachableSegments } from "./reach.ts";
 * import { parseManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const model = parseManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n")],
 *   ["flags/f.toml", enc.encode(
 *     'schema_version = 1\ntype = "boolean"\ndefault = "off"\n' +
 *       '[variations]\non = true\noff = false\n[[rule]]\nsegment = "eu"\nvariation = "on"\n',
 *   )],
 *   ["segments/eu.toml", enc.encode(
 *     'schema_version = 1\n[[predicate]]\nattribute = "segment.paying"\nop = "eq"\nvalue = true\n',
 *   )],
 *   ["segments/paying.toml", enc.encode(
 *     'schema_version = 1\n[[predicate]]\nattribute = "plan"\nop = "eq"\nvalue = "pro"\n',
 *   )],
 * ]));
 * if (reachableSegments(model, ["f"]).join() !== "eu,paying") throw new Error();
 * ```
 */
export function reachableSegments(model: Manifest, flagKeys: Iterable<string>): string[] {
  const seen = new Set<string>();
  const queue: string[] = [];
  const visit = (key: string) => {
    if (seen.has(key) || !Object.hasOwn(model.segments, key)) return;
    seen.add(key);
    queue.push(key);
  };
  for (const f of flagKeys) {
    if (!Object.hasOwn(model.flags, f)) continue;
    for (const s of flagSegments(model.flags[f]!)) visit(s);
  }
  while (queue.length > 0) {
    for (const s of segmentRefs(model.segments[queue.pop()!]!)) visit(s);
  }
  return [...seen].sort(compareUtf8);
}

/**
 * The segments that no flag reaches, directly or through other segments.
 * A `*` closure includes them; narrow closures do not.
 *
 * @param model a validated manifest
 * @returns orphan segment keys, sorted byte-wise
 *
 * @example
 * ```ts
 * import { orphanSegments } from "./reach.ts";
 * const orphans = orphanSegments({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: { old: { key: "old", description: "", match: "all", predicates: [] } },
 * });
 * if (orphans.join() !== "old") throw new Error();
 * ```
 */
export function orphanSegments(model: Manifest): string[] {
  const reached = new Set(reachableSegments(model, Object.keys(model.flags)));
  return Object.keys(model.segments).filter((k) => !reached.has(k)).sort(compareUtf8);
}
