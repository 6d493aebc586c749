/**
 * The manifest the Unleash, LaunchDarkly and GrowthBook importers write:
 * they describe flags, segments and environments as drafts (rules with
 * {@linkcode Cond} conditions, per-environment rule lists), and
 * {@linkcode ManifestDraft.build} writes them with the authoring edits
 * (lib/flags/authoring), the same edits the console makes, so every file
 * reads as the console writes it.
 *
 * - A rule's condition becomes the segment the rule names: a reference to
 *   a source segment is used as it is; anything else is written as a
 *   segment of its own (`<flag>-r<i>`, or `<flag>.<env>.r<i>` when the
 *   environments differ), with nested `any`/`all`/`not` parts as helper
 *   segments referenced from it (`…-1`, `…-2`).
 * - When every environment has the same rules, they are the flag's
 *   `[[rule]]`s; otherwise each environment gets rules of its own.
 * - An environment switched off is `enabled = false`; a default other
 *   than the flag's is the override's `default`.
 * - A source segment that cannot be written (no predicate left) turns the
 *   references to it into "never" (or "always"), and the rules that can
 *   then never match are left out, each reported.
 * - A flag the authoring edits refuse is not written, and the report says
 *   why; what it needed alone (its rule segments) is not written either.
 *
 * The flagd and Flipt importers write with `ManifestBuilder`
 * (manifest_builder.ts) instead: it names rule segments `<flag>.rule-<n>`
 * and words its report otherwise, so the two are kept apart rather than
 * change what either set of importers writes. What both read a source
 * with is in source.ts.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import {
  addEnvironment,
  addRule,
  applyFileEdits,
  createFlag,
  createSegment,
  giveOwnRules,
  type ManifestTexts,
  type PredicateInput,
  type RuleInput,
  setOverrideDefault,
  setOverrideEnabled,
  type VariationInput,
} from "../flags/authoring/mod.ts";
import { type FlagType, KEY_RE } from "../flags/model.ts";
import type { ImportResult, ItemReport } from "./types.ts";
import { all, any, type Cond, describeCond, not, slugKey } from "./draft_conditions.ts";

/** What a rule serves: one variation, or a split (weights summing to 100000). */
export type DraftServe =
  | { variation: string }
  | { rollout: { variation: string; weight: number }[]; bucketBy?: string | undefined };

/** One rule: when it matches, what it serves, and how the report names it. */
export interface DraftRule {
  /** The condition (a segment reference, a predicate tree, or a constant). */
  when: Cond;
  /** What it serves. */
  serve: DraftServe;
  /** The rule in the source's words (`strategy 2 (flexibleRollout)`). */
  label: string;
}

/** One environment of a flag. */
export interface DraftEnvironment {
  /** `false`: the environment serves its default to everyone. */
  enabled: boolean;
  /** The variation served when no rule matches (and when switched off). */
  default: string;
  /** The rules, in order. */
  rules: DraftRule[];
}

/** A flag to write. */
export interface DraftFlag {
  /** Its key (from {@linkcode ManifestDraft.flagKey}). */
  key: string;
  /** Free text. */
  description: string;
  /** Its type. */
  type: FlagType;
  /** Its variations. */
  variations: VariationInput[];
  /** The flag's default variation. */
  default: string;
  /** Environment key (already mapped) → what it does there. */
  environments: Map<string, DraftEnvironment>;
  /** Its report (mapped lines are added when it is written). */
  report: ItemReport;
}

/** A source segment to write. */
export interface DraftSegment {
  /** Its key (from {@linkcode ManifestDraft.segmentKey}). */
  key: string;
  /** Free text. */
  description: string;
  /** Who is in it. */
  when: Cond;
  /** Its report. */
  report: ItemReport;
}

