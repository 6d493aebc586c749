/**
 * Which environments a manifest change can affect: the environments where
 * some evaluation (`evaluateFlag`/`evaluateAll` of lib/flags/evaluate.ts,
 * and the `public_evaluate` gate in front of them) may give another answer
 * after the change than before. A reviewer, an approval rule or a
 * notification uses it to know that a change "touches production".
 *
 * The comparison works on validated models ({@linkcode Manifest}), so
 * comments, formatting, key order in TOML and the way weights are written
 * (percent or thousandths) never count. For every environment declared in
 * either manifest, the environment is **affected** when:
 *
 * | What changed                                               | Environments affected                                         |
 * | ---------------------------------------------------------- | ------------------------------------------------------------- |
 * | the environment is declared on one side only               | that environment                                              |
 * | `public_evaluate` of the environment                       | that environment                                              |
 * | a flag is added or removed                                 | every environment (a flag exists in every environment)        |
 * | a flag's `type`                                            | every environment                                             |
 * | a flag's `default` or `[[rule]]` list                      | those whose override does not replace that part               |
 * | an override `[environments.E]` (enabled, default, rules)   | `E`, when the flag as `E` serves it (`effectiveFlag`) differs |
 * | a variation's value                                        | those whose effective default or rules name that variation    |
 * | a rule's segment, variation, rollout weights, `bucket_by`  | those whose effective rules are these rules                   |
 * | a segment's predicates or `match`                          | those where some flag's effective rules reach the segment, directly or through other segments |
 *
 * "The rules" of a flag in an environment are its effective rules (the
 * override's when it replaces them, else the flag's) **even while the flag
 * is disabled there**: a disabled flag serves its default, but its rules
 * are what the environment serves again the moment it is re-enabled, so a
 * change to them (or to a segment they reach) is reported for that
 * environment. This is wider than evaluation on purpose.
 *
 * These changes affect **no** environment:
 *
 * - descriptions (of the namespace, flags and segments), comments, formatting;
 * - the order of environments in `namespace.toml`, of variations in a flag,
 *   and of files;
 * - adding, removing or changing a variation that no effective default or
 *   rule names in an environment (that environment is not affected);
 * - a rollout entry of weight 0 (it never gets a bucket), added or removed;
 * - `bucket_by` on a rule that is not a rollout (it is never read);
 * - `match` of a segment with a single predicate (all and any agree);
 * - the order of, or repeats in, the list of an `in`/`not_in` predicate;
 * - a segment that no flag reaches in that environment, and orphan segments.
 *
 * Three more choices lean to the safe side. Segments are compared by key:
 * renaming a segment (and the rules naming it) affects the environments that
 * reach it even when its content is the same, because each segment is
 * evaluated, and spends the evaluation's regex budget, once per evaluation
 * under its own key. Predicates keep their order (an `all` or `any` list
 * stops at the first predicate that decides, which changes the budget
 * spent). Object variation values keep their key order (the JSON served
 * changes). Beyond these, the comparison follows evaluation exactly, per
 * environment, but it is structural: two rule lists that differ yet happen
 * to serve the same (a rule behind one that always matches, a segment that
 * can never match) still count as different.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import { ProblemsError } from "../errors.ts";
import { refName } from "./conditions.ts";
import { effectiveFlag } from "./effective.ts";
import type { Flag, Manifest, Predicate, Rule } from "./model.ts";
import { validateManifest, type ValidateOptions } from "./validate.ts";
import type { SameFiles } from "./value_changes.ts";

/**
 * A manifest file set, in any of the forms a change request holds: path to
 * exact bytes (as `validateManifest` takes), or path to text (or bytes) in a
 * plain object.
 */
export type ManifestFileSet =
  | ReadonlyMap<string, Uint8Array>
  | Readonly<Record<string, string | Uint8Array>>;

