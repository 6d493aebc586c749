/**
 * What a manifest change does, value by value, for the person who reviews
 * it: `default: off → on`, `enabled: true → false`, `rule 2: rollout on
 * 25% → 50%`, `variation "dark": "#000" → "#111"`, `predicate 1: value
 * ["DE"] → ["DE","FR"]`, `public_evaluate: false → true`. It compares the
 * validated models, so comments and formatting never show; descriptions do
 * (they are values a reviewer reads), even though they change no evaluation
 * (see `impact.ts` for which environments a change can affect).
 *
 * Each entry names its subject and says in `what` what changed, one short
 * line per change:
 *
 * | Subject       | `environment`                         | `key`           |
 * | ------------- | ------------------------------------- | --------------- |
 * | `namespace`   | null                                  | `""`            |
 * | `environment` | the environment                       | the environment |
 * | `flag`        | null: the flag itself                 | the flag        |
 * | `flag`        | `E`: its override `[environments.E]`  | the flag        |
 * | `segment`     | null                                  | the segment     |
 *
 * `change` is `added` or `removed` when the subject (the flag, the
 * override table, the segment, the environment) appears or disappears, else
 * `changed`. An added flag, segment or environment lists what it holds in
 * `what`; a removed one has an empty `what`. An override table is compared
 * with no table at all (enabled, the flag's default, the flag's rules), so
 * an added or removed one says what it changes there. Rules and predicates
 * are numbered from 1, as pages number them (`rule 1` is `rule[0]` in a key
 * path and `rule_index` 0 in a result); a changed rule that also moved says
 * so (`rule 1 → 2: …`), and a rule that only moved because others were
 * added or removed before it is not listed. Values are JSON, shortened to
 * about 60 characters around the first difference. Entries come in a fixed
 * order: the namespace, environments, flags (each flag, then its overrides
 * by environment), segments; keys byte-wise.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Predicate } from "./conditions.ts";
import { ruleParts, weightPercent } from "./explain.ts";
import { type ManifestFileSet, manifestOfFiles } from "./impact.ts";
import type { EnvironmentOverride, Flag, Manifest, Rule, Segment } from "./model.ts";
import type { ValidateOptions } from "./validate.ts";

/**
 * The flags and segments whose files are byte for byte the same on both
 * sides (so their models are equal): a comparison may skip them. Only
 * valid when `namespace.toml` is the same too.
 */
export interface SameFiles {
  flags: ReadonlySet<string>;
  segments: ReadonlySet<string>;
}

/** What an entry of {@linkcode valueChanges} is about. */
export type ChangeSubject = "namespace" | "environment" | "flag" | "segment";

/** Whether the subject appeared, disappeared or changed. */
export type ChangeKind = "added" | "removed" | "changed";

/** One subject's changes. */
export interface ValueChange {
  /** The environment of an override or an environment; null for the rest. */
  environment: string | null;
  /** What changed. */
  subject: ChangeSubject;
  /** The flag, segment or environment key (`""` for the namespace). */
  key: string;
  /** Added, removed or changed. */
  change: ChangeKind;
  /** What changed, one line each (an added subject: what it holds; a removed one: nothing). */
  what: string[];
}

/** Values longer than this (as JSON) are shortened. */
export const MAX_VALUE_CHARS = 60;

/**
 * The value-level changes between two manifests, in a fixed order (see the
 * module documentation).
 *
 * @param before the manifest before the change
 * @param after the manifest after the change
 * @returns the entries; empty when the models are equal
 *
 * @example
 * ```ts
 * import { valueChanges } from "./value_changes.ts";
 * import type { Manifest } from "./model.ts";
 * const before: Manifest = {
 *   namespace: { description: "", environments: { production: { public_evaluate: false } } },
 *   flags: {
 *     theme: {
 *       key: "theme", description: "", type: "string", default: "light",
 *       variations: { light: "#fff", dark: "#000" }, rules: [], environments: {},
 *     },
 *   },
 *   segments: {},
 * };
 * const after = structuredClone(before);
 * after.flags.theme!.variations.dark = "#111";
 * after.flags.theme!.environments.production = { enabled: false };
 * const changes = valueChanges(before, after);
 * const want = [
 *   { environment: null, subject: "flag", key: "theme", change: "changed",
 *     what: ['variation "dark": "#000" → "#111"'] },
 *   { environment: "production", subject: "flag", key: "theme", change: "added",
 *     what: ["enabled: true → false"] },
 * ];
 * if (JSON.stringify(changes) !== JSON.stringify(want)) throw new Error(JSON.stringify(changes));
 * ```
 */
