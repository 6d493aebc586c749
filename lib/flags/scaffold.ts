/**
 * The texts of a new manifest, written from the terminal (`cfgtool namespace
 * init`, `cfgtool flags new`): a `namespace.toml` declaring environments and
 * a `flags/<key>.toml` with starter variations. Their data lines are what the
 * console writes for the same namespace and flag (the authoring library
 * makes them); comments around them teach the format.
 *
 * Teaching examples are commented out with a `#` and no space
 * (`#[[rule]]`, `#variation = "on"`); prose comments have a space after the
 * `#`. Removing the `#` of every example line ({@linkcode uncommentExamples})
 * gives a file that still lints clean: the examples name only the flag's own
 * variations, environments declared in `namespace.toml` and segments that
 * exist.
 *
 * @module
 */
import { FLAG_TYPES, type FlagType, type VariationValue } from "./model.ts";
import { addEnvironment, setNamespaceDescription } from "./authoring/environments.ts";
import { createFlag, type VariationInput } from "./authoring/flags.ts";
import { environmentsAsWritten, keysAsWritten } from "./authoring/as_written.ts";
import { applyFileEdits, flagFile, type ManifestTexts, NAMESPACE_FILE } from "./authoring/texts.ts";

/** The environments `namespace init` declares when none is given. */
export const DEFAULT_ENVIRONMENTS: readonly string[] = ["production", "staging"];

/** What a new `namespace.toml` declares. */
export interface NamespaceScaffold {
  /** Environment keys, in order; none given: {@linkcode DEFAULT_ENVIRONMENTS}. */
  environments?: readonly string[] | undefined;
  /** The namespace's description; none or `""` writes no `[namespace]` table. */
  description?: string | undefined;
}

/** A new flag. */
export interface FlagScaffold {
  /** Its key, the file's name (the manifest's key rules). */
  key: string;
  /** Its type. */
  type: FlagType;
  /** Its description; none or `""` writes no `description` line. */
  description?: string | undefined;
}

/** Starter variations of a type, the default, and the one the examples serve. */
interface Starter {
  variations: VariationInput[];
  default: string;
  other: string;
  /** Comment lines: what a variation's value is. */
  values: string[];
}

const STARTERS: Record<FlagType, Starter> = {
  boolean: {
    variations: [{ name: "on", value: true }, { name: "off", value: false }],
    default: "off",
    other: "on",
    values: ["# Each value is true or false."],
  },
  string: {
    variations: [
      { name: "control", value: "control" },
      { name: "treatment", value: "treatment" },
    ],
    default: "control",
    other: "treatment",
    values: ["# Each value is a string."],
  },
  number: {
    variations: [{ name: "low", value: 10 }, { name: "high", value: 100 }],
    default: "low",
    other: "high",
    values: ["# Each value is a number: an integer or a decimal."],
  },
  object: {
    variations: [
      { name: "off", value: { enabled: false } },
      { name: "on", value: { enabled: true, limit: 10 } as VariationValue },
    ],
    default: "off",
    other: "on",
    values: [
      "# Each value is a table, as a [variations.<name>] section or inline",
      "# ({ enabled = true }), holding any JSON object.",
    ],
  },
};

const NAMESPACE_HEADER = [
  "# The namespace: its environments, and whether browser tokens may evaluate",
  "# in them. A manifest directory holds this file, flags/<key>.toml (one flag",
  "# each) and segments/<key>.toml (one segment each); `cfgtool flags lint <dir>`",
  "# checks them all, and cfgtool's docs/flags.md describes every key.",
  "#",
  "# Each [namespace.environments.<key>] table declares an environment; a flag",
  "# may change its default, its rules or switch itself off per environment.",
  "# Comment lines right above such a table describe that environment. With",
  "# public_evaluate = true, namespace-client tokens (their secret ships in",
  "# browser bundles, so it is public) may evaluate in that environment: keep it",
  "# false unless that is what you want. An optional [namespace] table holds a",
  '# description = "…" of the namespace.',
];

/**
 * The text of a new `namespace.toml`: a comment that explains the file,
 * then the environments as the console declares them
 * (`public_evaluate = false` each).
 *
 * @param ns the environments (default production and staging) and description
 * @returns the file's text
 * @throws {InvalidRequestError} when an environment key is invalid or given twice, or the description is refused
 *
 * @example
 * ```ts
 * import { namespaceScaffold } from "./scaffold.ts";
 * import { validateManifest } from "./validate.ts";
 * const text = namespaceScaffold({ environments: ["production", "qa"] });
 * const { manifest } = validateManifest(new Map([["namespace.toml", new TextEncoder().encode(text)]]));
 * if (Object.keys(manifest!.namespace.environments).join() !== "production,qa") throw new Error(text);
 * if (!text.startsWith("# The namespace:")) throw new Error(text);
 * ```
 */
export function namespaceScaffold(ns: NamespaceScaffold = {}): string {
  let texts: ManifestTexts = new Map();
  const envs = ns.environments === undefined || ns.environments.length === 0
    ? DEFAULT_ENVIRONMENTS
    : ns.environments;
  for (const key of envs) texts = applyFileEdits(texts, addEnvironment(texts, { key }));
  if (ns.description !== undefined && ns.description !== "") {
    texts = applyFileEdits(texts, setNamespaceDescription(texts, { description: ns.description }));
  }
  return NAMESPACE_HEADER.map((l) => l + "\n").join("") + texts.get(NAMESPACE_FILE)!;
}