/**
 * The environments where evaluation can differ between two manifests (the
 * rules are in the module documentation).
 *
 * @param before the manifest before the change (a validated model)
 * @param after the manifest after the change
 * @returns environment keys, sorted byte-wise, without repeats
 *
 * @example
 * ```ts
 * import { environmentsAffected } from "./impact.ts";
 * import type { Manifest } from "./model.ts";
 * const before: Manifest = {
 *   namespace: {
 *     description: "",
 *     environments: { production: { public_evaluate: false }, staging: { public_evaluate: false } },
 *   },
 *   flags: {
 *     f: {
 *       key: "f", description: "", type: "boolean", default: "off",
 *       variations: { on: true, off: false }, rules: [], environments: {},
 *     },
 *   },
 *   segments: {},
 * };
 * const after = structuredClone(before);
 * after.flags.f!.environments.staging = { enabled: false };
 * if (environmentsAffected(before, after).join() !== "staging") throw new Error();
 * after.flags.f!.description = "only words";
 * after.flags.f!.environments = {};
 * if (environmentsAffected(before, after).length !== 0) throw new Error();
 * ```
 */
export function environmentsAffected(
  before: Manifest,
  after: Manifest,
  same?: SameFiles,
): string[] {
  const envsBefore = before.namespace.environments;
  const envsAfter = after.namespace.environments;
  const affected = new Set<string>();
  const common: string[] = [];
  for (const e of union(Object.keys(envsBefore), Object.keys(envsAfter))) {
    if (!Object.hasOwn(envsBefore, e) || !Object.hasOwn(envsAfter, e)) affected.add(e);
    else if (envsBefore[e]!.public_evaluate !== envsAfter[e]!.public_evaluate) affected.add(e);
    else common.push(e);
  }
  if (common.length === 0) return [...affected].sort(compareUtf8);

  const flagKeys = union(Object.keys(before.flags), Object.keys(after.flags));
  const flagsOnBothSides = flagKeys.every((k) =>
    Object.hasOwn(before.flags, k) && Object.hasOwn(after.flags, k)
  );
  if (!flagsOnBothSides) {
    for (const e of common) affected.add(e);
    return [...affected].sort(compareUtf8);
  }

  // Flags: the flag as an environment without an override serves it
  // (compared once), then each environment that overrides it on either side.
  const commonSet = new Set(common);
  let open = common.length;
  const mark = (e: string) => {
    if (affected.has(e)) return;
    affected.add(e);
    open--;
  };
  for (const k of flagKeys) {
    if (open === 0) break;
    if (same?.flags.has(k)) continue; // the same file: the same flag everywhere
    const fb = before.flags[k]!;
    const fa = after.flags[k]!;
    const overridden = union(Object.keys(fb.environments), Object.keys(fa.environments))
      .filter((e) => commonSet.has(e));
    for (const e of overridden) {
      if (!affected.has(e) && flagPrint(fb, e) !== flagPrint(fa, e)) mark(e);
    }
    if (flagPrint(fb, undefined) !== flagPrint(fa, undefined)) {
      for (const e of common) {
        if (!Object.hasOwn(fb.environments, e) && !Object.hasOwn(fa.environments, e)) mark(e);
      }
    }
  }

  // Segments whose content differs (or that exist on one side only) matter
  // where some flag's effective rules reach them, on either side.
  const changedSegments = new Set<string>();
  for (const s of union(Object.keys(before.segments), Object.keys(after.segments))) {
    if (same?.segments.has(s)) continue;
    if (segmentPrint(before, s) !== segmentPrint(after, s)) changedSegments.add(s);
  }
  if (open > 0 && changedSegments.size > 0) {
    const rest = common.filter((e) => !affected.has(e));
    for (const m of [before, after]) {
      for (const e of environmentsReaching(m, rest, changedSegments)) affected.add(e);
    }
  }
  return [...affected].sort(compareUtf8);
}

/**
 * {@linkcode environmentsAffected} of two file sets, each validated first
 * with {@linkcode validateManifest}. By default both are loaded as the store
 * loads a version (`{stored: true}`): a base that an earlier release
 * accepted must not make the comparison throw, and for files that pass the
 * strict checks the model is the same. Checking new files strictly before
 * they are written is the caller's job (push and change requests do it).
 *
 * @param before the files before the change (a `Map` of bytes, or a record of text or bytes)
 * @param after the files after the change
 * @param options validation options, applied to both sides (default `{stored: true}`)
 * @returns environment keys, sorted byte-wise
 * @throws {ProblemsError} when either side is not a valid manifest (the
 *   problems of the first invalid side, `before` first)
 *
 * @example
 * ```ts
 * import { environmentsAffectedByFiles } from "./impact.ts";
 * const ns = "schema_version = 1\n[namespace.environments.production]\n" +
 *   "[namespace.environments.staging]\n";
 * const flag = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n' +
 *   "[variations]\non = true\noff = false\n";
 * const before = { "namespace.toml": ns, "flags/f.toml": flag };
 * const after = {
 *   "namespace.toml": ns,
 *   "flags/f.toml": flag + "[environments.production]\nenabled = false\n",
 * };
 * if (environmentsAffectedByFiles(before, after).join() !== "production") throw new Error();
 * const reworded = { "namespace.toml": ns, "flags/f.toml": '# comment\ndescription = "x"\n' + flag };
 * if (environmentsAffectedByFiles(before, reworded).length !== 0) throw new Error();
 * ```
 */
