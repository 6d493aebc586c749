/**
 * What every importer builds a manifest with: keys made slugs, conditions
 * made segments, flags and segments written with the authoring library so
 * the files read like the console's. An importer describes each flag in
 * terms of the manifest (variations, rules serving a variation or a
 * rollout, per-environment overrides) and each condition as a {@linkcode
 * Cond} tree; the builder turns a condition that is more than one
 * predicate list into segments of its own (`<flag>.rule-1`, with nested
 * `and`/`or`/`not` as further segments read through `segment.<key>`
 * references), checks every file as the validator would, and keeps a flag
 * out whole (nothing half-written) when anything of it is refused, so the
 * importer can report why.
 *
 * @example
 * ```ts
 * import { all, ManifestBuilder, pred } from "./manifest_builder.ts";
 * import { filesOf } from "../flags/authoring/texts.ts";
 * import { validateManifest } from "../flags/validate.ts";
 * const b = new ManifestBuilder({ environments: ["production"] });
 * const key = b.flagKey("newWelcomeBanner");
 * b.addFlag({
 *   key,
 *   type: "boolean",
 *   variations: [{ name: "on", value: true }, { name: "off", value: false }],
 *   default: "off",
 *   rules: [{
 *     when: all([pred("email", "ends_with", "@example.com"), pred("beta", "eq", true)]),
 *     variation: "on",
 *   }],
 * });
 * const files = b.build();
 * if (key !== "new-welcome-banner" || !files.has("segments/new-welcome-banner.rule-1.toml")) throw new Error();
 * if (validateManifest(filesOf(files)).problems.length !== 0) throw new Error();
 * ```
 *
 * @module
 */
import type { Operator, Scalar } from "../flags/conditions.ts";
import {
  addEnvironment,
  addRule,
  applyFileEdits,
  createFlag,
  createSegment,
  giveOwnRules,
  type PredicateInput,
  type RuleInput,
  setNamespaceDescription,
  setOverrideDefault,
  setOverrideEnabled,
} from "../flags/authoring/mod.ts";
import { type FlagType, KEY_RE, ROLLOUT_TOTAL, type VariationValue } from "../flags/model.ts";
import { MAX_DESCRIPTION_LENGTH } from "../protocol/limits.ts";
import { UsageError } from "../errors.ts";

/** A condition on a context: predicates joined by `all`, `any` and `not`. */
export type Cond =
  | { kind: "pred"; attribute: string; op: Operator; value: Scalar | Scalar[] }
  | { kind: "all"; items: Cond[] }
  | { kind: "any"; items: Cond[] }
  | { kind: "not"; item: Cond }
  | { kind: "segment"; key: string }
  | { kind: "const"; value: boolean };

/** A predicate. */
export function pred(attribute: string, op: Operator, value: Scalar | Scalar[]): Cond {
  return { kind: "pred", attribute, op, value };
}

/** Every condition holds (none given: always). */
export function all(items: Cond[]): Cond {
  return { kind: "all", items };
}

/** At least one condition holds (none given: never). */
export function any(items: Cond[]): Cond {
  return { kind: "any", items };
}

/** The condition does not hold. */
export function not(item: Cond): Cond {
  return { kind: "not", item };
}

/** The context matches a segment the builder holds (by its manifest key). */
export function segmentRef(key: string): Cond {
  return { kind: "segment", key };
}

/** Always (`true`) or never (`false`). */
export function always(value: boolean): Cond {
  return { kind: "const", value };
}

/**
 * A condition with constants folded, nested `all`/`any` flattened and
 * double negations removed.
 *
 * @example
 * ```ts
 * import { all, always, pred, simplify } from "./manifest_builder.ts";
 * const c = simplify(all([always(true), all([pred("a", "eq", 1)])]));
 * if (c.kind !== "pred") throw new Error(c.kind);
 * ```
 */
