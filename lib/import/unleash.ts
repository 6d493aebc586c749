/**
 * `cfgtool import --from unleash`: reads Unleash's feature export (the
 * JSON of the admin UI's "Export" and of `POST /api/admin/features-batch/export`:
 * `features`, `featureStrategies`, `featureEnvironments`, `segments`,
 * `contextFields`, `dependencies`, tags) and writes a manifest.
 *
 * - An export holds one environment (the one it was exported from); a
 *   strategy that names its own `environment` (the older state export)
 *   goes to that one. Each becomes a manifest environment (`--env-map`).
 * - A flag without variants is boolean (`on`/`off`, default `off`); with
 *   variants (the environment's feature variants or strategy variants) it
 *   serves the variant: typed by the payloads when every variant has one
 *   of one type (`string`/`csv` → string, `number` → number, `json`
 *   objects → object), else the variant names as strings; its default is
 *   `disabled`, the variant Unleash reports when the flag is off.
 * - Each strategy is a rule, in `sortOrder`: its constraints, segments and
 *   type's own condition (`userWithId` ids, `remoteAddress` addresses) make
 *   the rule's segment; `flexibleRollout` and the gradual rollouts keep
 *   their percentage (× the variant weights out of 1000) as a split
 *   bucketed by the stickiness field (`default` → `userId`).
 * - Constraints follow Unleash's evaluator: values trimmed, empty ones
 *   dropped; `caseInsensitive` becomes a `(?i)` pattern; `inverted` and
 *   `NOT_IN` hold on an absent field, as in Unleash.
 *
 * @module
 */
import type { FlagType, VariationValue } from "../flags/model.ts";
import { ImportError } from "./errors.ts";
import type { Importer, ImportOptions, ImportResult, ItemReport } from "./types.ts";
import {
  all,
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
  type DraftEnvironment,
  type DraftRule,
  type DraftServe,
  environmentKeyOf,
  ManifestDraft,
  serveSplit,
  splitShare,
} from "./manifest_draft.ts";
import { isObject, newReport, noteOnce, readJson, str, Unmappable } from "./source.ts";

type Json = Record<string, unknown>;

/** A variant definition (feature or strategy variant). */
interface Variant {
  name: string;
  weight: number;
  stickiness?: string;
  payload?: { type: string; value: string };
  overrides?: unknown[];
}

const BUCKET_NOTE =
  "a rollout keeps its percentage, but a user may land in another bucket than in Unleash, which hashes differently";

/**
 * Imports an Unleash feature export.
 *
 * @example
 * ```ts
 * import { importUnleash } from "./unleash.ts";
 * const text = JSON.stringify({
 *   features: [{ name: "dark-mode", type: "release", project: "default" }],
 *   featureStrategies: [{ name: "default", featureName: "dark-mode", parameters: {}, constraints: [] }],
 *   featureEnvironments: [{ enabled: true, featureName: "dark-mode", environment: "production", name: "dark-mode" }],
 *   tagTypes: [],
 * });
 * const out = importUnleash(text, { file: "export.json", envMap: new Map() });
 * if (!out.files.get("flags/dark-mode.toml")?.includes('variation = "on"')) throw new Error();
 * ```
 */
