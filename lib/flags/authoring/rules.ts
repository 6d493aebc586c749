/**
 * Authoring rules, in one scope at a time: the flag's own rules
 * (`[[rule]]`) or an environment's own rules
 * (`[[environments.<env>.rule]]`, present when the environment overrides
 * the flag's rules; give it its own with `giveOwnRules` first). Add a rule
 * at a position, replace one, remove one, move one; rules are tried in
 * order and the first match wins.
 *
 * A rule ({@linkcode RuleInput}) targets a segment or everyone and serves
 * a variation or a rollout: entries `{variation, weight}` with whole
 * weights summing to 100 (percent) or to 100000, and an optional
 * `bucket_by` context path. Each is written as a `[[…rule]]` section
 * (`segment`, `variation` or `bucket_by` and `rollout`, one rollout entry
 * a line); a rule that moves keeps its text and its comments.
 *
 * Removing the last of the flag's own rules removes its `rule` key; the
 * last of an environment's own rules leaves `rule = []` (the environment
 * keeps its own, empty list: it serves its default) — `dropOwnRules` is
 * what makes it fall back to the flag's rules.
 *
 * Refusals name the form field as `rules.<i>.<field>` (`<i>` the rule's
 * position in its list): `segment`, `variation`, `rollout`,
 * `rollout.<j>.variation`, `rollout.<j>.weight`, `weights` (the sum),
 * `bucket_by`; and `environment`, `at`, `index`, `from`, `to`.
 *
 * @module
 */
import { ROLLOUT_TOTAL } from "../model.ts";
import { checkIndex, checkKnown, checkPosition, checkString, refuse } from "./_args.ts";
import { type Doc, isTable, OVERRIDE_ORDER, RULE_ORDER, withOrder } from "./_doc.ts";
import { environmentKeys, type FileData, keysOf, readFlag } from "./_files.ts";
import { variationNames, writeFlag } from "./_flag_file.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

/** A rule as a form enters it: exactly one of `variation` or `rollout`. */
export interface RuleInput {
  /** The segment a context must match; absent or `""`: every context. */
  segment?: string | undefined;
  /** The variation served. */
  variation?: string | undefined;
  /** The weighted split: every variation at most once, weights whole, summing to 100 or 100000. */
  rollout?: { variation: string; weight: number }[] | undefined;
  /** The dotted context path a rollout buckets by; absent or `""`: `targeting_key`. */
  bucket_by?: string | undefined;
}

/** Where rules are edited: a flag's own rules, or an environment's own rules of it. */
export interface RuleScope {
  /** The flag key. */
  flag: string;
  /** The environment whose own rules are edited; absent: the flag's `[[rule]]`. */
  environment?: string | undefined;
}

/**
 * Adds a rule at position `at` (0 = first, tried before the others; absent
 * = last).
 *
 * @param texts the version's texts
 * @param edit the scope, the position and the rule
 * @returns the flag's file
 * @throws {InvalidRequestError} when the scope, the position or the rule is refused
 *
 * @example
 * ```ts
 * import { addRule } from "./rules.ts";
 * const texts = new Map([
 *   ["segments/beta.toml", ""],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n\n[variations]\non = true\noff = false\n'],
 * ]);
 * const out = addRule(texts, { flag: "a", rule: { segment: "beta", variation: "on" } }).get("flags/a.toml");
 * if (!out?.endsWith('off = false\n\n[[rule]]\nsegment = "beta"\nvariation = "on"\n')) throw new Error(String(out));
 * ```
 */
export function addRule(
  texts: ManifestTexts,
  edit: RuleScope & { at?: number | undefined; rule: RuleInput },
): FileEdits {
  const s = openScope(texts, edit);
  const at = edit.at === undefined
    ? s.rules.length
    : checkPosition(edit.at, "at", s.rules.length, "rule");
  const rule = ruleOf(texts, s.file.doc, edit.rule, `rules.${at}`);
  s.rules.splice(at, 0, rule);
  return s.write(`rules.${at}`);
}

