/**
 * The form of a quick change and the pages that show it: the choice of
 * changes for a flag (without `?kind=`), the form itself with the
 * person's inputs (or the flag's current values) and any refusal beside
 * it, the note that a change changes nothing, and the inputs kept when a
 * change cannot be made at all. Every page of the change path is drawn
 * with {@linkcode changePage} (its breadcrumbs).
 *
 * @module
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { effectiveFlag } from "../flags/effective.ts";
import type { Flag } from "../flags/model.ts";
import { rulesAsWritten } from "../flags/quick_change.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { fileText, flagPath } from "../services/versions.ts";
import { type ChangeInput, type FormError, type Kind, KINDS } from "./change_input.ts";
import type { ConsoleEnv } from "./env.ts";
import { Field, GetForm, InlineField, Options } from "./form_fields.tsx";
import { consolePage, namespaceCrumbs, type PageOptions } from "./layout.tsx";
import type { NamespaceView } from "../services/versions.ts";
import { ui } from "./urls.ts";
import { CsrfField, Fact, Facts, Notice, ProblemNotice, WeightBar } from "./widgets.tsx";

/** A page's HTTP status. */
export type Status = NonNullable<PageOptions["status"]>;

/**
 * The page of a change's form: with `error`, the refusal beside the
 * inputs; with `unchanged`, the note that the change changes nothing.
 *
 * @param c the route's context
 * @param view the version the form is built from
 * @param flag the flag
 * @param input the person's inputs
 * @param error the refusal, if any
 * @param status the page's status (400 with a refusal)
 * @param unchanged whether to say that nothing changed
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return formPage(c, view, flag, input, { message: "Write a message", field: "message" }, 400);
 * ```
 */
export function formPage(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  input: ChangeInput,
  error?: FormError,
  status: Status = 200,
  unchanged = false,
) {
  return changePage(
    c,
    view,
    flag,
    input,
    { title: `Change ${flag.key}`, status },
    <>
      {unchanged ? <NothingChanged view={view} flag={flag} input={input} /> : null}
      <ChangeForm c={c} view={view} flag={flag} input={input} error={error} />
    </>,
  );
}

/**
 * A page of the change path, with its breadcrumbs (namespace, flag, kind
 * of change).
 *
 * @param c the route's context
 * @param view the version shown
 * @param flag the flag
 * @param input the person's inputs (their kind and environment)
 * @param options the page's title and status
 * @param body what the page holds
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return changePage(c, view, flag, input, { title: `Change ${flag.key}`, status: 200 }, body);
 * ```
 */
export function changePage(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  input: ChangeInput,
  options: { title: string; status: Status },
  body: Child,
) {
  const { tenant, namespace } = view;
  return consolePage(
    c,
    {
      ...options,
      tenant,
      section: "namespaces",
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: flag.key, href: ui.flag(tenant, namespace, flag.key, input.env) },
        { label: KINDS[input.kind] },
      ),
    },
    body,
  );
}

/**
 * Without `?kind=`: the changes there are for this flag (in one
 * environment, or in each).
 *
 * @param c the route's context
 * @param view the head
 * @param flag the flag
 * @param env the environment, if one was named
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return choicePage(c, view, flag, "production");
 * ```
 */
export function choicePage(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  env: string | undefined,
) {
  const { tenant, namespace } = view;
  const envs = env === undefined ? Object.keys(view.manifest.namespace.environments) : [env];
  const link = (kind: Kind, e: string | undefined) =>
    ui.flagChange(tenant, namespace, flag.key, e, kind);
  return consolePage(
    c,
    {
      title: `Change ${flag.key}`,
      tenant,
      section: "namespaces",
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: flag.key, href: ui.flag(tenant, namespace, flag.key, env) },
        { label: "Change" },
      ),
    },
    <ul>
      {envs.map((e) => (
        <li>
          <a href={link("toggle", e)}>
            Turn {effectiveFlag(flag, e).enabled ? "off" : "on"} in {e}
          </a>
        </li>
      ))}
      <li>
        <a href={link("default", env)}>
          Default variation {env === undefined ? "of the flag" : `in ${env}`}
        </a>
      </li>
      <li>
        <a href={link("weights", env)}>
          Rollout weights {env === undefined ? "of the flag's rules" : `in ${env}`}
        </a>
      </li>
    </ul>,
  );
}

/**
 * The form of a change, with the person's inputs (or the current values).
 *
 * @param props the route's context, the version, the flag, the inputs, the refusal, the heading's level
 * @returns the form's section
 *
 * @example
 * ```tsx ignore
 * <ChangeForm c={c} view={view} flag={flag} input={input} level={3} />
 * ```
 */
