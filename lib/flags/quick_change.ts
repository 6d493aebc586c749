/**
 * Quick changes to one flag file, made on its TOML text so that everything
 * the change does not touch (comments, blank lines, key order, inline or
 * table layout) stays as the person wrote it: turn the flag on or off in an
 * environment, change the variation served by default, or set the weights
 * of a rollout. The text is parsed and patched with toml-patch; an
 * environment table that does not exist yet is added as a real
 * `[environments.<env>]` section at the end of the file. A change that
 * names an unknown variation, a rule that is not a rollout, or weights
 * that are not whole, non-negative and summing to 100 or 100000 is refused
 * with an {@linkcode InvalidRequestError}. The result is one file: the
 * caller still validates the whole manifest before committing it.
 *
 * @module
 */
import { parse, patch } from "toml-patch";
import { InvalidRequestError } from "../errors.ts";
import { parseToml } from "../toml.ts";
import { ROLLOUT_TOTAL } from "./model.ts";

/** A quick change to a flag file. */
export type QuickChange =
  | {
    /** Turn the flag on or off in an environment (`[environments.<env>].enabled`). */
    kind: "toggle";
    environment: string;
    enabled: boolean;
  }
  | {
    /** The variation served when no rule matches: the environment's, or the flag's. */
    kind: "default";
    environment?: string | undefined;
    variation: string;
  }
  | {
    /**
     * The weights of the rollout of rule `rule` (0-based, in file order): the
     * environment's own rules when it overrides them, else the flag's `[[rule]]`.
     */
    kind: "weights";
    environment?: string | undefined;
    rule: number;
    /** Variation → weight; every entry of the rollout, and only those. */
    weights: Record<string, number>;
  };