/**
 * Replaces rule `index` (0-based) with another.
 *
 * @param texts the version's texts
 * @param edit the scope, the index and the new rule
 * @returns the flag's file, or nothing when the rule is the same
 * @throws {InvalidRequestError} when the scope, the index or the rule is refused
 *
 * @example
 * ```ts
 * import { replaceRule } from "./rules.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# everyone\n[[rule]]\nvariation = "on"\n']]);
 * const rule = { rollout: [{ variation: "on", weight: 10 }, { variation: "off", weight: 90 }] };
 * const out = replaceRule(texts, { flag: "a", index: 0, rule }).get("flags/a.toml");
 * if (!out?.endsWith('# everyone\n[[rule]]\nrollout = [\n  { variation = "on", weight = 10 },\n' +
 *   '  { variation = "off", weight = 90 },\n]\n')) throw new Error(String(out));
 * ```
 */
export function replaceRule(
  texts: ManifestTexts,
  edit: RuleScope & { index: number; rule: RuleInput },
): FileEdits {
  const s = openScope(texts, edit);
  const index = checkIndex(edit.index, "index", s.rules.length, "rule", s.where);
  s.rules[index] = ruleOf(texts, s.file.doc, edit.rule, `rules.${index}`);
  return s.write(`rules.${index}`);
}

/**
 * Removes rule `index` (0-based).
 *
 * @param texts the version's texts
 * @param edit the scope and the index
 * @returns the flag's file
 * @throws {InvalidRequestError} when the scope or the index is refused
 *
 * @example
 * ```ts
 * import { removeRule } from "./rules.ts";
 * const texts = new Map([["flags/a.toml",
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n\n[[rule]]\nvariation = "on"\n']]);
 * const out = removeRule(texts, { flag: "a", index: 0 }).get("flags/a.toml");
 * if (out !== 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n') throw new Error(String(out));
 * ```
 */
export function removeRule(texts: ManifestTexts, edit: RuleScope & { index: number }): FileEdits {
  const s = openScope(texts, edit);
  const index = checkIndex(edit.index, "index", s.rules.length, "rule", s.where);
  s.rules.splice(index, 1);
  return s.write("index");
}

/**
 * Moves rule `from` so that it becomes rule `to` (both 0-based, in the
 * list before the move), keeping its text and comments.
 *
 * @param texts the version's texts
 * @param edit the scope and the two positions
 * @returns the flag's file, or nothing when `from` is `to`
 * @throws {InvalidRequestError} when the scope or a position is refused
 *
 * @example
 * ```ts
 * import { moveRule } from "./rules.ts";
 * const texts = new Map([["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n\n' +
 *   '# first\n[[rule]]\nvariation = "on"\n\n# second\n[[rule]]\nvariation = "off"\n']]);
 * const out = moveRule(texts, { flag: "a", from: 1, to: 0 }).get("flags/a.toml");
 * if (!out?.endsWith('# second\n[[rule]]\nvariation = "off"\n\n# first\n[[rule]]\nvariation = "on"\n')) {
 *   throw new Error(String(out));
 * }
 * ```
 */
export function moveRule(
  texts: ManifestTexts,
  edit: RuleScope & { from: number; to: number },
): FileEdits {
  const s = openScope(texts, edit);
  const from = checkIndex(edit.from, "from", s.rules.length, "rule", s.where);
  const to = checkIndex(edit.to, "to", s.rules.length, "rule", s.where);
  if (from === to) return new Map();
  const [rule] = s.rules.splice(from, 1);
  s.rules.splice(to, 0, rule);
  return s.write("to");
}

/** A scope opened for an edit: its rules (changed in place) and how to write them back. */
interface OpenScope {
  file: FileData;
  rules: unknown[];
  /** The scope in words, for messages. */
  where: string;
  write(field: string): FileEdits;
}

function openScope(texts: ManifestTexts, scope: RuleScope): OpenScope {
  const file = readFlag(texts, scope.flag);
  const doc = file.doc;
  const env = scope.environment;
  if (env === undefined) {
    const rules: unknown[] = Array.isArray(doc.rule) ? doc.rule : [];
    return {
      file,
      rules,
      where: `the rules of ${scope.flag}`,
      write: (field) => {
        if (rules.length === 0) delete doc.rule;
        else doc.rule = rules;
        return writeFlag(texts, scope.flag, file, doc, field, ruleFields(""));
      },
    };
  }
  checkKnown(env, environmentKeys(texts), "environment", "environment", "environments");
  const table = isTable(doc.environments) ? doc.environments[env] : undefined;
  if (!isTable(table) || !Array.isArray(table.rule)) {
    refuse(
      `In ${env}, ${scope.flag} serves the flag's own rules: give ${env} rules of its own first`,
      "environment",
    );
  }
  const rules: unknown[] = table.rule;
  return {
    file,
    rules,
    where: `the rules of ${scope.flag} in ${env}`,
    write: (field) => {
      doc.environments[env] = withOrder({ ...table, rule: rules }, OVERRIDE_ORDER);
      return writeFlag(texts, scope.flag, file, doc, field, ruleFields(env));
    },
  };
}

