/**
 * `cfgtool import --from launchdarkly`: reads flags and segments as
 * LaunchDarkly's REST API returns them and writes a manifest.
 *
 * The file is one of: a flag (`GET /api/v2/flags/{project}/{flag}`), a
 * flag list (`{"items": [flag, …]}` from `GET /api/v2/flags/{project}`),
 * or a bundle `{"flags": <flag list or array>, "segments": …}` whose
 * `segments` is a segment list (`{"items": […]}` of
 * `GET /api/v2/segments/{project}/{env}`, or an array) for every
 * environment, or an object of environment key → segment list.
 *
 * - Each key of a flag's `environments` is a manifest environment
 *   (`--env-map`). Off (`on = false`) serves the `offVariation`; on, the
 *   individual targets come first (`targets`, `contextTargets`), then the
 *   rules, then the fallthrough (a variation is the environment's
 *   default; a rollout is a last rule). Rollout weights are out of 100000
 *   in both tools and are kept as they are.
 * - Context attributes: the `user` kind's attributes are top-level
 *   (`email`), its `key` is `targeting_key` (what OpenFeature calls the
 *   targeting key); another kind's are under its name (`organization.key`);
 *   a `/a/b` reference is the path `a.b`.
 * - A clause holds when any of its values matches, with LaunchDarkly's
 *   strict types (a string is never a number); a negated clause is false
 *   on a missing attribute, as in LaunchDarkly.
 * - Prerequisites, percentage rules inside segments, big (unbounded)
 *   segments and clauses on `kind` are reported, not mapped.
 *
 * @module
 */
import type { Scalar } from "../flags/conditions.ts";
import type { FlagType, VariationValue } from "../flags/model.ts";
import { ImportError } from "./errors.ts";
import type { Importer, ImportOptions, ImportResult, ItemReport } from "./types.ts";
import {
  all,
  any,
  attributeOrThrow,
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
} from "./manifest_draft.ts";
import { isObject, newReport, noteOnce, readJson, Unmappable } from "./source.ts";

type Json = Record<string, unknown>;

const BUCKET_NOTE =
  "a rollout keeps its weights, but a context may land in another bucket than in LaunchDarkly, which hashes differently";

/**
 * Imports LaunchDarkly flags (and segments).
 *
 * @example
 * ```ts
 * import { importLaunchDarkly } from "./launchdarkly.ts";
 * const flag = {
 *   key: "dark-mode", kind: "boolean", variations: [{ value: true }, { value: false }],
 *   environments: { production: { on: true, offVariation: 1, fallthrough: { variation: 0 }, targets: [], rules: [] } },
 * };
 * const out = importLaunchDarkly(JSON.stringify(flag), { file: "flag.json", envMap: new Map() });
 * if (!out.files.get("flags/dark-mode.toml")?.includes('default = "true"')) throw new Error();
 * ```
 */
