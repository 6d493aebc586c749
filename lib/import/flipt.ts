/**
 * `cfgtool import --from flipt`: Flipt's `features.yml` (what `flipt
 * export` writes and its declarative storage reads: `version`,
 * `namespace`, `flags`, `segments`; several namespaces as several YAML
 * documents) as a manifest.
 *
 * - Each namespace is an environment (its key; `--env-map default=production`
 *   renames it). A flag in several namespaces is one flag: the first
 *   namespace's definition is the flag's, another namespace's differences
 *   are its overrides (rules of its own, default, enabled), and a namespace
 *   without the flag switches it off.
 * - A variant flag: its variants are variations; with no attachment the
 *   value is the variant key (a string flag, as Flipt's OpenFeature
 *   provider resolves a string), else the attachment (an object flag). The
 *   `default: true` variant is the default; without one, Flipt serves no
 *   variant, written as a variation `none` made the default. `enabled:
 *   false` switches the flag off. Rules, by rank, serve their distributions
 *   as rollouts (weights normalised as Flipt does), one distribution a
 *   variation, none the default.
 * - A boolean flag: `enabled` is its default; segment rollouts are rules,
 *   threshold rollouts rollouts (a threshold lets the rest fall through to
 *   later rollouts: the shares are combined, per rule).
 * - Segments: `match_type` is `match`; constraints become predicates by
 *   type and operator (jsonlogic.ts's notes apply in the same way: what a
 *   predicate cannot say exactly is noted).
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { rfc3339MsOf } from "../protocol/time_text.ts";
import type { Operator } from "../flags/conditions.ts";
import type { FlagType, VariationValue } from "../flags/model.ts";
import { ImportError } from "./errors.ts";
import { BUCKETING_NOTE } from "./flagd.ts";
import {
  all,
  any,
  type Cond,
  describeCond,
  describeRule,
  environmentKeys,
  type FlagSpec,
  ManifestBuilder,
  not,
  type OverrideSpec,
  pred,
  type RuleSpec,
  scaleWeights,
  segmentRef,
  variationNames,
} from "./manifest_builder.ts";
import { ATTRIBUTE_PATH_RE, isObject, newReport, str, Unmappable } from "./source.ts";
import type { ImportOptions, ImportResult, ItemReport } from "./types.ts";

type Obj = Record<string, unknown>;

function list(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

/** One namespace's document. */
interface Namespace {
  key: string;
  flags: Obj[];
  segments: Obj[];
}

/**
 * Reads a Flipt `features.yml` (one or more YAML documents, or JSON).
 *
 * @param text the file's text
 * @param options file name and `--env-map`
 * @returns the manifest's files and the report
 * @throws {ImportError} when the text is not YAML or not a Flipt export
 *
 * @example
 * ```ts
 * import { importFlipt } from "./flipt.ts";
 * const text = "version: \"1.4\"\nnamespace: default\nflags:\n  - key: dark\n    name: Dark\n" +
 *   "    type: BOOLEAN_FLAG_TYPE\n    enabled: true\n";
 * const r = importFlipt(text, { file: "features.yml", envMap: new Map([["default", "production"]]) });
 * if (!r.files.get("namespace.toml")?.includes("production") || r.items[0]?.written !== true) throw new Error();
 * ```
 */
