/**
 * `cfgtool import --from flagd`: a flagd flag definition (the JSON of
 * `flags.json`: `flags` as an object or, as the flagd daemon reads it, an
 * array with keys; `$evaluators`; `metadata`) as a manifest.
 *
 * - Each flag's `variants` become variations (names made valid), its type
 *   the variants' type (all booleans, strings, numbers or objects);
 *   `defaultVariant` the default (absent or null: flagd serves the caller's
 *   code default, which a manifest cannot, so the first variant is the
 *   default and the report says so).
 * - `state: "DISABLED"` switches the flag off in every environment
 *   (`enabled = false`). flagd then serves no value (the caller's code
 *   default); cfgtool serves the default variation with reason DISABLED.
 * - `targeting` becomes rules in order: each branch of an `if` chain a
 *   rule whose condition is a segment (jsonlogic.ts), a `fractional` a
 *   rollout (weights kept, scaled to 100000; bucketing differs), a
 *   boolean-valued rule the `true`/`false` variants, `null` the default.
 *   Nested `if`s and rollouts under a condition combine their conditions.
 * - A `$evaluators` entry used as a condition becomes a segment of its
 *   own, shared by the flags that refer to it.
 * - flagd has no environments: the manifest declares one, `default`
 *   (`--env-map default=production` names it).
 *
 * @module
 */
import { ImportError } from "./errors.ts";
import { attributeOf, conditionOf, isOp, varOf } from "./jsonlogic.ts";
import {
  all,
  type Cond,
  describeCond,
  describeRule,
  environmentKeys,
  type FlagSpec,
  ManifestBuilder,
  type RuleSpec,
  scaleWeights,
  segmentRef,
  variationNames,
} from "./manifest_builder.ts";
import { newReport, readJson, Unmappable } from "./source.ts";
import type { ImportOptions, ImportResult, ItemReport } from "./types.ts";
import type { FlagType, VariationValue } from "../flags/model.ts";

/** The one environment of a flagd import, before `--env-map`. */
export const FLAGD_ENVIRONMENT = "default";

/** The note every flag with a rollout gets. */
export const BUCKETING_NOTE =
  "a rollout keeps its weights, but cfgtool hashes contexts differently from the source tool: " +
  "an individual context may land in another bucket (get another variation) than it did there";

const TOP_KEYS = new Set(["$schema", "flags", "$evaluators", "metadata"]);
const FLAG_KEYS = new Set(["state", "variants", "defaultVariant", "targeting", "metadata", "key"]);

/**
 * Reads a flagd flag definition.
 *
 * @param text the file's text
 * @param options file name and `--env-map`
 * @returns the manifest's files and the report
 * @throws {ImportError} when the text is not JSON or not a flag definition
 *
 * @example
 * ```ts
 * import { importFlagd } from "./flagd.ts";
 * const text = JSON.stringify({ flags: { "dark-mode": {
 *   state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "off",
 *   targeting: { if: [{ ends_with: [{ var: "email" }, "@example.com"] }, "on", null] },
 * } } });
 * const r = importFlagd(text, { file: "flags.json", envMap: new Map() });
 * if (!r.files.has("flags/dark-mode.toml") || r.items[0]?.written !== true) throw new Error();
 * ```
 */
export function importFlagd(text: string, options: ImportOptions): ImportResult {
  const doc = readJson(text, options.file);
  if (doc === null || typeof doc !== "object" || Array.isArray(doc) || !("flags" in doc)) {
    throw new ImportError(options.file, 'not a flagd flag definition: no top-level "flags"');
  }
  const top = doc as Record<string, unknown>;
  const flags = flagEntries(top.flags, options.file);
  const evaluators = top.$evaluators;
  if (
    evaluators !== undefined &&
    (evaluators === null || typeof evaluators !== "object" || Array.isArray(evaluators))
  ) {
    throw new ImportError(options.file, '"$evaluators" is not an object');
  }
  const notes: string[] = [];
  for (const k of Object.keys(top)) {
    if (!TOP_KEYS.has(k)) notes.push(`top-level ${JSON.stringify(k)} is not flagd's; ignored`);
  }
  if (top.metadata !== undefined) {
    notes.push("the flag set's metadata is not imported: a manifest has no place for it");
  }
  const envs = environmentKeys([FLAGD_ENVIRONMENT], options.envMap);
  const env = envs.get(FLAGD_ENVIRONMENT)!;
  const builder = new ManifestBuilder({ environments: [env] });
  const run = new FlagdImport(builder, (evaluators ?? {}) as Record<string, unknown>, env);
  const flagItems = flags.map(([key, raw]) => run.flag(key, raw));
  return { files: builder.build(), items: [...flagItems, ...run.segmentItems()], notes };
}