/**
 * The text of a new `flags/<key>.toml`: a comment that explains the file,
 * the flag as the console creates it (two starter variations of its type
 * and a default), then commented-out examples of a rule for a segment (when
 * the manifest has one), a rollout and per-environment overrides (for the
 * environments `namespace.toml` declares).
 *
 * @param texts the manifest's texts: `namespace.toml` and the segment files (only their paths are read)
 * @param flag the key, type and description
 * @returns the file's text
 * @throws {InvalidRequestError} when the key is invalid or taken, the type unknown, the description refused, or `namespace.toml` not TOML
 *
 * @example
 * ```ts
 * import { flagScaffold, namespaceScaffold, uncommentExamples } from "./scaffold.ts";
 * import { validateManifest } from "./validate.ts";
 * const ns = namespaceScaffold();
 * const flag = flagScaffold(new Map([["namespace.toml", ns]]), { key: "dark-mode", type: "boolean" });
 * const bytes = (t: string) => new TextEncoder().encode(t);
 * const files = new Map([["namespace.toml", bytes(ns)], ["flags/dark-mode.toml", bytes(uncommentExamples(flag))]]);
 * const { problems, manifest } = validateManifest(files);
 * const f = manifest?.flags["dark-mode"];
 * if (problems.length !== 0 || f?.rules.length !== 1 || f.environments.production?.enabled !== false) {
 *   throw new Error(JSON.stringify(problems));
 * }
 * ```
 */
export function flagScaffold(texts: ManifestTexts, flag: FlagScaffold): string {
  const starter = (FLAG_TYPES as readonly unknown[]).includes(flag.type)
    ? STARTERS[flag.type]
    : undefined;
  const edits = createFlag(texts, {
    key: flag.key,
    type: flag.type,
    description: flag.description,
    variations: starter?.variations ?? [],
    default: starter?.default ?? "",
  });
  const data = edits.get(flagFile(flag.key))!;
  const s = starter!;
  const envs = texts.has(NAMESPACE_FILE)
    ? environmentsAsWritten(texts).environments.map((e) => e.key)
    : [];
  const segment = keysAsWritten(texts).segments[0];
  const on = JSON.stringify(s.other);
  const off = JSON.stringify(s.default);
  const header = [
    `# The ${flag.type} flag ${flag.key}. A flag's key is its file's name`,
    "# (flags/<key>.toml); `cfgtool flags lint <dir>` checks the manifest, and",
    "# cfgtool's docs/flags.md describes every key.",
    "#",
    "# default names the variation served when no rule matches. [variations]",
    "# lists each variation as name = value, in the order they are shown.",
    ...s.values,
    "# Rename the variations and add more as you need.",
  ];
  const examples = [
    "",
    '# Lines below that start with "#" and no space are examples: delete that "#"',
    "# to use one, then run `cfgtool flags lint` again.",
    "#",
    "# Rules ([[rule]]) are tried in order and the first that matches decides; when",
    "# none matches, the default is served. A rule serves one variation",
    "# (variation = …) or splits contexts between variations by weight (rollout =",
    '# […]). segment = "<key>" makes a rule match only the contexts in',
    "# segments/<key>.toml; without it, a rule matches every context.",
  ];
  if (segment !== undefined) {
    examples.push(
      "#",
      `# Serve ${on} to the contexts in segment ${segment}:`,
      "#[[rule]]",
      `#segment = ${JSON.stringify(segment)}`,
      `#variation = ${on}`,
    );
  }
  examples.push(
    "#",
    `# Roll ${on} out to 10% of contexts. Each context is hashed by its`,
    "# targeting_key (or by the context path that bucket_by names) into a bucket",
    "# that does not change, so a user keeps their variation while the weights",
    "# stay; a context without that value skips the rule. Weights add up to 100",
    "# (percent) or to 100000 (thousandths of a percent).",
    "#[[rule]]",
    `#rollout = [{ variation = ${on}, weight = 10 }, { variation = ${off}, weight = 90 }]`,
    "#",
    "# Per environment, [environments.<env>] may switch the flag off (enabled =",
    "# false: every evaluation serves the default, with reason DISABLED), set",
    "# another default, or replace the rules ([[environments.<env>.rule]] tables;",
    "# rule = [] removes them all).",
  );
  if (envs.length === 0) {
    examples.push("# Environments are declared in namespace.toml; it declares none yet.");
  } else {
    const last = envs.at(-1)!;
    examples.push(
      "#",
      `# In ${last}, serve ${on} when no rule matches:`,
      `#[environments.${tomlKey(last)}]`,
      `#default = ${on}`,
    );
    if (envs.length > 1) {
      examples.push(
        "#",
        `# Switch the flag off in ${envs[0]}:`,
        `#[environments.${tomlKey(envs[0]!)}]`,
        "#enabled = false",
      );
    }
  }
  return header.map((l) => l + "\n").join("") + data +
    examples.map((l) => l + "\n").join("");
}

/**
 * Uncomments the teaching examples of a scaffold: removes the `#` that
 * starts a line when a character other than a space, a tab or another `#`
 * follows it. Prose comments (`# …`) and blank comment lines stay.
 *
 * @param text a file `namespace init` or `flags new` wrote
 * @returns the text with its examples in force
 *
 * @example
 * ```ts
 * import { uncommentExamples } from "./scaffold.ts";
 * const out = uncommentExamples("# a rule:\n#[[rule]]\n#variation = \"on\"\n#\n");
 * if (out !== '# a rule:\n[[rule]]\nvariation = "on"\n#\n') throw new Error(out);
 * ```
 */
export function uncommentExamples(text: string): string {
  return text.replace(/^#(?=[^\s#])/gm, "");
}

/** A key as a TOML table header segment: bare when it may be, else quoted. */
function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}