export function importFlipt(text: string, options: ImportOptions): ImportResult {
  const file = options.file;
  let docs;
  try {
    docs = parseAllDocuments(text, { uniqueKeys: true });
  } catch (err) {
    throw new ImportError(file, `not YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const list_ = Array.isArray(docs) ? docs : [docs];
  const namespaces: Namespace[] = [];
  const notes: string[] = [];
  for (const d of list_) {
    if (d.errors.length > 0) {
      throw new ImportError(file, `not YAML: ${d.errors[0]!.message.split("\n")[0]}`);
    }
    const v = d.toJS() as unknown;
    if (v === null || v === undefined) continue;
    if (!isObject(v)) {
      throw new ImportError(file, "not a Flipt export: a document is not a mapping");
    }
    if (!("flags" in v) && !("segments" in v) && !("namespace" in v)) {
      throw new ImportError(file, 'not a Flipt export: no "flags", "segments" or "namespace"');
    }
    for (const k of ["flags", "segments"]) {
      if (v[k] !== undefined && v[k] !== null && !Array.isArray(v[k])) {
        throw new ImportError(file, `"${k}" is not a list`);
      }
    }
    const ns = v.namespace;
    const key = typeof ns === "string"
      ? ns
      : isObject(ns) && typeof ns.key === "string"
      ? ns.key
      : "default";
    if (namespaces.some((n) => n.key === key)) {
      throw new ImportError(file, `namespace ${JSON.stringify(key)} appears twice`);
    }
    if (v.version !== undefined && !/^1\.[0-6]$/.test(String(v.version))) {
      notes.push(
        `version ${
          JSON.stringify(v.version)
        } is not one this importer knows (1.0 to 1.6); read as 1.6`,
      );
    }
    namespaces.push({
      key,
      flags: list(v.flags).filter(isObject),
      segments: list(v.segments).filter(isObject),
    });
    for (const k of Object.keys(v)) {
      if (!["version", "namespace", "flags", "segments"].includes(k)) {
        notes.push(`namespace ${key}: ${JSON.stringify(k)} is not part of a Flipt export; ignored`);
      }
    }
  }
  if (namespaces.length === 0) throw new ImportError(file, "not a Flipt export: it is empty");
  const envs = environmentKeys(namespaces.map((n) => n.key), options.envMap);
  const builder = new ManifestBuilder({ environments: namespaces.map((n) => envs.get(n.key)!) });
  notes.push(
    "Flipt's context values are strings: in cfgtool, send numbers and booleans as JSON numbers and " +
      "booleans (number and boolean constraints compare those), and the entity id as targeting_key",
  );
  const run = new FliptImport(builder, namespaces, envs);
  const segmentItems = run.segments();
  const flagItems = run.flags();
  return { files: builder.build(), items: [...flagItems, ...segmentItems], notes };
}

class FliptImport {
  /** (namespace, segment key) → manifest segment key, or why it is not written. */
  #segments = new Map<string, { key: string } | { why: string }>();

  constructor(
    private readonly builder: ManifestBuilder,
    private readonly namespaces: Namespace[],
    private readonly envs: Map<string, string>,
  ) {}

  /** Writes every segment: one for a key defined alike in every namespace that has it. */
  segments(): ItemReport[] {
    const byKey = new Map<string, { ns: string; seg: Obj }[]>();
    for (const n of this.namespaces) {
      for (const seg of n.segments) {
        const key = str(seg.key) ?? "";
        byKey.set(key, [...(byKey.get(key) ?? []), { ns: n.key, seg }]);
      }
    }
    const items: ItemReport[] = [];
    for (const [key, defs] of byKey) {
      const same = defs.every((d) => sameSegment(d.seg, defs[0]!.seg));
      const groups = same ? [defs] : defs.map((d) => [d]);
      for (const group of groups) {
        const { seg } = group[0]!;
        const source = same ? key : `${group[0]!.ns}/${key}`;
        items.push(this.segment(source, seg, group.map((g) => g.ns)));
      }
    }
    return items;
  }

  segment(source: string, seg: Obj, nss: string[]): ItemReport {
    const report = newReport("segment", source);
    const key = this.builder.segmentKey(source.replace("/", "."));
    const remember = (v: { key: string } | { why: string }) => {
      for (const ns of nss) this.#segments.set(`${ns}\0${str(seg.key) ?? ""}`, v);
    };
    const match = seg.match_type === "ANY_MATCH_TYPE" ? "any" : "all";
    const notes = new Set<string>();
    const parts: Cond[] = [];
    for (const [i, c] of list(seg.constraints).entries()) {
      try {
        const cond = constraintCond(isObject(c) ? c : {}, notes);
        parts.push(cond);
        report.mapped.push(`constraint ${i + 1}: ${describeCond(cond)}`);
      } catch (err) {
        if (!(err instanceof Unmappable)) throw err;
        report.unmapped.push({
          what: `constraint ${i + 1}: ${err.what}`,
          why: `${err.why}; the segment is not written, and the rules that use it are left out`,
        });
      }
    }
    if (report.unmapped.length > 0) {
      remember({ why: `segment ${source} could not be written` });
      return report;
    }
    if (parts.length === 0) notes.add("it has no constraints: Flipt matches every context");
    try {
      report.notes.push(...this.builder.addSegment({
        key,
        when: parts.length === 0 ? all([]) : match === "any" ? any(parts) : all(parts),
        description: str(seg.description) || str(seg.name),
      }));
      report.key = key;
      if (key !== source) report.sourceKey = source;
      report.written = true;
      report.mapped.unshift(`match_type → match = "${match}"`);
      remember({ key });
    } catch (err) {
      report.unmapped.push({ what: "the segment", why: (err as Error).message });
      remember({ why: `segment ${source} could not be written` });
    }
    report.notes.push(...notes);
    return report;
  }

  /** The condition of a rule's or rollout's `segment` (a key, or `keys` with an operator). */
  segmentCond(ns: string, raw: unknown): Cond {
    const keys = typeof raw === "string"
      ? [raw]
      : isObject(raw)
      ? (Array.isArray(raw.keys)
        ? raw.keys.map(String)
        : typeof raw.key === "string"
        ? [raw.key]
        : [])
      : [];
    if (keys.length === 0) throw new Unmappable("segment", "the rule names no segment");
    const conds = keys.map((k) => {
      const made = this.#segments.get(`${ns}\0${k}`);
      if (made === undefined) throw new Unmappable(`segment ${k}`, "there is no such segment");
      if ("why" in made) throw new Unmappable(`segment ${k}`, made.why);
      return segmentRef(made.key);
    });
    const and = isObject(raw) && raw.operator === "AND_SEGMENT_OPERATOR";
    return and ? all(conds) : any(conds);
  }

  flags(): ItemReport[] {
    const order: string[] = [];
    const byKey = new Map<string, { ns: string; flag: Obj }[]>();
    for (const n of this.namespaces) {
      for (const flag of n.flags) {
        const key = str(flag.key) ?? "";
        if (!byKey.has(key)) order.push(key);
        byKey.set(key, [...(byKey.get(key) ?? []), { ns: n.key, flag }]);
      }
    }
    return order.map((k) => this.flag(k, byKey.get(k)!));
  }

  flag(sourceKey: string, defs: { ns: string; flag: Obj }[]): ItemReport {
    const report = newReport("flag", sourceKey);
    const notes = new Set<string>();
    const per = defs.map((d) => ({ ns: d.ns, ...this.compile(d.ns, d.flag, report, notes) }));
    const first = per[0]!;
    const type = first.type;
    const variations = [...first.variations];
    for (const p of per.slice(1)) {
      if (p.type !== type) {
        report.unmapped.push({
          what: `namespace ${p.ns}`,
          why: `the flag is of another type there (${p.type}, not ${type}); switched off there`,
        });
        p.skip = true;
        continue;
      }
      for (const v of p.variations) {
        const had = variations.find((x) => x.name === v.name);
        if (had === undefined) variations.push(v);
        else if (JSON.stringify(had.value) !== JSON.stringify(v.value)) {
          report.unmapped.push({
            what: `variant ${v.name} in namespace ${p.ns}`,
            why: "its value differs from the first namespace's, which is kept",
          });
        }
      }
    }
    const environments: Record<string, OverrideSpec> = {};
    for (const n of this.namespaces) {
      const env = this.envs.get(n.key)!;
      const p = per.find((x) => x.ns === n.key);
      if (p === undefined || p.skip) {
        environments[env] = { enabled: false };
        if (p === undefined) {
          report.notes.push(`namespace ${n.key} has no such flag: switched off there`);
        }
        continue;
      }
      const o: OverrideSpec = {};
      if (!p.enabled) o.enabled = false;
      if (p.default !== first.default) o.default = p.default;
      if (p !== first && JSON.stringify(p.rules) !== JSON.stringify(first.rules)) o.rules = p.rules;
      if (Object.keys(o).length > 0) environments[env] = o;
    }
    const key = this.builder.flagKey(sourceKey);
    report.key = key;
    if (key !== sourceKey) report.sourceKey = sourceKey;
    const spec: FlagSpec = {
      key,
      type,
      description: str(first.flag.description) || str(first.flag.name),
      variations,
      default: first.default,
      rules: first.rules,
      environments,
    };
    for (const [env, o] of Object.entries(environments)) {
      if (o.enabled === false) report.mapped.push(`${env}: enabled = false`);
      if (o.default !== undefined) report.mapped.push(`${env}: default ${o.default}`);
      o.rules?.forEach((r, i) => report.mapped.push(`${env}: rule ${i + 1}: ${describeRule(r)}`));
    }
    try {
      report.notes.push(...this.builder.addFlag(spec));
      report.written = true;
    } catch (err) {
      report.unmapped.push({ what: "the flag", why: (err as Error).message });
    }
    const anyRollout = [first.rules, ...Object.values(environments).map((o) => o.rules ?? [])]
      .some((rs) => rs.some((r) => r.rollout !== undefined));
    if (anyRollout) report.notes.push(BUCKETING_NOTE);
    report.notes.push(...notes);
    return report;
  }

  /** One namespace's definition of a flag, in the manifest's terms. */
  compile(ns: string, flag: Obj, report: ItemReport, notes: Set<string>): {
    flag: Obj;
    type: FlagType;
    variations: { name: string; value: VariationValue }[];
    default: string;
    enabled: boolean;
    rules: RuleSpec[];
    skip?: boolean;
  } {
    const where = this.namespaces.length > 1 ? `${ns}: ` : "";
    for (const k of Object.keys(flag)) {
      if (
        ![
          "key",
          "name",
          "type",
          "description",
          "enabled",
          "metadata",
          "variants",
          "rules",
          "rollouts",
        ].includes(k)
      ) {
        report.unmapped.push({ what: `${where}"${k}"`, why: "not a Flipt flag field" });
      }
    }
    if (flag.metadata !== undefined) {
      report.unmapped.push({ what: `${where}metadata`, why: "a manifest has no place for it" });
    }
    const enabled = flag.enabled === true;
    if (flag.type === "BOOLEAN_FLAG_TYPE") {
      const def = enabled ? "on" : "off";
      report.mapped.push(
        `${where}boolean flag: variations on (true), off (false); enabled: ${enabled} → default ${def}`,
      );
      const rules = this.booleanRules(ns, list(flag.rollouts), enabled, report, where, notes);
      rules.forEach((r, i) => report.mapped.push(`${where}rule ${i + 1}: ${describeRule(r)}`));
      return {
        flag,
        type: "boolean",
        variations: [{ name: "on", value: true }, { name: "off", value: false }],
        default: def,
        enabled: true,
        rules,
      };
    }
    if (flag.type !== undefined && flag.type !== "VARIANT_FLAG_TYPE") {
      report.unmapped.push({
        what: `${where}type ${JSON.stringify(flag.type)}`,
        why: "read as a variant flag",
      });
    }
    const variants = list(flag.variants).filter(isObject);
    const withAttachment = variants.some((v) =>
      v.attachment !== undefined && v.attachment !== null
    );
    const names = variationNames(variants.map((v) => String(v.key ?? "")));
    const type: FlagType = withAttachment ? "object" : "string";
    const variations = variants.map((v) => {
      const name = names.get(String(v.key ?? ""))!;
      let value: VariationValue = String(v.key ?? "");
      if (withAttachment) {
        const a = v.attachment;
        value = isObject(a)
          ? a as VariationValue
          : a === undefined || a === null
          ? {}
          : { value: a } as unknown as VariationValue;
      }
      return { name, value };
    });
    if (withAttachment) {
      notes.add(
        "variant attachments are the variations' values (an object flag); a variant without one is {}",
      );
    }
    for (const [s, n] of names) {
      if (s !== n) notes.add(`variant ${JSON.stringify(s)} is variation ${n}`);
    }
    let def = variants.find((v) => v.default === true)?.key as string | undefined;
    let defName = def === undefined ? undefined : names.get(String(def));
    if (defName === undefined) {
      let none = "none";
      for (let i = 2; variations.some((v) => v.name === none); i++) none = `none-${i}`;
      variations.push({ name: none, value: withAttachment ? {} : "" });
      defName = none;
      def = none;
      report.unmapped.push({
        what: `${where}no default variant`,
        why: `Flipt then serves no variant (the caller's default); written as variation ${none} (${
          withAttachment ? "{}" : '""'
        }), the default`,
      });
    }
    report.mapped.push(
      `${where}variants: ${variations.map((v) => v.name).join(", ")} (${type}); default ${defName}`,
    );
    const rules: RuleSpec[] = [];
    const ranked = list(flag.rules).filter(isObject)
      .map((r, i) => ({ r, i, rank: typeof r.rank === "number" ? r.rank : i + 1 }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i);
    for (const { r, i } of ranked) {
      let when: Cond;
      try {
        when = this.segmentCond(ns, r.segment);
      } catch (err) {
        if (!(err instanceof Unmappable)) throw err;
        report.unmapped.push({
          what: `${where}rule ${i + 1}: ${err.what}`,
          why: `${err.why}; the rule is left out, so contexts it matched go on to the next rule`,
        });
        continue;
      }
      const ds = list(r.distributions).filter(isObject)
        .map((d) => ({ v: names.get(String(d.variant ?? "")), w: Number(d.rollout) }))
        .filter((d) => d.w > 0);
      const unknown = ds.find((d) => d.v === undefined);
      if (unknown !== undefined) {
        report.unmapped.push({
          what: `${where}rule ${i + 1}`,
          why: "a distribution names no variant of the flag; left out",
        });
        continue;
      }
      if (ds.length === 0) {
        rules.push({ when, variation: defName });
      } else if (ds.length === 1) {
        rules.push({ when, variation: ds[0]!.v! });
      } else {
        const w = scaleWeights(ds.map((d) => d.w))!;
        const total = ds.reduce((a, d) => a + d.w, 0);
        if (Math.abs(total - 100) > 1e-6) {
          notes.add(
            `a rule's distributions add up to ${total}%: Flipt scales them to 100%, and so does the import`,
          );
        }
        rules.push({ when, rollout: ds.map((d, j) => ({ variation: d.v!, weight: w[j]! })) });
      }
    }
    rules.forEach((r, i) => report.mapped.push(`${where}rule ${i + 1}: ${describeRule(r)}`));
    return { flag, type, variations, default: defName, enabled, rules };
  }

  /** A boolean flag's rollouts as rules: thresholds combined into each later rule's shares. */
  booleanRules(
    ns: string,
    rollouts: unknown[],
    enabled: boolean,
    report: ItemReport,
    where: string,
    notes: Set<string>,
  ): RuleSpec[] {
    const thresholds: [number, boolean][] = [];
    const rules: RuleSpec[] = [];
    const serve = (fallback: boolean): RuleSpec => {
      let covered = 0;
      let on = 0;
      for (const [p, v] of thresholds) {
        if (p > covered) {
          if (v) on += p - covered;
          covered = p;
        }
      }
      if (fallback) on += 100 - covered;
      if (on === 100) return { variation: "on" };
      if (on === 0) return { variation: "off" };
      return {
        rollout: [{ variation: "on", weight: on * 1000 }, {
          variation: "off",
          weight: (100 - on) * 1000,
        }],
      };
    };
    for (const [i, raw] of rollouts.entries()) {
      if (!isObject(raw)) continue;
      if (isObject(raw.threshold)) {
        const pct = Number(raw.threshold.percentage);
        const eff = Math.min(100, Math.max(0, Math.ceil(Number.isFinite(pct) ? pct : 0)));
        if (eff !== pct) {
          notes.add(`Flipt's threshold ${pct}% takes whole buckets: ${eff}% of contexts`);
        }
        thresholds.push([eff, raw.threshold.value === true]);
        continue;
      }
      if (raw.segment === undefined) continue;
      try {
        const when = this.segmentCond(ns, raw.segment);
        rules.push(
          { when, ...serve(isObject(raw.segment) && raw.segment.value === true) } as RuleSpec,
        );
      } catch (err) {
        if (!(err instanceof Unmappable)) throw err;
        report.unmapped.push({
          what: `${where}rollout ${i + 1}: ${err.what}`,
          why: `${err.why}; left out, so contexts it matched go on to the next rollout`,
        });
      }
    }
    if (thresholds.length > 0) {
      const last = serve(enabled);
      if (last.variation !== (enabled ? "on" : "off")) rules.push(last);
      if (rules.length > 1) {
        notes.add(
          "threshold rollouts let the contexts above the threshold fall through to later rollouts: each rule serves the combined shares",
        );
      }
    }
    return rules;
  }
}

