/**
 * Why a context got a value, in words: a rule named by its place (from 1,
 * as pages number rules), its segment and what it serves, and an
 * evaluation result explained with the rules of its environment. The
 * playground and the flag page say it the same way. Pure.
 *
 * @module
 */
import { effectiveFlag } from "./effective.ts";
import type { EvaluationResult } from "./evaluate.ts";
import { type Flag, ROLLOUT_TOTAL, type Rule } from "./model.ts";

/**
 * A rollout weight (out of 100000) as a percentage.
 *
 * @param weight the weight
 * @returns e.g. `25%`, `33.333%`
 *
 * @example
 * ```ts
 * import { weightPercent } from "./explain.ts";
 * if (weightPercent(25000) !== "25%" || weightPercent(33333) !== "33.333%") throw new Error();
 * ```
 */
export function weightPercent(weight: number): string {
  return `${Math.round((weight / ROLLOUT_TOTAL) * 100 * 1000) / 1000}%`;
}

/** A rule in words, in parts a page can link. */
export interface RuleParts {
  /** `rule 2` (counted from 1). */
  label: string;
  /** The rule's segment; absent: every context. */
  segment?: string;
  /** What it serves: `serves on`, `split on 25% / off 75% by targeting_key`. */
  action: string;
}

/**
 * One rule in parts (see {@linkcode ruleSummary} for the sentence).
 *
 * @param rule the rule
 * @param index its index in its list (from 0; shown from 1)
 * @returns label, segment and action
 *
 * @example
 * ```ts
 * import { ruleParts } from "./explain.ts";
 * const p = ruleParts({ variation: "on", bucket_by: "targeting_key" }, 2);
 * if (p.label !== "rule 3" || p.segment !== undefined || p.action !== "serves on") throw new Error();
 * ```
 */
export function ruleParts(rule: Rule, index: number): RuleParts {
  const action = rule.rollout === undefined
    ? `serves ${rule.variation}`
    : `split ${
      rule.rollout.map((e) => `${e.variation} ${weightPercent(e.weight)}`).join(" / ")
    } by ${rule.bucket_by}`;
  return {
    label: `rule ${index + 1}`,
    ...(rule.segment === undefined ? {} : { segment: rule.segment }),
    action,
  };
}

/**
 * One rule in words: `rule 2: segment eu, split on 25% / off 75% by
 * targeting_key`, or `rule 1: every context, serves on`.
 *
 * @param rule the rule
 * @param index its index in its list (from 0; shown from 1)
 * @returns the sentence
 *
 * @example
 * ```ts
 * import { ruleSummary } from "./explain.ts";
 * const s = ruleSummary({ segment: "beta", variation: "on", bucket_by: "targeting_key" }, 0);
 * if (s !== "rule 1: segment beta, serves on") throw new Error(s);
 * ```
 */
export function ruleSummary(rule: Rule, index: number): string {
  return partsText(ruleParts(rule, index));
}

function partsText(p: RuleParts): string {
  return `${p.label}: ${
    p.segment === undefined ? "every context" : `segment ${p.segment}`
  }, ${p.action}`;
}

/** Why a result came out as it did. */
export interface Explanation {
  /** The whole explanation as one sentence. */
  text: string;
  /** The rule that matched (`TARGETING_MATCH`, `SPLIT`), when the manifest has it. */
  rule?: RuleParts;
  /** What followed from the rule for this context (a split's bucket), when anything. */
  outcome?: string;
}

/**
 * Why an evaluation result came out as it did, with the rules the flag has
 * in the environment: the matching rule for `TARGETING_MATCH` and `SPLIT`
 * (for a split, the variation the context's bucket fell in), "none
 * matched" for `DEFAULT`, the switch for `DISABLED`, the error's message
 * for `ERROR`.
 *
 * @param flag the flag evaluated (undefined when the manifest has no such flag)
 * @param environment the environment evaluated in
 * @param result the result
 * @returns the explanation
 *
 * @example
 * ```ts
 * import { explainResult } from "./explain.ts";
 * const flag = {
 *   key: "f", description: "", type: "boolean" as const, default: "off",
 *   variations: { on: true, off: false },
 *   rules: [{ segment: "beta", variation: "on", bucket_by: "targeting_key" }], environments: {},
 * };
 * const why = explainResult(flag, "prod", {
 *   flag: "f", value: true, variation: "on", reason: "TARGETING_MATCH", rule_index: 0, version: 1,
 * });
 * if (why.text !== "rule 1: segment beta, serves on" || why.rule?.segment !== "beta") throw new Error(why.text);
 * ```
 */
export function explainResult(
  flag: Flag | undefined,
  environment: string,
  result: EvaluationResult,
): Explanation {
  switch (result.reason) {
    case "ERROR":
      return { text: result.error_message ?? result.error_code ?? "error" };
    case "DISABLED":
      return {
        text: `disabled in ${environment}: every context gets the default ${result.variation}`,
      };
    case "DEFAULT": {
      const n = flag === undefined ? 0 : effectiveFlag(flag, environment).rules.length;
      return {
        text: n === 0
          ? `no rules: the default ${result.variation}`
          : `none of ${n} rule${n === 1 ? "" : "s"} matched: the default ${result.variation}`,
      };
    }
    case "TARGETING_MATCH":
    case "SPLIT": {
      const i = result.rule_index;
      const rule = flag === undefined || i === undefined
        ? undefined
        : effectiveFlag(flag, environment).rules[i];
      if (rule === undefined) {
        return { text: i === undefined ? result.reason : `rule ${i + 1}` };
      }
      const parts = ruleParts(rule, i!);
      if (result.reason === "TARGETING_MATCH") return { text: partsText(parts), rule: parts };
      const outcome = `this context's bucket got ${result.variation}`;
      return { text: `${partsText(parts)}: ${outcome}`, rule: parts, outcome };
    }
  }
}