export const importLaunchDarkly: Importer = (
  text: string,
  options: ImportOptions,
): ImportResult => {
  const data = readJson(text, options.file);
  const { flags, segments } = shapeOf(data, options.file);
  const draft = new ManifestDraft();
  const envKey = new Map<string, string>();
  const envOf = (e: string): string => {
    let k = envKey.get(e);
    if (k === undefined) {
      k = environmentKeyOf(e, options.envMap, draft.notes);
      envKey.set(e, k);
      draft.addEnvironment(k);
    }
    return k;
  };
  for (const f of flags) if (isObject(f.environments)) Object.keys(f.environments).forEach(envOf);
  const segRefs = segmentsOf(segments, draft, envOf);
  for (const f of flags) {
    const sourceKey = typeof f.key === "string" ? f.key : undefined;
    if (sourceKey === undefined) throw new ImportError(options.file, "a flag has no key");
    const key = draft.flagKey(sourceKey);
    const report = newReport("flag", key, sourceKey);
    const kind = variationsOf(f, report);
    if (kind === undefined) {
      draft.addReport(report);
      continue;
    }
    const environments = new Map<string, DraftEnvironment>();
    let hasRollout = false;
    for (const [env, cfg] of Object.entries(isObject(f.environments) ? f.environments : {})) {
      if (!isObject(cfg)) continue;
      const e = envOf(env);
      const refs = (k: string): Cond | Unmappable | undefined =>
        segRefs.get(`${env}\0${k}`) ?? segRefs.get(`*\0${k}`);
      const draftEnv = environmentOf(cfg, env, kind, refs, report);
      if (draftEnv.rules.some((r) => "rollout" in r.serve)) hasRollout = true;
      environments.set(e, draftEnv);
    }
    if (hasRollout) report.notes.push(BUCKET_NOTE);
    const defaults = isObject(f.defaults) ? f.defaults : {};
    const first = [...environments.values()][0];
    const flagDefault = kind.names[num(defaults.offVariation) ?? -1] ?? first?.default ??
      kind.names[0]!;
    draft.addFlag({
      key,
      description: typeof f.description === "string" ? f.description : "",
      type: kind.type,
      variations: kind.names.map((name, i) => ({ name, value: kind.values[i]! })),
      default: flagDefault,
      environments,
      report,
    });
  }
  return draft.build();
};

/** A flag's variations: our type, and the name and value of each (by index). */
interface Kind {
  type: FlagType;
  names: string[];
  values: VariationValue[];
}

function variationsOf(f: Json, report: ItemReport): Kind | undefined {
  const raw = Array.isArray(f.variations) ? f.variations.filter(isObject) : [];
  const values = raw.map((v) => v.value);
  let type: FlagType | undefined;
  if (values.length > 0 && values.every((v) => typeof v === "boolean")) type = "boolean";
  else if (values.length > 0 && values.every((v) => typeof v === "string")) type = "string";
  else if (values.length > 0 && values.every((v) => typeof v === "number" && Number.isFinite(v))) {
    type = "number";
  } else if (values.length > 0 && values.every(isObject)) type = "object";
  if (type === undefined) {
    report.unmapped.push({
      what: "the flag",
      why: "not written: its variations are not all booleans, strings, numbers or JSON objects " +
        "(a JSON array or mixed types has no flag type here)",
    });
    return undefined;
  }
  const taken = new Set<string>();
  const names = raw.map((v, i) => {
    const base = typeof v.name === "string" && v.name !== ""
      ? v.name
      : typeof v.value === "boolean" || typeof v.value === "string"
      ? String(v.value)
      : typeof v.value === "number"
      ? `v-${v.value}`
      : `variation-${i + 1}`;
    return variationName(base, taken);
  });
  return { type, names, values: values as VariationValue[] };
}