function sameSegment(a: Obj, b: Obj): boolean {
  const norm = (s: Obj) => JSON.stringify([s.match_type, s.constraints]);
  return norm(a) === norm(b);
}

const TRUE_TEXT = ["1", "t", "T", "TRUE", "true", "True"];
const FALSE_TEXT = ["0", "f", "F", "FALSE", "false", "False"];

/** One constraint as a condition. */
function constraintCond(c: Obj, notes: Set<string>): Cond {
  const type = str(c.type) ?? "STRING_COMPARISON_TYPE";
  const op = str(c.operator) ?? "";
  const what = `${type} ${op}${
    c.property !== undefined ? ` on ${JSON.stringify(c.property)}` : ""
  }`;
  let attribute = "targeting_key";
  if (type !== "ENTITY_ID_COMPARISON_TYPE") {
    const p = str(c.property) ?? "";
    if (!ATTRIBUTE_PATH_RE.test(p)) {
      throw new Unmappable(
        what,
        "a context attribute is letters, digits, `_` and `-` between dots",
      );
    }
    attribute = p;
  }
  const raw = c.value;
  const text = raw === undefined || raw === null ? "" : String(raw);
  const values = (): unknown[] => {
    if (Array.isArray(raw)) return raw;
    try {
      const v = JSON.parse(text);
      if (Array.isArray(v)) return v;
    } catch { /* below */ }
    throw new Unmappable(what, "the value is not a list");
  };
  const a = attribute;
  const exists = (v: boolean) => pred(a, "exists", v);
  switch (type) {
    case "STRING_COMPARISON_TYPE":
    case "ENTITY_ID_COMPARISON_TYPE":
      switch (op) {
        case "eq":
          return pred(a, "eq", text);
        case "neq":
          return all([pred(a, "neq", text), pred(a, "neq", "")]);
        case "empty":
          notes.add(
            "Flipt's empty and notempty trim Unicode spaces; cfgtool's pattern trims ASCII spaces",
          );
          return any([exists(false), pred(a, "matches", "^\\s*$")]);
        case "notempty":
          notes.add(
            "Flipt's empty and notempty trim Unicode spaces; cfgtool's pattern trims ASCII spaces",
          );
          return pred(a, "matches", "\\S");
        case "prefix":
        case "suffix":
          notes.add(
            "Flipt trims spaces around the context value before prefix and suffix; cfgtool does not",
          );
          return pred(a, op === "prefix" ? "starts_with" : "ends_with", text);
        case "contains":
          return pred(a, "contains", text);
        case "notcontains":
          return all([pred(a, "neq", ""), not(pred(a, "contains", text))]);
        case "isoneof":
        case "isnotoneof": {
          const vs = values().map(String);
          if (vs.length === 0) throw new Unmappable(what, "the list is empty");
          return op === "isoneof"
            ? pred(a, "in", vs)
            : all([pred(a, "not_in", vs), pred(a, "neq", "")]);
        }
      }
      break;
    case "NUMBER_COMPARISON_TYPE": {
      if (op === "present" || op === "notpresent") return exists(op === "present");
      if (op === "isoneof" || op === "isnotoneof") {
        const vs = values().map(Number);
        if (vs.length === 0 || vs.some((n) => !Number.isFinite(n))) {
          throw new Unmappable(what, "not a list of numbers");
        }
        return pred(a, op === "isoneof" ? "in" : "not_in", vs);
      }
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) {
        throw new Unmappable(what, `${JSON.stringify(text)} is not a number`);
      }
      const ops: Record<string, Operator> = {
        eq: "eq",
        neq: "neq",
        lt: "lt",
        lte: "lte",
        gt: "gt",
        gte: "gte",
      };
      if (ops[op] !== undefined) return pred(a, ops[op]!, n);
      break;
    }
    case "BOOLEAN_COMPARISON_TYPE":
      if (op === "present" || op === "notpresent") return exists(op === "present");
      if (op === "true" || op === "false") {
        // Flipt parses the text as Go does: 1, t, T, TRUE, true, True (and the same for false)
        return any([
          pred(a, "eq", op === "true"),
          pred(a, "in", op === "true" ? TRUE_TEXT : FALSE_TEXT),
        ]);
      }
      break;
    case "DATETIME_COMPARISON_TYPE": {
      if (op === "present" || op === "notpresent") return exists(op === "present");
      const at = rfc3339MsOf(text);
      if (Number.isNaN(at)) {
        throw new Unmappable(
          what,
          `${JSON.stringify(text)} is not an RFC 3339 date-time or a date`,
        );
      }
      const iso = (ms: number) => new Date(ms).toISOString();
      notes.add("date-time constraints compare to the millisecond");
      const before = (ms: number) => pred(a, "before", iso(ms));
      const after = (ms: number) => pred(a, "after", iso(ms));
      switch (op) {
        case "eq":
          return all([after(at - 1), before(at + 1)]);
        case "neq":
          return any([before(at), after(at)]);
        case "lt":
          return before(at);
        case "lte":
          return before(at + 1);
        case "gt":
          return after(at);
        case "gte":
          return after(at - 1);
      }
      break;
    }
    default:
      throw new Unmappable(what, "an unknown constraint type");
  }
  throw new Unmappable(what, `an unknown operator for ${type}`);
}
