/**
 * A manifest's files as they are written, for the forms that edit them:
 * a flag (variations with their values, the default, the rules of each
 * scope, each environment's override), a segment, the environments. Unlike
 * the model (lib/flags/model.ts), rollout weights stay in the file's own
 * scale (100 or 100000), `bucket_by` is there only when the file sets it,
 * and an override says what it sets itself; what a form shows is what an
 * edit writes back. The readers are lenient: a value of the wrong type is
 * left out rather than refused (the validator reports it).
 *
 * @module
 */
import type { Scalar } from "../conditions.ts";
import type { VariationValue } from "../model.ts";
import { type Doc, isTable } from "./_doc.ts";
import { Layout } from "./_layout.ts";
import { keysOf, readFlag, readNamespace, readSegment } from "./_files.ts";
import { readData } from "./edit_toml.ts";
import type { ManifestTexts } from "./texts.ts";

/** One rule as written, for a form that edits it. */
export interface RuleAsWritten {
  /** Its index (0-based) among the rules it belongs to. */
  index: number;
  /** Whether these are an environment's own rules or the flag's `[[rule]]`. */
  scope: "environment" | "flag";
  /** The segment it applies to; absent: every context. */
  segment?: string;
  /** The variation it serves, when it serves one. */
  variation?: string;
  /** The rollout's entries as written (weights out of 100 or 100000), when it is a rollout. */
  rollout?: { variation: string; weight: number }[];
  /** The context path it buckets by, when the file sets one. */
  bucket_by?: string;
}

/** One variation as written. */
export interface VariationAsWritten {
  /** Its name. */
  name: string;
  /** Its value (an object flag's as a JSON object). */
  value: VariationValue;
}

/** What an environment's override of a flag sets itself. */
export interface OverrideAsWritten {
  /** The environment. */
  environment: string;
  /** `enabled`, when the override sets it. */
  enabled?: boolean;
  /** The default variation, when the override sets one. */
  default?: string;
  /** The environment's own rules, when it has them (possibly none: `rule = []`). */
  rules?: RuleAsWritten[];
}

/** A flag file as written. */
export interface FlagAsWritten {
  /** The flag key. */
  key: string;
  /** Its description (`""` when none). */
  description: string;
  /** Its type as written. */
  type: string;
  /** Its default variation as written. */
  default: string;
  /** Its variations, in file order. */
  variations: VariationAsWritten[];
  /** The flag's own rules (`[[rule]]`). */
  rules: RuleAsWritten[];
  /** Its overrides, in file order. */
  overrides: OverrideAsWritten[];
}

/** One predicate as written. */
export interface PredicateAsWritten {
  /** The context path, or `segment.<key>`. */
  attribute: string;
  /** The operator. */
  op: string;
  /** The value. */
  value: Scalar | Scalar[];
}

/** A segment file as written. */
export interface SegmentAsWritten {
  /** The segment key. */
  key: string;
  /** Its description (`""` when none). */
  description: string;
  /** `all` or `any` (`all` when the file does not say). */
  match: string;
  /** Its predicates, in file order. */
  predicates: PredicateAsWritten[];
}

/** One environment as `namespace.toml` writes it. */
export interface EnvironmentAsWritten {
  /** Its key. */
  key: string;
  /** Whether `namespace-client` tokens may evaluate there. */
  public_evaluate: boolean;
  /** The comment lines right above its table, as one text (see environments.ts); `""` when none. */
  description: string;
}

/** `namespace.toml` as written. */
export interface NamespaceAsWritten {
  /** The namespace's description (`""` when none). */
  description: string;
  /** Its environments, in file order. */
  environments: EnvironmentAsWritten[];
}

