/**
 * A flag as one environment serves it: whether it is on, the variation
 * served when no rule matches, and the rules that apply (the environment's
 * own when it overrides them, else the flag's). The evaluator compiles the
 * same resolution (lib/flags/evaluate.ts); pages and quick changes read it
 * here.
 *
 * @module
 */
import type { Flag, Rule } from "./model.ts";

/** A flag in one environment. */
export interface EffectiveFlag {
  /** False: every context gets the default with reason `DISABLED`. */
  enabled: boolean;
  /** The variation served when no rule matches. */
  default: string;
  /** The rules in order. */
  rules: readonly Rule[];
  /** Whether the environment overrides the flag's rules. */
  rulesOverridden: boolean;
  /** Whether the environment overrides the flag's default. */
  defaultOverridden: boolean;
  /** Whether any rule splits by weight. */
  hasRollout: boolean;
}

/**
 * Resolves a flag's environment overrides.
 *
 * @param flag the flag
 * @param environment the environment key (an undeclared one has no overrides)
 * @returns the flag as that environment serves it
 *
 * @example
 * ```ts
 * import { effectiveFlag } from "./effective.ts";
 * const flag = {
 *   key: "f", description: "", type: "boolean" as const, default: "off",
 *   variations: { on: true, off: false },
 *   rules: [{ variation: "on", bucket_by: "targeting_key" }],
 *   environments: { prod: { enabled: false, default: "on" } },
 * };
 * const prod = effectiveFlag(flag, "prod");
 * if (prod.enabled || prod.default !== "on" || prod.rules.length !== 1) throw new Error();
 * if (!effectiveFlag(flag, "dev").enabled) throw new Error();
 * ```
 */
export function effectiveFlag(flag: Flag, environment: string): EffectiveFlag {
  const o = Object.hasOwn(flag.environments, environment)
    ? flag.environments[environment]
    : undefined;
  const rules = o?.rules ?? flag.rules;
  return {
    enabled: o?.enabled ?? true,
    default: o?.default ?? flag.default,
    rules,
    rulesOverridden: o?.rules !== undefined,
    defaultOverridden: o?.default !== undefined,
    hasRollout: rules.some((r) => r.rollout !== undefined),
  };
}
