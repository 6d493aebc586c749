/**
 * The rules page of a scope (`/edit/flags/:flag/rules?env=`), for a person
 * who may change the namespace: the rules in the order they are tried,
 * each with the segment it targets, what it serves (a rollout as a bar),
 * and its buttons — Edit (the replace form), Move up, Move down and Remove,
 * each a plain form that posts straight to that editor's preview with a
 * message filled in (a second press commits) — then the form that adds a
 * rule. An environment that follows the flag's rules says so, shows them,
 * and offers to give it rules of its own.
 *
 * @module
 */
import type { Context } from "hono";
import type { RuleAsWritten, RuleScope } from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { consolePage, namespaceCrumbs } from "../layout.tsx";
import { ui } from "../urls.ts";
import { CsrfField, EnvironmentNav, Notice } from "../widgets.tsx";
import { addRuleEditor } from "./rule_edit.tsx";
import { moveMessage } from "./rule_order.tsx";
import {
  type OpenedScope,
  openScope,
  RuleSummary,
  rulesUrl,
  scopeOf,
  scopeWords,
} from "./rule_scope.tsx";

/**
 * Answers the rules page of the scope of a request, on the head the
 * service read for a writer.
 *
 * @param c the route's context (the flag in the path, `?env=`)
 * @param view the head (manifest.write checked)
 * @returns the page (404 for an unknown flag or environment)
 *
 * @example
 * ```ts ignore
 * app.get("/edit/flags/:flag/rules", async (c) => rulesPage(c, await flagChangeForm(deps, person, ref)));
 * ```
 */
export function rulesPage(c: Context<ConsoleEnv>, view: NamespaceView): Promise<Response> {
  const scope = scopeOf(c);
  const opened = openScope(view, scope);
  const { tenant, namespace } = view;
  return consolePage(c, {
    title: `Rules of ${scopeWords(scope)}`,
    tenant,
    section: "namespaces",
    crumbs: namespaceCrumbs(
      tenant,
      namespace,
      { label: scope.flag, href: ui.flag(tenant, namespace, scope.flag, scope.environment) },
      { label: "Rules" },
    ),
  }, <RulesBody c={c} view={view} opened={opened} />);
}

function RulesBody(props: { c: Context<ConsoleEnv>; view: NamespaceView; opened: OpenedScope }) {
  const { c, view, opened } = props;
  const { scope } = opened;
  const env = scope.environment;
  const csrf = c.get("csrf");
  const override = env === undefined
    ? undefined
    : opened.flag.overrides.find((o) => o.environment === env);
  return (
    <>
      <EnvironmentNav
        choices={[
          {
            label: "the flag's rules",
            href: rulesUrl(view, { flag: scope.flag }),
            current: env === undefined,
          },
          ...opened.environments.map((e) => ({
            label: e,
            href: rulesUrl(view, { flag: scope.flag, environment: e }),
            current: e === env,
          })),
        ]}
        links={[
          <a href={ui.flag(view.tenant, view.namespace, scope.flag, env)}>The flag</a>,
          ...(env === undefined ? [] : [
            <a href={ui.edit.override(view.tenant, view.namespace, scope.flag, env)}>
              What {env} overrides
            </a>,
          ]),
        ]}
      />
      <p>
        Rules are tried in order; the first one that applies to a context serves it. Contexts no
        rule applies to get the default, <code>{override?.default ?? opened.flag.default}</code>.
      </p>
      {override?.enabled === false
        ? (
          <Notice>
            <p id="scope-disabled">
              {scope.flag} is off in{" "}
              {env}: every context there gets the default, whatever the rules say.
            </p>
          </Notice>
        )
        : null}
      {env !== undefined && !opened.own
        ? <FollowsFlag view={view} scope={scope} rules={opened.flag.rules} csrf={csrf} />
        : (
          <>
            <h2 id="rules-title">{opened.rules.length === 0 ? "No rules" : "The rules"}</h2>
            {opened.rules.length === 0
              ? null
              : (
                <ol class="rules" id="rules" aria-labelledby="rules-title">
                  {opened.rules.map((rule) => (
                    <RuleItem
                      view={view}
                      scope={scope}
                      rule={rule}
                      count={opened.rules.length}
                      csrf={csrf}
                    />
                  ))}
                </ol>
              )}
            {env === undefined ? null : (
              <OverrideButton
                view={view}
                scope={scope}
                csrf={csrf}
                rules="flag"
                label={`Drop ${env}'s own rules: follow the flag's again`}
                message={`Make ${scopeWords(scope)} follow the flag's rules`}
              />
            )}
            <section aria-labelledby="add-rule">
              <h2 id="add-rule">Add a rule</h2>
              {addRuleEditor(c).form({
                view,
                csrf,
                message: "",
                input: null,
                posted: new Map(),
                status: 200,
              })}
            </section>
          </>
        )}
    </>
  );
}

