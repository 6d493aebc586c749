/**
 * The editors that move and remove a rule of a scope. The rules page
 * posts their buttons straight to the preview (`step=preview`, the rule
 * and a message filled in: one press shows what it does, a second commits
 * it); their own forms choose the rule (and, for a move, its new place)
 * when reached otherwise, or drawn again after a refusal. Positions are
 * 0-based in the form and counted from 1 in words.
 *
 * @module
 */
import type { Context } from "hono";
import { moveRule, removeRule, type RuleScope } from "../../flags/authoring/mod.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field } from "../form_fields.tsx";
import { Notice } from "../widgets.tsx";
import { fieldAttributes, shown, textsAt, wholeNumber } from "./fields.ts";
import { openScope, rulesUrl, scopeOf, scopeWords } from "./rule_scope.tsx";

const MAX_RULES = 9999;

/** A move: rule `from` becomes rule `to` (0-based, in the list before the move). */
export interface MoveInput {
  scope: RuleScope;
  from: number;
  to: number;
}

/** A removal of rule `index` (0-based). */
export interface RemoveInput {
  scope: RuleScope;
  index: number;
}

/**
 * The message a move proposes: `Move rule 2 of new-checkout up`.
 *
 * @param scope the scope
 * @param from the rule (0-based)
 * @param to its new place (0-based)
 * @returns the message
 *
 * @example
 * ```ts
 * import { moveMessage } from "./rule_order.tsx";
 * if (moveMessage({ flag: "a", environment: "staging" }, 1, 0) !== "Move rule 2 of a in staging up") throw new Error();
 * if (moveMessage({ flag: "a" }, 0, 3) !== "Move rule 1 of a to place 4") throw new Error();
 * ```
 */
export function moveMessage(scope: RuleScope, from: number, to: number): string {
  const where = to === from - 1 ? "up" : to === from + 1 ? "down" : `to place ${to + 1}`;
  return `Move rule ${from + 1} of ${scopeWords(scope)} ${where}`;
}

/**
 * The editor that moves a rule of the scope of a request.
 *
 * @param c the route's context (the flag in the path, `?env=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/rules/move", deps, views, moveRuleEditor);
 * ```
 */
export function moveRuleEditor(c: Context<ConsoleEnv>): Editor<MoveInput> {
  const scope = scopeOf(c);
  return {
    title: (_view, input) =>
      input === null
        ? `Move a rule of ${scopeWords(scope)}`
        : moveMessage(scope, input.from, input.to),
    action: (view) => rulesUrl(view, scope, "move"),
    read: (form, view) => {
      openScope(view, scope);
      return {
        scope,
        from: wholeNumber(form, "from", 0, MAX_RULES, "The rule to move"),
        to: wholeNumber(form, "to", 0, MAX_RULES, "Its new place"),
      };
    },
    make: (view, input) => moveRule(textsAt(view), { ...scope, from: input.from, to: input.to }),
    form: (state) => <MoveForm state={state} scope={scope} />,
    done: (view) => rulesUrl(view, scope),
  };
}

/**
 * The editor that removes a rule of the scope of a request.
 *
 * @param c the route's context (the flag in the path, `?env=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/rules/remove", deps, views, removeRuleEditor);
 * ```
 */
export function removeRuleEditor(c: Context<ConsoleEnv>): Editor<RemoveInput> {
  const scope = scopeOf(c);
  return {
    title: (_view, input) =>
      input === null
        ? `Remove a rule of ${scopeWords(scope)}`
        : `Remove rule ${input.index + 1} of ${scopeWords(scope)}`,
    action: (view) => rulesUrl(view, scope, "remove"),
    read: (form, view) => {
      openScope(view, scope);
      return { scope, index: wholeNumber(form, "index", 0, MAX_RULES, "The rule to remove") };
    },
    make: (view, input) => removeRule(textsAt(view), { ...scope, index: input.index }),
    form: (state) => <RemoveForm state={state} scope={scope} />,
    done: (view) => rulesUrl(view, scope),
  };
}

/** The rules of the scope as choices: `Rule 2: beta-testers → on`. */
function ruleChoices(state: FormState<unknown>, scope: RuleScope): [string, string][] {
  return openScope(state.view, scope).rules.map((r) => [
    String(r.index),
    `Rule ${r.index + 1}: ${r.segment ?? "everyone"} → ${
      r.rollout === undefined
        ? r.variation ?? "?"
        : r.rollout.map((e) => `${e.variation} ${e.weight}`).join(" / ")
    }`,
  ]);
}

function MoveForm(props: { state: FormState<MoveInput>; scope: RuleScope }) {
  const { state, scope } = props;
  const { view } = state;
  const choices = ruleChoices(state, scope);
  if (choices.length < 2) return <TooFew state={state} scope={scope} what="move" />;
  const from = shown(state, "from", "");
  const to = shown(state, "to", "");
  return (
    <EditorForm
      action={rulesUrl(view, scope, "move")}
      state={state}
      suggested={`Move a rule of ${scopeWords(scope)}`}
    >
      <p>
        Rules are tried in order; the first one that applies to a context serves it.{" "}
        <a href={rulesUrl(view, scope)}>All the rules of {scopeWords(scope)}</a>
      </p>
      <Field id="move-from" label="The rule to move">
        <select id="move-from" name="from" {...fieldAttributes(state, "from")}>
          {choices.map(([value, label]) => (
            <option value={value} selected={value === from}>{label}</option>
          ))}
        </select>
      </Field>
      <Field id="move-to" label="Its new place">
        <select id="move-to" name="to" {...fieldAttributes(state, "to")}>
          {choices.map(([value]) => (
            <option value={value} selected={value === to}>
              {value === "0" ? "1 (first)" : String(Number(value) + 1)}
            </option>
          ))}
        </select>
      </Field>
    </EditorForm>
  );
}

function RemoveForm(props: { state: FormState<RemoveInput>; scope: RuleScope }) {
  const { state, scope } = props;
  const { view } = state;
  const choices = ruleChoices(state, scope);
  if (choices.length === 0) return <TooFew state={state} scope={scope} what="remove" />;
  const index = shown(state, "index", "");
  return (
    <EditorForm
      action={rulesUrl(view, scope, "remove")}
      state={state}
      suggested={`Remove a rule of ${scopeWords(scope)}`}
    >
      <Field
        id="remove-index"
        label="The rule to remove"
        hint="The contexts it served go on to the next rules, then to the default."
      >
        <select
          id="remove-index"
          name="index"
          {...fieldAttributes(state, "index", "remove-index-hint")}
        >
          {choices.map(([value, label]) => (
            <option value={value} selected={value === index}>{label}</option>
          ))}
        </select>
      </Field>
    </EditorForm>
  );
}

function TooFew(props: { state: FormState<unknown>; scope: RuleScope; what: string }) {
  const { state, scope } = props;
  return (
    <Notice kind={state.refusal === undefined ? "info" : "error"}>
      <p {...(state.refusal === undefined ? {} : { id: "edit-refusal", role: "alert" })}>
        {state.refusal === undefined ? null : <>{state.refusal.message}.</>}
        {scope.environment !== undefined && !openScope(state.view, scope).own
          ? `In ${scope.environment}, ${scope.flag} follows the flag's rules: `
          : `${scopeWords(scope)} has too few rules to ${props.what} one: `}
        <a href={rulesUrl(state.view, scope)}>see its rules</a>.
      </p>
    </Notice>
  );
}
