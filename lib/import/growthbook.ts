/**
 * `cfgtool import --from growthbook`: reads GrowthBook's SDK features
 * payload (what the SDK connection endpoint `GET /api/features/<client
 * key>` answers: `features`, `savedGroups`, …) and writes a manifest with
 * one environment (an SDK connection serves one environment): the only
 * `--env-map` entry's target, else `production`.
 *
 * - A feature's values (its `defaultValue`, forced values and experiment
 *   variations) give its type: all booleans, strings, numbers or JSON
 *   objects; each distinct value is a variation, and `defaultValue` is
 *   the default.
 * - Rules keep their order. A forced value is a rule serving it; with a
 *   `coverage`, a split of the forced value and the default bucketed by
 *   `hashAttribute`. An experiment is a split of its variations by their
 *   weights × coverage, the rest to the default.
 * - Conditions (MongoDB-style) follow GrowthBook's evaluator: `$ne`,
 *   `$nin`, `$not` and `$notInGroup` hold on a missing attribute, `$lt`
 *   and its kin read a missing attribute as 0, a plain string or number
 *   also matches its number or string form. `$inGroup` of a saved group
 *   is a segment of its own.
 * - GrowthBook's `id` attribute is `targeting_key` (what OpenFeature calls
 *   the targeting key, and our default bucketing value).
 *
 * @module
 */
import { validatePredicate } from "../flags/conditions.ts";
import type { FlagType, VariationValue } from "../flags/model.ts";
import { ImportError } from "./errors.ts";
import type { Importer, ImportOptions, ImportResult, ItemReport } from "./types.ts";
import {
  all,
  ALWAYS,
  any,
  attributeOrThrow,
  caseless,
  type Cond,
  inValues,
  NEVER,
  not,
  pred,
  variationName,
} from "./draft_conditions.ts";
import {
  type DraftRule,
  type DraftServe,
  environmentKeyOf,
  ManifestDraft,
  serveSplit,
  splitShare,
} from "./manifest_draft.ts";
import { isObject, newReport, noteOnce, readJson, Unmappable } from "./source.ts";

type Json = Record<string, unknown>;

const BUCKET_NOTE =
  "a rollout keeps its weights, but a user may land in another bucket than in GrowthBook, which hashes differently";

/**
 * Imports a GrowthBook features payload.
 *
 * @example
 * ```ts
 * import { importGrowthBook } from "./growthbook.ts";
 * const payload = { features: { "dark-mode": { defaultValue: false, rules: [{ condition: { country: "DE" }, force: true }] } } };
 * const out = importGrowthBook(JSON.stringify(payload), { file: "features.json", envMap: new Map() });
 * if (!out.files.get("namespace.toml")?.includes("production")) throw new Error();
 * ```
 */
