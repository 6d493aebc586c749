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
import { InvalidRequestError } from "../errors.ts";
import {
  type Doc,
  type EditNames,
  isTable,
  patchDoc,
  readPatchable,
  setInTable,
} from "./authoring/edit_toml.ts";
import { ROLLOUT_TOTAL } from "./model.ts";

export { type RuleAsWritten, rulesAsWritten } from "./authoring/as_written.ts";

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

/** How quick changes name the file and themselves in refusals. */
const NAMES: EditNames = { file: "flag file", editor: "a quick change" };

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
  const doc = readPatchable(text, NAMES);
  switch (change.kind) {
    case "toggle": {
      if (typeof change.enabled !== "boolean") {
        throw new InvalidRequestError("enabled must be true or false");
      }
      const current = envTable(doc, change.environment)?.enabled ?? true;
      if (current === change.enabled) return text;
      return setInTable(
        text,
        doc,
        ["environments", change.environment],
        "enabled",
        change.enabled,
        NAMES,
      );
    }
    case "default": {
      knownVariation(doc, change.variation, "variation");
      if (change.environment === undefined) {
        if (doc.default === change.variation) return text;
        doc.default = change.variation;
        return patchDoc(text, doc, NAMES);
      }
      if (envTable(doc, change.environment)?.default === change.variation) return text;
      return setInTable(
        text,
        doc,
        ["environments", change.environment],
        "default",
        change.variation,
        NAMES,
      );
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
  return changed ? patchDoc(text, doc, NAMES) : text;
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