function flagEntries(flags: unknown, file: string): [string, unknown][] {
  if (Array.isArray(flags)) {
    return flags.map((f, i) => {
      const key = f !== null && typeof f === "object"
        ? (f as Record<string, unknown>).key
        : undefined;
      if (typeof key !== "string" || key === "") {
        throw new ImportError(file, `flags[${i}] has no "key"`);
      }
      return [key, f];
    });
  }
  if (flags === null || typeof flags !== "object") {
    throw new ImportError(file, '"flags" is neither an object nor an array');
  }
  return Object.entries(flags);
}

/** The state of one import: the builder, and the evaluators made segments. */
class FlagdImport {
  #evaluatorSegments = new Map<string, { key: string } | { error: Unmappable }>();
  #segmentReports = new Map<string, ItemReport>();

  constructor(
    private readonly builder: ManifestBuilder,
    private readonly evaluators: Record<string, unknown>,
    private readonly env: string,
  ) {}

  segmentItems(): ItemReport[] {
    for (const name of Object.keys(this.evaluators)) {
      if (!this.#segmentReports.has(name)) {
        const report = newReport("segment", name);
        report.notes.push(
          "no flag uses it as a condition (a use as a value is copied into the flag)",
        );
        this.#segmentReports.set(name, report);
      }
    }
    return [...this.#segmentReports.values()];
  }

  /** The condition of `{"$ref": name}`: the evaluator's segment, written on first use. */
  ref(name: string, flagKey: string, notes: Set<string>): Cond {
    const logic = this.evaluators[name];
    if (!Object.hasOwn(this.evaluators, name)) {
      throw new Unmappable(`{"$ref": ${JSON.stringify(name)}}`, "there is no such evaluator");
    }
    if (JSON.stringify(logic).includes("$flagd.flagKey")) {
      // it depends on the flag: its condition is the flag's own
      return conditionOf(logic, { flagKey, notes });
    }
    let made = this.#evaluatorSegments.get(name);
    if (made === undefined) {
      const report = newReport("segment", name);
      this.#segmentReports.set(name, report);
      const segNotes = new Set<string>();
      try {
        const when = conditionOf(logic, { flagKey, notes: segNotes });
        const key = this.builder.segmentKey(name);
        report.notes.push(...this.builder.addSegment({
          key,
          when,
          description: `flagd evaluator ${name}`,
        }));
        report.key = key;
        if (key !== name) report.sourceKey = name;
        report.written = true;
        report.mapped.push(`condition: ${describeCond(when)}`);
        made = { key };
      } catch (err) {
        const u = err instanceof Unmappable
          ? err
          : new Unmappable(`evaluator ${name}`, (err as Error).message);
        report.unmapped.push({ what: u.what, why: `${u.why}; the rules that use it are left out` });
        made = { error: u };
      }
      report.notes.push(...segNotes);
      this.#evaluatorSegments.set(name, made);
    }
    if ("error" in made) throw made.error;
    for (const n of this.#segmentReports.get(name)!.notes) notes.delete(n);
    return segmentRef(made.key);
  }

  flag(sourceKey: string, raw: unknown): ItemReport {
    const report = newReport("flag", sourceKey);
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      report.unmapped.push({ what: "the flag", why: "it is not an object" });
      return report;
    }
    const f = raw as Record<string, unknown>;
    for (const k of Object.keys(f)) {
      if (!FLAG_KEYS.has(k)) {
        report.unmapped.push({ what: `"${k}"`, why: "not a flagd flag property" });
      }
    }
    const variants = f.variants;
    if (
      variants === null || typeof variants !== "object" || Array.isArray(variants) ||
      Object.keys(variants).length === 0
    ) {
      report.unmapped.push({ what: "the flag", why: '"variants" is missing or empty' });
      return report;
    }
    const entries = Object.entries(variants as Record<string, unknown>);
    const type = typeOf(entries.map(([, v]) => v));
    if (type === undefined) {
      report.unmapped.push({
        what: "the flag",
        why: "its variants are not all booleans, all strings, all numbers or all objects",
      });
      return report;
    }
    const names = variationNames(entries.map(([k]) => k));
    for (const [source, name] of names) {
      if (source !== name) {
        report.notes.push(`variant ${JSON.stringify(source)} is variation ${name}`);
      }
    }
    report.mapped.push(`variants: ${[...names.values()].join(", ")} (${type})`);
    let def: string;
    const dv = f.defaultVariant;
    if (typeof dv === "string" && names.has(dv)) {
      def = names.get(dv)!;
      report.mapped.push(`defaultVariant → default ${def}`);
    } else {
      def = names.values().next().value!;
      report.unmapped.push({
        what: dv === undefined || dv === null
          ? "no defaultVariant"
          : `defaultVariant ${JSON.stringify(dv)}`,
        why: dv === undefined || dv === null
          ? `flagd then serves the caller's code default; a manifest needs a default variation: ${def} (the first)`
          : `there is no such variant; the default is ${def} (the first)`,
      });
    }
    const key = this.builder.flagKey(sourceKey);
    report.key = key;
    if (key !== sourceKey) report.sourceKey = sourceKey;
    const notes = new Set<string>();
    const ctx: Ctx = {
      flagKey: sourceKey,
      names,
      def,
      notes,
      report,
      ref: (name) => this.ref(name, sourceKey, notes),
      evaluators: this.evaluators,
    };
    let rules: RuleSpec[] = [];
    if (f.targeting !== undefined && !isEmptyObject(f.targeting)) {
      const compiled = variantRules(f.targeting, "targeting", ctx).rules;
      // a guard at the end keeps nothing from later rules: the default is served anyway
      while (compiled.at(-1)?.guard === true) compiled.pop();
      rules = compiled.map(({ guard: _, ...r }) => r as RuleSpec);
      rules.forEach((r, i) => report.mapped.push(`rule ${i + 1}: ${describeRule(r)}`));
    }
    const state = f.state;
    const disabled = state === "DISABLED";
    if (state !== "ENABLED" && state !== "DISABLED") {
      report.unmapped.push({
        what: state === undefined ? "no state" : `state ${JSON.stringify(state)}`,
        why: 'flagd requires "ENABLED" or "DISABLED"; written as enabled',
      });
    }
    if (disabled) {
      report.mapped.push(`state DISABLED → enabled = false in ${this.env}`);
      report.notes.push(
        `flagd serves a disabled flag without a value (the caller's code default); cfgtool serves the default variation ${def} with reason DISABLED`,
      );
    }
    let description: string | undefined;
    if (f.metadata !== null && typeof f.metadata === "object" && !Array.isArray(f.metadata)) {
      for (const [k, v] of Object.entries(f.metadata)) {
        if (k === "description" && typeof v === "string") {
          description = v;
          report.mapped.push("metadata.description → description");
        } else {
          report.unmapped.push({ what: `metadata.${k}`, why: "a manifest has no place for it" });
        }
      }
    } else if (f.metadata !== undefined) {
      report.unmapped.push({ what: "metadata", why: "it is not an object" });
    }
    const spec: FlagSpec = {
      key,
      type,
      description,
      variations: entries.map(([k, v]) => ({ name: names.get(k)!, value: v as VariationValue })),
      default: def,
      rules,
      ...(disabled ? { environments: { [this.env]: { enabled: false } } } : {}),
    };
    try {
      report.notes.push(...this.builder.addFlag(spec));
      report.written = true;
    } catch (err) {
      report.unmapped.push({ what: "the flag", why: (err as Error).message });
    }
    if (rules.some((r) => r.rollout !== undefined)) report.notes.push(BUCKETING_NOTE);
    report.notes.push(...notes);
    return report;
  }
}

/** What compiling one flag's targeting needs. */
interface Ctx {
  flagKey: string;
  names: Map<string, string>;
  def: string;
  notes: Set<string>;
  report: ItemReport;
  ref: (name: string) => Cond;
  evaluators: Record<string, unknown>;
}

/** A rule, marked when it only keeps later rules from contexts an `if` branch left to the default. */
type Rule = RuleSpec & { guard?: boolean };

/** Rules, and whether every context that reaches them gets a variation from them. */
interface Compiled {
  rules: Rule[];
  total: boolean;
}

const BOOLEAN_OPS = new Set([
  "and",
  "or",
  "!",
  "!!",
  "==",
  "===",
  "!=",
  "!==",
  "<",
  "<=",
  ">",
  ">=",
  "in",
  "starts_with",
  "ends_with",
  "sem_ver",
  "missing",
  "missing_some",
]);

/** The rules of an expression whose value names a variant. */
function variantRules(x: unknown, where: string, ctx: Ctx): Compiled {
  if (x === null) return { rules: [], total: false };
  if (typeof x === "string" || typeof x === "boolean") {
    const name = ctx.names.get(String(x));
    if (name === undefined) {
      ctx.report.unmapped.push({
        what: `${where}: variant ${JSON.stringify(x)}`,
        why: "the flag has no such variant (flagd answers an error); the default is served instead",
      });
      return { rules: [], total: false };
    }
    return { rules: [{ variation: name }], total: true };
  }
  if (!isOp(x)) {
    ctx.report.unmapped.push({
      what: `${where}: ${JSON.stringify(x)}`,
      why: "not a variant name or an operation",
    });
    return { rules: [], total: false };
  }
  const op = Object.keys(x)[0]!;
  if (op === "$ref" && typeof x.$ref === "string") {
    try {
      // flagd's evaluators cannot refer to each other
      const nested = (): never => {
        throw new Unmappable(
          "a $ref inside an evaluator",
          "flagd's evaluators cannot refer to each other",
        );
      };
      return variantRules(refLogic(x.$ref, ctx), `${where} ($ref ${x.$ref})`, {
        ...ctx,
        evaluators: {},
        ref: nested,
      });
    } catch (err) {
      return unmapped(err, where, ctx);
    }
  }
  if (op === "if") return ifRules(x.if, where, ctx);
  if (op === "fractional") {
    try {
      return { rules: [fractionalRule(x.fractional, ctx)], total: false };
    } catch (err) {
      return unmapped(err, where, ctx);
    }
  }
  if (BOOLEAN_OPS.has(op)) {
    // the rule's value is true or false: the variants named "true" and "false"
    const t = ctx.names.get("true");
    const f = ctx.names.get("false");
    if (t === undefined || f === undefined) {
      ctx.report.unmapped.push({
        what: `${where}: ${op}`,
        why:
          'a true/false result names the variants "true" and "false", which the flag does not have',
      });
      return { rules: [], total: false };
    }
    try {
      const when = conditionOf(x, { flagKey: ctx.flagKey, notes: ctx.notes, ref: ctx.ref });
      return { rules: [{ when, variation: t }, { variation: f }], total: true };
    } catch (err) {
      return unmapped(err, where, ctx);
    }
  }
  if (op === "var") {
    ctx.report.unmapped.push({
      what: `${where}: ${JSON.stringify(x)}`,
      why: "the variant is read from the context; a rule serves a variation it names",
    });
    return { rules: [], total: false };
  }
  ctx.report.unmapped.push({
    what: `${where}: operator ${JSON.stringify(op)}`,
    why: "it computes the variant's name; a rule serves a variation it names",
  });
  return { rules: [], total: false };
}

/** A shared evaluator used as a value: copied into the flag. */
function refLogic(name: string, ctx: Ctx): unknown {
  if (!Object.hasOwn(ctx.evaluators, name)) {
    throw new Unmappable(`{"$ref": ${JSON.stringify(name)}}`, "there is no such evaluator");
  }
  return ctx.evaluators[name];
}

function unmapped(err: unknown, where: string, ctx: Ctx): Compiled {
  if (!(err instanceof Unmappable)) throw err;
  ctx.report.unmapped.push({
    what: `${where}: ${err.what}`,
    why: `${err.why}; contexts it decided go on to the next rule`,
  });
  return { rules: [], total: false };
}

function ifRules(raw: unknown, where: string, ctx: Ctx): Compiled {
  const a = Array.isArray(raw) ? raw : [raw];
  const rules: Rule[] = [];
  let i = 0;
  for (; i + 1 < a.length; i += 2) {
    const at = `${where}.if[${i}]`;
    let when: Cond;
    try {
      when = conditionOf(a[i], { flagKey: ctx.flagKey, notes: ctx.notes, ref: ctx.ref });
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      ctx.report.unmapped.push({
        what: `${at}: ${err.what}`,
        why: `${err.why}; the branch is left out, so contexts it matched go on to the next branch`,
      });
      continue;
    }
    const inner = variantRules(a[i + 1], `${where}.if[${i + 1}]`, ctx);
    for (const r of inner.rules) rules.push({ ...r, when: r.when ? all([when, r.when]) : when });
    // a branch that may serve nothing serves the default in flagd: later branches must not see it
    if (!inner.total) rules.push({ when, variation: ctx.def, guard: true });
  }
  if (i < a.length) {
    const rest = variantRules(a[i], `${where}.if[${i}]`, ctx);
    return { rules: [...rules, ...rest.rules], total: rest.total };
  }
  return { rules, total: false };
}

function fractionalRule(raw: unknown, ctx: Ctx): RuleSpec {
  const a = Array.isArray(raw) ? raw : [];
  if (a.length === 0) throw new Unmappable("fractional", "it has no variants");
  let bucketBy = "targeting_key";
  let start = 0;
  if (!Array.isArray(a[0])) {
    bucketBy = bucketPath(a[0], ctx.flagKey);
    start = 1;
  }
  const names: string[] = [];
  const weights: number[] = [];
  for (const e of a.slice(start)) {
    if (!Array.isArray(e) || e.length === 0 || typeof e[0] !== "string") {
      throw new Unmappable(`fractional ${JSON.stringify(e)}`, "an entry is [variant, weight]");
    }
    const name = ctx.names.get(e[0]);
    if (name === undefined) {
      throw new Unmappable(
        `fractional variant ${JSON.stringify(e[0])}`,
        "the flag has no such variant",
      );
    }
    const w = e.length > 1 ? e[1] : 1;
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) {
      throw new Unmappable(
        `fractional weight ${JSON.stringify(w)}`,
        "a weight computed at evaluation time; a rollout's weights are constants",
      );
    }
    names.push(name);
    weights.push(Math.trunc(w));
  }
  const scaled = scaleWeights(weights);
  if (scaled === undefined) throw new Unmappable("fractional", "every weight is 0");
  ctx.notes.add(
    `a context without ${bucketBy} skips the rollout in cfgtool; flagd buckets it by the targeting key, or serves the default`,
  );
  return {
    rollout: names.map((variation, i) => ({ variation, weight: scaled[i]! })),
    bucketBy,
  };
}