export const importGrowthBook: Importer = (text: string, options: ImportOptions): ImportResult => {
  const data = readJson(text, options.file);
  if (!isObject(data) || !isObject(data.features)) {
    if (isObject(data) && typeof data.encryptedFeatures === "string") {
      throw new ImportError(
        options.file,
        "the payload's features are encrypted: export them with encryption off",
      );
    }
    throw new ImportError(
      options.file,
      "not a GrowthBook features payload: it needs the object features",
    );
  }
  const draft = new ManifestDraft();
  const source = options.envMap.size === 1 ? [...options.envMap.keys()][0]! : "production";
  const env = environmentKeyOf(source, options.envMap, draft.notes);
  draft.addEnvironment(env);
  const groups = isObject(data.savedGroups) ? data.savedGroups : {};
  if (Array.isArray(data.experiments) && data.experiments.length > 0) {
    draft.notes.push(
      `the payload's ${data.experiments.length} auto experiments (visual editor, URL redirects) act on pages, not flags: not imported`,
    );
  }
  const ctx: GroupContext = { draft, groups, made: new Map() };
  for (const [sourceKey, feature] of Object.entries(data.features)) {
    const key = draft.flagKey(sourceKey);
    const report = newReport("flag", key, sourceKey);
    if (!isObject(feature)) {
      throw new ImportError(options.file, `feature ${sourceKey} is not an object`);
    }
    const rules = Array.isArray(feature.rules) ? feature.rules.filter(isObject) : [];
    const values = valuesOf(feature.defaultValue, rules, report);
    if (values === undefined) {
      draft.addReport(report);
      continue;
    }
    const nameOf = (v: unknown) => values.names.get(JSON.stringify(v))!;
    const def = nameOf(feature.defaultValue);
    const drafts: DraftRule[] = [];
    for (const [i, r] of rules.entries()) {
      const label = `rule ${i + 1}${typeof r.id === "string" ? ` (${r.id})` : ""}`;
      try {
        const rule = ruleOf(r, label, def, nameOf, ctx, report);
        if (rule !== undefined) drafts.push(rule);
      } catch (err) {
        if (!(err instanceof Unmappable)) throw err;
        report.unmapped.push({
          what: `${label}: ${err.what}`,
          why: `${err.why}; the rule is left out`,
        });
      }
    }
    const partial = drafts.findIndex((r) =>
      "rollout" in r.serve && r.serve.rollout.some((e) => e.variation === def)
    );
    if (partial !== -1 && partial < drafts.length - 1) {
      report.notes.push(
        `${
          drafts[partial]!.label
        }: a context outside its coverage gets the default here, while GrowthBook goes on to the next rules`,
      );
    }
    if (drafts.some((r) => "rollout" in r.serve)) report.notes.push(BUCKET_NOTE);
    draft.addFlag({
      key,
      description: "",
      type: values.type,
      variations: values.list,
      default: def,
      environments: new Map([[env, { enabled: true, default: def, rules: drafts }]]),
      report,
    });
  }
  return draft.build();
};

interface Values {
  type: FlagType;
  list: { name: string; value: VariationValue }[];
  /** JSON of a value → its variation name. */
  names: Map<string, string>;
}

function valuesOf(defaultValue: unknown, rules: Json[], report: ItemReport): Values | undefined {
  const all = [defaultValue];
  for (const r of rules) {
    if ("force" in r) all.push(r.force);
    if (Array.isArray(r.variations)) all.push(...r.variations);
  }
  let type: FlagType | undefined;
  if (all.every((v) => typeof v === "boolean")) type = "boolean";
  else if (all.every((v) => typeof v === "string")) type = "string";
  else if (all.every((v) => typeof v === "number" && Number.isFinite(v))) type = "number";
  else if (all.every(isObject)) type = "object";
  if (type === undefined) {
    report.unmapped.push({
      what: "the feature",
      why:
        "not written: its values (defaultValue, forced values, variations) are not all booleans, strings, " +
        "numbers or JSON objects (a JSON array, null or mixed types has no flag type here)",
    });
    return undefined;
  }
  const taken = new Set<string>();
  const names = new Map<string, string>();
  const list: { name: string; value: VariationValue }[] = [];
  for (const v of all) {
    const json = JSON.stringify(v);
    if (names.has(json)) continue;
    const base = typeof v === "boolean"
      ? (v ? "on" : "off")
      : typeof v === "string"
      ? v
      : typeof v === "number"
      ? `v-${v}`
      : `value-${list.length + 1}`;
    const name = variationName(base, taken);
    names.set(json, name);
    list.push({ name, value: v as VariationValue });
  }
  return { type, list, names };
}