/**
 * Collects an import's environments, segments and flags, then writes them.
 *
 * @example
 * ```ts
 * import { ManifestDraft } from "./manifest_draft.ts";
 * import { pred } from "./draft_conditions.ts";
 * const d = new ManifestDraft();
 * d.addEnvironment("production");
 * const key = d.flagKey("Dark Mode");
 * const report = { kind: "flag" as const, key, written: false, mapped: [], unmapped: [], notes: [] };
 * d.addFlag({
 *   key, description: "", type: "boolean", default: "off", report,
 *   variations: [{ name: "on", value: true }, { name: "off", value: false }],
 *   environments: new Map([["production", { enabled: true, default: "off", rules: [
 *     { when: pred("country", "in", ["DE"]), serve: { variation: "on" }, label: "rule 1" },
 *   ] }]]),
 * });
 * const out = d.build();
 * if (!out.files.has("flags/dark-mode.toml") || !out.files.has("segments/dark-mode-r1.toml")) throw new Error();
 * if (!report.written) throw new Error();
 * ```
 */
export class ManifestDraft {
  /** Environment keys, in order. */
  readonly environments: string[] = [];
  /** Notes on the export as a whole. */
  readonly notes: string[] = [];
  private readonly flags: DraftFlag[] = [];
  private readonly segments: DraftSegment[] = [];
  private readonly items: ItemReport[] = [];
  private readonly flagKeys = new Set<string>();
  private readonly segmentKeys = new Set<string>();

  /** Declares an environment (once; a repeat is ignored). */
  addEnvironment(key: string): void {
    if (!this.environments.includes(key)) this.environments.push(key);
  }

  /** A free flag key for a source key. */
  flagKey(sourceKey: string): string {
    return slugKey(sourceKey, this.flagKeys);
  }

  /** A free segment key for a source name. */
  segmentKey(sourceName: string): string {
    return slugKey(sourceName, this.segmentKeys);
  }

  /** Adds a source segment; add segments before the segments and flags that refer to them. */
  addSegment(segment: DraftSegment): void {
    this.segments.push(segment);
    this.items.push(segment.report);
  }

  /** Adds the report of something not written at all (in source order). */
  addReport(report: ItemReport): void {
    this.items.push(report);
  }

  /** Adds a flag. */
  addFlag(flag: DraftFlag): void {
    this.flags.push(flag);
    this.items.push(flag.report);
  }

  /** Writes everything: the manifest's texts and the reports. */
  build(): ImportResult {
    let texts: ManifestTexts = new Map();
    for (const env of this.environments) {
      texts = applyFileEdits(texts, addEnvironment(texts, { key: env }));
    }
    const resolved = new Map<string, Cond>();
    for (const s of this.segments) {
      const when = resolveRefs(s.when, resolved);
      if (when.kind === "const") {
        resolved.set(s.key, when);
        s.report.notes.push(
          when.value
            ? "it holds for every context: rules that name it match everyone"
            : "it holds for no context: rules that name it are left out",
        );
        continue;
      }
      try {
        texts = this.writeSegment(texts, s.key, s.description, when);
        s.report.written = true;
        s.report.mapped.push(`who is in it: ${describeCond(when)}`);
      } catch (err) {
        if (!(err instanceof InvalidRequestError)) throw err;
        resolved.set(s.key, { kind: "const", value: false });
        s.report.unmapped.push({
          what: "the segment",
          why: `${err.message}; rules that name it are left out`,
        });
      }
    }
    for (const f of this.flags) {
      try {
        texts = this.writeFlag(texts, f, resolved);
        f.report.written = true;
      } catch (err) {
        if (!(err instanceof InvalidRequestError)) throw err;
        f.report.written = false;
        f.report.unmapped.push({ what: "the flag", why: `not written: ${err.message}` });
      }
    }
    return { files: new Map(texts), items: this.items, notes: this.notes };
  }

