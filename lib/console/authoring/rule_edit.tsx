/**
 * The editors that write one rule of a scope (the flag's rules, or an
 * environment's own): add a rule at a position (first, last, or before
 * rule n), and replace rule n (`?index=`, 0-based). Both draw the rule's
 * controls of rule_form.tsx and go back to the scope's rules once
 * committed.
 *
 * @module
 */
import type { Context } from "hono";
import { addRule, keysAsWritten, replaceRule, type RuleScope } from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field } from "../form_fields.tsx";
import { Notice, WeightBar } from "../widgets.tsx";
import { fieldAttributes, shown, text, textsAt, wholeNumber } from "./fields.ts";
import { type ReadRule, readRule, RuleFields } from "./rule_form.tsx";
import { namedControls, openScope, rulesUrl, scopeOf, scopeWords } from "./rule_scope.tsx";

/** The most rules a position or an index may name. */
const MAX_RULES = 9999;

/** A rule to add or to put in place of another. */
export interface RuleEditInput extends ReadRule {
  scope: RuleScope;
  /** Add: where (0 = first; none: last). */
  at?: number | undefined;
  /** Replace: which rule (0-based). */
  index?: number | undefined;
}

/**
 * The editor that adds a rule to the scope of a request.
 *
 * @param c the route's context (the flag in the path, `?env=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/rules/add", deps, views, addRuleEditor);
 * ```
 */
export function addRuleEditor(c: Context<ConsoleEnv>): Editor<RuleEditInput> {
  const scope = scopeOf(c);
  return {
    title: () => `Add a rule to ${scopeWords(scope)}`,
    action: (view) => rulesUrl(view, scope, "add"),
    read: (form, view) => {
      openScope(view, scope);
      const at = text(form, "at");
      return {
        scope,
        at: at === "" || at === "last"
          ? undefined
          : wholeNumber(form, "at", 0, MAX_RULES, "The position"),
        ...readRule(form),
      };
    },
    make: (view, input) =>
      namedControls(
        input.rows,
        () => addRule(textsAt(view), { ...scope, at: input.at, rule: input.rule }),
      ),
    form: (state) => <RuleEditForm state={state} scope={scope} />,
    done: (view) => rulesUrl(view, scope),
    summary: (_view, input) => <RolloutSummary rule={input.rule} />,
  };
}

/**
 * The editor that replaces a rule of the scope of a request (`index`: the
 * query on the first form, a hidden field after).
 *
 * @param c the route's context (the flag in the path, `?env=`, `?index=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/rules/replace", deps, views, replaceRuleEditor);
 * ```
 */
export function replaceRuleEditor(c: Context<ConsoleEnv>): Editor<RuleEditInput> {
  const scope = scopeOf(c);
  const asked = c.req.query("index") ?? "";
  const indexOf = (state: FormState<RuleEditInput>) => {
    const raw = state.posted.get("index") ?? asked;
    return /^\d{1,4}$/.test(raw) ? Number(raw) : -1;
  };
  return {
    title: (_view, input) =>
      input?.index === undefined
        ? `Edit a rule of ${scopeWords(scope)}`
        : `Edit rule ${input.index + 1} of ${scopeWords(scope)}`,
    action: (view) => rulesUrl(view, scope, "replace"),
    read: (form, view) => {
      openScope(view, scope);
      return {
        scope,
        index: wholeNumber(form, "index", 0, MAX_RULES, "The rule"),
        ...readRule(form),
      };
    },
    make: (view, input) =>
      namedControls(
        input.rows,
        () => replaceRule(textsAt(view), { ...scope, index: input.index!, rule: input.rule }),
      ),
    form: (state) => <RuleEditForm state={state} scope={scope} index={indexOf(state)} />,
    done: (view) => rulesUrl(view, scope),
    summary: (_view, input) => <RolloutSummary rule={input.rule} />,
  };
}

/** A rollout's weights as the bar the flag page draws (nothing for a single variation). */
function RolloutSummary(props: { rule: ReadRule["rule"] }) {
  const rollout = props.rule.rollout;
  if (rollout === undefined || rollout.length === 0) return null;
  const sum = rollout.reduce((n, e) => n + e.weight, 0);
  const scale = sum === 100 ? 1000 : 1; // the bar takes weights out of 100000
  return (
    <>
      <h3>The rollout</h3>
      <WeightBar entries={rollout.map((e) => ({ ...e, weight: e.weight * scale }))} />
    </>
  );
}

/** The form of either editor: `index` set replaces that rule, else adds one. */
function RuleEditForm(
  props: { state: FormState<RuleEditInput>; scope: RuleScope; index?: number },
) {
  const { state, scope, index } = props;
  const { view } = state;
  const opened = openScope(view, scope);
  const replacing = index !== undefined;
  const written = replacing ? opened.rules[index] : undefined;
  const words = scopeWords(scope);
  if (scope.environment !== undefined && !opened.own) {
    return <FollowsFlag view={view} scope={scope} />;
  }
  if (replacing && written === undefined) {
    return (
      <Notice kind="error">
        <p>
          {words} has no rule {index < 0 ? "with that number" : index + 1}:{" "}
          <a href={rulesUrl(view, scope)}>choose one of its rules</a>.
        </p>
      </Notice>
    );
  }
  return (
    <EditorForm
      action={rulesUrl(view, scope, replacing ? "replace" : "add")}
      state={state}
      suggested={replacing ? `Edit rule ${index + 1} of ${words}` : `Add a rule to ${words}`}
    >
      <p>
        Rules are tried in order; the first one that applies to a context serves it.{" "}
        <a href={rulesUrl(view, scope)}>All the rules of {words}</a>
      </p>
      {replacing
        ? <input type="hidden" name="index" value={String(index)} />
        : <Position state={state} count={opened.rules.length} />}
      <RuleFields
        state={state}
        segments={keysAsWritten(textsAt(view)).segments}
        variations={opened.flag.variations.map((v) => v.name)}
        written={written}
      />
    </EditorForm>
  );
}

/** Where a new rule goes: last, first, or before rule n. */
function Position(props: { state: FormState<RuleEditInput>; count: number }) {
  const { state, count } = props;
  const chosen = shown(state, "at", "last");
  const choices: [string, string][] = [["last", "Last: tried after the other rules"]];
  if (count > 0) choices.push(["0", "First: tried before the other rules"]);
  for (let n = 1; n < count; n++) choices.push([String(n), `Before rule ${n + 1}`]);
  return (
    <Field id="rule-at" label="Where it goes">
      <select id="rule-at" name="at" {...fieldAttributes(state, "at")}>
        {choices.map(([value, label]) => (
          <option value={value} selected={value === chosen}>{label}</option>
        ))}
      </select>
    </Field>
  );
}

/**
 * An environment without rules of its own: its rules are the flag's, so
 * there is nothing of its own to edit yet.
 */
function FollowsFlag(props: { view: NamespaceView; scope: RuleScope }) {
  const { view, scope } = props;
  return (
    <Notice>
      <p>
        In {scope.environment}, {scope.flag} follows the flag's rules. Give {scope.environment}{" "}
        rules of its own on <a href={rulesUrl(view, scope)}>its rules page</a>, or{" "}
        <a href={rulesUrl(view, { flag: scope.flag })}>edit the flag's rules</a>.
      </p>
    </Notice>
  );
}
