/**
 * The promotion editor of a flag: copy what is in force in one
 * environment (whether the flag is on, its default, its rules) into
 * another's override, so that the second then serves the flag exactly as
 * the first. `?from=` and `?to=` choose the environments of the first
 * form; the preview says what changes, and a protected target turns the
 * commit into a proposal (a change request), as for every edit.
 *
 * @module
 */
import type { Context } from "hono";
import { type FlagAsWritten, promote } from "../../flags/authoring/mod.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field, Options } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { DataTable, Notice } from "../widgets.tsx";
import { fieldAttributes, shown, text, textsAt } from "./fields.ts";
import { openScope } from "./rule_scope.tsx";

/** A promotion: `flag` in `to` made to serve as in `from`. */
export interface PromotionInput {
  flag: string;
  from: string;
  to: string;
}

/**
 * The promotion editor of the flag of a request.
 *
 * @param c the route's context (the flag in the path, `?from=`, `?to=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/promote", deps, views, promotionEditor);
 * ```
 */
export function promotionEditor(c: Context<ConsoleEnv>): Editor<PromotionInput> {
  const flag = c.req.param("flag") ?? "";
  const asked = { from: c.req.query("from") ?? "", to: c.req.query("to") ?? "" };
  return {
    title: (_view, input) =>
      input === null ? `Promote ${flag}` : `Promote ${flag} from ${input.from} to ${input.to}`,
    action: (view) => ui.edit.promote(view.tenant, view.namespace, flag),
    read: (form, view) => {
      openScope(view, { flag });
      return { flag, from: text(form, "from"), to: text(form, "to") };
    },
    make: (view, input) => promote(textsAt(view), input),
    form: (state) => <PromotionForm state={state} flag={flag} asked={asked} />,
    done: (view, input) => ui.flag(view.tenant, view.namespace, flag, input.to),
  };
}

function PromotionForm(
  props: {
    state: FormState<PromotionInput>;
    flag: string;
    asked: { from: string; to: string };
  },
) {
  const { state, flag, asked } = props;
  const { view } = state;
  const opened = openScope(view, { flag });
  const envs = opened.environments;
  if (envs.length < 2) {
    return (
      <Notice>
        <p>
          Promotion copies from one environment to another: the namespace declares{" "}
          {envs.length === 0 ? "none" : `only ${envs[0]}`}.{" "}
          <a href={ui.edit.environments(view.tenant, view.namespace)}>Its environments</a>
        </p>
      </Notice>
    );
  }
  const from = shown(state, "from", envs.includes(asked.from) ? asked.from : envs[0]!);
  const to = shown(
    state,
    "to",
    envs.includes(asked.to) ? asked.to : envs.find((e) => e !== from) ?? "",
  );
  return (
    <EditorForm
      action={ui.edit.promote(view.tenant, view.namespace, flag)}
      state={state}
      suggested={`Promote ${flag} from ${from} to ${to}`}
    >
      <p id="promote-what">
        Copies what is in force in <strong>{from}</strong> (whether {flag}{" "}
        is on, its default and its rules) to <strong>{to}</strong>, written in {to}'s override: {to}
        {" "}
        then serves {flag} exactly as {from}{" "}
        does, and no longer follows the flag's own default and rules. The preview shows what changes
        before anything is committed; a protected environment gets a change request to review.
      </p>
      <Field id="promote-from" label="Copy from">
        <select id="promote-from" name="from" {...fieldAttributes(state, "from")}>
          <Options choices={envs} selected={from} />
        </select>
      </Field>
      <Field id="promote-to" label="Copy to">
        <select id="promote-to" name="to" {...fieldAttributes(state, "to")}>
          <Options choices={envs} selected={to} />
        </select>
      </Field>
      <h2>In force now</h2>
      <InForce flag={opened.flag} environments={envs} />
    </EditorForm>
  );
}

/** What is in force in each environment: on or off, the default, whose rules. */
function InForce(props: { flag: FlagAsWritten; environments: readonly string[] }) {
  const { flag } = props;
  return (
    <DataTable
      caption={`What ${flag.key} serves in each environment`}
      columns={["Environment", "On", "Default", "Rules"]}
    >
      {props.environments.map((env) => {
        const o = flag.overrides.find((x) => x.environment === env);
        const rules = o?.rules;
        return (
          <tr>
            <th scope="row">{env}</th>
            <td>{o?.enabled === false ? "off" : "on"}</td>
            <td>
              <code>{o?.default ?? flag.default}</code>
            </td>
            <td>
              {rules === undefined
                ? `the flag's (${flag.rules.length})`
                : `its own (${rules.length})`}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