export const importUnleash: Importer = (text: string, options: ImportOptions): ImportResult => {
  const data = readJson(text, options.file);
  if (!isObject(data) || !Array.isArray(data.features) || !Array.isArray(data.featureStrategies)) {
    throw new ImportError(
      options.file,
      "not an Unleash feature export: it needs the arrays features and featureStrategies",
    );
  }
  const draft = new ManifestDraft();
  const features = objects(data.features, options.file, "features");
  const strategies = objects(data.featureStrategies, options.file, "featureStrategies");
  const featureEnvs = objects(data.featureEnvironments ?? [], options.file, "featureEnvironments");
  const envNames: string[] = [];
  for (const fe of featureEnvs) {
    const e = str(fe.environment);
    if (e !== undefined && !envNames.includes(e)) envNames.push(e);
  }
  for (const s of strategies) {
    const e = str(s.environment);
    if (e !== undefined && !envNames.includes(e)) envNames.push(e);
  }
  if (envNames.length === 0) {
    envNames.push("production");
    if (features.length > 0) {
      draft.notes.push("the export names no environment: its strategies are written as production");
    }
  }
  if (envNames.length > 1 && strategies.some((s) => str(s.environment) === undefined)) {
    throw new ImportError(
      options.file,
      `the export holds environments ${
        envNames.join(", ")
      } but its strategies name none; export one environment at a time`,
    );
  }
  const envKey = new Map(
    envNames.map((e) => [e, environmentKeyOf(e, options.envMap, draft.notes)]),
  );
  for (const e of envNames) draft.addEnvironment(envKey.get(e)!);

  const segments = segmentsOf(data.segments, draft, options.file);
  const dependencies = new Map<string, string[]>();
  for (const d of objects(data.dependencies ?? [], options.file, "dependencies")) {
    const f = str(d.feature);
    if (f === undefined || !Array.isArray(d.dependencies)) continue;
    dependencies.set(f, d.dependencies.filter(isObject).map((x) => String(x.feature)));
  }

  for (const feature of features) {
    const name = str(feature.name);
    if (name === undefined) throw new ImportError(options.file, "a feature has no name");
    const key = draft.flagKey(name);
    const report = newReport("flag", key, name);
    const envs = new Map<string, { enabled: boolean; variants: Variant[]; strategies: Json[] }>();
    for (const e of envNames) {
      const fe = featureEnvs.find((x) => x.featureName === name && x.environment === e);
      envs.set(e, {
        enabled: fe?.enabled === true,
        variants: variantsOf(fe?.variants),
        strategies: strategies
          .filter((s) => s.featureName === name && (str(s.environment) ?? envNames[0]) === e)
          .sort((a, b) => num(a.sortOrder, 0) - num(b.sortOrder, 0)),
      });
      if (fe === undefined && featureEnvs.length > 0) {
        report.notes.push(`${e}: the export has no environment entry for it; written as off there`);
      }
    }
    for (const parent of dependencies.get(name) ?? []) {
      report.unmapped.push({
        what: `dependency on feature ${parent}`,
        why:
          "manifests have no flag prerequisites; the rules are written as if the dependency holds",
      });
    }
    if (feature.archived === true) report.notes.push("it is archived in Unleash");
    const kind = flagKindOf(
      [...envs.values()].flatMap((e) => [
        ...e.variants,
        ...e.strategies.flatMap((s) => variantsOf(s.variants)),
      ]),
      report,
    );
    const environments = new Map<string, DraftEnvironment>();
    for (const [e, env] of envs) {
      const rules: DraftRule[] = [];
      for (const [i, s] of env.strategies.entries()) {
        const label = `strategy ${i + 1} (${strategyName(s)}${str(s.title) ? `: ${s.title}` : ""})`;
        if (s.disabled === true) {
          report.notes.push(
            `${e}: ${label} is disabled in Unleash, which does not evaluate it; left out`,
          );
          continue;
        }
        try {
          const rule = strategyRule(s, env.variants, kind, segments, label, report);
          if (rule !== undefined) rules.push(rule);
        } catch (err) {
          if (!(err instanceof Unmappable)) throw err;
          report.unmapped.push({
            what: `${e}: ${label}: ${err.what}`,
            why: `${err.why}; the strategy is left out`,
          });
        }
      }
      if (env.variants.some((v) => Array.isArray(v.overrides) && v.overrides.length > 0)) {
        report.unmapped.push({
          what: `${e}: variant overrides`,
          why:
            "the variants' overrides (a variant forced by a context value) are left out; use a segment rule",
        });
      }
      const partial = rules.findIndex((r) =>
        "rollout" in r.serve && r.serve.rollout.some((x) => x.variation === kind.off)
      );
      if (partial !== -1 && partial < rules.length - 1) {
        report.notes.push(
          `${e}: a context outside the percentage of ${
            rules[partial]!.label
          } gets ${kind.off} here, ` +
            "while Unleash goes on to the next strategies",
        );
      }
      environments.set(envKey.get(e)!, { enabled: env.enabled, default: kind.off, rules });
    }
    if ([...environments.values()].some((e) => e.rules.some((r) => "rollout" in r.serve))) {
      report.notes.push(BUCKET_NOTE);
    }
    draft.addFlag({
      key,
      description: str(feature.description) ?? "",
      type: kind.type,
      variations: kind.variations,
      default: kind.off,
      environments,
      report,
    });
  }
  return draft.build();
};

/** The flag's type and variations: boolean, or one variation per variant plus `disabled`. */
interface FlagKind {
  type: FlagType;
  variations: { name: string; value: VariationValue }[];
  /** The variation served when the flag is off or no strategy matches. */
  off: string;
  /** Variant name → variation name. */
  byVariant: Map<string, string>;
}