export function ChangeForm(
  props: {
    c: Context<ConsoleEnv>;
    view: NamespaceView;
    flag: Flag;
    input: ChangeInput;
    error?: FormError | undefined;
    /** Its heading's level: 2 on its own page, 3 inside the conflict page. */
    level?: 2 | 3;
  },
) {
  const { c, view, flag, input, error } = props;
  const Heading = props.level === 3 ? "h3" : "h2";
  const { tenant, namespace } = view;
  const env = input.env;
  const action = ui.flagChange(tenant, namespace, flag.key, env, input.kind);
  const invalid = (field: string) => error?.field === field ? "true" : undefined;
  let fields;
  let submit = "Preview";
  switch (input.kind) {
    case "toggle": {
      const on = effectiveFlag(flag, env!).enabled;
      const enabled = input.enabled ?? String(!on);
      submit = `Turn ${enabled === "true" ? "on" : "off"} in ${env}`;
      fields = (
        <>
          <p>
            <code>{flag.key}</code> is{" "}
            {on ? <span class="badge on">on</span> : <span class="badge off">off</span>} in {env}
            {" "}
            (version {view.meta.version}). {on
              ? `Turned off, it serves its default variation, ${
                effectiveFlag(flag, env!).default
              }, to everyone in ${env}, with reason DISABLED.`
              : `Turned on, its rules apply again in ${env}.`}
          </p>
          <input type="hidden" name="enabled" value={enabled} />
        </>
      );
      break;
    }
    case "default": {
      const e = env === undefined ? undefined : effectiveFlag(flag, env);
      const current = e?.default ?? flag.default;
      const choices = Object.entries(flag.variations).map(([name, value]) =>
        [name, `${name} (${JSON.stringify(value)})`] as const
      );
      fields = (
        <>
          <p>
            {env === undefined
              ? (
                <>
                  The flag serves <code>{flag.default}</code>{" "}
                  when no rule matches, in every environment without a default of its own.
                </>
              )
              : e!.defaultOverridden
              ? (
                <>
                  In {env} the flag serves <code>{current}</code> when no rule matches.
                </>
              )
              : (
                <>
                  {env} has no default of its own: it serves the flag's,{" "}
                  <code>{current}</code>. Choosing one here gives {env} its own.
                </>
              )}
          </p>
          <Field
            id="change-variation"
            label={`Default variation ${env === undefined ? "of the flag" : `in ${env}`}`}
          >
            <select id="change-variation" name="variation" aria-invalid={invalid("variation")}>
              <Options choices={choices} selected={input.variation ?? current} />
            </select>
          </Field>
        </>
      );
      break;
    }
    case "weights": {
      const rules = rulesAsWritten(fileText(view, flagPath(flag.key)), env);
      const rollouts = rules.filter((r) => r.rollout !== undefined);
      if (rollouts.length === 0) {
        return (
          <Notice>
            <p>
              {env === undefined ? "The flag" : `In ${env}, the flag`}{" "}
              has no rule with a rollout: there are no weights to change.{" "}
              <a href={ui.flag(tenant, namespace, flag.key, env)}>Back to {flag.key}</a>
            </p>
          </Notice>
        );
      }
      const asked = Number(input.rule);
      const rule = rollouts.find((r) => r.index === asked) ?? rollouts[0]!;
      const typed = new Map(input.weights);
      const shared = rule.scope === "flag"
        ? Object.keys(view.manifest.namespace.environments).filter((e) =>
          !effectiveFlag(flag, e).rulesOverridden
        )
        : [];
      const total = rule.rollout!.reduce((s, e) => s + e.weight, 0);
      fields = (
        <>
          {rollouts.length > 1
            ? (
              <div class="card small">
                <p>This flag has {rollouts.length} rules with a rollout. The form shows one:</p>
                <RuleChoice
                  view={view}
                  flag={flag}
                  env={env}
                  rollouts={rollouts}
                  chosen={rule.index}
                />
              </div>
            )
            : null}
          <p>
            Rule {rule.index + 1} {rule.segment === undefined ? "(everyone)" : (
              <>
                (segment <code>{rule.segment}</code>)
              </>
            )} {rule.scope === "environment"
              ? `is one of the rules of ${env} only.`
              : shared.length > 0
              ? `is one of the flag's rules: it applies in ${shared.join(", ")}.`
              : "is one of the flag's rules."} Now:
          </p>
          <WeightBar entries={rule.rollout!} />
          <input type="hidden" name="rule" value={String(rule.index)} />
          <fieldset class="card">
            <legend>Weights</legend>
            <p class="small muted">
              They sum to 100, or to 100000 for finer steps (now {total}).
            </p>
            {rule.rollout!.map((entry, i) => {
              const field = `weight.${entry.variation}`;
              return (
                <Field id={`change-weight-${i}`} label={`Weight of ${entry.variation}`}>
                  <input
                    id={`change-weight-${i}`}
                    type="number"
                    name={field}
                    min="0"
                    step="1"
                    required
                    value={typed.get(entry.variation) ?? String(entry.weight)}
                    aria-invalid={error?.field === field || error?.field === "weights"
                      ? "true"
                      : undefined}
                  />
                </Field>
              );
            })}
          </fieldset>
        </>
      );
      break;
    }
  }
  return (
    <section aria-labelledby="change-form-title">
      <Heading id="change-form-title">
        {KINDS[input.kind]} {env === undefined ? "of the flag" : `in ${env}`}
      </Heading>
      <ProblemNotice id="change-error" message={error?.message} />
      <form method="post" action={action}>
        <CsrfField token={c.get("csrf")} />
        <input type="hidden" name="base" value={String(input.base)} />
        <input type="hidden" name="kind" value={input.kind} />
        {env === undefined ? null : <input type="hidden" name="env" value={env} />}
        {fields}
        <Field id="change-message" label="Message">
          <input
            id="change-message"
            type="text"
            name="message"
            value={input.message}
            required
            maxlength={MAX_MESSAGE_LENGTH}
            placeholder="why: it lands in the version history"
            aria-invalid={invalid("message")}
            aria-describedby={error?.field === "message" ? "change-error" : undefined}
          />
        </Field>
        <p class="small muted">
          Nothing is committed yet: the next page shows the change to the flag file first.
        </p>
        <div class="actions">
          <button type="submit" name="step" value="preview">{submit}</button>
          <a href={ui.flag(tenant, namespace, flag.key, env)}>Cancel</a>
        </div>
      </form>
    </section>
  );
}