export function valueChanges(
  before: Manifest,
  after: Manifest,
  same?: SameFiles,
): ValueChange[] {
  const out: ValueChange[] = [];
  if (before.namespace.description !== after.namespace.description) {
    out.push({
      environment: null,
      subject: "namespace",
      key: "",
      change: "changed",
      what: [`description: ${pair(before.namespace.description, after.namespace.description)}`],
    });
  }
  const envsB = before.namespace.environments;
  const envsA = after.namespace.environments;
  for (const e of keysOf(envsB, envsA)) {
    const b = own(envsB, e);
    const a = own(envsA, e);
    if (b === undefined) {
      out.push(entry(e, "environment", e, "added", [`public_evaluate: ${a!.public_evaluate}`]));
    } else if (a === undefined) out.push(entry(e, "environment", e, "removed", []));
    else if (a.public_evaluate !== b.public_evaluate) {
      out.push(
        entry(e, "environment", e, "changed", [
          `public_evaluate: ${b.public_evaluate} → ${a.public_evaluate}`,
        ]),
      );
    }
  }
  for (const k of keysOf(before.flags, after.flags)) {
    if (same?.flags.has(k)) continue;
    out.push(...flagChanges(k, own(before.flags, k), own(after.flags, k)));
  }
  for (const k of keysOf(before.segments, after.segments)) {
    if (same?.segments.has(k)) continue;
    const c = segmentChange(k, own(before.segments, k), own(after.segments, k));
    if (c !== undefined) out.push(c);
  }
  return out;
}

/**
 * {@linkcode valueChanges} of two file sets, each validated first (by
 * default as stored versions are loaded, as `environmentsAffectedByFiles`
 * in `impact.ts` does).
 *
 * @param before the files before the change (a `Map` of bytes, or a record of text or bytes)
 * @param after the files after the change
 * @param options validation options, applied to both sides (default `{stored: true}`)
 * @returns the entries
 * @throws {ProblemsError} when either side is not a valid manifest
 *
 * @example
 * ```ts
 * import { valueChangesByFiles } from "./value_changes.ts";
 * const ns = "schema_version = 1\n[namespace.environments.staging]\n";
 * const changes = valueChangesByFiles(
 *   { "namespace.toml": ns },
 *   { "namespace.toml": ns + "public_evaluate = true\n" },
 * );
 * if (changes[0]?.what[0] !== "public_evaluate: false → true") throw new Error();
 * ```
 */
export function valueChangesByFiles(
  before: ManifestFileSet,
  after: ManifestFileSet,
  options: ValidateOptions = { stored: true },
): ValueChange[] {
  return valueChanges(manifestOfFiles(before, options), manifestOfFiles(after, options));
}

/**
 * The entries as text, one line per `what` (an entry without `what`, one
 * line): `flag theme: default: light → dark`, `flag theme in production
 * added: enabled: true → false`, `segment old removed`.
 *
 * @param changes entries from {@linkcode valueChanges}
 * @returns the lines, in the entries' order
 *
 * @example
 * ```ts
 * import { valueChangeLines } from "./value_changes.ts";
 * const lines = valueChangeLines([
 *   { environment: "production", subject: "flag", key: "f", change: "changed", what: ["enabled: true → false"] },
 *   { environment: null, subject: "segment", key: "old", change: "removed", what: [] },
 * ]);
 * if (lines.join("\n") !== "flag f in production: enabled: true → false\nsegment old removed") {
 *   throw new Error(lines.join("\n"));
 * }
 * ```
 */
export function valueChangeLines(changes: readonly ValueChange[]): string[] {
  const lines: string[] = [];
  for (const c of changes) {
    const head = c.subject === "namespace"
      ? "namespace"
      : `${c.subject} ${c.key}${
        c.subject === "flag" && c.environment !== null ? ` in ${c.environment}` : ""
      }`;
    const lead = c.change === "changed" ? head : `${head} ${c.change}`;
    if (c.what.length === 0) lines.push(lead);
    for (const w of c.what) lines.push(`${lead}: ${w}`);
  }
  return lines;
}