export function simplify(c: Cond): Cond {
  switch (c.kind) {
    case "all":
    case "any": {
      const unit = c.kind === "all"; // the constant that changes nothing
      const items: Cond[] = [];
      for (const raw of c.items) {
        const s = simplify(raw);
        if (s.kind === "const") {
          if (s.value === unit) continue;
          return always(!unit);
        }
        if (s.kind === c.kind) items.push(...s.items);
        else items.push(s);
      }
      if (items.length === 0) return always(unit);
      return items.length === 1 ? items[0]! : { kind: c.kind, items };
    }
    case "not": {
      const s = simplify(c.item);
      if (s.kind === "const") return always(!s.value);
      if (s.kind === "not") return s.item;
      return not(s);
    }
    default:
      return c;
  }
}

/**
 * A condition in words, for the report: `email ends_with "@example.com" and not (…)`.
 *
 * @example
 * ```ts
 * import { all, describeCond, not, pred } from "./manifest_builder.ts";
 * const t = describeCond(all([pred("plan", "eq", "pro"), not(pred("beta", "eq", true))]));
 * if (t !== 'plan eq "pro" and not beta eq true') throw new Error(t);
 * ```
 */
export function describeCond(c: Cond): string {
  const inner = (
    x: Cond,
  ) => (x.kind === "all" || x.kind === "any" ? `(${describeCond(x)})` : describeCond(x));
  switch (c.kind) {
    case "pred":
      return `${c.attribute} ${c.op} ${JSON.stringify(c.value)}`;
    case "all":
      return c.items.map(inner).join(" and ");
    case "any":
      return c.items.map(inner).join(" or ");
    case "not":
      return `not ${inner(c.item)}`;
    case "segment":
      return `segment ${c.key}`;
    case "const":
      return c.value ? "always" : "never";
  }
}

/**
 * A rule in words, for the report: `plan eq "pro" → on`, `every context → rollout on 25%, off 75%`.
 *
 * @example
 * ```ts
 * import { describeRule } from "./manifest_builder.ts";
 * const t = describeRule({ rollout: [{ variation: "on", weight: 25000 }, { variation: "off", weight: 75000 }] });
 * if (t !== "every context → rollout on 25%, off 75%") throw new Error(t);
 * ```
 */
export function describeRule(r: RuleSpec): string {
  const when = r.when === undefined ? "every context" : describeCond(simplify(r.when));
  const serves = r.variation !== undefined
    ? r.variation
    : `rollout ${r.rollout.map((e) => `${e.variation} ${e.weight / 1000}%`).join(", ")}` +
      (r.bucketBy !== undefined && r.bucketBy !== "targeting_key" ? ` by ${r.bucketBy}` : "");
  return `${when} → ${serves}`;
}

/** A rule: when its condition holds (absent: always), it serves a variation or a rollout. */
export type RuleSpec =
  & { when?: Cond | undefined }
  & (
    | { variation: string; rollout?: undefined; bucketBy?: undefined }
    | {
      rollout: { variation: string; weight: number }[];
      variation?: undefined;
      /** The context path hashed (absent: `targeting_key`). */
      bucketBy?: string | undefined;
    }
  );

/** What one environment does differently. */
export interface OverrideSpec {
  /** `false`: the flag is off there (serves the default, reason DISABLED). */
  enabled?: boolean | undefined;
  /** The variation served when no rule matches there. */
  default?: string | undefined;
  /** Rules of its own, replacing the flag's there. */
  rules?: RuleSpec[] | undefined;
}

/** A flag to write, in the manifest's terms. */
export interface FlagSpec {
  /** Its manifest key (from {@linkcode ManifestBuilder.flagKey}). */
  key: string;
  /** Its type. */
  type: FlagType;
  /** Free text (cut at the manifest's limit, with a note). */
  description?: string | undefined;
  /** Its variations, names valid (see {@linkcode variationNames}). */
  variations: { name: string; value: VariationValue }[];
  /** The variation served when no rule matches. */
  default: string;
  /** Rules in order; the first that matches decides. */
  rules: RuleSpec[];
  /** Overrides by (manifest) environment key. */
  environments?: Record<string, OverrideSpec> | undefined;
}

/** A segment to write. */
export interface SegmentSpec {
  /** Its manifest key (from {@linkcode ManifestBuilder.segmentKey}). */
  key: string;
  /** Free text. */
  description?: string | undefined;
  /** Who is in it. */
  when: Cond;
}