function flagKindOf(variants: Variant[], report: ItemReport): FlagKind {
  if (variants.length === 0) {
    return {
      type: "boolean",
      variations: [{ name: "on", value: true }, { name: "off", value: false }],
      off: "off",
      byVariant: new Map(),
    };
  }
  const first = new Map<string, Variant>();
  for (const v of variants) if (!first.has(v.name)) first.set(v.name, v);
  const typed = payloadType([...first.values()]);
  const taken = new Set<string>();
  const off = variationName("disabled", taken);
  const byVariant = new Map<string, string>();
  const variations: { name: string; value: VariationValue }[] = [];
  const type: FlagType = typed?.type ?? "string";
  const offValue: VariationValue = type === "string"
    ? (typed ? "" : "disabled")
    : type === "number"
    ? 0
    : {};
  for (const v of first.values()) {
    const n = variationName(v.name, taken);
    if (n !== v.name) report.notes.push(`variant ${JSON.stringify(v.name)} is the variation ${n}`);
    byVariant.set(v.name, n);
    variations.push({ name: n, value: typed ? typed.values.get(v.name)! : v.name });
  }
  variations.push({ name: off, value: offValue });
  if (typed) {
    report.notes.push(
      `the variation ${off} (${JSON.stringify(offValue)}) stands for Unleash's disabled variant, ` +
        "which has no payload: SDKs there fall back to the caller's default",
    );
  } else if (variants.some((v) => v.payload !== undefined)) {
    report.unmapped.push({
      what: "variant payloads",
      why:
        "the variants' payloads are not all of one type (string, csv, number or a JSON object): " +
        "the flag serves the variant names",
    });
  }
  if (variants.some((v) => v.payload !== undefined && v.payload.type === "csv") && typed) {
    report.notes.push("csv payloads are served as strings");
  }
  return { type, variations, off, byVariant };
}

function payloadType(
  variants: Variant[],
): { type: FlagType; values: Map<string, VariationValue> } | undefined {
  const values = new Map<string, VariationValue>();
  let type: FlagType | undefined;
  for (const v of variants) {
    const p = v.payload;
    if (p === undefined) return undefined;
    let t: FlagType;
    let value: VariationValue;
    if (p.type === "string" || p.type === "csv") {
      t = "string";
      value = p.value;
    } else if (p.type === "number") {
      t = "number";
      value = Number(p.value);
      if (p.value.trim() === "" || !Number.isFinite(value)) return undefined;
    } else if (p.type === "json") {
      t = "object";
      try {
        value = JSON.parse(p.value);
      } catch {
        return undefined;
      }
      if (!isObject(value)) return undefined;
    } else return undefined;
    if (type !== undefined && type !== t) return undefined;
    type = t;
    values.set(v.name, value);
  }
  return type === undefined ? undefined : { type, values };
}