function environmentOf(
  cfg: Json,
  env: string,
  kind: Kind,
  refs: (key: string) => Cond | Unmappable | undefined,
  report: ItemReport,
): DraftEnvironment {
  const rules: DraftRule[] = [];
  const nameOf = (i: unknown): string => {
    const n = typeof i === "number" ? kind.names[i] : undefined;
    if (n === undefined) {
      throw new Unmappable(`variation ${JSON.stringify(i)}`, "the flag has no such variation");
    }
    return n;
  };
  const off = num(cfg.offVariation);
  let offName = off === undefined ? undefined : kind.names[off];
  if (offName === undefined) {
    offName = kind.names[0]!;
    report.unmapped.push({
      what: `${env}: no offVariation`,
      why:
        `LaunchDarkly then serves the application's own default value; here ${offName} is served when off`,
    });
  }
  for (const p of Array.isArray(cfg.prerequisites) ? cfg.prerequisites.filter(isObject) : []) {
    report.unmapped.push({
      what: `${env}: prerequisite on flag ${String(p.key)} (variation ${String(p.variation)})`,
      why:
        "manifests have no flag prerequisites; the flag is written as if the prerequisite holds " +
        `(LaunchDarkly serves ${offName} when it does not)`,
    });
  }
  if (cfg.on !== true) return { enabled: false, default: offName, rules: [] };
  // Individual targets: contextTargets in order (a user entry with no values
  // stands for the targets list of its variation), else targets.
  const userTargets = new Map<number, unknown[]>();
  for (const t of Array.isArray(cfg.targets) ? cfg.targets.filter(isObject) : []) {
    userTargets.set(Number(t.variation), Array.isArray(t.values) ? t.values : []);
  }
  const ctxTargets = Array.isArray(cfg.contextTargets) ? cfg.contextTargets.filter(isObject) : [];
  const targets = ctxTargets.length > 0
    ? ctxTargets
    : [...userTargets].map(([variation, values]) => ({
      contextKind: "user",
      variation,
      values,
    }));
  for (const [i, t] of targets.entries()) {
    const ck = typeof t.contextKind === "string" ? t.contextKind : "user";
    let values = Array.isArray(t.values) ? t.values : [];
    if (ck === "user" && values.length === 0) values = userTargets.get(Number(t.variation)) ?? [];
    const label = `target ${i + 1} (${ck} keys)`;
    try {
      rules.push({
        when: inValues(attributeOf(ck, "key"), values.filter((v) => typeof v === "string")),
        serve: { variation: nameOf(t.variation) },
        label,
      });
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      report.unmapped.push({ what: `${env}: ${label}: ${err.what}`, why: err.why });
    }
  }
  for (const [i, r] of (Array.isArray(cfg.rules) ? cfg.rules.filter(isObject) : []).entries()) {
    const label = `rule ${i + 1}${
      typeof r.description === "string" && r.description ? ` (${r.description})` : ""
    }`;
    try {
      const clauses = Array.isArray(r.clauses) ? r.clauses.filter(isObject) : [];
      rules.push({
        when: all(clauses.map((c) => clauseCond(c, refs, report))),
        serve: serveOf(r, nameOf),
        label,
      });
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      report.unmapped.push({
        what: `${env}: ${label}: ${err.what}`,
        why: `${err.why}; the rule is left out`,
      });
    }
  }
  const ft = isObject(cfg.fallthrough) ? cfg.fallthrough : {};
  let def = offName;
  try {
    const serve = serveOf(ft, nameOf);
    if ("variation" in serve) def = serve.variation;
    else {
      rules.push({ when: { kind: "const", value: true }, serve, label: "fallthrough rollout" });
      def = serve.rollout[0]!.variation;
      report.notes.push(
        `${env}: a context without the fallthrough's bucketBy attribute gets ${def}, the first variation of the ` +
          "split (LaunchDarkly puts it in bucket 0)",
      );
    }
  } catch (err) {
    if (!(err instanceof Unmappable)) throw err;
    report.unmapped.push({
      what: `${env}: fallthrough: ${err.what}`,
      why: `${err.why}; ${def} is the default`,
    });
  }
  return { enabled: true, default: def, rules };
}

function serveOf(r: Json, nameOf: (i: unknown) => string): DraftServe {
  if (typeof r.variation === "number") return { variation: nameOf(r.variation) };
  if (!isObject(r.rollout)) {
    throw new Unmappable("what it serves", "it has neither variation nor rollout");
  }
  const ro = r.rollout;
  const entries = (Array.isArray(ro.variations) ? ro.variations.filter(isObject) : [])
    .map((v) => ({ variation: nameOf(v.variation), weight: num(v.weight) ?? 0 }));
  const sum = entries.reduce((a, e) => a + e.weight, 0);
  if (sum !== 100000) {
    throw new Unmappable(
      `rollout weights summing to ${sum}`,
      "LaunchDarkly's weights sum to 100000",
    );
  }
  const kind = typeof ro.contextKind === "string" ? ro.contextKind : "user";
  const bucketBy = attributeOf(kind, typeof ro.bucketBy === "string" ? ro.bucketBy : "key");
  return serveSplit(entries, bucketBy === "targeting_key" ? undefined : bucketBy);
}