/** The context path a `fractional`'s bucketing expression reads. */
function bucketPath(x: unknown, flagKey: string): string {
  const v = varOf(x);
  if (v !== undefined) return attributeOf(v.path);
  // {"cat": [{"var": "$flagd.flagKey"}, {"var": "email"}]}: cfgtool's hash takes the flag key already
  if (isOp(x) && Array.isArray(x.cat)) {
    const parts = x.cat.filter((p) => varOf(p)?.path !== "$flagd.flagKey" && p !== flagKey);
    if (parts.length === 1 && varOf(parts[0]) !== undefined) {
      return attributeOf(varOf(parts[0])!.path);
    }
  }
  throw new Unmappable(
    `fractional bucketing ${JSON.stringify(x)}`,
    "a rollout hashes one context attribute (with the flag key)",
  );
}

function isEmptyObject(x: unknown): boolean {
  return x !== null && typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 0;
}

/** The manifest type of variant values, or undefined when they are mixed or arrays. */
function typeOf(values: unknown[]): FlagType | undefined {
  const kind = (v: unknown): FlagType | undefined =>
    typeof v === "boolean"
      ? "boolean"
      : typeof v === "string"
      ? "string"
      : typeof v === "number" && Number.isFinite(v)
      ? "number"
      : v !== null && typeof v === "object" && !Array.isArray(v)
      ? "object"
      : undefined;
  const first = kind(values[0]);
  return values.every((v) => kind(v) === first) ? first : undefined;
}