/** The rule of one strategy, or undefined when it can match no one (noted). */
function strategyRule(
  s: Json,
  envVariants: Variant[],
  kind: FlagKind,
  segments: Map<number, Cond | Unmappable>,
  label: string,
  report: ItemReport,
): DraftRule | undefined {
  const params = isObject(s.parameters) ? s.parameters : {};
  const name = strategyName(s);
  const conds: Cond[] = [];
  for (const c of Array.isArray(s.constraints) ? s.constraints : []) {
    if (!isObject(c)) throw new Unmappable("a constraint", "it is not an object");
    conds.push(constraintCond(c, report));
  }
  for (const id of Array.isArray(s.segments) ? s.segments : []) {
    const seg = segments.get(Number(id));
    if (seg === undefined) throw new Unmappable(`segment ${id}`, "the export does not list it");
    if (seg instanceof Unmappable) throw seg;
    conds.push(seg);
  }
  let percent = 100;
  let stickiness = "default";
  switch (name) {
    case "default":
      break;
    case "flexibleRollout":
      percent = percentOf(params.rollout);
      stickiness = str(params.stickiness) || "default";
      break;
    case "gradualRolloutUserId":
      percent = percentOf(params.percentage);
      stickiness = "userId";
      break;
    case "gradualRolloutSessionId":
      percent = percentOf(params.percentage);
      stickiness = "sessionId";
      break;
    case "gradualRolloutRandom":
      percent = percentOf(params.percentage);
      stickiness = "random";
      break;
    case "userWithId":
      conds.push(inValues("targeting_key", listParam(params.userIds)));
      break;
    case "remoteAddress": {
      const ips = listParam(params.IPs);
      const ranges = ips.filter((ip) => ip.includes("/"));
      if (ranges.length > 0) {
        throw new Unmappable(
          `remoteAddress range ${ranges[0]}`,
          "our operators compare addresses as text and have no CIDR ranges",
        );
      }
      conds.push(inValues("remoteAddress", ips));
      break;
    }
    case "applicationHostname":
      throw new Unmappable(
        "strategy applicationHostname",
        "it reads the host name of the machine the SDK runs on, which is no context attribute",
      );
    default:
      throw new Unmappable(`strategy ${name}`, "a custom strategy runs code of its own in the SDK");
  }
  const when = all(conds);
  if (percent === 0) {
    report.notes.push(`${label} rolls out to 0%: it enables no one and is left out`);
    return undefined;
  }
  const variants = variantsOf(s.variants);
  const chosen = variants.length > 0 ? variants : envVariants;
  const vStick = chosen[0]?.stickiness || "default";
  const split = percent < 100 || (kind.type !== "boolean" && chosen.length > 1);
  const bucketBy = split
    ? stickinessAttribute(percent < 100 ? stickiness : vStick, label, report)
    : undefined;
  const total = percent * 1000;
  let serve: DraftServe;
  if (kind.type === "boolean") {
    serve = serveSplit([{ variation: "on", weight: total }, {
      variation: "off",
      weight: 100000 - total,
    }], bucketBy);
  } else if (chosen.length === 0 || chosen.every((v) => v.weight <= 0)) {
    serve = { variation: kind.off };
    report.notes.push(
      `${label} has no variants: Unleash reports the flag on with the disabled variant; it serves ${kind.off}`,
    );
  } else {
    const shares = splitShare(total, chosen.map((v) => v.weight));
    const entries = chosen.map((v, i) => ({
      variation: kind.byVariant.get(v.name)!,
      weight: shares[i]!,
    }));
    entries.push({ variation: kind.off, weight: 100000 - total });
    if (percent < 100 && vStick !== stickiness) {
      report.notes.push(
        `${label}: the rollout's stickiness (${stickiness}) and its variants' (${vStick}) differ; the split buckets by ${
          bucketBy ?? "targeting_key"
        }`,
      );
    }
    serve = serveSplit(entries, bucketBy);
  }
  return { when, serve, label };
}

function constraintCond(c: Json, report: ItemReport): Cond {
  const field = str(c.contextName);
  const op = str(c.operator);
  if (field === undefined || op === undefined) {
    throw new Unmappable("a constraint", "it has no contextName or operator");
  }
  const attr = contextAttribute(field);
  const values = (Array.isArray(c.values) ? c.values : [])
    .filter((v) => typeof v === "string" && v !== "")
    .map((v) => (v as string).trim());
  const value = c.value === undefined || c.value === null ? undefined : String(c.value);
  const ci = c.caseInsensitive === true;
  const one = (): string => {
    if (value === undefined) throw new Unmappable(`${op} on ${field}`, "it has no value");
    return value;
  };
  let cond: Cond;
  switch (op) {
    case "IN":
    case "NOT_IN":
      cond = ci ? caseless(attr, "eq", values) : inValues(attr, values);
      if (op === "NOT_IN") cond = not(cond);
      break;
    case "STR_STARTS_WITH":
    case "STR_ENDS_WITH":
    case "STR_CONTAINS": {
      const test = op === "STR_STARTS_WITH"
        ? "starts_with"
        : op === "STR_ENDS_WITH"
        ? "ends_with"
        : "contains";
      cond = ci ? caseless(attr, test, values) : any(values.map((v) => pred(attr, test, v)));
      break;
    }
    case "NUM_EQ":
    case "NUM_GT":
    case "NUM_GTE":
    case "NUM_LT":
    case "NUM_LTE": {
      const n = Number(one());
      if (!Number.isFinite(n)) {
        cond = NEVER;
        break;
      }
      const ourOp =
        ({ NUM_EQ: "eq", NUM_GT: "gt", NUM_GTE: "gte", NUM_LT: "lt", NUM_LTE: "lte" } as const)[op];
      cond = pred(attr, ourOp, n);
      noteOnce(
        report,
        `${op} on ${field}: Unleash reads the field's text as a number; here the context value must be a JSON number`,
      );
      break;
    }
    case "DATE_AFTER":
    case "DATE_BEFORE":
      cond = pred(attr, op === "DATE_AFTER" ? "after" : "before", one());
      noteOnce(
        report,
        `${op} on ${field}: Unleash uses the current time when the context has no ${field}; here the context must carry it (an RFC 3339 time)`,
      );
      break;
    case "SEMVER_EQ":
      cond = pred(attr, "semver_eq", one());
      break;
    case "SEMVER_GT":
      cond = pred(attr, "semver_gt", one());
      break;
    case "SEMVER_LT":
      cond = pred(attr, "semver_lt", one());
      break;
    case "SEMVER_GTE":
      cond = any([pred(attr, "semver_gt", one()), pred(attr, "semver_eq", one())]);
      break;
    case "SEMVER_LTE":
      cond = any([pred(attr, "semver_lt", one()), pred(attr, "semver_eq", one())]);
      break;
    case "REGEX":
      cond = pred(attr, "matches", ci ? `(?i)${one()}` : one());
      break;
    default:
      throw new Unmappable(`operator ${op}`, "it is not an operator Unleash documents");
  }
  return c.inverted === true ? not(cond) : cond;
}