export function environmentsAffectedByFiles(
  before: ManifestFileSet,
  after: ManifestFileSet,
  options: ValidateOptions = { stored: true },
): string[] {
  return environmentsAffected(manifestOfFiles(before, options), manifestOfFiles(after, options));
}

/**
 * Validates a file set in any {@linkcode ManifestFileSet} form and returns
 * its model (text is encoded as UTF-8).
 *
 * @param files path to bytes (a `Map`), or path to text or bytes (a record)
 * @param options validation options
 * @returns the validated manifest
 * @throws {ProblemsError} listing every problem when the files are not a valid manifest
 *
 * @example
 * ```ts
 * import { manifestOfFiles } from "./impact.ts";
 * const m = manifestOfFiles({ "namespace.toml": "schema_version = 1\n[namespace.environments.qa]\n" });
 * if (Object.keys(m.namespace.environments).join() !== "qa") throw new Error();
 * ```
 */
export function manifestOfFiles(files: ManifestFileSet, options: ValidateOptions = {}): Manifest {
  const map = new Map<string, Uint8Array>();
  const entries = files instanceof Map
    ? (files as ReadonlyMap<string, Uint8Array>).entries()
    : Object.entries(files as Readonly<Record<string, string | Uint8Array>>);
  const enc = new TextEncoder();
  for (const [path, content] of entries) {
    map.set(path, typeof content === "string" ? enc.encode(content) : content);
  }
  const { problems, manifest } = validateManifest(map, options);
  if (manifest === undefined) throw new ProblemsError(problems);
  return manifest;
}

/**
 * Everything of `flag` that evaluation in `env` reads (in an environment
 * without an override when `env` is undefined): type, enabled, the default
 * and every rule with the names *and values* of the variations they serve,
 * rollouts without their weight-0 entries, `bucket_by` of rollouts only,
 * segments by key (their content is compared separately).
 */
function flagPrint(flag: Flag, env: string | undefined): string {
  const eff = env === undefined
    ? effectiveFlag({ ...flag, environments: {} }, "")
    : effectiveFlag(flag, env);
  const variation = (name: string) => [
    name,
    Object.hasOwn(flag.variations, name) ? flag.variations[name] : undefined,
  ];
  const rule = (r: Rule) =>
    r.rollout === undefined ? [r.segment ?? null, "variation", variation(r.variation)] : [
      r.segment ?? null,
      "rollout",
      r.bucket_by,
      r.rollout.filter((e) => e.weight !== 0).map((e) => [variation(e.variation), e.weight]),
    ];
  return canonical([flag.type, eff.enabled, variation(eff.default), eff.rules.map(rule)]);
}

/**
 * Canonical text of what evaluation reads of a segment, or `"-"` when the
 * manifest has no such segment: `match` (irrelevant with one predicate),
 * predicates in order, `in`/`not_in` lists sorted without repeats.
 */
function segmentPrint(manifest: Manifest, key: string): string {
  if (!Object.hasOwn(manifest.segments, key)) return "-";
  const s = manifest.segments[key]!;
  const match = s.predicates.length === 1 ? "all" : s.match;
  return canonical([match, s.predicates.map(predicatePrint)]);
}

function predicatePrint(p: Predicate): unknown[] {
  let value: unknown = p.value;
  if ((p.op === "in" || p.op === "not_in") && Array.isArray(p.value)) {
    // Matched through a Set (SameValueZero): order, repeats and the sign of 0 never count.
    const items = [...new Map(p.value.map((v) => [canonical(v === 0 ? 0 : v), v])).entries()];
    items.sort((a, b) => compareUtf8(a[0], b[0]));
    value = items.map(([, v]) => v === 0 ? 0 : v);
  } else if (typeof value === "number" && value === 0) {
    // Predicates compare numbers with === and <, where -0 and 0 agree.
    value = 0;
  }
  return [p.attribute, p.op, value];
}

