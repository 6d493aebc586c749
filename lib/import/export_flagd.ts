/**
 * `cfgtool export --to flagd`: a manifest, as in force in one environment,
 * as a flagd flag definition, for teams that run flagd's in-process
 * providers in other languages.
 *
 * - Each flag: its variations as `variants`, its default (the
 *   environment's, when it sets one) as `defaultVariant`, `enabled = false`
 *   as `state: "DISABLED"`, its rules (the environment's own, when it has
 *   them) as one `if` chain in `targeting`.
 * - Each segment a rule names becomes a shared evaluator (`$evaluators`,
 *   referred to with `$ref`); the segments it refers to are written into
 *   it (flagd's evaluators cannot refer to each other).
 * - Predicates: `eq` `===`, `neq` `!==` (with the attribute present), `in`,
 *   `not_in`, `lt`/`lte`/`gt`/`gte` (with the attribute present),
 *   `starts_with`, `ends_with`, `contains` (`in` with the value first),
 *   `exists`, `semver_eq`/`semver_lt`/`semver_gt` (`sem_ver`).
 *   `targeting_key` is flagd's `targetingKey`.
 * - A rollout is a `fractional` with the same weights (reduced), bucketed
 *   by the flag key and the `bucket_by` attribute: flagd hashes
 *   differently, so a context may get another variation there.
 * - `matches`, `before` and `after` have no flagd operator: a rule whose
 *   segment uses one is left out, and the report says so.
 *
 * @example
 * ```ts
 * import { exportFlagd } from "./export_flagd.ts";
 * import type { Manifest } from "../flags/model.ts";
 * const m: Manifest = {
 *   namespace: { description: "", environments: { production: { public_evaluate: false } } },
 *   flags: { a: { key: "a", description: "", type: "boolean", default: "off",
 *     variations: { on: true, off: false }, environments: {},
 *     rules: [{ segment: "staff", variation: "on", bucket_by: "targeting_key" }] } },
 *   segments: { staff: { key: "staff", description: "", match: "all",
 *     predicates: [{ attribute: "email", op: "ends_with", value: "@example.com" }] } },
 * };
 * const out = exportFlagd(m, "production");
 * const doc = JSON.parse(out.text);
 * if (JSON.stringify(doc.flags.a.targeting) !== '{"if":[{"$ref":"staff"},"on",null]}') throw new Error(out.text);
 * ```
 *
 * @module
 */
import type { Predicate } from "../flags/conditions.ts";
import type { Manifest, Rule } from "../flags/model.ts";
import type { ItemReport } from "./types.ts";

/** The exported definition and its report. */
export interface FlagdExport {
  /** The flag definition, JSON with a trailing newline. */
  text: string;
  /** One report per flag and exported segment. */
  items: ItemReport[];
  /** Notes on the export as a whole. */
  notes: string[];
}

/** Why a predicate cannot be written. */
class NotExported extends Error {}

const SCHEMA = "https://flagd.dev/schema/v0/flags.json";

function varOf(attribute: string): { var: string } {
  return { var: attribute === "targeting_key" ? "targetingKey" : attribute };
}

function present(attribute: string): unknown {
  return { "!=": [varOf(attribute), null] };
}

function predicateLogic(p: Predicate, manifest: Manifest, seen: string[]): unknown {
  if (p.attribute.startsWith("segment.")) {
    const logic = segmentLogic(p.attribute.slice("segment.".length), manifest, seen);
    return p.value === true ? logic : { "!": logic };
  }
  const v = varOf(p.attribute);
  switch (p.op) {
    case "eq":
      return { "===": [v, p.value] };
    case "neq":
      return { and: [present(p.attribute), { "!==": [v, p.value] }] };
    case "in":
      return { in: [v, p.value] };
    case "not_in":
      return { and: [present(p.attribute), { "!": { in: [v, p.value] } }] };
    case "lt":
    case "lte":
    case "gt":
    case "gte": {
      const op = { lt: "<", lte: "<=", gt: ">", gte: ">=" }[p.op];
      return { and: [present(p.attribute), { [op]: [v, p.value] }] };
    }
    case "starts_with":
    case "ends_with":
      return { [p.op]: [v, p.value] };
    case "contains":
      return { in: [p.value, v] };
    case "exists":
      return p.value === true ? present(p.attribute) : { "==": [v, null] };
    case "semver_eq":
      return { sem_ver: [v, "=", p.value] };
    case "semver_lt":
      return { sem_ver: [v, "<", p.value] };
    case "semver_gt":
      return { sem_ver: [v, ">", p.value] };
    default:
      throw new NotExported(`operator ${p.op} (on ${p.attribute}) has no flagd equivalent`);
  }
}