/** Our attribute path for an attribute of a context kind. */
function attributeOf(kind: string, attribute: string): string {
  const path = attribute.startsWith("/")
    ? attribute.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~")).join(
      ".",
    )
    : attribute;
  if (kind === "user") return path === "key" ? "targeting_key" : attributeOrThrow(path);
  return attributeOrThrow(`${kind}.${path}`);
}

function clauseCond(
  c: Json,
  refs: (key: string) => Cond | Unmappable | undefined,
  report: ItemReport,
): Cond {
  const op = String(c.op);
  const values = Array.isArray(c.values) ? c.values : [];
  if (op === "segmentMatch") {
    const cond = any(values.map((k): Cond => {
      const ref = refs(String(k));
      if (ref === undefined) {
        throw new Unmappable(
          `segment ${String(k)}`,
          "the file does not hold that segment for this environment",
        );
      }
      if (ref instanceof Unmappable) throw ref;
      return ref;
    }));
    return c.negate === true ? not(cond) : cond;
  }
  const attribute = String(c.attribute);
  if (attribute === "kind") {
    throw new Unmappable("a clause on kind", "our contexts have no context kinds");
  }
  const attr = attributeOf(typeof c.contextKind === "string" ? c.contextKind : "user", attribute);
  const strings = values.filter((v): v is string => typeof v === "string");
  const numbers = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  let cond: Cond;
  switch (op) {
    case "in": {
      const scalars = values.filter((v): v is Scalar =>
        typeof v === "string" || typeof v === "boolean" ||
        (typeof v === "number" && Number.isFinite(v))
      );
      if (scalars.length !== values.length) {
        throw new Unmappable(
          "in with a JSON object or array value",
          "our predicates compare scalars",
        );
      }
      if (c.negate === true) {
        const byType = new Map<string, Scalar[]>();
        for (const v of scalars) byType.set(typeof v, [...(byType.get(typeof v) ?? []), v]);
        // Negated: the attribute is there and equals none of the values.
        return byType.size === 1
          ? pred(attr, "not_in", scalars)
          : all([pred(attr, "exists", true), not(inValues(attr, scalars))]);
      }
      return inValues(attr, scalars);
    }
    case "startsWith":
    case "endsWith":
    case "contains":
    case "matches": {
      const ours = ({
        startsWith: "starts_with",
        endsWith: "ends_with",
        contains: "contains",
        matches: "matches",
      } as const)[op];
      cond = any(strings.map((v) => pred(attr, ours, v)));
      break;
    }
    case "lessThan":
    case "lessThanOrEqual":
    case "greaterThan":
    case "greaterThanOrEqual": {
      const ours = ({
        lessThan: "lt",
        lessThanOrEqual: "lte",
        greaterThan: "gt",
        greaterThanOrEqual: "gte",
      } as const)[op];
      cond = any(numbers.map((v) => pred(attr, ours, v)));
      break;
    }
    case "before":
    case "after": {
      const times = values.flatMap((v) =>
        typeof v === "number" ? [new Date(v).toISOString()] : typeof v === "string" ? [v] : []
      );
      cond = any(times.map((v) => pred(attr, op, v)));
      noteOnce(
        report,
        `${op} on ${attr}: LaunchDarkly also reads a context time given as Unix milliseconds; here it must be an RFC 3339 string`,
      );
      break;
    }
    case "semVerEqual":
    case "semVerLessThan":
    case "semVerGreaterThan": {
      const ours = ({
        semVerEqual: "semver_eq",
        semVerLessThan: "semver_lt",
        semVerGreaterThan: "semver_gt",
      } as const)[op];
      cond = any(strings.map((v) => pred(attr, ours, padVersion(v))));
      noteOnce(
        report,
        `${op} on ${attr}: LaunchDarkly completes a context version such as "2" or "2.1" with zeros; here it must be a full version`,
      );
      break;
    }
    default:
      throw new Unmappable(`operator ${op}`, "it is not an operator LaunchDarkly documents");
  }
  if (cond === NEVER && values.length > 0) {
    report.notes.push(
      `a clause ${op} on ${attr} has no value of the type it compares, so it never matches`,
    );
  }
  // A negated clause is false when the attribute is missing.
  return c.negate === true ? all([pred(attr, "exists", true), not(cond)]) : cond;
}