function segmentsOf(
  raw: unknown,
  draft: ManifestDraft,
  file: string,
): Map<number, Cond | Unmappable> {
  const out = new Map<number, Cond | Unmappable>();
  for (const s of objects(raw ?? [], file, "segments")) {
    const id = Number(s.id);
    const name = str(s.name) ?? `segment-${id}`;
    if (!Array.isArray(s.constraints)) {
      const report = newReport("segment", name, name);
      const why = "the export names the segment but carries none of its constraints; " +
        "the strategies that use it are left out";
      report.unmapped.push({ what: "its constraints", why });
      draft.addReport(report);
      out.set(id, new Unmappable(`segment ${name}`, "the export carries none of its constraints"));
      continue;
    }
    const key = draft.segmentKey(name);
    const report = newReport("segment", key, name);
    try {
      const when = all(s.constraints.map((c) => {
        if (!isObject(c)) throw new Unmappable("a constraint", "it is not an object");
        return constraintCond(c, report);
      }));
      draft.addSegment({ key, description: str(s.description) ?? "", when, report });
      out.set(id, { kind: "ref", segment: key });
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      report.unmapped.push({
        what: err.what,
        why: `${err.why}; the strategies that use it are left out`,
      });
      draft.addReport(report);
      out.set(id, new Unmappable(`segment ${name}`, "it could not be mapped (see the segment)"));
    }
  }
  return out;
}

/** The bucket_by of a stickiness (undefined: `targeting_key`, the default). */
function stickinessAttribute(
  stickiness: string,
  label: string,
  report: ItemReport,
): string | undefined {
  if (stickiness === "default") {
    noteOnce(
      report,
      "stickiness default buckets by userId (targeting_key) here; Unleash falls back to sessionId, " +
        "then to a random number, where userId is missing (here the rule is skipped)",
    );
    return undefined;
  }
  if (stickiness === "random") {
    report.notes.push(
      `${label}: random stickiness has no equivalent; it buckets by userId (targeting_key)`,
    );
    return undefined;
  }
  const attr = contextAttribute(stickiness);
  return attr === "targeting_key" ? undefined : attr;
}

/** Our attribute for an Unleash context field: `userId` is `targeting_key`. */
function contextAttribute(field: string): string {
  return field === "userId" ? "targeting_key" : attributeOrThrow(field);
}

function percentOf(v: unknown): number {
  const n = Number(v ?? 100);
  if (!Number.isFinite(n) || n < 0 || n > 100) {
    throw new Unmappable(`rollout ${JSON.stringify(v)}`, "a percentage runs from 0 to 100");
  }
  return Math.round(n * 1000) / 1000;
}

function variantsOf(raw: unknown): Variant[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(isObject).map((v) => ({
    name: String(v.name ?? ""),
    weight: num(v.weight, 0),
    ...(typeof v.stickiness === "string" ? { stickiness: v.stickiness } : {}),
    ...(isObject(v.payload) && typeof v.payload.type === "string"
      ? { payload: { type: v.payload.type, value: String(v.payload.value ?? "") } }
      : {}),
    ...(Array.isArray(v.overrides) ? { overrides: v.overrides } : {}),
  }));
}

function listParam(v: unknown): string[] {
  return String(v ?? "").split(",").map((x) => x.trim()).filter((x) => x !== "");
}

function strategyName(s: Json): string {
  return str(s.name) ?? str(s.strategyName) ?? "unknown";
}

function objects(v: unknown, file: string, what: string): Json[] {
  if (!Array.isArray(v) || !v.every(isObject)) {
    throw new ImportError(file, `${what} must be an array of objects`);
  }
  return v;
}

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}
