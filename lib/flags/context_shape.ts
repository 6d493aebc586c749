/**
 * The shape of the evaluation context a namespace reads, for the
 * playground's starting text: every attribute path its segments'
 * predicates read, every rollout's `bucket_by` and `targeting_key`, each
 * with a placeholder of a plausible type taken from the predicate's value
 * (the first element of an `in` list), nested into one object. Pure.
 *
 * @module
 */
import { refName, type Scalar } from "./conditions.ts";
import { DEFAULT_BUCKET_BY, type Manifest, type Rule } from "./model.ts";

/** Most paths a skeleton holds (the playground text stays small). */
export const MAX_SKELETON_PATHS = 200;

/** The placeholder of a bucketing path (`targeting_key`, a rollout's `bucket_by`). */
export const BUCKET_PLACEHOLDER = "user-1";

/**
 * The context paths a namespace reads, in a stable order: `targeting_key`
 * first, then each segment's predicates (segments by key, predicates in
 * file order; `segment.<key>` references read no context), then the
 * `bucket_by` of every rollout (flags by key, base rules before
 * environment overrides). A path read by several predicates keeps the
 * first placeholder. The placeholder is the predicate's value (the first
 * element of a list), `""` for `matches` and `exists` (the value there is
 * a pattern or a switch, not an example), and {@linkcode BUCKET_PLACEHOLDER}
 * for bucketing paths.
 *
 * @param manifest a validated manifest
 * @param limit most paths returned (default {@linkcode MAX_SKELETON_PATHS})
 * @returns path → placeholder, in insertion order
 *
 * @example
 * ```ts
 * import { contextPaths } from "./context_shape.ts";
 * const paths = contextPaths({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: {
 *     eu: { key: "eu", description: "", match: "all", predicates: [
 *       { attribute: "account.country", op: "in", value: ["DE", "FR"] },
 *       { attribute: "segment.paying", op: "eq", value: true },
 *     ] },
 *   },
 * });
 * if ([...paths.keys()].join() !== "targeting_key,account.country") throw new Error();
 * if (paths.get("account.country") !== "DE") throw new Error();
 * ```
 */
export function contextPaths(
  manifest: Manifest,
  limit: number = MAX_SKELETON_PATHS,
): Map<string, Scalar> {
  const out = new Map<string, Scalar>();
  const add = (path: string, value: Scalar) => {
    if (out.size < limit && !out.has(path)) out.set(path, value);
  };
  add(DEFAULT_BUCKET_BY, BUCKET_PLACEHOLDER);
  for (const key of Object.keys(manifest.segments).sort()) {
    for (const p of manifest.segments[key]!.predicates) {
      if (refName(p.attribute, "segment") !== undefined) continue;
      const first = Array.isArray(p.value) ? p.value[0] : p.value;
      add(p.attribute, p.op === "matches" || p.op === "exists" ? "" : first ?? "");
    }
  }
  const bucketing = (rules: readonly Rule[] | undefined) => {
    for (const r of rules ?? []) if (r.rollout !== undefined) add(r.bucket_by, BUCKET_PLACEHOLDER);
  };
  for (const key of Object.keys(manifest.flags).sort()) {
    const flag = manifest.flags[key]!;
    bucketing(flag.rules);
    for (const o of Object.values(flag.environments)) bucketing(o.rules);
  }
  return out;
}

/** A context skeleton: nested objects with scalar leaves. */
export interface Skeleton {
  [key: string]: Scalar | Skeleton;
}

/**
 * Nests dotted paths into one object (`a.b` → `{a: {b: …}}`). When one
 * path is a prefix of another (`a` and `a.b`), the nested one wins: `a`
 * becomes an object, since a value cannot be both. The objects have no
 * prototype, so every path (even `__proto__`) is a plain key.
 *
 * @param paths path → placeholder (as {@linkcode contextPaths} gives)
 * @returns the nested object
 *
 * @example
 * ```ts
 * import { nestPaths } from "./context_shape.ts";
 * const s = nestPaths(new Map<string, string | number | boolean>([["a", 1], ["a.b", true], ["c.d", "x"]]));
 * if (JSON.stringify(s) !== '{"a":{"b":true},"c":{"d":"x"}}') throw new Error(JSON.stringify(s));
 * ```
 */
export function nestPaths(paths: ReadonlyMap<string, Scalar>): Skeleton {
  const root = blank();
  for (const [path, value] of paths) {
    const steps = path.split(".");
    let node = root;
    for (const step of steps.slice(0, -1)) {
      const next = Object.hasOwn(node, step) ? node[step] : undefined;
      if (next !== undefined && typeof next === "object") {
        node = next;
        continue;
      }
      const made = blank();
      node[step] = made; // a scalar here gives way to the deeper path
      node = made;
    }
    const last = steps[steps.length - 1]!;
    if (!Object.hasOwn(node, last)) node[last] = value;
  }
  return root;
}

/** An object without a prototype: a `__proto__` path is a plain key. */
function blank(): Skeleton {
  return Object.create(null);
}

/**
 * The playground's starting context: {@linkcode contextPaths} nested by
 * {@linkcode nestPaths}.
 *
 * @param manifest a validated manifest
 * @returns the skeleton object
 *
 * @example
 * ```ts
 * import { contextSkeleton } from "./context_shape.ts";
 * const s = contextSkeleton({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: {
 *     beta: { key: "beta", description: "", match: "any", predicates: [
 *       { attribute: "user.beta", op: "eq", value: true },
 *     ] },
 *   },
 * });
 * if (JSON.stringify(s) !== '{"targeting_key":"user-1","user":{"beta":true}}') throw new Error();
 * ```
 */
export function contextSkeleton(manifest: Manifest): Skeleton {
  return nestPaths(contextPaths(manifest));
}