function padVersion(v: string): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(v);
  return m ? `${m[1]}.${m[2] ?? "0"}.0` : v;
}

/** Source segments → conditions, keyed `${env}\0${segment key}` (one file when every environment agrees). */
function segmentsOf(
  raw: Map<string | undefined, Json[]>,
  draft: ManifestDraft,
  envOf: (env: string) => string,
): Map<string, Cond | Unmappable> {
  const out = new Map<string, Cond | Unmappable>();
  // Group one segment key's definitions across environments.
  const byKey = new Map<string, { env: string | undefined; s: Json }[]>();
  for (const [env, list] of raw) {
    for (const s of list) {
      const k = String(s.key);
      byKey.set(k, [...(byKey.get(k) ?? []), { env, s }]);
    }
  }
  const done = new Set<string>();
  const visiting = new Set<string>();
  const defOf = (s: Json) =>
    JSON.stringify([
      s.included,
      s.excluded,
      s.includedContexts,
      s.excludedContexts,
      s.rules,
      s.unbounded,
    ]);
  const visit = (k: string): void => {
    if (done.has(k)) return;
    if (visiting.has(k)) return; // a cycle: the inner reference finds no segment and is reported
    visiting.add(k);
    const defs = byKey.get(k)!;
    for (const { s } of defs) {
      for (const r of Array.isArray(s.rules) ? s.rules.filter(isObject) : []) {
        for (const c of Array.isArray(r.clauses) ? r.clauses.filter(isObject) : []) {
          if (c.op === "segmentMatch" && Array.isArray(c.values)) {
            for (const v of c.values) if (byKey.has(String(v))) visit(String(v));
          }
        }
      }
    }
    const shared = defs.every((d) => defOf(d.s) === defOf(defs[0]!.s));
    const groups = shared ? [defs] : defs.map((d) => [d]);
    for (const group of groups) {
      const s = group[0]!.s;
      const env = group[0]!.env;
      const name = shared ? k : `${k}-${env}`;
      const key = draft.segmentKey(name);
      const report = newReport("segment", key, k);
      const targetEnvs = group.map((d) => d.env ?? "*");
      const refs = (other: string): Cond | Unmappable | undefined =>
        out.get(`${env ?? "*"}\0${other}`) ?? out.get(`*\0${other}`);
      const when = segmentCond(s, refs, report);
      if (when === undefined) {
        draft.addReport(report);
        const why = new Unmappable(
          `segment ${k}`,
          "it could not be mapped (see the segment's report)",
        );
        for (const e of targetEnvs) out.set(`${e}\0${k}`, why);
      } else {
        draft.addSegment({ key, description: String(s.description ?? s.name ?? ""), when, report });
        if (!shared && env !== undefined) {
          report.notes.push(`the segment as defined in ${envOf(env)}`);
        }
        for (const e of targetEnvs) out.set(`${e}\0${k}`, { kind: "ref", segment: key });
      }
    }
    visiting.delete(k);
    done.add(k);
  };
  for (const k of byKey.keys()) visit(k);
  return out;
}

