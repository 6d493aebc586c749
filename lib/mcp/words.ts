/**
 * A flag's rules in words, for an agent to read and repeat to a person:
 * each predicate as a short phrase (`user.email ends with "@example.com"`),
 * each segment with its nested segments opened (lib/flags/segment_tree.ts
 * bounds the tree), each rule as a sentence with its number from 1 (as the
 * console numbers rules), and the flag as each environment serves it. Pure.
 *
 * @module
 */
import { effectiveFlag } from "../flags/effective.ts";
import { ruleParts } from "../flags/explain.ts";
import type { Flag, Manifest, Predicate, Rule } from "../flags/model.ts";
import {
  type SegmentNode,
  segmentTree,
  TREE_BUDGET,
  type TreeNode,
} from "../flags/segment_tree.ts";

/** What each operator says, before its value. */
const OP_WORDS: Readonly<Record<Predicate["op"], string>> = {
  eq: "is",
  neq: "is present and not",
  in: "is one of",
  not_in: "is none of",
  lt: "is below",
  lte: "is at most",
  gt: "is above",
  gte: "is at least",
  starts_with: "starts with",
  ends_with: "ends with",
  contains: "contains",
  matches: "matches the pattern",
  exists: "is present",
  semver_eq: "is version",
  semver_lt: "is a version below",
  semver_gt: "is a version above",
  before: "is before",
  after: "is after",
};

/** Why a nested segment is not opened, in words. */
const STOPS: Readonly<Record<NonNullable<SegmentNode["stop"]>, string>> = {
  missing: "no such segment",
  cycle: "refers back to a segment above",
  repeat: "as above",
  depth: "nested too deep to show",
  budget: "too long to show here",
};

/**
 * One predicate as a phrase: the attribute, the operator in words, the
 * value as JSON (`exists` says present or absent).
 *
 * @param p the predicate
 * @returns the phrase
 *
 * @example
 * ```ts
 * import { predicateWords } from "./words.ts";
 * const s = predicateWords({ attribute: "account.country", op: "in", value: ["DE", "FR"] });
 * if (s !== 'account.country is one of ["DE","FR"]') throw new Error(s);
 * if (predicateWords({ attribute: "a", op: "exists", value: false }) !== "a is absent") throw new Error();
 * ```
 */
export function predicateWords(p: Pick<Predicate, "attribute" | "op" | "value">): string {
  if (p.op === "exists") return `${p.attribute} ${p.value === false ? "is absent" : "is present"}`;
  return `${p.attribute} ${OP_WORDS[p.op] ?? p.op} ${JSON.stringify(p.value)}`;
}

/**
 * A segment in words, nested segments opened in parentheses:
 * `segment eu (all of: country is one of ["DE","FR"]; in segment paying
 * (all of: plan is "pro"))`.
 *
 * @param manifest the manifest holding the segment
 * @param key the segment key
 * @param budget nodes left to show, shared by every segment of one answer
 * @returns the phrase
 *
 * @example
 * ```ts
 * import { segmentWords } from "./words.ts";
 * const s = segmentWords({
 *   namespace: { description: "", environments: {} },
 *   flags: {},
 *   segments: {
 *     staff: { key: "staff", description: "", match: "all",
 *       predicates: [{ attribute: "user.email", op: "ends_with", value: "@example.com" }] },
 *   },
 * }, "staff");
 * if (s !== 'segment staff (all of: user.email ends with "@example.com")') throw new Error(s);
 * ```
 */
export function segmentWords(
  manifest: Manifest,
  key: string,
  budget: { left: number } = { left: TREE_BUDGET },
): string {
  return `segment ${nodeWords(segmentTree(manifest, key, { budget }))}`;
}

function nodeWords(node: SegmentNode): string {
  if (node.stop !== undefined && node.children.length === 0) {
    return `${node.key} (${STOPS[node.stop]})`;
  }
  const parts = node.children.map(childWords);
  if (node.stop === "budget") parts.push("…");
  return `${node.key} (${node.match === "any" ? "any of" : "all of"}: ${parts.join("; ")})`;
}

