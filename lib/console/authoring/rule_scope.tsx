/**
 * What the rule editors share: the scope a request names (the flag in the
 * path, the environment in `?env=`), in words and checked against a
 * version (404 for an unknown flag or environment), its rules as written,
 * a rule in words with its rollout as a bar, and the library's refusals
 * (`rules.<i>.rollout.<j>.weight`) renamed after the rule form's controls.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError, NotFoundError } from "../../errors.ts";
import {
  environmentsAsWritten,
  type FlagAsWritten,
  flagAsWritten,
  flagFile,
  type RuleAsWritten,
  type RuleScope,
} from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { ui } from "../urls.ts";
import { WeightBar } from "../widgets.tsx";
import { textsAt } from "./fields.ts";

/** A scope opened on a version: the flag as written, the environments, the scope's rules. */
export interface OpenedScope {
  scope: RuleScope;
  flag: FlagAsWritten;
  /** The declared environments, in file order. */
  environments: string[];
  /** True when the scope is an environment that has rules of its own. */
  own: boolean;
  /** The scope's rules as written: the flag's, or the environment's own (none when it has none). */
  rules: RuleAsWritten[];
}

/**
 * The scope a request names: the flag of the path, the environment of
 * `?env=` (none: the flag's own rules).
 *
 * @param c the route's context
 * @returns the scope
 *
 * @example
 * ```ts ignore
 * const scope = scopeOf(c); // { flag: "new-checkout", environment: "staging" }
 * ```
 */
export function scopeOf(c: Context<ConsoleEnv>): RuleScope {
  const env = c.req.query("env") ?? "";
  return { flag: c.req.param("flag") ?? "", ...(env === "" ? {} : { environment: env }) };
}

/**
 * A scope in words: `new-checkout`, or `new-checkout in staging`.
 *
 * @param scope the scope
 * @returns the words
 *
 * @example
 * ```ts
 * import { scopeWords } from "./rule_scope.tsx";
 * if (scopeWords({ flag: "a", environment: "staging" }) !== "a in staging") throw new Error();
 * if (scopeWords({ flag: "a" }) !== "a") throw new Error();
 * ```
 */
export function scopeWords(scope: RuleScope): string {
  return scope.environment === undefined ? scope.flag : `${scope.flag} in ${scope.environment}`;
}

/**
 * Opens a scope on a version: 404 when the version has no such flag or
 * declares no such environment.
 *
 * @param view the version
 * @param scope the scope
 * @returns the flag as written and the scope's rules
 * @throws {NotFoundError} for an unknown flag or environment
 *
 * @example
 * ```ts
 * import { openScope } from "./rule_scope.tsx";
 * const enc = (s: string) => new TextEncoder().encode(s);
 * const files = new Map([
 *   ["namespace.toml", enc("schema_version = 1\n[namespace.environments.staging]\n")],
 *   ["flags/a.toml", enc('schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n[[rule]]\nvariation = "on"\n')],
 * ]);
 * const opened = openScope({ files } as never, { flag: "a", environment: "staging" });
 * if (opened.own || opened.rules.length !== 0 || opened.flag.rules.length !== 1) throw new Error();
 * ```
 */
export function openScope(view: Pick<NamespaceView, "files">, scope: RuleScope): OpenedScope {
  const texts = textsAt(view);
  if (!texts.has(flagFile(scope.flag))) {
    throw new NotFoundError("flag_not_found", `There is no flag ${scope.flag}`);
  }
  const flag = flagAsWritten(texts, scope.flag);
  const environments = environmentsAsWritten(texts).environments.map((e) => e.key);
  const env = scope.environment;
  if (env === undefined) return { scope, flag, environments, own: false, rules: flag.rules };
  if (!environments.includes(env)) {
    throw new NotFoundError("environment_not_found", `There is no environment ${env}`);
  }
  const own = flag.overrides.find((o) => o.environment === env)?.rules;
  return { scope, flag, environments, own: own !== undefined, rules: own ?? [] };
}

/**
 * The address of a scope's rules page, or of one of its actions.
 *
 * @param view the version (its tenant and namespace)
 * @param scope the scope
 * @param action `add`, `replace`, `remove`, `move`; none: the rules page
 * @param q more query parameters (`index`)
 * @returns the path
 *
 * @example
 * ```ts
 * import { rulesUrl } from "./rule_scope.tsx";
 * const view = { tenant: "acme", namespace: "web" } as never;
 * const url = rulesUrl(view, { flag: "a", environment: "staging" }, "replace", { index: "1" });
 * if (url !== "/ui/t/acme/ns/web/edit/flags/a/rules/replace?env=staging&index=1") throw new Error(url);
 * ```
 */
