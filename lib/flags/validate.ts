/**
 * Parse and validate a namespace manifest (a set of files) into a
 * {@linkcode Manifest}. Every problem is reported at once, in a stable order
 * (by file path, then key path): TOML syntax errors with line and column,
 * everything else with a key path such as `rule[1].rollout[0].weight`.
 * The rules are documented in docs/flags.md.
 *
 * @module
 */
import { refName, validatePredicate } from "../conditions.ts";
import type { Predicate } from "../conditions.ts";
import { compareUtf8 } from "../closure/hash.ts";
import { type Problem, ProblemsError } from "../errors.ts";
import { parseToml, type TomlTable } from "../toml.ts";
import {
  DEFAULT_BUCKET_BY,
  type Environment,
  type EnvironmentOverride,
  type Flag,
  FLAG_TYPES,
  type FlagType,
  KEY_RE,
  type Manifest,
  MAX_FILE_BYTES,
  parseManifestPath,
  ROLLOUT_TOTAL,
  type RolloutEntry,
  type Rule,
  SCHEMA_VERSION,
  type Segment,
  unknownFileMessage,
  VARIATION_NAME_RE,
  type VariationValue,
} from "./model.ts";

/** The outcome of {@linkcode validateManifest}. */
export interface ValidationResult {
  /** Every problem found, sorted by path then key path; empty when valid. */
  problems: Problem[];
  /** The model; present only when `problems` is empty. */
  manifest?: Manifest;
}

const NAMESPACE_FILE_KEYS = ["schema_version", "namespace"];
const NAMESPACE_KEYS = ["description", "environments"];
const ENVIRONMENT_KEYS = ["public_evaluate"];
const FLAG_KEYS = [
  "schema_version",
  "description",
  "type",
  "default",
  "variations",
  "rule",
  "environments",
];
const RULE_KEYS = ["segment", "variation", "rollout", "bucket_by"];
const ROLLOUT_KEYS = ["variation", "weight"];
const OVERRIDE_KEYS = ["enabled", "default", "rule"];
const SEGMENT_KEYS = ["schema_version", "description", "match", "predicate"];
const PATH_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const BARE_KEY_RE = /^[A-Za-z0-9_-]+$/;

/**
 * Validates a manifest file set and builds its model. Accepted paths are
 * `namespace.toml`, `flags/<key>.toml` and `segments/<key>.toml`; every other
 * path is an "unknown file" problem. `namespace.toml` is required as soon as
 * any other file exists; the empty set is the valid empty manifest. Files must
 * be UTF-8 TOML of at most 1 MiB. All problems are reported, sorted by path
 * (byte-wise) and then key path (array indices numerically).
 *
 * @param files path (relative, `/`-separated) to the exact file bytes
 * @returns `{problems}`, plus `manifest` when there are none
 *
 * @example
 * ```ts
 * import { validateManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const files = new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n")],
 *   ["flags/dark-mode.toml", enc.encode(
 *     'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 *   )],
 * ]);
 * const { problems, manifest } = validateManifest(files);
 * if (problems.length !== 0 || manifest?.flags["dark-mode"]?.type !== "boolean") throw new Error();
 * ```
 */