/** A plain GET form that picks the rollout rule the weights form shows. */
function RuleChoice(
  props: {
    view: NamespaceView;
    flag: Flag;
    env: string | undefined;
    rollouts: { index: number; segment?: string }[];
    chosen: number;
  },
) {
  const { view, flag, env } = props;
  const choices = props.rollouts.map((r) =>
    [
      String(r.index),
      r.segment === undefined
        ? `Rule ${r.index + 1} (everyone)`
        : `Rule ${r.index + 1} (segment ${r.segment})`,
    ] as const
  );
  return (
    <GetForm
      action={ui.flagChange(view.tenant, view.namespace, flag.key)}
      button="Show its weights"
    >
      {env === undefined ? null : <input type="hidden" name="env" value={env} />}
      <input type="hidden" name="kind" value="weights" />
      <InlineField id="change-rule" label="Rollout rule">
        <select id="change-rule" name="rule">
          <Options choices={choices} selected={String(props.chosen)} />
        </select>
      </InlineField>
    </GetForm>
  );
}

/**
 * The person's inputs, shown when the change cannot be made at all
 * (nothing is lost).
 *
 * @param props the inputs
 * @returns a list of them
 *
 * @example
 * ```tsx ignore
 * <KeptInputs input={input} />
 * ```
 */
export function KeptInputs(props: { input: ChangeInput }) {
  const { input } = props;
  const rows: [string, string][] = [["Message", input.message]];
  if (input.env !== undefined) rows.push(["Environment", input.env]);
  if (input.enabled !== undefined) {
    rows.push(["Change", input.enabled === "true" ? "turn on" : "turn off"]);
  }
  if (input.variation !== undefined) rows.push(["Default variation", input.variation]);
  if (input.rule !== undefined) rows.push(["Rule", String(Number(input.rule) + 1)]);
  for (const [v, w] of input.weights) rows.push([`Weight of ${v}`, w]);
  return (
    <Facts class="card">
      {rows.map(([k, v]) => <Fact label={k} class="wrap">{v}</Fact>)}
    </Facts>
  );
}

/**
 * The note that a change changes nothing: the version already has it.
 *
 * @param props the version, the flag and the inputs
 * @returns the notice
 *
 * @example
 * ```tsx ignore
 * <NothingChanged view={view} flag={flag} input={input} />
 * ```
 */
export function NothingChanged(props: { view: NamespaceView; flag: Flag; input: ChangeInput }) {
  return (
    <Notice>
      <p>
        Nothing changed: version {props.view.meta.version} of <code>{props.flag.key}</code>{" "}
        already has this. No version was made.
      </p>
    </Notice>
  );
}