/** One rule, with its buttons. */
function RuleItem(
  props: {
    view: NamespaceView;
    scope: RuleScope;
    rule: RuleAsWritten;
    count: number;
    csrf: string;
  },
) {
  const { view, scope, rule, count, csrf } = props;
  const i = rule.index;
  const n = i + 1;
  const post = (action: string, fields: Record<string, string>, label: string) => (
    <form method="post" action={rulesUrl(view, scope, action)}>
      <CsrfField token={csrf} />
      <input type="hidden" name="base" value={String(view.meta.version)} />
      {Object.entries(fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" name="step" value="preview" class="secondary">{label}</button>
    </form>
  );
  return (
    <li class="rule card" id={`rule-${n}`}>
      <h3>Rule {n}</h3>
      <RuleSummary rule={rule} view={view} />
      <div class="actions">
        <a class="button secondary" href={rulesUrl(view, scope, "replace", { index: String(i) })}>
          Edit rule {n}
        </a>
        {i === 0 ? null : post(
          "move",
          { from: String(i), to: String(i - 1), message: moveMessage(scope, i, i - 1) },
          `Move rule ${n} up`,
        )}
        {i === count - 1 ? null : post(
          "move",
          { from: String(i), to: String(i + 1), message: moveMessage(scope, i, i + 1) },
          `Move rule ${n} down`,
        )}
        {post(
          "remove",
          { index: String(i), message: `Remove rule ${n} of ${scopeWords(scope)}` },
          `Remove rule ${n}`,
        )}
      </div>
    </li>
  );
}

/** An environment that follows the flag's rules: them, and the offer of its own. */
function FollowsFlag(
  props: { view: NamespaceView; scope: RuleScope; rules: RuleAsWritten[]; csrf: string },
) {
  const { view, scope, rules, csrf } = props;
  const env = scope.environment!;
  return (
    <>
      <Notice>
        <p id="follows-flag">
          {env} has no rules of its own: it follows{" "}
          <a href={rulesUrl(view, { flag: scope.flag })}>the flag's rules</a>. Give it rules of its
          own (a copy of the flag's to start from) to change them for {env} alone.
        </p>
      </Notice>
      <OverrideButton
        view={view}
        scope={scope}
        csrf={csrf}
        rules="own"
        label={`Give ${env} rules of its own`}
        message={`Give ${scopeWords(scope)} rules of its own`}
      />
      <h2 id="rules-title">The flag's rules</h2>
      {rules.length === 0 ? <p>None.</p> : (
        <ol class="rules" aria-labelledby="rules-title">
          {rules.map((rule) => (
            <li class="rule card">
              <h3>Rule {rule.index + 1}</h3>
              <RuleSummary rule={rule} view={view} />
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

/** A button that posts the override editor's `rules` choice alone, to its preview. */
function OverrideButton(
  props: {
    view: NamespaceView;
    scope: RuleScope;
    csrf: string;
    rules: "own" | "flag";
    label: string;
    message: string;
  },
) {
  const { view, scope } = props;
  return (
    <form
      method="post"
      action={ui.edit.override(view.tenant, view.namespace, scope.flag, scope.environment!)}
      class="actions"
    >
      <CsrfField token={props.csrf} />
      <input type="hidden" name="base" value={String(view.meta.version)} />
      <input type="hidden" name="rules" value={props.rules} />
      <input type="hidden" name="message" value={props.message} />
      <button type="submit" name="step" value="preview" class="secondary">{props.label}</button>
    </form>
  );
}