/**
 * The environments of `envs` where some flag's effective rules reach one of
 * `targets` in `manifest`, directly or through segment references. The
 * segments that lead to a target are found once (walking references
 * backwards); then each environment needs only the flags that override
 * their rules there.
 */
function environmentsReaching(
  manifest: Manifest,
  envs: readonly string[],
  targets: ReadonlySet<string>,
): string[] {
  const referrers = new Map<string, string[]>();
  for (const [key, seg] of Object.entries(manifest.segments)) {
    for (const p of seg.predicates) {
      const ref = refName(p.attribute, "segment");
      if (ref === undefined) continue;
      const list = referrers.get(ref);
      if (list === undefined) referrers.set(ref, [key]);
      else list.push(key);
    }
  }
  const leads = new Set(targets);
  const queue = [...targets];
  while (queue.length > 0) {
    for (const r of referrers.get(queue.pop()!) ?? []) {
      if (!leads.has(r)) {
        leads.add(r);
        queue.push(r);
      }
    }
  }
  const reach = (rules: readonly Rule[]) =>
    rules.some((r) => r.segment !== undefined && leads.has(r.segment));
  // How many flags reach through their own rules; per environment, the
  // flags whose override replaces them, and whether an override's rules reach.
  let viaFlagRules = 0;
  const replaced = new Map<string, number>();
  const viaOverride = new Set<string>();
  for (const flag of Object.values(manifest.flags)) {
    const own = reach(flag.rules);
    if (own) viaFlagRules++;
    for (const [e, o] of Object.entries(flag.environments)) {
      if (o.rules === undefined) continue;
      if (own) replaced.set(e, (replaced.get(e) ?? 0) + 1);
      if (reach(o.rules)) viaOverride.add(e);
    }
  }
  return envs.filter((e) => viaOverride.has(e) || viaFlagRules > (replaced.get(e) ?? 0));
}

/**
 * A canonical encoding of a JSON-like value: JSON with object keys in their
 * order, `-0` kept apart from `0` (a served value of `-0` is not `0` to a
 * strict comparison) and `undefined` as `~`.
 */
function canonical(v: unknown): string {
  if (v === undefined) return "~";
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : JSON.stringify(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${
    Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(",")
  }}`;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/**
 * The flags and segments whose files are byte for byte the same in two
 * file sets, for {@linkcode environmentsAffected} and `valueChanges` to
 * skip; undefined when `namespace.toml` differs (then nothing is skipped).
 *
 * @param before the files before
 * @param after the files after
 * @returns the keys whose files did not change, or undefined
 *
 * @example
 * ```ts
 * import { sameFiles } from "./impact.ts";
 * const t = (s: string) => new TextEncoder().encode(s);
 * const ns = t("schema_version = 1\n");
 * const same = sameFiles(
 *   new Map([["namespace.toml", ns], ["flags/a.toml", t("a")], ["flags/b.toml", t("b")]]),
 *   new Map([["namespace.toml", ns], ["flags/a.toml", t("a")], ["flags/b.toml", t("c")]]),
 * );
 * if ([...same!.flags].join() !== "a" || same!.segments.size !== 0) throw new Error();
 * ```
 */
export function sameFiles(
  before: ReadonlyMap<string, Uint8Array>,
  after: ReadonlyMap<string, Uint8Array>,
): SameFiles | undefined {
  const ns = "namespace.toml";
  if (!bytesEqual(before.get(ns), after.get(ns))) return undefined;
  const flags = new Set<string>();
  const segments = new Set<string>();
  for (const [path, bytes] of before) {
    if (!path.endsWith(".toml") || !bytesEqual(bytes, after.get(path))) continue;
    const slash = path.indexOf("/");
    const dir = path.slice(0, slash);
    const key = path.slice(slash + 1, -".toml".length);
    if (key.includes("/")) continue;
    if (dir === "flags") flags.add(key);
    else if (dir === "segments") segments.add(key);
  }
  return { flags, segments };
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