/**
 * A flag file as written.
 *
 * @param texts the version's texts
 * @param flag the flag key
 * @returns what a form shows
 * @throws {InvalidRequestError} when there is no such flag or its file is not TOML
 *
 * @example
 * ```ts
 * import { flagAsWritten } from "./as_written.ts";
 * const texts = new Map([["flags/a.toml",
 *   'type = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
 *   '[environments.staging]\nenabled = false\nrule = []\n']]);
 * const flag = flagAsWritten(texts, "a");
 * if (flag.variations.map((v) => v.name).join() !== "on,off") throw new Error();
 * const [staging] = flag.overrides;
 * if (staging?.enabled !== false || staging.rules?.length !== 0 || staging.default !== undefined) {
 *   throw new Error(JSON.stringify(staging));
 * }
 * ```
 */
export function flagAsWritten(texts: ManifestTexts, flag: string): FlagAsWritten {
  const { doc } = readFlag(texts, flag);
  const variations = isTable(doc.variations) ? doc.variations : {};
  const overrides: OverrideAsWritten[] = [];
  if (isTable(doc.environments)) {
    for (const [environment, t] of Object.entries(doc.environments)) {
      if (!isTable(t)) continue;
      const o: OverrideAsWritten = { environment };
      if (typeof t.enabled === "boolean") o.enabled = t.enabled;
      if (typeof t.default === "string") o.default = t.default;
      if (Array.isArray(t.rule)) o.rules = rulesOf(t.rule, "environment");
      overrides.push(o);
    }
  }
  return {
    key: flag,
    description: typeof doc.description === "string" ? doc.description : "",
    type: typeof doc.type === "string" ? doc.type : "",
    default: typeof doc.default === "string" ? doc.default : "",
    variations: Object.entries(variations).map(([name, value]) => ({
      name,
      value: value as VariationValue,
    })),
    rules: rulesOf(Array.isArray(doc.rule) ? doc.rule : [], "flag"),
    overrides,
  };
}

/**
 * The rules that apply in an environment as the file writes them: the
 * environment's own (`[[environments.<env>.rule]]`) when it overrides the
 * flag's, else the flag's `[[rule]]`, with each rollout's weights in the
 * file's own scale (100 or 100000).
 *
 * @param text the flag file
 * @param environment the environment, or none for the flag's own rules
 * @returns the rules, in file order
 * @throws {InvalidRequestError} when the text is not TOML
 *
 * @example
 * ```ts
 * import { rulesAsWritten } from "./as_written.ts";
 * const text = '[[rule]]\nrollout = [{ variation = "a", weight = 25 }, { variation = "b", weight = 75 }]\n';
 * const [rule] = rulesAsWritten(text, "production");
 * if (rule?.scope !== "flag" || rule.rollout?.[1]?.weight !== 75) throw new Error(JSON.stringify(rule));
 * ```
 */
export function rulesAsWritten(text: string, environment?: string): RuleAsWritten[] {
  const doc = readData(text, { file: "flag file", editor: "the console" });
  const envs = doc.environments;
  const env = environment !== undefined && isTable(envs) && Object.hasOwn(envs, environment)
    ? envs[environment]
    : undefined;
  if (isTable(env) && Array.isArray(env.rule)) return rulesOf(env.rule, "environment");
  return rulesOf(Array.isArray(doc.rule) ? doc.rule : [], "flag");
}

/**
 * A segment file as written.
 *
 * @param texts the version's texts
 * @param segment the segment key
 * @returns what a form shows
 * @throws {InvalidRequestError} when there is no such segment or its file is not TOML
 *
 * @example
 * ```ts
 * import { segmentAsWritten } from "./as_written.ts";
 * const texts = new Map([["segments/eu.toml",
 *   'match = "any"\n[[predicate]]\nattribute = "country"\nop = "in"\nvalue = ["DE", "FR"]\n']]);
 * const eu = segmentAsWritten(texts, "eu");
 * if (eu.match !== "any" || JSON.stringify(eu.predicates[0]?.value) !== '["DE","FR"]') throw new Error();
 * ```
 */