function segmentLogic(key: string, manifest: Manifest, seen: string[]): unknown {
  const s = manifest.segments[key];
  if (s === undefined || seen.includes(key)) throw new NotExported(`segment ${key} cannot be read`);
  const parts = s.predicates.map((p) => predicateLogic(p, manifest, [...seen, key]));
  if (parts.length === 1) return parts[0];
  return { [s.match === "all" ? "and" : "or"]: parts };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function serveLogic(rule: Rule): unknown {
  if (rule.variation !== undefined) return rule.variation;
  const entries = rule.rollout.filter((e) => e.weight > 0);
  const g = entries.reduce((a, e) => gcd(a, e.weight), 0) || 1;
  const weights = entries.map((e) => [e.variation, e.weight / g]);
  const bucket = rule.bucket_by === "targeting_key"
    ? []
    : [{ cat: [{ var: "$flagd.flagKey" }, varOf(rule.bucket_by)] }];
  return { fractional: [...bucket, ...weights] };
}

/**
 * Exports a manifest as a flagd flag definition, as in force in `env`.
 *
 * @param manifest a validated manifest
 * @param env a declared environment
 * @returns the definition's text and the report
 */
export function exportFlagd(manifest: Manifest, env: string): FlagdExport {
  const evaluators: Record<string, unknown> = {};
  const flags: Record<string, unknown> = {};
  const items: ItemReport[] = [];
  const segmentReports = new Map<string, ItemReport>();
  const notes: string[] = [];
  const segmentRef = (key: string): unknown => {
    let report = segmentReports.get(key);
    if (report === undefined) {
      report = { kind: "segment", key, written: false, mapped: [], unmapped: [], notes: [] };
      segmentReports.set(key, report);
      try {
        evaluators[key] = segmentLogic(key, manifest, []);
        report.written = true;
        report.mapped.push(`$evaluators.${key}`);
      } catch (err) {
        if (!(err instanceof NotExported)) throw err;
        report.unmapped.push({ what: `segment ${key}`, why: err.message });
      }
    }
    if (!report.written) throw new NotExported(report.unmapped[0]!.why);
    return { $ref: key };
  };
  for (const flag of Object.values(manifest.flags)) {
    const report: ItemReport = {
      kind: "flag",
      key: flag.key,
      written: true,
      mapped: [],
      unmapped: [],
      notes: [],
    };
    items.push(report);
    const o = flag.environments[env];
    const rules = o?.rules ?? flag.rules;
    const def = o?.default ?? flag.default;
    const chain: unknown[] = [];
    let last: unknown = null;
    rules.forEach((rule, i) => {
      if (last !== null) return; // after a rule for every context: never reached
      let cond: unknown;
      try {
        cond = rule.segment === undefined ? undefined : segmentRef(rule.segment);
      } catch (err) {
        if (!(err instanceof NotExported)) throw err;
        report.unmapped.push({ what: `rule ${i + 1}`, why: `${err.message}; left out` });
        return;
      }
      const serve = serveLogic(rule);
      if (rule.rollout !== undefined) {
        report.notes.push(
          `rule ${
            i + 1
          }: the rollout keeps its weights, but flagd hashes differently: a context may get another variation`,
        );
      }
      if (cond === undefined) last = serve;
      else chain.push(cond, serve);
      report.mapped.push(`rule ${i + 1}`);
    });
    const targeting = chain.length === 0 ? last : { if: [...chain, last] };
    const out: Record<string, unknown> = {
      state: o?.enabled === false ? "DISABLED" : "ENABLED",
      variants: flag.variations,
      defaultVariant: def,
    };
    if (targeting !== null) out.targeting = targeting;
    if (flag.description !== "") out.metadata = { description: flag.description };
    flags[flag.key] = out;
  }
  const doc: Record<string, unknown> = { $schema: SCHEMA, flags };
  if (Object.keys(evaluators).length > 0) doc.$evaluators = evaluators;
  if (manifest.namespace.description !== "") {
    doc.metadata = { description: manifest.namespace.description };
  }
  notes.push(`exported as in force in environment ${env}`);
  return {
    text: JSON.stringify(doc, null, 2) + "\n",
    items: [...items, ...segmentReports.values()],
    notes,
  };
}
