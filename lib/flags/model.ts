/**
 * The flag manifest model: the typed, validated form of a namespace manifest
 * (`namespace.toml`, `flags/<key>.toml`, `segments/<key>.toml`). Values of
 * these types come only from {@linkcode validateManifest} in `validate.ts`,
 * so an evaluation engine can compile them without checking again: every
 * variation, segment and environment a model names exists, rollout weights
 * are scaled to 100000, and segment references form no cycle.
 *
 * @module
 */
import type { Predicate } from "./conditions.ts";

export type { Predicate } from "./conditions.ts";

/** The schema version every manifest file carries. */
export const SCHEMA_VERSION = 1;

/** Most environments one `namespace.toml` may declare. */
export const MAX_ENVIRONMENTS = 100;

/** Largest accepted size of one manifest file, in bytes (1 MiB). */
export const MAX_FILE_BYTES = 1024 * 1024;

/** Most files one manifest upload may hold, as an archive or as JSON. */
export const MAX_MANIFEST_FILES = 10_000;

/** Flag, segment and environment keys: the file name minus `.toml`. */
export const KEY_RE: RegExp = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * Variation names. They start with a letter so that no name is an array
 * index, which keeps `variations` in file order.
 */
export const VARIATION_NAME_RE: RegExp = /^[A-Za-z][A-Za-z0-9._-]{0,62}$/;

/**
 * The longest chain of segment references: segment `a` referring to `b`,
 * `b` to `c`, and so on, counts every segment of the chain (a segment
 * without references is a chain of 1). Validation refuses longer chains.
 */
export const MAX_SEGMENT_DEPTH = 32;

/** Rollout weights are scaled to this total. */
export const ROLLOUT_TOTAL = 100000;

/** The context path a rollout buckets by when `bucket_by` is absent. */
export const DEFAULT_BUCKET_BY = "targeting_key";

/** Every flag type, in documentation order. */
export const FLAG_TYPES = ["boolean", "string", "number", "object"] as const;

/** A flag type. */
export type FlagType = typeof FLAG_TYPES[number];

/** A JSON value (what a variation of type `object` contains). */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A variation value: matches the flag's `type`. */
export type VariationValue = boolean | string | number | { [key: string]: JsonValue };

/** One environment declared in `namespace.toml`. */
export interface Environment {
  /** Whether `namespace-client` tokens may evaluate in this environment. */
  public_evaluate: boolean;
}

/** The `[namespace]` table of `namespace.toml`. */
export interface NamespaceInfo {
  /** Free text; `""` when absent. */
  description: string;
  /** Declared environments by key, in file order. */
  environments: Record<string, Environment>;
}

/** One entry of a rollout: a variation and its weight out of 100000. */
export interface RolloutEntry {
  /** Name of a variation of the flag. */
  variation: string;
  /** Weight out of {@linkcode ROLLOUT_TOTAL} (already scaled when the file used 100). */
  weight: number;
}

/** Fields shared by both kinds of rule. */
export interface RuleBase {
  /** Segment the context must match; absent: every context matches. */
  segment?: string;
  /** Dotted context path whose value is bucketed (only used by rollouts). */
  bucket_by: string;
}

/** A rule that serves one variation. */
export interface VariationRule extends RuleBase {
  /** Name of the variation served. */
  variation: string;
  /** Never set on a variation rule. */
  rollout?: undefined;
}

/** A rule that splits contexts between variations by weight. */
export interface RolloutRule extends RuleBase {
  /** Entries in file order; weights sum to {@linkcode ROLLOUT_TOTAL}. */
  rollout: RolloutEntry[];
  /** Never set on a rollout rule. */
  variation?: undefined;
}

/** A targeting rule: exactly one of `variation` or `rollout`. */
export type Rule = VariationRule | RolloutRule;

/** Per-environment overrides of a flag. */
export interface EnvironmentOverride {
  /** `false`: serve the default with reason `DISABLED`. Defaults to `true`. */
  enabled: boolean;
  /** Variation served when no rule matches, replacing the flag's `default`. */
  default?: string;
  /** When present, replaces the flag's rules in this environment (may be empty). */
  rules?: Rule[];
}