export function validateManifest(files: ReadonlyMap<string, Uint8Array>): ValidationResult {
  const problems: Problem[] = [];
  const tables: {
    path: string;
    kind: "namespace" | "flag" | "segment";
    key: string;
    t: TomlTable;
  }[] = [];
  const segmentKeys = new Set<string>();
  let hasNamespace = false;

  for (const [path, bytes] of files) {
    const kind = parseManifestPath(path);
    if (kind === undefined) {
      problems.push({ path, message: unknownFileMessage(path) });
      continue;
    }
    if (kind.kind === "namespace") hasNamespace = true;
    if (kind.kind === "segment") segmentKeys.add(kind.key);
    if (bytes.length > MAX_FILE_BYTES) {
      problems.push({
        path,
        message: `file is ${bytes.length} bytes; the limit is ${MAX_FILE_BYTES} bytes (1 MiB)`,
      });
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      problems.push({ path, message: "file is not valid UTF-8" });
      continue;
    }
    const parsed = parseToml(text, path);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    tables.push({
      path,
      kind: kind.kind,
      key: kind.kind === "namespace" ? "" : kind.key,
      t: parsed.table,
    });
  }
  if (files.size > 0 && !hasNamespace) {
    problems.push({
      path: "namespace.toml",
      message: "file is missing: a manifest with any file needs namespace.toml",
    });
  }

  tables.sort((a, b) => compareUtf8(a.path, b.path));
  let namespace: Manifest["namespace"] = { description: "", environments: {} };
  // Environment keys that overrides may name; undefined when they cannot be
  // known (namespace.toml missing or unreadable), so overrides are not checked.
  let envKeys: Set<string> | undefined;
  const nsEntry = tables.find((x) => x.kind === "namespace");
  if (nsEntry) {
    const r = checkNamespace(new FileChecker(nsEntry.path, problems), nsEntry.t);
    namespace = r.namespace;
    envKeys = r.envKeys;
  }

  const segments: Record<string, Segment> = {};
  const edges = new Map<string, { target: string; key: string }[]>();
  const flags: Record<string, Flag> = {};
  for (const entry of tables) {
    const fc = new FileChecker(entry.path, problems);
    if (entry.kind === "segment") {
      const { segment, refs } = checkSegment(fc, entry.key, entry.t, segmentKeys);
      segments[entry.key] = segment;
      edges.set(entry.key, refs);
    } else if (entry.kind === "flag") {
      flags[entry.key] = checkFlag(fc, entry.key, entry.t, segmentKeys, envKeys);
    }
  }
  reportCycles(edges, problems);

  problems.sort(compareProblems);
  if (problems.length > 0) return { problems };
  return { problems, manifest: { namespace, flags, segments } };
}

/**
 * Validates a manifest and returns its model, or throws a
 * {@linkcode ProblemsError} listing every problem (exit 1 on the CLI, 422
 * `invalid_manifest` over HTTP).
 *
 * @param files path to exact file bytes, as for {@linkcode validateManifest}
 * @returns the validated manifest
 * @throws {ProblemsError} when any problem is found
 *
 * @example
 * ```ts
 * import { parseManifest } from "./validate.ts";
 * import { ProblemsError } from "../errors.ts";
 * if (Object.keys(parseManifest(new Map()).flags).length !== 0) throw new Error();
 * try {
 *   parseManifest(new Map([["README.md", new Uint8Array()]]));
 *   throw new Error("expected problems");
 * } catch (err) {
 *   if (!(err instanceof ProblemsError)) throw err;
 * }
 * ```
 */
export function parseManifest(files: ReadonlyMap<string, Uint8Array>): Manifest {
  const { problems, manifest } = validateManifest(files);
  if (manifest === undefined) throw new ProblemsError(problems);
  return manifest;
}

/**
 * Orders problems by path (byte-wise over UTF-8), then key path (file-level
 * problems first, array indices compared as numbers), then line and column.
 *
 * @example
 * ```ts
 * import { compareProblems } from "./validate.ts";
 * const a = { path: "flags/a.toml", key: "rule[2]", message: "" };
 * const b = { path: "flags/a.toml", key: "rule[10]", message: "" };
 * if (compareProblems(a, b) >= 0) throw new Error();
 * ```
 */
export function compareProblems(a: Problem, b: Problem): number {
  const p = compareUtf8(a.path, b.path);
  if (p !== 0) return p;
  const k = compareKeyPaths(a.key ?? "", b.key ?? "");
  if (k !== 0) return k;
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}

// ---------------------------------------------------------------------------
// files

class FileChecker {
  constructor(readonly path: string, readonly problems: Problem[]) {}

  report(key: string, message: string): void {
    this.problems.push(
      key === "" ? { path: this.path, message } : { path: this.path, key, message },
    );
  }