function entry(
  environment: string | null,
  subject: ChangeSubject,
  key: string,
  change: ChangeKind,
  what: string[],
): ValueChange {
  return { environment, subject, key, change, what };
}

// ---------------------------------------------------------------------------
// Flags

function flagChanges(key: string, b: Flag | undefined, a: Flag | undefined): ValueChange[] {
  if (a === undefined) return [entry(null, "flag", key, "removed", [])];
  const out: ValueChange[] = [];
  if (b === undefined) {
    out.push(entry(null, "flag", key, "added", flagSummary(a)));
  } else {
    const what = flagLines(b, a);
    if (what.length > 0) out.push(entry(null, "flag", key, "changed", what));
  }
  for (const e of keysOf(b?.environments ?? {}, a.environments)) {
    const ob = b === undefined ? undefined : own(b.environments, e);
    const oa = own(a.environments, e);
    if (ob === undefined && oa === undefined) continue;
    const what = overrideLines(b ?? a, ob, a, oa);
    if (ob !== undefined && oa !== undefined && what.length === 0) continue;
    const change = ob === undefined ? "added" : oa === undefined ? "removed" : "changed";
    out.push(entry(e, "flag", key, change, what.length > 0 ? what : ["no effect"]));
  }
  return out;
}

function flagSummary(f: Flag): string[] {
  return [
    `type: ${f.type}`,
    `variations: ${json(f.variations)}`,
    `default: ${f.default}`,
    ...f.rules.map((r, i) => ruleText(r, `rule ${i + 1}`)),
  ];
}

function flagLines(b: Flag, a: Flag): string[] {
  const what: string[] = [];
  if (b.description !== a.description) {
    what.push(`description: ${pair(b.description, a.description)}`);
  }
  if (b.type !== a.type) what.push(`type: ${b.type} → ${a.type}`);
  const namesB = Object.keys(b.variations);
  const namesA = Object.keys(a.variations);
  for (const n of namesB) {
    if (!Object.hasOwn(a.variations, n)) {
      what.push(`variation ${JSON.stringify(n)} removed (was ${json(b.variations[n])})`);
    }
  }
  for (const n of namesA) {
    if (!Object.hasOwn(b.variations, n)) {
      what.push(`variation ${JSON.stringify(n)} added: ${json(a.variations[n])}`);
    } else if (encode(b.variations[n]) !== encode(a.variations[n])) {
      what.push(`variation ${JSON.stringify(n)}: ${pair(b.variations[n], a.variations[n])}`);
    }
  }
  const commonB = namesB.filter((n) => Object.hasOwn(a.variations, n));
  const commonA = namesA.filter((n) => Object.hasOwn(b.variations, n));
  if (commonB.join() !== commonA.join()) {
    what.push(`variation order: ${commonB.join(", ")} → ${commonA.join(", ")}`);
  }
  if (b.default !== a.default) what.push(`default: ${b.default} → ${a.default}`);
  what.push(...ruleListLines(b.rules, a.rules));
  return what;
}

/**
 * An override's changes. A missing override is `enabled = true` with the
 * flag's default and rules; rules are compared as the environment serves
 * them (the flag's when the override has none).
 */
function overrideLines(
  fb: Flag,
  ob: EnvironmentOverride | undefined,
  fa: Flag,
  oa: EnvironmentOverride | undefined,
): string[] {
  const what: string[] = [];
  const enabledB = ob?.enabled ?? true;
  const enabledA = oa?.enabled ?? true;
  if (enabledB !== enabledA) what.push(`enabled: ${enabledB} → ${enabledA}`);
  if (ob?.default !== oa?.default) {
    const side = (o: EnvironmentOverride | undefined, f: Flag) =>
      o?.default ?? `flag's (${f.default})`;
    what.push(`default: ${side(ob, fb)} → ${side(oa, fa)}`);
  }
  if (ob?.rules !== undefined || oa?.rules !== undefined) {
    const count = (rules: Rule[] | undefined) =>
      rules === undefined
        ? "flag's"
        : `own (${rules.length} ${rules.length === 1 ? "rule" : "rules"})`;
    if ((ob?.rules === undefined) !== (oa?.rules === undefined)) {
      what.push(`rules: ${count(ob?.rules)} → ${count(oa?.rules)}`);
    }
    what.push(...ruleListLines(ob?.rules ?? fb.rules, oa?.rules ?? fa.rules));
  }
  return what;
}