  private writeFlag(
    texts: ManifestTexts,
    f: DraftFlag,
    resolved: Map<string, Cond>,
  ): ManifestTexts {
    let t = applyFileEdits(
      texts,
      createFlag(texts, {
        key: f.key,
        type: f.type,
        description: f.description,
        variations: f.variations,
        default: f.default,
      }),
    );
    const envs = [...f.environments];
    const lists = envs.map(([env, e]) => ({
      env,
      rules: e.rules.flatMap((r) => {
        const when = resolveRefs(r.when, resolved);
        if (when.kind === "const" && !when.value) {
          f.report.notes.push(`${env}: ${r.label} matches no context and is left out`);
          return [];
        }
        return [{ ...r, when }];
      }),
    }));
    const same = lists.length > 0 &&
      lists.every((l) => JSON.stringify(l.rules) === JSON.stringify(lists[0]!.rules));
    const mapped: string[] = [];
    if (same) {
      for (const [i, r] of lists[0]!.rules.entries()) {
        const rule = this.ruleInput(t, r, `${f.key}-r${i + 1}`);
        t = applyFileEdits(t, rule.edits);
        t = applyFileEdits(t, addRule(t, { flag: f.key, rule: rule.input }));
        mapped.push(`every environment: ${r.label} → ${describeRule(rule.input)}`);
      }
    }
    for (const [i, [env, e]] of envs.entries()) {
      if (!same) {
        t = applyFileEdits(t, giveOwnRules(t, { flag: f.key, environment: env }));
        for (const [j, r] of lists[i]!.rules.entries()) {
          const rule = this.ruleInput(t, r, `${f.key}.${env}.r${j + 1}`);
          t = applyFileEdits(t, rule.edits);
          t = applyFileEdits(t, addRule(t, { flag: f.key, environment: env, rule: rule.input }));
          mapped.push(`${env}: ${r.label} → ${describeRule(rule.input)}`);
        }
      }
      if (!e.enabled) {
        t = applyFileEdits(
          t,
          setOverrideEnabled(t, { flag: f.key, environment: env, enabled: false }),
        );
        mapped.push(`${env}: off → serves ${e.default} to everyone`);
      }
      if (e.default !== f.default) {
        t = applyFileEdits(
          t,
          setOverrideDefault(t, { flag: f.key, environment: env, variation: e.default }),
        );
      }
      if (e.enabled) mapped.push(`${env}: when no rule matches → ${e.default}`);
    }
    f.report.mapped.push(...mapped);
    return t;
  }

  /** The rule as the authoring edits take it, and the segment files its condition needs. */
  private ruleInput(
    texts: ManifestTexts,
    r: DraftRule,
    base: string,
  ): { input: RuleInput; edits: Map<string, string | null> } {
    let t = texts;
    let segment: string | undefined;
    if (r.when.kind === "ref") segment = r.when.segment;
    else if (r.when.kind !== "const") {
      const key = slugKey(base, this.segmentKeys);
      t = this.writeSegment(t, key, `${r.label}`, r.when);
      segment = key;
    }
    const input: RuleInput = { segment };
    if ("variation" in r.serve) input.variation = r.serve.variation;
    else {
      input.rollout = r.serve.rollout;
      if (r.serve.bucketBy !== undefined) input.bucket_by = r.serve.bucketBy;
    }
    const edits = new Map<string, string | null>();
    for (const [path, text] of t) if (texts.get(path) !== text) edits.set(path, text);
    return { input, edits };
  }

  /** Writes a segment for a condition (and the helper segments of its nested parts). */
  private writeSegment(
    texts: ManifestTexts,
    key: string,
    description: string,
    when: Cond,
  ): ManifestTexts {
    let t = texts;
    let n = 0;
    const helper = (c: Cond): string => {
      const k = slugKey(`${key}-${++n}`, this.segmentKeys);
      t = write(k, `part of ${key}`, c);
      return k;
    };
    const one = (c: Cond): PredicateInput => {
      switch (c.kind) {
        case "pred":
          return { attribute: c.attribute, op: c.op, value: c.value };
        case "ref":
          return { attribute: `segment.${c.segment}`, op: "eq", value: true };
        case "not":
          if (c.of.kind === "ref") {
            return { attribute: `segment.${c.of.segment}`, op: "eq", value: false };
          }
          return { attribute: `segment.${helper(c.of)}`, op: "eq", value: false };
        default:
          return { attribute: `segment.${helper(c)}`, op: "eq", value: true };
      }
    };
    const write = (k: string, desc: string, c: Cond): ManifestTexts => {
      const match = c.kind === "any" ? "any" : "all";
      const parts = c.kind === "any" || c.kind === "all" ? c.of : [c];
      const predicates = parts.map(one);
      return applyFileEdits(t, createSegment(t, { key: k, description: desc, match, predicates }));
    };
    t = write(key, description, when);
    return t;
  }
}