/** One rule of a flag file as written, for a form that edits it. */
export interface RuleAsWritten {
  /** Its index (0-based) among the rules it belongs to. */
  index: number;
  /** Whether these are the environment's own rules or the flag's `[[rule]]`. */
  scope: "environment" | "flag";
  /** The segment it applies to, if any. */
  segment?: string;
  /** The rollout's entries as written (weights out of 100 or 100000), if it is a rollout. */
  rollout?: { variation: string; weight: number }[];
}

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;

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
 * import { rulesAsWritten } from "./quick_change.ts";
 * const text = '[[rule]]\nrollout = [{ variation = "a", weight = 25 }, { variation = "b", weight = 75 }]\n';
 * const [rule] = rulesAsWritten(text, "production");
 * if (rule?.scope !== "flag" || rule.rollout?.[1]?.weight !== 75) throw new Error(JSON.stringify(rule));
 * ```
 */
export function rulesAsWritten(text: string, environment?: string): RuleAsWritten[] {
  const doc = read(text);
  const { rules, scope } = rulesIn(doc, environment);
  return rules.map((r, index) => {
    const out: RuleAsWritten = { index, scope };
    if (isTable(r) && typeof r.segment === "string") out.segment = r.segment;
    if (isTable(r) && Array.isArray(r.rollout)) {
      out.rollout = r.rollout.map((e: unknown) => ({
        variation: isTable(e) && typeof e.variation === "string" ? e.variation : "",
        weight: isTable(e) && typeof e.weight === "number" ? e.weight : 0,
      }));
    }
    return out;
  });
}

/**
 * Applies a quick change to a flag file's text, keeping comments and
 * formatting; a change that changes nothing gives back the same text
 * (turning a flag on where no override turns it off, a default that is
 * already the one served). See the module comment for what is refused.
 *
 * @param text the flag file (`flags/<key>.toml`)
 * @param change what to change
 * @returns the new text
 * @throws {InvalidRequestError} when the change is refused or the file cannot be read
 *
 * @example
 * ```ts
 * import { applyQuickChange } from "./quick_change.ts";
 * const text = '# shipped in May\ndefault = "off"\n[variations]\non = true\noff = false\n';
 * const off = applyQuickChange(text, { kind: "toggle", environment: "production", enabled: false });
 * if (!off.startsWith("# shipped in May\n") || !off.endsWith("[environments.production]\nenabled = false\n")) {
 *   throw new Error(off);
 * }
 * const on = applyQuickChange(text, { kind: "default", variation: "on" });
 * if (!on.includes('default = "on"')) throw new Error(on);
 * ```
 */
export function applyQuickChange(text: string, change: QuickChange): string {
  const doc = read(text);
  switch (change.kind) {
    case "toggle": {
      if (typeof change.enabled !== "boolean") {
        throw new InvalidRequestError("enabled must be true or false");
      }
      const current = envTable(doc, change.environment)?.enabled ?? true;
      if (current === change.enabled) return text;
      return setInEnvironment(text, doc, change.environment, "enabled", change.enabled);
    }
    case "default": {
      knownVariation(doc, change.variation, "variation");
      if (change.environment === undefined) {
        if (doc.default === change.variation) return text;
        doc.default = change.variation;
        return write(text, doc);
      }
      if (envTable(doc, change.environment)?.default === change.variation) return text;
      return setInEnvironment(text, doc, change.environment, "default", change.variation);
    }
    case "weights":
      return setWeights(text, doc, change);
  }
}

function setWeights(
  text: string,
  doc: Doc,
  change: Extract<QuickChange, { kind: "weights" }>,
): string {
  const { rules, scope } = rulesIn(doc, change.environment);
  const where = scope === "environment" ? `the rules of ${change.environment}` : "the flag's rules";
  const n = change.rule;
  if (!Number.isInteger(n) || n < 0 || n >= rules.length) {
    throw new InvalidRequestError(
      `There is no rule ${Number.isInteger(n) ? n + 1 : n} in ${where} (there are ${rules.length})`,
      { details: { field: "rule" } },
    );
  }
  const rule = rules[n];
  if (!isTable(rule) || !Array.isArray(rule.rollout)) {
    throw new InvalidRequestError(
      `Rule ${n + 1} of ${where} is not a rollout: it serves one variation, so it has no weights`,
      { details: { field: "rule" } },
    );
  }
  const entries = rule.rollout as unknown[];
  const inRollout = new Set(
    entries.map((e) => isTable(e) && typeof e.variation === "string" ? e.variation : ""),
  );
  let sum = 0;
  for (const [variation, weight] of Object.entries(change.weights)) {
    knownVariation(doc, variation, `weight.${variation}`);
    if (!inRollout.has(variation)) {
      throw new InvalidRequestError(
        `The rollout of rule ${n + 1} has no entry for variation ${JSON.stringify(variation)}`,
        { details: { field: `weight.${variation}` } },
      );
    }
    if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 0) {
      throw new InvalidRequestError(
        `The weight of ${JSON.stringify(variation)} must be a whole number of 0 or more, not ${
          String(weight)
        }`,
        { details: { field: `weight.${variation}` } },
      );
    }
    sum += weight;
  }
  for (const variation of inRollout) {
    if (!Object.hasOwn(change.weights, variation)) {
      throw new InvalidRequestError(
        `The weight of ${
          JSON.stringify(variation)
        } is missing: give every entry of the rollout a weight`,
        { details: { field: `weight.${variation}` } },
      );
    }
  }
  if (sum !== 100 && sum !== ROLLOUT_TOTAL) {
    throw new InvalidRequestError(
      `The weights sum to ${sum}; they must sum to 100 (percent) or to ${ROLLOUT_TOTAL}`,
      { details: { field: "weights", sum } },
    );
  }
  let changed = false;
  for (const e of entries) {
    if (!isTable(e)) continue;
    const weight = change.weights[e.variation as string]!;
    if (e.weight !== weight) changed = true;
    e.weight = weight;
  }
  return changed ? write(text, doc) : text;
}

/** The rules that apply in `environment`: its own when it has `rule`, else the flag's. */
function rulesIn(doc: Doc, environment: string | undefined) {
  const env = environment === undefined ? undefined : envTable(doc, environment);
  if (env !== undefined && Array.isArray(env.rule)) {
    return { rules: env.rule as unknown[], scope: "environment" as const };
  }
  return { rules: Array.isArray(doc.rule) ? doc.rule as unknown[] : [], scope: "flag" as const };
}

function envTable(doc: Doc, environment: string): Doc | undefined {
  const envs = doc.environments;
  if (!isTable(envs) || !Object.hasOwn(envs, environment)) return undefined;
  const t = envs[environment];
  return isTable(t) ? t : undefined;
}

function knownVariation(doc: Doc, variation: string, field: string): void {
  const names = isTable(doc.variations) ? Object.keys(doc.variations) : [];
  if (typeof variation !== "string" || !names.includes(variation)) {
    throw new InvalidRequestError(
      `Unknown variation ${JSON.stringify(variation)} (variations: ${
        names.length === 0 ? "none" : names.join(", ")
      })`,
      { details: { field } },
    );
  }
}

/**
 * Sets `key` in the environment's override table. A key the table does not
 * have yet goes into a `[environments.<env>]` section added at the end (a
 * patch alone would write an inline or dotted key) when the file reads
 * the same with that section, i.e. the table was not defined yet or only
 * implied by `[[environments.<env>.rule]]`; otherwise toml-patch places it
 * in the table where it is.
 */
function setInEnvironment(
  text: string,
  doc: Doc,
  environment: string,
  key: string,
  value: unknown,
): string {
  if (!isTable(doc.environments)) doc.environments = {};
  if (!isTable(doc.environments[environment])) doc.environments[environment] = {};
  const table = doc.environments[environment];
  if (!Object.hasOwn(table, key)) {
    const before = structuredClone(doc);
    const nl = text.includes("\r\n") ? "\r\n" : "\n";
    const separator = text.trim() === "" ? "" : text.endsWith(nl) ? nl : nl + nl;
    const withTable = `${text}${separator}[environments.${tomlKey(environment)}]${nl}`;
    table[key] = value;
    if (sameValue(tryRead(withTable), before)) {
      const out = tryWrite(withTable, doc);
      if (out !== undefined) return out;
    }
  }
  table[key] = value;
  return write(text, doc);
}

/** A key as TOML writes it: bare when it can be, else quoted. */
function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function read(text: string): Doc {
  try {
    return parse(text) as Doc;
  } catch (err) {
    throw new InvalidRequestError(
      `The flag file is not valid TOML: ${String((err as Error).message).split("\n")[0]}`,
      { cause: err },
    );
  }
}

function tryRead(text: string): Doc | undefined {
  try {
    return parse(text) as Doc;
  } catch {
    return undefined;
  }
}

/**
 * The patched text, only when it reads back (with toml-patch and with the
 * validator's parser) as exactly `doc`.
 */
function tryWrite(text: string, doc: Doc): string | undefined {
  let out: string;
  try {
    out = patch(text, doc, { trailingComma: false });
  } catch {
    return undefined;
  }
  if (!sameValue(tryRead(out), doc) || !parseToml(out, "flag.toml").ok) return undefined;
  return out;
}

function write(text: string, doc: Doc): string {
  const out = tryWrite(text, doc);
  if (out === undefined) {
    throw new InvalidRequestError(
      "This flag file is laid out in a way a quick change cannot edit safely: " +
        "change it in the file and push it",
    );
  }
  return out;
}

/** Deep equality of parsed TOML, ignoring key order. */
function sameValue(a: unknown, b: unknown): boolean {
  return a !== undefined && canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isTable(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "undefined";
}

function isTable(v: unknown): v is Doc {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