function ruleOf(
  r: Json,
  label: string,
  def: string,
  nameOf: (v: unknown) => string,
  ctx: GroupContext,
  report: ItemReport,
): DraftRule | undefined {
  if (Array.isArray(r.parentConditions) && r.parentConditions.length > 0) {
    for (const p of r.parentConditions.filter(isObject)) {
      report.unmapped.push({
        what: `${label}: prerequisite on feature ${String(p.id)}`,
        why:
          "manifests have no flag prerequisites; the rule is written as if the prerequisite holds",
      });
    }
  }
  if (Array.isArray(r.filters) && r.filters.length > 0) {
    throw new Unmappable(
      "filters",
      "namespaces and hash filters (mutually exclusive experiments) have no equivalent",
    );
  }
  if (Array.isArray(r.namespace)) {
    throw new Unmappable(
      "namespace",
      "namespaces (mutually exclusive experiments) have no equivalent",
    );
  }
  const when = isObject(r.condition) ? conditionCond(r.condition, ctx, report) : ALWAYS;
  const hash = typeof r.hashAttribute === "string" && r.hashAttribute !== ""
    ? r.hashAttribute
    : "id";
  const bucketBy = hash === "id" ? undefined : attributeOrThrow(hash);
  let coverage = typeof r.coverage === "number" ? r.coverage : undefined;
  if (Array.isArray(r.range)) {
    const [lo, hi] = r.range as number[];
    if (lo !== 0 || typeof hi !== "number") {
      throw new Unmappable(
        `range [${String(lo)}, ${String(hi)}]`,
        "only a range starting at 0 is a coverage here",
      );
    }
    coverage = hi;
  }
  let serve: DraftServe;
  if ("force" in r) {
    if (coverage === undefined || coverage >= 1) serve = { variation: nameOf(r.force) };
    else if (coverage <= 0) {
      report.notes.push(`${label} covers 0% of contexts and is left out`);
      return undefined;
    } else {
      const share = Math.round(coverage * 100000);
      serve = serveSplit([{ variation: nameOf(r.force), weight: share }, {
        variation: def,
        weight: 100000 - share,
      }], bucketBy);
    }
  } else if (Array.isArray(r.variations)) {
    const cover = Math.max(0, Math.min(1, coverage ?? 1));
    const weights = Array.isArray(r.weights) && r.weights.length === r.variations.length
      ? r.weights.map((w) => (typeof w === "number" ? w : 0))
      : r.variations.map(() => 1);
    const total = Math.round(cover * 100000);
    if (total === 0) {
      report.notes.push(`${label} covers 0% of contexts and is left out`);
      return undefined;
    }
    const shares = splitShare(total, weights);
    const entries = r.variations.map((v, i) => ({ variation: nameOf(v), weight: shares[i]! }));
    entries.push({ variation: def, weight: 100000 - total });
    serve = serveSplit(entries, bucketBy);
    report.unmapped.push({
      what: `${label}: experiment ${typeof r.key === "string" ? r.key : ""}`.trimEnd(),
      why:
        "its variations are served as a split, but exposures are not tracked (no trackingCallback here)",
    });
  } else {
    throw new Unmappable("the rule", "it has neither force nor variations");
  }
  return { when, serve, label };
}

interface GroupContext {
  draft: ManifestDraft;
  groups: Json;
  /** `${group}\0${attribute}` → the segment written for it. */
  made: Map<string, Cond>;
}

function conditionCond(c: Json, ctx: GroupContext, report: ItemReport): Cond {
  const parts: Cond[] = [];
  for (const [k, v] of Object.entries(c)) {
    switch (k) {
      case "$or":
        parts.push(
          list(v, k).length === 0
            ? ALWAYS
            : any(list(v, k).map((x) => conditionCond(x, ctx, report))),
        );
        break;
      case "$nor":
        parts.push(
          list(v, k).length === 0
            ? NEVER
            : not(any(list(v, k).map((x) => conditionCond(x, ctx, report)))),
        );
        break;
      case "$and":
        parts.push(all(list(v, k).map((x) => conditionCond(x, ctx, report))));
        break;
      case "$not":
        if (!isObject(v)) throw new Unmappable("$not", "it takes a condition object");
        parts.push(not(conditionCond(v, ctx, report)));
        break;
      default:
        parts.push(valueCond(k, v, ctx, report));
    }
  }
  return all(parts);
}

function list(v: unknown, op: string): Json[] {
  if (!Array.isArray(v) || !v.every(isObject)) {
    throw new Unmappable(op, "it takes a list of conditions");
  }
  return v;
}

function attr(name: string): string {
  return name === "id" ? "targeting_key" : attributeOrThrow(name);
}