/**
 * A manifest key (flag, segment, environment) made of a source key:
 * camelCase split with `-`, lower case, every other character `-`, at most
 * 63 characters, and made unique among `taken` with `-2`, `-3`, … (the key
 * returned is added to `taken`).
 *
 * @example
 * ```ts
 * import { slugKey } from "./manifest_builder.ts";
 * const taken = new Set<string>();
 * if (slugKey("myBoolFlag", taken) !== "my-bool-flag") throw new Error();
 * if (slugKey("My Bool_Flag!", taken) !== "my-bool_flag") throw new Error();
 * if (slugKey("my-bool-flag", taken) !== "my-bool-flag-2") throw new Error();
 * ```
 */
export function slugKey(source: string, taken: Set<string>): string {
  let s = source
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[^a-z0-9]+/, "");
  s = trimDashes(s.slice(0, 63));
  if (s === "") s = "item";
  let key = s;
  for (let n = 2; taken.has(key) || !KEY_RE.test(key); n++) {
    const suffix = `-${n}`;
    key = s.slice(0, 63 - suffix.length) + suffix;
  }
  taken.add(key);
  return key;
}

/** `s` without the dashes it ends with (no regex: keys are untrusted). */
function trimDashes(s: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === "-") end--;
  return s.slice(0, end);
}

/**
 * Variation names for source variant names: kept when valid, else every
 * character outside `A-Za-z0-9._-` becomes `-`, a `v` is put first when
 * the name does not start with a letter, and names are made unique.
 *
 * @param sources the source names, in order
 * @returns source name → variation name
 *
 * @example
 * ```ts
 * import { variationNames } from "./manifest_builder.ts";
 * const m = variationNames(["on", "#FF0000", "1", "a b"]);
 * if ([...m.values()].join() !== "on,v-FF0000,v1,a-b") throw new Error([...m.values()].join());
 * ```
 */
export function variationNames(sources: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const source of sources) {
    let s = source.replace(/[^A-Za-z0-9._-]/g, "-");
    if (!/^[A-Za-z]/.test(s)) s = `v${s}`;
    s = s.slice(0, 63);
    let name = s;
    for (let n = 2; taken.has(name); n++) name = `${s.slice(0, 60)}-${n}`;
    taken.add(name);
    out.set(source, name);
  }
  return out;
}

/**
 * Relative weights scaled to {@linkcode ROLLOUT_TOTAL} (100000, thousandths
 * of a percent), keeping their proportions: each gets its share rounded
 * down, and what is left goes to the largest remainders. Undefined when
 * every weight is 0 (or none is given).
 *
 * @example
 * ```ts
 * import { scaleWeights } from "./manifest_builder.ts";
 * if (scaleWeights([50, 20, 30])?.join() !== "50000,20000,30000") throw new Error();
 * if (scaleWeights([1, 1, 1])?.join() !== "33334,33333,33333") throw new Error();
 * if (scaleWeights([0, 0]) !== undefined) throw new Error();
 * ```
 */
export function scaleWeights(weights: readonly number[]): number[] | undefined {
  const total = weights.reduce((a, b) => a + b, 0);
  if (!(total > 0) || !Number.isFinite(total)) return undefined;
  const exact = weights.map((w) => (w / total) * ROLLOUT_TOTAL);
  const out = exact.map(Math.floor);
  let left = ROLLOUT_TOTAL - out.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) }))
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) out[order[k]!.i]!++;
  return out;
}

/**
 * Environment keys for the source's environment names, with `--env-map`
 * applied: a mapped name becomes its target; others are made slugs.
 *
 * @param names the source's environment names, in order
 * @param envMap source name → manifest key (`--env-map a=b`)
 * @returns source name → manifest key
 * @throws {UsageError} when a target is not a valid key or two names map to one key
 *
 * @example
 * ```ts
 * import { environmentKeys } from "./manifest_builder.ts";
 * const m = environmentKeys(["default", "Staging"], new Map([["default", "production"]]));
 * if (m.get("default") !== "production" || m.get("Staging") !== "staging") throw new Error();
 * ```
 */