function ruleListLines(b: readonly Rule[], a: readonly Rule[]): string[] {
  const what: string[] = [];
  for (const step of align(b.map(encode), a.map(encode))) {
    if (step.op === "removed") what.push(ruleText(b[step.i]!, `rule ${step.i + 1} removed`));
    else if (step.op === "added") what.push(ruleText(a[step.j]!, `rule ${step.j + 1} added`));
    else if (step.op === "changed") {
      const label = step.i === step.j ? `rule ${step.j + 1}` : `rule ${step.i + 1} → ${step.j + 1}`;
      what.push(...ruleDiff(b[step.i]!, a[step.j]!).map((d) => `${label}: ${d}`));
    }
  }
  return what;
}

function ruleText(r: Rule, label: string): string {
  const p = ruleParts(r, 0);
  return `${label}: ${segmentName(r.segment)}, ${p.action}`;
}

function segmentName(segment: string | undefined): string {
  return segment === undefined ? "every context" : `segment ${segment}`;
}

function ruleDiff(b: Rule, a: Rule): string[] {
  const what: string[] = [];
  if (b.segment !== a.segment) {
    what.push(`${segmentName(b.segment)} → ${segmentName(a.segment)}`);
  }
  if (b.rollout === undefined || a.rollout === undefined) {
    const actionB = ruleParts(b, 0).action;
    const actionA = ruleParts(a, 0).action;
    if (actionB !== actionA) what.push(`${actionB} → ${actionA}`);
    else if (b.bucket_by !== a.bucket_by) {
      what.push(`bucket_by ${b.bucket_by} → ${a.bucket_by}`);
    }
    return what;
  }
  if (b.bucket_by !== a.bucket_by) what.push(`bucket_by ${b.bucket_by} → ${a.bucket_by}`);
  const weightsB = new Map(b.rollout.map((e) => [e.variation, e.weight]));
  const weightsA = new Map(a.rollout.map((e) => [e.variation, e.weight]));
  for (const e of b.rollout) {
    if (!weightsA.has(e.variation)) {
      what.push(`rollout ${e.variation} removed (was ${weightPercent(e.weight)})`);
    }
  }
  for (const e of a.rollout) {
    const wb = weightsB.get(e.variation);
    if (wb === undefined) what.push(`rollout ${e.variation} added (${weightPercent(e.weight)})`);
    else if (wb !== e.weight) {
      what.push(`rollout ${e.variation} ${weightPercent(wb)} → ${weightPercent(e.weight)}`);
    }
  }
  const orderB = b.rollout.map((e) => e.variation).filter((v) => weightsA.has(v));
  const orderA = a.rollout.map((e) => e.variation).filter((v) => weightsB.has(v));
  if (orderB.join() !== orderA.join()) {
    what.push(`rollout order ${orderB.join(", ")} → ${orderA.join(", ")}`);
  }
  return what;
}

// ---------------------------------------------------------------------------
// Segments