  /** Reports keys of `t` not in `allowed`. */
  keys(t: TomlTable, prefix: string, allowed: readonly string[]): void {
    for (const k of Object.keys(t)) {
      if (!allowed.includes(k)) {
        this.report(
          join(prefix, k),
          `unknown key ${JSON.stringify(k)} (allowed: ${allowed.join(", ")})`,
        );
      }
    }
  }

  schemaVersion(t: TomlTable): void {
    const v = t.schema_version;
    if (v === undefined) this.report("schema_version", "missing required key");
    else if (typeof v !== "number") {
      this.report("schema_version", `expected an integer, found ${describe(v)}`);
    } else if (v !== SCHEMA_VERSION) {
      this.report("schema_version", `unsupported schema_version ${v}; it must be 1`);
    }
  }

  /** An optional string; returns it, `fallback` when absent, undefined when wrong. */
  optString(t: TomlTable, prefix: string, k: string, fallback: string): string | undefined {
    const v = t[k];
    if (v === undefined) return fallback;
    if (typeof v === "string") return v;
    this.report(join(prefix, k), `expected a string, found ${describe(v)}`);
    return undefined;
  }

  /** An optional table; returns it, `{}` when absent, undefined when wrong. */
  optTable(t: TomlTable, prefix: string, k: string): TomlTable | undefined {
    const v = t[k];
    if (v === undefined) return {};
    if (isTable(v)) return v;
    this.report(join(prefix, k), `expected a table, found ${describe(v)}`);
    return undefined;
  }