export function segmentAsWritten(texts: ManifestTexts, segment: string): SegmentAsWritten {
  const { doc } = readSegment(texts, segment);
  const preds = Array.isArray(doc.predicate) ? doc.predicate : [];
  return {
    key: segment,
    description: typeof doc.description === "string" ? doc.description : "",
    match: typeof doc.match === "string" ? doc.match : "all",
    predicates: preds.filter(isTable).map((p: Doc) => ({
      attribute: typeof p.attribute === "string" ? p.attribute : "",
      op: typeof p.op === "string" ? p.op : "",
      value: p.value as Scalar | Scalar[],
    })),
  };
}

/**
 * `namespace.toml` as written: the namespace's description and each
 * environment, with the comment lines right above its table as its
 * description.
 *
 * @param texts the version's texts
 * @returns what a form shows (no environments when there is no `namespace.toml`)
 * @throws {InvalidRequestError} when `namespace.toml` is not TOML
 *
 * @example
 * ```ts
 * import { environmentsAsWritten } from "./as_written.ts";
 * const texts = new Map([["namespace.toml",
 *   'schema_version = 1\n\n# What customers see.\n[namespace.environments.production]\npublic_evaluate = false\n']]);
 * const [production] = environmentsAsWritten(texts).environments;
 * if (production?.description !== "What customers see." || production.public_evaluate) throw new Error();
 * ```
 */
export function environmentsAsWritten(texts: ManifestTexts): NamespaceAsWritten {
  const { text, doc } = readNamespace(texts);
  const ns = isTable(doc.namespace) ? doc.namespace : {};
  const envs = isTable(ns.environments) ? ns.environments : {};
  let layout: Layout | undefined;
  try {
    layout = text === "" ? undefined : new Layout(text);
  } catch {
    layout = undefined;
  }
  return {
    description: typeof ns.description === "string" ? ns.description : "",
    environments: Object.entries(envs).map(([key, t]) => ({
      key,
      public_evaluate: isTable(t) && t.public_evaluate === true,
      description: layout === undefined ? "" : commentAbove(layout, key),
    })),
  };
}

/**
 * The keys of a manifest's flags and segments, sorted, for pickers.
 *
 * @param texts the version's texts
 * @returns flag keys and segment keys
 *
 * @example
 * ```ts
 * import { keysAsWritten } from "./as_written.ts";
 * const keys = keysAsWritten(new Map([["flags/b.toml", ""], ["flags/a.toml", ""], ["segments/s.toml", ""]]));
 * if (keys.flags.join() !== "a,b" || keys.segments.join() !== "s") throw new Error();
 * ```
 */
export function keysAsWritten(texts: ManifestTexts): { flags: string[]; segments: string[] } {
  return { flags: keysOf(texts, "flag"), segments: keysOf(texts, "segment") };
}

function rulesOf(rules: unknown[], scope: RuleAsWritten["scope"]): RuleAsWritten[] {
  return rules.map((r, index) => {
    const out: RuleAsWritten = { index, scope };
    if (!isTable(r)) return out;
    if (typeof r.segment === "string") out.segment = r.segment;
    if (typeof r.variation === "string") out.variation = r.variation;
    if (Array.isArray(r.rollout)) {
      out.rollout = r.rollout.map((e: unknown) => ({
        variation: isTable(e) && typeof e.variation === "string" ? e.variation : "",
        weight: isTable(e) && typeof e.weight === "number" ? e.weight : 0,
      }));
    }
    if (typeof r.bucket_by === "string") out.bucket_by = r.bucket_by;
    return out;
  });
}

/** The comment lines right above an environment's table, without their `#`. */
function commentAbove(layout: Layout, env: string): string {
  const section = layout.section(["namespace", "environments", env]);
  if (section === undefined || section.ownedStart === section.headerLine) return "";
  const lines: string[] = [];
  for (let l = section.ownedStart; l < section.headerLine; l++) {
    lines.push(layout.line(l).trim().replace(/^#\s?/, ""));
  }
  return lines.join("\n");
}