export function environmentKeys(
  names: readonly string[],
  envMap: ReadonlyMap<string, string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const name of names) {
    const target = envMap.get(name);
    if (target === undefined) continue;
    if (!KEY_RE.test(target)) {
      throw new UsageError(
        `--env-map ${name}=${target}: "${target}" is not a valid environment key`,
      );
    }
    if (taken.has(target)) {
      throw new UsageError(`--env-map: two environments are mapped to "${target}"`);
    }
    taken.add(target);
    out.set(name, target);
  }
  for (const name of names) if (!out.has(name)) out.set(name, slugKey(name, taken));
  return new Map(names.map((n) => [n, out.get(n)!]));
}

/**
 * Builds a manifest directory's texts. Keys are reserved with
 * {@linkcode flagKey} and {@linkcode segmentKey}; {@linkcode addSegment}
 * and {@linkcode addFlag} write one item each, or throw (leaving nothing of
 * it behind) when the authoring library refuses it.
 */
export class ManifestBuilder {
  #texts = new Map<string, string>();
  #flags = new Set<string>();
  #segments = new Set<string>();
  /** The manifest's environment keys, in order. */
  readonly environments: readonly string[];

  /**
   * Starts a manifest declaring the environments (keys, valid), each with
   * `public_evaluate = false`.
   *
   * @param options environment keys and the namespace's description
   */
  constructor(options: { environments: readonly string[]; description?: string | undefined }) {
    this.environments = [...options.environments];
    this.#texts.set("namespace.toml", "schema_version = 1\n");
    for (const key of this.environments) this.#apply(addEnvironment(this.#texts, { key }));
    if (options.description !== undefined && options.description !== "") {
      const description = options.description.slice(0, MAX_DESCRIPTION_LENGTH);
      this.#apply(setNamespaceDescription(this.#texts, { description }));
    }
  }