function segmentCond(
  s: Json,
  refs: (key: string) => Cond | Unmappable | undefined,
  report: ItemReport,
): Cond | undefined {
  if (s.unbounded === true) {
    report.unmapped.push({
      what: "the segment",
      why:
        "a big (unbounded) segment keeps its members outside the API's JSON; rules that use it are left out",
    });
    return undefined;
  }
  const keysIn = (plain: unknown, ctx: unknown): Cond[] => {
    const out: Cond[] = [];
    const userKeys = Array.isArray(plain) ? plain.filter((v) => typeof v === "string") : [];
    if (userKeys.length > 0) out.push(inValues("targeting_key", userKeys));
    for (const t of Array.isArray(ctx) ? ctx.filter(isObject) : []) {
      const kind = typeof t.contextKind === "string" ? t.contextKind : "user";
      const values = Array.isArray(t.values) ? t.values.filter((v) => typeof v === "string") : [];
      out.push(inValues(attributeOf(kind, "key"), values));
    }
    return out;
  };
  const included = any(keysIn(s.included, s.includedContexts));
  const excluded = any(keysIn(s.excluded, s.excludedContexts));
  const rules: Cond[] = [];
  for (const [i, r] of (Array.isArray(s.rules) ? s.rules.filter(isObject) : []).entries()) {
    try {
      if (typeof r.weight === "number") {
        throw new Unmappable(
          `a percentage of ${r.weight / 1000}%`,
          "a segment here has no percentage rollout",
        );
      }
      const clauses = Array.isArray(r.clauses) ? r.clauses.filter(isObject) : [];
      rules.push(all(clauses.map((c) => clauseCond(c, refs, report))));
    } catch (err) {
      if (!(err instanceof Unmappable)) throw err;
      report.unmapped.push({
        what: `rule ${i + 1}: ${err.what}`,
        why: `${err.why}; the rule is left out`,
      });
    }
  }
  const when = any([included, all([not(excluded), any(rules)])]);
  if (when.kind === "const" && !when.value) {
    report.unmapped.push({
      what: "the segment",
      why:
        "nothing of it is left to match anyone (no keys, no rule mapped); rules that use it are left out",
    });
    return undefined;
  }
  return when;
}

function shapeOf(
  data: unknown,
  file: string,
): { flags: Json[]; segments: Map<string | undefined, Json[]> } {
  const list = (v: unknown, what: string): Json[] => {
    const arr = Array.isArray(v) ? v : isObject(v) && Array.isArray(v.items) ? v.items : undefined;
    if (arr === undefined || !arr.every(isObject)) {
      throw new ImportError(
        file,
        `${what} must be an array of objects or a list response {"items": […]}`,
      );
    }
    return arr;
  };
  if (!isObject(data)) {
    throw new ImportError(file, "not a LaunchDarkly export: expected a JSON object");
  }
  const segments = new Map<string | undefined, Json[]>();
  if (isObject(data.variations) || Array.isArray(data.variations)) {
    return { flags: [isFlag(data, file)], segments };
  }
  if (Array.isArray(data.items)) {
    return { flags: list(data, "items").map((f) => isFlag(f, file)), segments };
  }
  if (data.flags === undefined && data.segments === undefined) {
    throw new ImportError(
      file,
      'not a LaunchDarkly export: expected a flag, a flag list {"items": […]} or {"flags": …, "segments": …}',
    );
  }
  const flags = data.flags === undefined
    ? []
    : list(data.flags, "flags").map((f) => isFlag(f, file));
  const segs = data.segments;
  if (Array.isArray(segs) || (isObject(segs) && Array.isArray(segs.items))) {
    segments.set(undefined, list(segs, "segments"));
  } else if (isObject(segs)) {
    for (const [env, v] of Object.entries(segs)) segments.set(env, list(v, `segments.${env}`));
  } else if (segs !== undefined) {
    throw new ImportError(file, "segments must be a list or an object of lists");
  }
  return { flags, segments };
}

function isFlag(f: Json, file: string): Json {
  if (typeof f.key !== "string" || !Array.isArray(f.variations)) {
    throw new ImportError(
      file,
      `not a LaunchDarkly flag: ${JSON.stringify(String(f.key ?? "?"))} needs key and variations`,
    );
  }
  return f;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