/** A flag: its variations, default, rules and environment overrides. */
export interface Flag {
  /** The flag key (file name minus `.toml`). */
  key: string;
  /** Free text; `""` when absent. */
  description: string;
  /** The type every variation value has. */
  type: FlagType;
  /** Name of the variation served when no rule matches. */
  default: string;
  /** Variation name to value, in file order. */
  variations: Record<string, VariationValue>;
  /** Rules in file order; the first match wins. */
  rules: Rule[];
  /** Overrides by environment key (only declared environments). */
  environments: Record<string, EnvironmentOverride>;
}

/** A segment: a named predicate list. */
export interface Segment {
  /** The segment key (file name minus `.toml`). */
  key: string;
  /** Free text; `""` when absent. */
  description: string;
  /** `all`: every predicate holds; `any`: at least one holds. */
  match: "all" | "any";
  /** At least one predicate; `segment.<key>` attributes reference other segments. */
  predicates: Predicate[];
}

/** A validated namespace manifest. */
export interface Manifest {
  /** From `namespace.toml` (empty for the empty manifest). */
  namespace: NamespaceInfo;
  /** Flags by key, sorted by key. */
  flags: Record<string, Flag>;
  /** Segments by key, sorted by key. */
  segments: Record<string, Segment>;
}

/** What a manifest path names. */
export type ManifestPath =
  | { kind: "namespace" }
  | { kind: "flag"; key: string }
  | { kind: "segment"; key: string };

/**
 * Classifies a manifest file path: `namespace.toml`, `flags/<key>.toml` or
 * `segments/<key>.toml` with a valid key. Every other path (other names,
 * nested directories, `..`, absolute paths, `\` separators, upper case) gives
 * undefined, which the validator reports as an unknown file.
 *
 * @param path a relative, `/`-separated path
 * @returns what the path names, or undefined
 *
 * @example
 * ```ts
 * import { parseManifestPath } from "./model.ts";
 * const p = parseManifestPath("flags/new-checkout.toml");
 * if (p?.kind !== "flag" || p.key !== "new-checkout") throw new Error();
 * if (parseManifestPath("flags/../x.toml") !== undefined) throw new Error();
 * ```
 */
export function parseManifestPath(path: string): ManifestPath | undefined {
  if (path === "namespace.toml") return { kind: "namespace" };
  const m = /^(flags|segments)\/([^/]+)\.toml$/.exec(path);
  if (!m || !KEY_RE.test(m[2]!)) return undefined;
  return m[1] === "flags" ? { kind: "flag", key: m[2]! } : { kind: "segment", key: m[2]! };
}

/**
 * The problem message for a path that {@linkcode parseManifestPath} rejects:
 * a bad key when the path has a manifest shape, else a list of what a
 * manifest may hold.
 *
 * @param path the rejected relative path
 * @returns a message starting with "unknown file"
 *
 * @example
 * ```ts
 * import { unknownFileMessage } from "./model.ts";
 * if (!unknownFileMessage("README.md").startsWith("unknown file")) throw new Error();
 * ```
 */
export function unknownFileMessage(path: string): string {
  const m = /^(flags|segments)\/([^/]+)\.toml$/.exec(path);
  if (m) {
    return `unknown file: ${JSON.stringify(m[2])} is not a valid key (keys match ${KEY_RE.source})`;
  }
  return "unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml";
}

/**
 * The environments of a manifest with their `public_evaluate` switch, as the
 * store records them in the namespace head (the empty manifest has none).
 *
 * @param manifest a validated manifest
 * @returns environment key to `{public_evaluate}`, a fresh object
 *
 * @example
 * ```ts
 * import { environmentsOf, type Manifest } from "./model.ts";
 * const m: Manifest = {
 *   namespace: { description: "", environments: { staging: { public_evaluate: true } } },
 *   flags: {},
 *   segments: {},
 * };
 * if (environmentsOf(m).staging?.public_evaluate !== true) throw new Error();
 * ```
 */
export function environmentsOf(manifest: Manifest): Record<string, Environment> {
  const out: Record<string, Environment> = {};
  for (const [k, env] of Object.entries(manifest.namespace.environments)) {
    out[k] = { public_evaluate: env.public_evaluate };
  }
  return out;
}

/**
 * The empty manifest (namespace version 0): no environments, flags or segments.
 *
 * @returns a fresh empty manifest
 *
 * @example
 * ```ts
 * import { emptyManifest } from "./model.ts";
 * if (Object.keys(emptyManifest().flags).length !== 0) throw new Error();
 * ```
 */
export function emptyManifest(): Manifest {
  return { namespace: { description: "", environments: {} }, flags: {}, segments: {} };
}