function segmentChange(
  key: string,
  b: Segment | undefined,
  a: Segment | undefined,
): ValueChange | undefined {
  if (a === undefined) return entry(null, "segment", key, "removed", []);
  if (b === undefined) {
    return entry(null, "segment", key, "added", [
      `match: ${a.match}`,
      ...a.predicates.map((p, i) => `predicate ${i + 1}: ${predicateText(p)}`),
    ]);
  }
  const what: string[] = [];
  if (b.description !== a.description) {
    what.push(`description: ${pair(b.description, a.description)}`);
  }
  if (b.match !== a.match) what.push(`match: ${b.match} → ${a.match}`);
  for (const step of align(b.predicates.map(encode), a.predicates.map(encode))) {
    if (step.op === "removed") {
      what.push(`predicate ${step.i + 1} removed: ${predicateText(b.predicates[step.i]!)}`);
    } else if (step.op === "added") {
      what.push(`predicate ${step.j + 1} added: ${predicateText(a.predicates[step.j]!)}`);
    } else if (step.op === "changed") {
      const pb = b.predicates[step.i]!;
      const pa = a.predicates[step.j]!;
      const label = step.i === step.j
        ? `predicate ${step.j + 1}`
        : `predicate ${step.i + 1} → ${step.j + 1}`;
      if (pb.attribute !== pa.attribute) {
        what.push(`${label}: attribute ${pb.attribute} → ${pa.attribute}`);
      }
      if (pb.op !== pa.op) what.push(`${label}: op ${pb.op} → ${pa.op}`);
      if (encode(pb.value) !== encode(pa.value)) {
        what.push(`${label}: value ${pair(pb.value, pa.value)}`);
      }
    }
  }
  return what.length === 0 ? undefined : entry(null, "segment", key, "changed", what);
}

function predicateText(p: Predicate): string {
  return `${p.attribute} ${p.op} ${json(p.value)}`;
}

// ---------------------------------------------------------------------------
// Alignment of two lists (rules, predicates)

type Step =
  | { op: "same" | "changed"; i: number; j: number }
  | { op: "removed"; i: number }
  | { op: "added"; j: number };

/** Lists longer than this (as a product of lengths) are compared by position. */
const MAX_ALIGN_CELLS = 250_000;

/**
 * Aligns two lists of canonical texts: a longest common subsequence keeps
 * equal items together; between two kept items, the first leftovers of each
 * side pair up as `changed`, the rest are `removed` or `added`.
 */
function align(b: readonly string[], a: readonly string[]): Step[] {
  const n = b.length;
  const m = a.length;
  const kept: [number, number][] = [];
  if (n * m <= MAX_ALIGN_CELLS) {
    // lcs[i][j]: length of the LCS of b[i..] and a[j..].
    const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i]![j] = b[i] === a[j]
          ? lcs[i + 1]![j + 1]! + 1
          : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
      }
    }
    for (let i = 0, j = 0; i < n && j < m;) {
      if (b[i] === a[j]) kept.push([i++, j++]);
      else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) i++;
      else j++;
    }
  } else {
    for (let i = 0; i < Math.min(n, m); i++) if (b[i] === a[i]) kept.push([i, i]);
  }
  kept.push([n, m]);
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  for (const [ki, kj] of kept) {
    while (i < ki && j < kj) steps.push({ op: "changed", i: i++, j: j++ });
    while (i < ki) steps.push({ op: "removed", i: i++ });
    while (j < kj) steps.push({ op: "added", j: j++ });
    if (ki < n) steps.push({ op: "same", i: i++, j: j++ });
  }
  return steps;
}

// ---------------------------------------------------------------------------
// Values

/** JSON with object keys in their order and `-0` written as such. */
function encode(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : JSON.stringify(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(encode).join(",")}]`;
  return `{${
    Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}:${encode(x)}`)
      .join(",")
  }}`;
}

/** A value as JSON, shortened. */
function json(v: unknown): string {
  return shorten(encode(v), 0);
}

/** `before → after` as JSON, both shortened around their first difference. */
function pair(b: unknown, a: unknown): string {
  const sb = encode(b);
  const sa = encode(a);
  let d = 0;
  while (d < sb.length && d < sa.length && sb[d] === sa[d]) d++;
  return `${shorten(sb, d)} → ${shorten(sa, d)}`;
}

/** Cuts `s` to about {@linkcode MAX_VALUE_CHARS}, keeping position `at` in view. */
function shorten(s: string, at: number): string {
  if (s.length <= MAX_VALUE_CHARS) return s;
  let start = at > MAX_VALUE_CHARS / 2 ? at - 10 : 0;
  let end = start + MAX_VALUE_CHARS - 2;
  // Never cut a character outside the BMP in two.
  if (isLowSurrogate(s.charCodeAt(start))) start++;
  if (end < s.length && isLowSurrogate(s.charCodeAt(end))) end--;
  return `${start > 0 ? "…" : ""}${s.slice(start, end)}${end < s.length ? "…" : ""}`;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

// ---------------------------------------------------------------------------

function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function keysOf(a: object, b: object): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareUtf8);
}