export function rulesUrl(
  view: Pick<NamespaceView, "tenant" | "namespace">,
  scope: RuleScope,
  action?: string,
  q: Record<string, string> = {},
): string {
  const { tenant, namespace } = view;
  const base = action === undefined
    ? ui.edit.rules(tenant, namespace, scope.flag, scope.environment)
    : ui.edit.ruleAction(tenant, namespace, scope.flag, action, scope.environment);
  const more = new URLSearchParams(q).toString();
  return more === "" ? base : `${base}${base.includes("?") ? "&" : "?"}${more}`;
}

/**
 * A rule in words: the segment it targets ("everyone" when none), what it
 * serves (a variation, or a rollout drawn as a {@linkcode WeightBar}) and
 * what a rollout buckets by.
 *
 * @param props the rule as written, the version (links to segments)
 * @returns the description
 *
 * @example
 * ```tsx
 * import { RuleSummary } from "./rule_scope.tsx";
 * import type { RuleAsWritten } from "../../flags/authoring/mod.ts";
 * const rule: RuleAsWritten = { index: 0, scope: "flag", rollout: [{ variation: "on", weight: 30 }, { variation: "off", weight: 70 }] };
 * const html = String(await (<RuleSummary rule={rule} view={{ tenant: "t", namespace: "n" } as never} />));
 * if (!html.includes("everyone") || !html.includes("on 30%")) throw new Error(html);
 * ```
 */
export function RuleSummary(
  props: { rule: RuleAsWritten; view: Pick<NamespaceView, "tenant" | "namespace"> },
) {
  const { rule, view } = props;
  return (
    <>
      <p>
        For {rule.segment === undefined ? <strong>everyone</strong> : (
          <>
            segment{" "}
            <a href={ui.segment(view.tenant, view.namespace, rule.segment)}>{rule.segment}</a>
          </>
        )}
        {rule.rollout === undefined
          ? (
            <>
              , serve <code>{rule.variation ?? "?"}</code>.
            </>
          )
          : (
            <>
              , split by weight, bucketed by <code>{rule.bucket_by ?? "targeting_key"}</code>:
            </>
          )}
      </p>
      {rule.rollout === undefined ? null : <WeightBar entries={rule.rollout} />}
    </>
  );
}

/**
 * The rule form's control a library refusal names: `rules.<i>.segment` →
 * `segment`, `rules.<i>.rollout` and `rules.<i>.weights` → `weights` (the
 * weights' fieldset), `rules.<i>.rollout.<j>.…` → `rollout.<row>.weight`
 * (the row of the j-th entry); other fields are kept.
 *
 * @param field the library's field
 * @param rows the form row of each rollout entry
 * @returns the control's field
 *
 * @example
 * ```ts
 * import { controlField } from "./rule_scope.tsx";
 * if (controlField("rules.2.rollout.1.weight", [0, 3]) !== "rollout.3.weight") throw new Error();
 * if (controlField("rules.0.weights", []) !== "weights") throw new Error();
 * if (controlField("at", []) !== "at") throw new Error();
 * ```
 */
export function controlField(field: string, rows: readonly number[]): string {
  const parts = field.split(".");
  if (parts[0] !== "rules" || parts.length < 3) return field;
  const rest = parts.slice(2);
  if (rest[0] === "rollout" && rest.length === 1) return "weights";
  if (rest[0] === "rollout") {
    const row = rows[Number(rest[1])];
    return row === undefined ? "weights" : `rollout.${row}.weight`;
  }
  return rest.join(".");
}

/**
 * Runs a library edit, its refusals renamed after the form's controls
 * (see {@linkcode controlField}); `rename` renames more.
 *
 * @param rows the form row of each rollout entry
 * @param edit the edit
 * @param rename more renames (library field → control)
 * @returns what the edit returns
 *
 * @example
 * ```ts
 * import { namedControls } from "./rule_scope.tsx";
 * import { InvalidRequestError } from "../../errors.ts";
 * try {
 *   namedControls([], () => { throw new InvalidRequestError("no", { details: { field: "variation" } }); }, { variation: "default" });
 * } catch (e) {
 *   if ((e as InvalidRequestError).details?.field !== "default") throw e;
 * }
 * ```
 */
export function namedControls<T>(
  rows: readonly number[],
  edit: () => T,
  rename: Record<string, string> = {},
): T {
  try {
    return edit();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    const details = (err.details ?? {}) as Record<string, unknown>;
    const field = details.field;
    if (typeof field !== "string") throw err;
    const control = Object.hasOwn(rename, field) ? rename[field]! : controlField(field, rows);
    if (control === field) throw err;
    throw new InvalidRequestError(err.message, {
      details: { ...details, field: control },
      cause: err,
    });
  }
}