  /** An optional array of tables (`[[k]]`); returns its items, `[]` when absent. */
  tableArray(t: TomlTable, prefix: string, k: string): unknown[] | undefined {
    const v = t[k];
    if (v === undefined) return [];
    if (Array.isArray(v)) return v;
    this.report(join(prefix, k), `expected an array of tables ([[${k}]]), found ${describe(v)}`);
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// namespace.toml

function checkNamespace(
  fc: FileChecker,
  t: TomlTable,
): { namespace: Manifest["namespace"]; envKeys: Set<string> | undefined } {
  fc.keys(t, "", NAMESPACE_FILE_KEYS);
  fc.schemaVersion(t);
  const namespace: Manifest["namespace"] = { description: "", environments: {} };
  const ns = fc.optTable(t, "", "namespace");
  if (ns === undefined) return { namespace, envKeys: undefined };
  fc.keys(ns, "namespace", NAMESPACE_KEYS);
  namespace.description = fc.optString(ns, "namespace", "description", "") ?? "";
  const envs = fc.optTable(ns, "namespace", "environments");
  if (envs === undefined) return { namespace, envKeys: undefined };
  const envKeys = new Set<string>();
  for (const [name, raw] of Object.entries(envs)) {
    const prefix = join("namespace.environments", name);
    envKeys.add(name);
    if (!KEY_RE.test(name)) {
      fc.report(
        prefix,
        `invalid environment key ${JSON.stringify(name)} (keys match ${KEY_RE.source})`,
      );
    }
    if (!isTable(raw)) {
      fc.report(prefix, `expected a table, found ${describe(raw)}`);
      continue;
    }
    fc.keys(raw, prefix, ENVIRONMENT_KEYS);
    const env: Environment = { public_evaluate: false };
    const pe = raw.public_evaluate;
    if (pe !== undefined) {
      if (typeof pe === "boolean") env.public_evaluate = pe;
      else fc.report(join(prefix, "public_evaluate"), `expected a boolean, found ${describe(pe)}`);
    }
    namespace.environments[name] = env;
  }
  return { namespace, envKeys };
}

// ---------------------------------------------------------------------------
// segments/<key>.toml

function checkSegment(
  fc: FileChecker,
  key: string,
  t: TomlTable,
  segmentKeys: ReadonlySet<string>,
): { segment: Segment; refs: { target: string; key: string }[] } {
  fc.keys(t, "", SEGMENT_KEYS);
  fc.schemaVersion(t);
  const segment: Segment = { key, description: "", match: "all", predicates: [] };
  const refs: { target: string; key: string }[] = [];
  segment.description = fc.optString(t, "", "description", "") ?? "";
  const match = t.match;
  if (match !== undefined) {
    if (match === "all" || match === "any") segment.match = match;
    else {
      fc.report(
        "match",
        typeof match === "string"
          ? `unknown match ${JSON.stringify(match)} (one of all, any)`
          : `expected a string (all or any), found ${describe(match)}`,
      );
    }
  }
  if (t.predicate === undefined) {
    fc.report("predicate", "missing required key: a segment needs at least one [[predicate]]");
    return { segment, refs };
  }
  const preds = fc.tableArray(t, "", "predicate");
  if (preds === undefined) return { segment, refs };
  if (preds.length === 0) fc.report("predicate", "a segment needs at least one predicate");
  preds.forEach((raw, i) => {
    const prefix = `predicate[${i}]`;
    const r = validatePredicate(raw, "segment");
    if ("problems" in r) {
      for (const p of r.problems) {
        fc.report(p.key === "" ? prefix : `${prefix}.${p.key}`, p.message);
      }
    } else {
      segment.predicates.push(r.predicate as Predicate);
    }
    const attribute = isTable(raw) ? raw.attribute : undefined;
    const target = typeof attribute === "string" ? refName(attribute, "segment") : undefined;
    if (target === undefined) return;
    if (segmentKeys.has(target)) refs.push({ target, key: `${prefix}.attribute` });
    else fc.report(`${prefix}.attribute`, `unknown segment ${JSON.stringify(target)}`);
  });
  return { segment, refs };
}

/** Reports one cycle per strongly connected component of segment references. */
function reportCycles(
  edges: ReadonlyMap<string, { target: string; key: string }[]>,
  problems: Problem[],
): void {
  const nodes = [...edges.keys()].sort(compareUtf8);
  // Tarjan's algorithm, iterative so that a long reference chain cannot
  // overflow the call stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const targets = (v: string) =>
    (edges.get(v) ?? []).map((e) => e.target).filter((w) => edges.has(w));
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { v: string; next: string[]; i: number }[] = [];
    const open = (v: string) => {
      index.set(v, counter);
      low.set(v, counter);
      counter++;
      stack.push(v);
      onStack.add(v);
      work.push({ v, next: targets(v), i: 0 });
    };
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.next.length) {
        const w = frame.next[frame.i++]!;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      const v = frame.v;
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(v)!));
      if (low.get(v) === index.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        components.push(comp);
      }
    }
  }

  for (const comp of components) {
    const members = new Set(comp);
    const start = [...comp].sort(compareUtf8)[0]!;
    const selfEdge = (edges.get(start) ?? []).find((e) => e.target === start);
    if (comp.length === 1 && !selfEdge) continue;
    // Shortest cycle through `start` inside the component (BFS, sorted neighbours).
    const prev = new Map<string, string>();
    const queue: string[] = [start];
    let found = selfEdge !== undefined;
    while (!found && queue.length > 0) {
      const v = queue.shift()!;
      const next = [...new Set((edges.get(v) ?? []).map((e) => e.target))]
        .filter((w) => members.has(w)).sort(compareUtf8);
      for (const w of next) {
        if (w === start) {
          prev.set(start, v);
          found = true;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    const cycle: string[] = [start];
    if (!selfEdge) {
      let v = prev.get(start)!;
      while (v !== start) {
        cycle.unshift(v);
        v = prev.get(v)!;
      }
      cycle.unshift(start);
    } else {
      cycle.push(start);
    }
    const first = (edges.get(start) ?? []).find((e) => e.target === cycle[1]);
    problems.push({
      path: `segments/${start}.toml`,
      key: first?.key ?? "predicate",
      message: `segment reference cycle: ${cycle.join(" -> ")}`,
    });
  }
}

// ---------------------------------------------------------------------------
// flags/<key>.toml

function checkFlag(
  fc: FileChecker,
  key: string,
  t: TomlTable,
  segmentKeys: ReadonlySet<string>,
  envKeys: ReadonlySet<string> | undefined,
): Flag {
  fc.keys(t, "", FLAG_KEYS);
  fc.schemaVersion(t);
  const flag: Flag = {
    key,
    description: fc.optString(t, "", "description", "") ?? "",
    type: "boolean",
    default: "",
    variations: {},
    rules: [],
    environments: {},
  };

  let type: FlagType | undefined;
  if (t.type === undefined) fc.report("type", "missing required key");
  else if (typeof t.type === "string" && (FLAG_TYPES as readonly string[]).includes(t.type)) {
    type = t.type as FlagType;
    flag.type = type;
  } else {
    fc.report(
      "type",
      typeof t.type === "string"
        ? `unknown type ${JSON.stringify(t.type)} (one of ${FLAG_TYPES.join(", ")})`
        : `expected a string (one of ${FLAG_TYPES.join(", ")}), found ${describe(t.type)}`,
    );
  }

  // Variation names that references may use; undefined when they cannot be known.
  let names: Set<string> | undefined;
  if (t.variations === undefined) fc.report("variations", "missing required key");
  else if (!isTable(t.variations)) {
    fc.report("variations", `expected a table, found ${describe(t.variations)}`);
  } else {
    names = new Set();
    const entries = Object.entries(t.variations);
    if (entries.length === 0) fc.report("variations", "a flag needs at least one variation");
    for (const [name, value] of entries) {
      const vk = join("variations", name);
      names.add(name);
      if (!VARIATION_NAME_RE.test(name)) {
        fc.report(
          vk,
          `invalid variation name ${
            JSON.stringify(name)
          } (names match ${VARIATION_NAME_RE.source})`,
        );
      }
      if (type !== undefined) {
        const msg = checkValueType(type, value);
        if (msg) fc.report(vk, msg);
      }
      flag.variations[name] = value as VariationValue;
    }
  }

  if (t.default === undefined) fc.report("default", "missing required key");
  else {
    const d = checkVariationRef(fc, "default", t.default, names);
    if (d !== undefined) flag.default = d;
  }

  const rules = fc.tableArray(t, "", "rule");
  if (rules !== undefined) {
    flag.rules = rules.map((raw, i) => checkRule(fc, `rule[${i}]`, raw, names, segmentKeys));
  }

  const envs = fc.optTable(t, "", "environments");
  if (envs !== undefined) {
    for (const [env, raw] of Object.entries(envs)) {
      const prefix = join("environments", env);
      if (envKeys !== undefined && !envKeys.has(env)) {
        const declared = [...envKeys].sort(compareUtf8).join(", ");
        fc.report(
          prefix,
          `unknown environment ${JSON.stringify(env)} (namespace.toml declares ${
            declared === "" ? "none" : declared
          })`,
        );
      }
      if (!isTable(raw)) {
        fc.report(prefix, `expected a table, found ${describe(raw)}`);
        continue;
      }
      fc.keys(raw, prefix, OVERRIDE_KEYS);
      const override: EnvironmentOverride = { enabled: true };
      if (raw.enabled !== undefined) {
        if (typeof raw.enabled === "boolean") override.enabled = raw.enabled;
        else {fc.report(
            join(prefix, "enabled"),
            `expected a boolean, found ${describe(raw.enabled)}`,
          );}
      }
      if (raw.default !== undefined) {
        const d = checkVariationRef(fc, join(prefix, "default"), raw.default, names);
        if (d !== undefined) override.default = d;
      }
      if (raw.rule !== undefined) {
        const rs = fc.tableArray(raw, prefix, "rule");
        if (rs !== undefined) {
          override.rules = rs.map((r, i) =>
            checkRule(fc, `${join(prefix, "rule")}[${i}]`, r, names, segmentKeys)
          );
        }
      }
      flag.environments[env] = override;
    }
  }
  return flag;
}

function checkVariationRef(
  fc: FileChecker,
  key: string,
  v: unknown,
  names: ReadonlySet<string> | undefined,
): string | undefined {
  if (typeof v !== "string") {
    fc.report(key, `expected a variation name, found ${describe(v)}`);
    return undefined;
  }
  if (names !== undefined && !names.has(v)) {
    const known = [...names].join(", ");
    fc.report(
      key,
      `unknown variation ${JSON.stringify(v)} (variations: ${known === "" ? "none" : known})`,
    );
  }
  return v;
}

function checkRule(
  fc: FileChecker,
  prefix: string,
  raw: unknown,
  names: ReadonlySet<string> | undefined,
  segmentKeys: ReadonlySet<string>,
): Rule {
  const fallback: Rule = { variation: "", bucket_by: DEFAULT_BUCKET_BY };
  if (!isTable(raw)) {
    fc.report(prefix, `expected a table, found ${describe(raw)}`);
    return fallback;
  }
  fc.keys(raw, prefix, RULE_KEYS);
  let segment: string | undefined;
  if (raw.segment !== undefined) {
    if (typeof raw.segment !== "string") {
      fc.report(`${prefix}.segment`, `expected a segment key, found ${describe(raw.segment)}`);
    } else {
      if (!segmentKeys.has(raw.segment)) {
        fc.report(`${prefix}.segment`, `unknown segment ${JSON.stringify(raw.segment)}`);
      }
      segment = raw.segment;
    }
  }
  const hasVariation = raw.variation !== undefined;
  const hasRollout = raw.rollout !== undefined;
  let bucketBy = DEFAULT_BUCKET_BY;
  if (raw.bucket_by !== undefined) {
    if (typeof raw.bucket_by !== "string" || !PATH_RE.test(raw.bucket_by)) {
      fc.report(
        `${prefix}.bucket_by`,
        typeof raw.bucket_by === "string"
          ? `${JSON.stringify(raw.bucket_by)} is not a dotted context path`
          : `expected a dotted context path, found ${describe(raw.bucket_by)}`,
      );
    } else {
      bucketBy = raw.bucket_by;
      if (!hasRollout && hasVariation) {
        fc.report(`${prefix}.bucket_by`, "bucket_by applies only to a rule with a rollout");
      }
    }
  }
  const base: { segment?: string; bucket_by: string } = segment === undefined
    ? { bucket_by: bucketBy }
    : { segment, bucket_by: bucketBy };
  if (hasVariation === hasRollout) {
    fc.report(
      prefix,
      hasVariation
        ? "a rule has exactly one of variation or rollout, not both"
        : "a rule needs exactly one of variation or rollout",
    );
  }
  if (hasVariation) {
    const v = checkVariationRef(fc, `${prefix}.variation`, raw.variation, names);
    if (!hasRollout) return { ...base, variation: v ?? "" };
  }
  if (!hasRollout) return { ...base, variation: "" };
  return { ...base, rollout: checkRollout(fc, `${prefix}.rollout`, raw.rollout, names) };
}

function checkRollout(
  fc: FileChecker,
  prefix: string,
  raw: unknown,
  names: ReadonlySet<string> | undefined,
): RolloutEntry[] {
  if (!Array.isArray(raw)) {
    fc.report(prefix, `expected an array of {variation, weight} tables, found ${describe(raw)}`);
    return [];
  }
  if (raw.length === 0) {
    fc.report(prefix, "a rollout needs at least one {variation, weight} entry");
    return [];
  }
  const out: RolloutEntry[] = [];
  const seen = new Set<string>();
  let sum = 0;
  let weightsOk = true;
  raw.forEach((e, i) => {
    const ek = `${prefix}[${i}]`;
    if (!isTable(e)) {
      fc.report(ek, `expected a {variation, weight} table, found ${describe(e)}`);
      weightsOk = false;
      return;
    }
    fc.keys(e, ek, ROLLOUT_KEYS);
    let variation = "";
    if (e.variation === undefined) fc.report(`${ek}.variation`, "missing required key");
    else {
      const v = checkVariationRef(fc, `${ek}.variation`, e.variation, names);
      if (v !== undefined) {
        variation = v;
        if (seen.has(v)) {
          fc.report(
            `${ek}.variation`,
            `variation ${JSON.stringify(v)} appears twice in the rollout`,
          );
        }
        seen.add(v);
      }
    }
    let weight = 0;
    if (e.weight === undefined) {
      fc.report(`${ek}.weight`, "missing required key");
      weightsOk = false;
    } else if (
      typeof e.weight !== "number" || !Number.isInteger(e.weight) || e.weight < 0 ||
      e.weight > ROLLOUT_TOTAL
    ) {
      fc.report(
        `${ek}.weight`,
        `expected an integer from 0 to ${ROLLOUT_TOTAL}, found ${describe(e.weight)}`,
      );
      weightsOk = false;
    } else {
      weight = e.weight;
      sum += weight;
    }
    out.push({ variation, weight });
  });
  if (weightsOk) {
    if (sum === 100) { for (const e of out) e.weight *= ROLLOUT_TOTAL / 100; }
    else if (sum !== ROLLOUT_TOTAL) {
      fc.report(prefix, `weights sum to ${sum}; they must sum to ${ROLLOUT_TOTAL} or to 100`);
    }
  }
  return out;
}

function checkValueType(type: FlagType, v: unknown): string | undefined {
  const want = `(the flag's type is ${type})`;
  switch (type) {
    case "boolean":
      return typeof v === "boolean"
        ? undefined
        : `expected a boolean ${want}, found ${describe(v)}`;
    case "string":
      return typeof v === "string" ? undefined : `expected a string ${want}, found ${describe(v)}`;
    case "number":
      if (typeof v === "number" && Number.isFinite(v)) return undefined;
      return `expected a finite number ${want}, found ${describe(v)}`;
    case "object": {
      if (!isTable(v)) return `expected a table ${want}, found ${describe(v)}`;
      const bad = nonJsonPath(v, "");
      return bad === undefined ? undefined : `${bad}: nan and inf are not JSON values`;
    }
  }
}

/** Path of the first non-finite number inside a value (JSON has no nan/inf). */
function nonJsonPath(v: unknown, at: string): string | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? undefined : at || "value";
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = nonJsonPath(v[i], `${at}[${i}]`);
      if (r !== undefined) return r;
    }
  } else if (isTable(v)) {
    for (const [k, x] of Object.entries(v)) {
      const r = nonJsonPath(x, join(at, k));
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// helpers

function isTable(v: unknown): v is TomlTable {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (typeof v === "string") return `the string ${JSON.stringify(truncate(v))}`;
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    return Number.isInteger(v) ? `the integer ${v}` : `the number ${v}`;
  }
  if (typeof v === "boolean") return `the boolean ${v}`;
  if (Array.isArray(v)) return "an array";
  if (isTable(v)) return "a table";
  return String(v);
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** Appends a key to a key path, quoting keys that are not bare TOML keys. */
function join(prefix: string, key: string): string {
  const k = BARE_KEY_RE.test(key) ? key : JSON.stringify(key);
  return prefix === "" ? k : `${prefix}.${k}`;
}

type KeyToken = string | number;

function tokenizeKey(key: string): KeyToken[] {
  const out: KeyToken[] = [];
  const re = /\[(\d+)\]|"((?:[^"\\]|\\.)*)"|([^.[\]"]+)/g;
  for (const m of key.matchAll(re)) {
    if (m[1] !== undefined) out.push(Number(m[1]));
    else out.push(m[2] ?? m[3] ?? "");
  }
  return out;
}

function compareKeyPaths(a: string, b: string): number {
  if (a === b) return 0;
  const x = tokenizeKey(a);
  const y = tokenizeKey(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const s = x[i]!;
    const t = y[i]!;
    if (s === t) continue;
    if (typeof s === "number" && typeof t === "number") return s - t;
    if (typeof s === "number") return -1;
    if (typeof t === "number") return 1;
    return compareUtf8(s, t);
  }
  return x.length - y.length || compareUtf8(a, b);
}