function childWords(node: TreeNode): string {
  if (node.kind === "predicate") return predicateWords(node);
  return `${node.want ? "in" : "not in"} segment ${nodeWords(node)}`;
}

/**
 * One rule as a sentence: who it matches (every context, or the segment
 * in words) and what it serves.
 *
 * @param manifest the manifest (for the segments)
 * @param rule the rule
 * @param index its index (from 0; said from 1)
 * @param budget nodes left to show, shared by one answer
 * @returns the sentence
 *
 * @example
 * ```ts
 * import { ruleWords } from "./words.ts";
 * const manifest = {
 *   namespace: { description: "", environments: {} }, flags: {},
 *   segments: { beta: { key: "beta", description: "", match: "any" as const,
 *     predicates: [{ attribute: "plan", op: "eq" as const, value: "beta" }] } },
 * };
 * const s = ruleWords(manifest, { segment: "beta", variation: "on", bucket_by: "targeting_key" }, 0);
 * if (s !== 'rule 1: if the context is in segment beta (any of: plan is "beta"), serves on') throw new Error(s);
 * ```
 */
export function ruleWords(
  manifest: Manifest,
  rule: Rule,
  index: number,
  budget: { left: number } = { left: TREE_BUDGET },
): string {
  const parts = ruleParts(rule, index);
  const who = parts.segment === undefined
    ? "every context"
    : `if the context is in ${segmentWords(manifest, parts.segment, budget)}`;
  return `${parts.label}: ${who}, ${parts.action}`;
}

/** A flag as one environment serves it, in words. */
export interface EnvironmentWords {
  /** The environment key. */
  environment: string;
  /** False: every context gets the default (reason `DISABLED`). */
  enabled: boolean;
  /** The variation served when no rule matches. */
  default: string;
  /** Whether the environment has its own rules instead of the flag's. */
  rules_overridden: boolean;
  /** The rules in order, one sentence each. */
  rules: string[];
  /** The whole as one paragraph. */
  summary: string;
}

/**
 * A flag in every environment of its manifest (or in the one asked for),
 * in words.
 *
 * @param manifest the manifest
 * @param flag the flag
 * @param environments the environments to describe (default: every declared one)
 * @returns one entry per environment, in the order given
 *
 * @example
 * ```ts
 * import { flagWords } from "./words.ts";
 * const flag = {
 *   key: "f", description: "", type: "boolean" as const, default: "off",
 *   variations: { on: true, off: false },
 *   rules: [{ variation: "on", bucket_by: "targeting_key" }],
 *   environments: { staging: { enabled: false } },
 * };
 * const manifest = {
 *   namespace: { description: "", environments: { production: { public_evaluate: false },
 *     staging: { public_evaluate: false } } },
 *   flags: { f: flag }, segments: {},
 * };
 * const [prod, staging] = flagWords(manifest, flag);
 * if (prod?.summary !== "In production: rule 1: every context, serves on. Otherwise the default off.") {
 *   throw new Error(prod?.summary);
 * }
 * if (staging?.summary !== "In staging: off (disabled): every context gets the default off.") {
 *   throw new Error(staging?.summary);
 * }
 * ```
 */
export function flagWords(
  manifest: Manifest,
  flag: Flag,
  environments: readonly string[] = Object.keys(manifest.namespace.environments),
): EnvironmentWords[] {
  const budget = { left: TREE_BUDGET };
  return environments.map((environment) => {
    const eff = effectiveFlag(flag, environment);
    const rules = eff.rules.map((r, i) => ruleWords(manifest, r, i, budget));
    const own = eff.rulesOverridden ? " (its own rules)" : "";
    const summary = !eff.enabled
      ? `In ${environment}: off (disabled): every context gets the default ${eff.default}.`
      : rules.length === 0
      ? `In ${environment}: no rules${
        eff.rulesOverridden ? " (it removes the flag's rules)" : ""
      }: every context gets the default ${eff.default}.`
      : `In ${environment}${own}: ${rules.join("; ")}. Otherwise the default ${eff.default}.`;
    return {
      environment,
      enabled: eff.enabled,
      default: eff.default,
      rules_overridden: eff.rulesOverridden,
      rules,
      summary,
    };
  });
}