function valueCond(name: string, v: unknown, ctx: GroupContext, report: ItemReport): Cond {
  const a = attr(name);
  if (typeof v === "string") {
    // GrowthBook compares `value + ""` with the string: 5 matches "5", true matches "true".
    const forms: Cond[] = [pred(a, "eq", v)];
    const n = Number(v);
    if (v.trim() !== "" && Number.isFinite(n) && String(n) === v) forms.push(pred(a, "eq", n));
    if (v === "true" || v === "false") forms.push(pred(a, "eq", v === "true"));
    return any(forms);
  }
  if (typeof v === "number") {
    // GrowthBook compares `value * 1` with the number: "5" matches 5, a missing attribute matches 0.
    const forms: Cond[] = [pred(a, "eq", v), pred(a, "eq", String(v))];
    if (v === 1) forms.push(pred(a, "eq", true));
    if (v === 0) forms.push(pred(a, "eq", false), pred(a, "exists", false));
    return any(forms);
  }
  if (typeof v === "boolean") {
    noteOnce(
      report,
      `${name} = ${v}: GrowthBook reads any truthy value as true; here only the boolean matches`,
    );
    return pred(a, "eq", v);
  }
  if (v === null) return pred(a, "exists", false);
  if (
    !isObject(v) || Object.keys(v).length === 0 || !Object.keys(v).every((k) => k.startsWith("$"))
  ) {
    throw new Unmappable(
      `${name} compared with a whole JSON ${Array.isArray(v) ? "array" : "object"}`,
      "our predicates compare scalars",
    );
  }
  return all(Object.entries(v).map(([op, x]) => operatorCond(name, a, op, x, ctx, report)));
}

function operatorCond(
  name: string,
  a: string,
  op: string,
  x: unknown,
  ctx: GroupContext,
  report: ItemReport,
): Cond {
  const scalars = (vs: unknown): (string | number | boolean)[] => {
    if (!Array.isArray(vs)) throw new Unmappable(`${op} on ${name}`, "it takes a list");
    return vs.filter((v): v is string | number | boolean =>
      typeof v === "string" || typeof v === "boolean" ||
      (typeof v === "number" && Number.isFinite(v))
    );
  };
  switch (op) {
    case "$eq":
      if (x === null) return pred(a, "exists", false);
      if (typeof x === "string" || typeof x === "number" || typeof x === "boolean") {
        return pred(a, "eq", x);
      }
      throw new Unmappable(
        `$eq on ${name} with a JSON array or object`,
        "our predicates compare scalars",
      );
    case "$ne":
      return not(operatorCond(name, a, "$eq", x, ctx, report));
    case "$lt":
    case "$lte":
    case "$gt":
    case "$gte": {
      const ours = ({ $lt: "lt", $lte: "lte", $gt: "gt", $gte: "gte" } as const)[op];
      if (typeof x === "number") {
        noteOnce(
          report,
          `${op} on ${name}: GrowthBook also compares a numeric string as a number; here the value must be a JSON number`,
        );
        const holdsAtZero = op === "$lt"
          ? 0 < x
          : op === "$lte"
          ? 0 <= x
          : op === "$gt"
          ? 0 > x
          : 0 >= x;
        // GrowthBook reads a missing attribute (null) as 0 in an order comparison.
        return holdsAtZero ? any([pred(a, ours, x), pred(a, "exists", false)]) : pred(a, ours, x);
      }
      if (
        typeof x === "string" && (op === "$lt" || op === "$gt") &&
        "predicate" in validatePredicate({ attribute: a, op: "after", value: x }, "segment")
      ) {
        noteOnce(
          report,
          `${op} on ${name}: GrowthBook orders the texts; here the times are compared as instants`,
        );
        return pred(a, op === "$gt" ? "after" : "before", x);
      }
      throw new Unmappable(
        `${op} on ${name} with ${JSON.stringify(x)}`,
        "our order operators compare numbers (and times with before/after)",
      );
    }
    case "$exists":
      return pred(a, "exists", x === true);
    case "$in":
    case "$nin": {
      const c = inValues(a, scalars(x));
      noteOnce(
        report,
        `${op} on ${name}: GrowthBook also matches an array attribute sharing a value; here the attribute must be a single value`,
      );
      return op === "$in" ? c : not(c);
    }
    case "$ini":
    case "$nini": {
      const vs = scalars(x);
      const c = any([
        caseless(a, "eq", vs.filter((v): v is string => typeof v === "string")),
        inValues(a, vs.filter((v) => typeof v !== "string")),
      ]);
      return op === "$ini" ? c : not(c);
    }
    case "$inGroup":
    case "$notInGroup": {
      const c = groupCond(String(x), name, a, ctx, report);
      return op === "$inGroup" ? c : not(c);
    }
    case "$regex":
    case "$regexi":
      if (typeof x !== "string") {
        throw new Unmappable(`${op} on ${name}`, "it takes a pattern string");
      }
      noteOnce(
        report,
        `${op} on ${name}: GrowthBook runs JavaScript regular expressions; here the pattern runs on RE2`,
      );
      return pred(a, "matches", op === "$regexi" ? `(?i)${x}` : x);
    case "$not":
      return not(valueCond(name, x, ctx, report));
    case "$veq":
    case "$vne":
    case "$vgt":
    case "$vgte":
    case "$vlt":
    case "$vlte": {
      const v = typeof x === "string" ? fullVersion(x) : "";
      noteOnce(
        report,
        `${op} on ${name}: GrowthBook pads partial versions ("1.2", "v1.2.3"); here the context version must be full semver`,
      );
      const eq = () => pred(a, "semver_eq", v);
      switch (op) {
        case "$veq":
          return eq();
        case "$vne":
          return not(eq());
        case "$vgt":
          return pred(a, "semver_gt", v);
        case "$vlt":
          return pred(a, "semver_lt", v);
        case "$vgte":
          return any([pred(a, "semver_gt", v), eq()]);
        default:
          return any([pred(a, "semver_lt", v), eq()]);
      }
    }
    default:
      throw new Unmappable(`operator ${op} on ${name}`, "it has no equivalent among our operators");
  }
}