/** Replaces references to segments that were not written by their constant, and simplifies. */
function resolveRefs(c: Cond, resolved: ReadonlyMap<string, Cond>): Cond {
  switch (c.kind) {
    case "ref":
      return resolved.get(c.segment) ?? c;
    case "all":
      return all(c.of.map((x) => resolveRefs(x, resolved)));
    case "any":
      return any(c.of.map((x) => resolveRefs(x, resolved)));
    case "not":
      return not(resolveRefs(c.of, resolved));
    default:
      return c;
  }
}

function describeRule(input: RuleInput): string {
  const who = input.segment === undefined ? "every context" : `segment ${input.segment}`;
  if (input.variation !== undefined) return `${who}, serves ${input.variation}`;
  const split = (input.rollout ?? []).map((e) => `${e.variation} ${e.weight / 1000}%`).join(", ");
  return `${who}, splits ${split} by ${input.bucket_by ?? "targeting_key"}`;
}

/**
 * The environment key an export's environment is written as: its
 * `--env-map` target, else its own name, made a key when it is not one
 * (noted in `notes`).
 *
 * @example
 * ```ts
 * import { environmentKeyOf } from "./manifest_draft.ts";
 * const notes: string[] = [];
 * if (environmentKeyOf("prod", new Map([["prod", "production"]]), notes) !== "production") throw new Error();
 * if (environmentKeyOf("QA Env", new Map(), notes) !== "qa-env" || notes.length !== 1) throw new Error();
 * ```
 */
export function environmentKeyOf(
  name: string,
  envMap: ReadonlyMap<string, string>,
  notes: string[],
): string {
  const want = envMap.get(name) ?? name;
  if (KEY_RE.test(want)) return want;
  const key = slugKey(want, new Set());
  notes.push(
    `environment ${JSON.stringify(want)} is written as ${key} (environment keys are slugs)`,
  );
  return key;
}

/**
 * Splits a share of 100000 between entries by their relative weights,
 * largest remainders first, so the parts are whole and add up exactly.
 *
 * @example
 * ```ts
 * import { splitShare } from "./manifest_draft.ts";
 * const parts = splitShare(50000, [1, 1, 1]);
 * if (parts.join() !== "16667,16667,16666") throw new Error(parts.join());
 * ```
 */
export function splitShare(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0) return weights.map(() => 0);
  const exact = weights.map((w) => (total * w) / sum);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((a, b) =>
    b.r - a.r || a.i - b.i
  );
  for (const { i } of order) {
    if (left <= 0) break;
    out[i]!++;
    left--;
  }
  return out;
}

/**
 * What a split serves: entries of one variation merged, entries of weight 0
 * left out, and a split with one entry left as that variation.
 *
 * @example
 * ```ts
 * import { serveSplit } from "./manifest_draft.ts";
 * const one = serveSplit([{ variation: "on", weight: 100000 }, { variation: "off", weight: 0 }], "userId");
 * if (!("variation" in one) || one.variation !== "on") throw new Error();
 * ```
 */
export function serveSplit(
  entries: readonly { variation: string; weight: number }[],
  bucketBy: string | undefined,
): DraftServe {
  const merged = new Map<string, number>();
  for (const e of entries) merged.set(e.variation, (merged.get(e.variation) ?? 0) + e.weight);
  const kept = [...merged].filter(([, w]) => w > 0).map(([variation, weight]) => ({
    variation,
    weight,
  }));
  if (kept.length === 1) return { variation: kept[0]!.variation };
  return { rollout: kept, bucketBy };
}