/**
 * Checks a rule a person entered against the flag and the manifest, and
 * returns it as the file writes it (`prefix` names its form fields).
 */
function ruleOf(texts: ManifestTexts, doc: Doc, input: RuleInput, prefix: string): Doc {
  if (!isTable(input)) refuse("A rule is a segment and what it serves", prefix);
  const out: Doc = {};
  if (input.segment !== undefined && input.segment !== "") {
    out.segment = checkKnown(
      input.segment,
      keysOf(texts, "segment"),
      `${prefix}.segment`,
      "segment",
      "segments",
    );
  }
  const names = variationNames(doc);
  const hasVariation = input.variation !== undefined && input.variation !== "";
  const hasRollout = input.rollout !== undefined;
  if (hasVariation && hasRollout) {
    refuse("A rule serves one variation or a rollout, not both", `${prefix}.variation`);
  }
  if (!hasVariation && !hasRollout) {
    refuse("Choose what the rule serves: a variation or a rollout", `${prefix}.variation`);
  }
  const bucketBy = input.bucket_by === undefined || input.bucket_by === ""
    ? undefined
    : checkString(input.bucket_by, `${prefix}.bucket_by`, "bucket_by");
  if (hasVariation) {
    if (bucketBy !== undefined) {
      refuse("bucket_by applies only to a rule with a rollout", `${prefix}.bucket_by`);
    }
    out.variation = checkKnown(
      input.variation,
      names,
      `${prefix}.variation`,
      "variation",
      "variations",
    );
    return withOrder(out, RULE_ORDER);
  }
  const rollout = input.rollout;
  if (!Array.isArray(rollout) || rollout.length === 0) {
    refuse("A rollout needs at least one variation and its weight", `${prefix}.rollout`);
  }
  const seen = new Set<string>();
  let sum = 0;
  const entries = rollout.map((e, j) => {
    const at = `${prefix}.rollout.${j}`;
    const variation = checkKnown(e?.variation, names, `${at}.variation`, "variation", "variations");
    if (seen.has(variation)) {
      refuse(`Variation ${variation} appears twice in the rollout`, `${at}.variation`);
    }
    seen.add(variation);
    const weight = e.weight;
    if (
      typeof weight !== "number" || !Number.isInteger(weight) || weight < 0 ||
      weight > ROLLOUT_TOTAL
    ) {
      refuse(
        `The weight of ${variation} must be a whole number from 0 to ${ROLLOUT_TOTAL}, not ${
          String(weight)
        }`,
        `${at}.weight`,
      );
    }
    sum += weight;
    return { variation, weight };
  });
  if (sum !== 100 && sum !== ROLLOUT_TOTAL) {
    refuse(
      `The weights sum to ${sum}; they must sum to 100 (percent) or to ${ROLLOUT_TOTAL}`,
      `${prefix}.weights`,
      { sum },
    );
  }
  if (bucketBy !== undefined) out.bucket_by = bucketBy;
  out.rollout = entries;
  return withOrder(out, RULE_ORDER);
}

/** Form fields for the validator's key paths of one scope's rules: `rules.<i>.<field>`. */
function ruleFields(environment: string): (key: string) => string {
  return (key) => {
    // `rule[<i>]` at the start or after a dot (no regex: keys are untrusted)
    const at = key.startsWith("rule[") ? 0 : key.indexOf(".rule[") + 1;
    const close = at === 0 && !key.startsWith("rule[") ? -1 : key.indexOf("]", at);
    const index = close === -1 ? "" : key.slice(at + "rule[".length, close);
    if (!/^\d+$/.test(index)) return environment === "" ? key : "environment";
    return `rules.${index}${key.slice(close + 1).replace(/\[(\d+)\]/g, ".$1")}`;
  };
}