function fullVersion(v: string): string {
  const plain = v.startsWith("v") ? v.slice(1) : v;
  const cut = plain.search(/[-+]/);
  const core = cut === -1 ? plain : plain.slice(0, cut);
  const parts = core.split(".");
  if (parts.length > 3 || !parts.every((p) => /^\d+$/.test(p))) return v;
  while (parts.length < 3) parts.push("0");
  return parts.join(".") + (cut === -1 ? "" : plain.slice(cut));
}

/** The segment of a saved group's values for one attribute (written once). */
function groupCond(
  id: string,
  name: string,
  a: string,
  ctx: GroupContext,
  report: ItemReport,
): Cond {
  const made = ctx.made.get(`${id}\0${a}`);
  if (made !== undefined) return made;
  const values = ctx.groups[id];
  if (!Array.isArray(values)) {
    report.notes.push(`saved group ${id} is not in the payload: GrowthBook treats it as empty`);
    return NEVER;
  }
  const uses = [...ctx.made.keys()].filter((k) => k.startsWith(`${id}\0`)).length;
  const key = ctx.draft.segmentKey(uses === 0 ? `group-${id}` : `group-${id}-${name}`);
  const segReport = newReport("segment", key, id);
  const scalars = values.filter((v) =>
    typeof v === "string" || (typeof v === "number" && Number.isFinite(v))
  );
  const when = inValues(a, scalars as (string | number)[]);
  let cond: Cond;
  if (when.kind === "const") {
    segReport.notes.push("the saved group is empty: no context is in it");
    ctx.draft.addReport(segReport);
    cond = NEVER;
  } else {
    ctx.draft.addSegment({
      key,
      description: `GrowthBook saved group ${id} (${name})`,
      when,
      report: segReport,
    });
    cond = { kind: "ref", segment: key };
  }
  ctx.made.set(`${id}\0${a}`, cond);
  return cond;
}