  /** Reserves a flag key made of a source key (see {@linkcode slugKey}). */
  flagKey(source: string): string {
    return slugKey(source, this.#flags);
  }

  /** Reserves a segment key made of a source key (see {@linkcode slugKey}). */
  segmentKey(source: string): string {
    return slugKey(source, this.#segments);
  }

  /**
   * Writes a segment.
   *
   * @returns notes for the report (a description cut, a condition that is always or never true)
   * @throws {InvalidRequestError} when it is refused; nothing of it is kept
   */
  addSegment(spec: SegmentSpec): string[] {
    const notes: string[] = [];
    const before = this.#texts;
    try {
      const when = simplify(spec.when);
      const description = this.#description(spec.description, notes);
      if (when.kind === "const") {
        // A segment needs a predicate: `exists` on a path and its opposite.
        notes.push(`the segment matches ${when.value ? "every" : "no"} context`);
        const probe: PredicateInput = { attribute: "targeting_key", op: "exists", value: true };
        const preds = [probe, { ...probe, value: false }];
        this.#create(spec.key, when.value ? "any" : "all", preds, description);
      } else this.#segmentOf(spec.key, when, description);
      return notes;
    } catch (err) {
      this.#texts = before;
      throw err;
    }
  }

  /**
   * Writes a flag, with the segments its rules' conditions need.
   *
   * @returns notes for the report (rules that can never match and were left out, a description cut)
   * @throws {InvalidRequestError} when it is refused; nothing of it is kept
   */
  addFlag(spec: FlagSpec): string[] {
    const notes: string[] = [];
    const before = this.#texts;
    try {
      this.#apply(createFlag(this.#texts, {
        key: spec.key,
        type: spec.type,
        description: this.#description(spec.description, notes),
        variations: spec.variations,
        default: spec.default,
      }));
      let n = 0;
      const made = new Map<string, string>(); // a condition met again reuses its segment
      const rulesOf = (rules: RuleSpec[], where: string): RuleInput[] => {
        const out: RuleInput[] = [];
        rules.forEach((r, i) => {
          const rule = this.#ruleOf(spec.key, r, () => `${spec.key}.rule-${++n}`, made);
          if (rule === undefined) notes.push(`${where}rule ${i + 1} can never match; left out`);
          else out.push(rule);
        });
        return out;
      };
      for (const [env, o] of Object.entries(spec.environments ?? {})) {
        if (o.rules === undefined) continue;
        this.#apply(giveOwnRules(this.#texts, { flag: spec.key, environment: env }));
        for (const rule of rulesOf(o.rules, `in ${env}, `)) {
          this.#apply(addRule(this.#texts, { flag: spec.key, environment: env, rule }));
        }
      }
      for (const rule of rulesOf(spec.rules, "")) {
        this.#apply(addRule(this.#texts, { flag: spec.key, rule }));
      }
      for (const [env, o] of Object.entries(spec.environments ?? {})) {
        if (o.enabled === false) {
          this.#apply(setOverrideEnabled(this.#texts, {
            flag: spec.key,
            environment: env,
            enabled: false,
          }));
        }
        if (o.default !== undefined && o.default !== spec.default) {
          this.#apply(setOverrideDefault(this.#texts, {
            flag: spec.key,
            environment: env,
            variation: o.default,
          }));
        }
      }
      return notes;
    } catch (err) {
      this.#texts = before;
      throw err;
    }
  }

  /** Whether a segment key is written. */
  hasSegment(key: string): boolean {
    return this.#texts.has(`segments/${key}.toml`);
  }

  /** The manifest's texts: relative path → TOML. */
  build(): Map<string, string> {
    return new Map(this.#texts);
  }

  #apply(edits: ReadonlyMap<string, string | null>): void {
    this.#texts = applyFileEdits(this.#texts, edits);
  }

  #description(d: string | undefined, notes: string[]): string | undefined {
    if (d === undefined) return undefined;
    const clean = d.toWellFormed();
    if (clean.length <= MAX_DESCRIPTION_LENGTH) return clean;
    notes.push(`the description is cut to ${MAX_DESCRIPTION_LENGTH} characters`);
    return clean.slice(0, MAX_DESCRIPTION_LENGTH);
  }

  /** The rule as the authoring library takes it, or undefined when it never matches. */
  #ruleOf(
    flag: string,
    r: RuleSpec,
    hint: () => string,
    made: Map<string, string>,
  ): RuleInput | undefined {
    const when = simplify(r.when ?? always(true));
    if (when.kind === "const" && !when.value) return undefined;
    let segment: string | undefined;
    if (when.kind === "segment") segment = when.key;
    else if (when.kind !== "const") {
      const same = JSON.stringify(when);
      segment = made.get(same);
      if (segment === undefined) {
        segment = this.#segmentOf(
          this.segmentKey(hint()),
          when,
          `A condition of flag ${flag}, made by cfgtool import`,
        );
        made.set(same, segment);
      }
    }
    if (r.variation !== undefined) return { segment, variation: r.variation };
    const merged = new Map<string, number>();
    for (const e of r.rollout) merged.set(e.variation, (merged.get(e.variation) ?? 0) + e.weight);
    return {
      segment,
      rollout: [...merged].map(([variation, weight]) => ({ variation, weight })),
      bucket_by: r.bucketBy === "targeting_key" ? undefined : r.bucketBy,
    };
  }

  /** Writes `when` as segment `key` (nested parts as segments of their own); returns `key`. */
  #segmentOf(key: string, when: Cond, description: string | undefined): string {
    let part = 0;
    const nested = (c: Cond): string =>
      this.#segmentOf(this.segmentKey(`${key}.${++part}`), c, `Part of segment ${key}`);
    const predicateOf = (c: Cond): PredicateInput => {
      switch (c.kind) {
        case "pred":
          return { attribute: c.attribute, op: c.op, value: c.value };
        case "segment":
          return { attribute: `segment.${c.key}`, op: "eq", value: true };
        case "not":
          return {
            attribute: `segment.${c.item.kind === "segment" ? c.item.key : nested(c.item)}`,
            op: "eq",
            value: false,
          };
        default:
          return { attribute: `segment.${nested(c)}`, op: "eq", value: true };
      }
    };
    const match = when.kind === "any" ? "any" : "all";
    const items = when.kind === "all" || when.kind === "any" ? when.items : [when];
    this.#create(key, match, items.map(predicateOf), description);
    return key;
  }

  #create(
    key: string,
    match: "all" | "any",
    predicates: PredicateInput[],
    description: string | undefined,
  ): void {
    this.#apply(createSegment(this.#texts, { key, match, predicates, description }));
  }
}
