/**
 * Whether browser tokens may evaluate in an environment
 * (`public_evaluate`): the editor that sets it, and the choice with its
 * warning that the add form shares. A `namespace-client` token is shipped
 * in a web app, so anyone who loads the app holds it and can read what
 * every flag serves in that environment: never for secrets.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../../errors.ts";
import { environmentsAsWritten, setPublicEvaluate } from "../../flags/authoring/mod.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field, Options } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { fieldAttributes, shown, text, textsAt } from "./fields.ts";

/** `public_evaluate` of one environment, as entered. */
export interface PublicEvaluateInput {
  environment: string;
  public_evaluate: boolean;
}

/**
 * The editor of `public_evaluate` (`?env=` and `?to=true|false` prefill it).
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/environments/public", deps, views, publicEvaluateEditor);
 * ```
 */
export function publicEvaluateEditor(c: Context<ConsoleEnv>): Editor<PublicEvaluateInput> {
  const env = c.req.query("env") ?? "";
  const to = c.req.query("to");
  return {
    title: () => "Public evaluation",
    action: (view) => ui.edit.environments(view.tenant, view.namespace, "public"),
    read: (form) => ({ environment: text(form, "environment"), public_evaluate: readPublic(form) }),
    make: (view, input) => setPublicEvaluate(textsAt(view), input),
    form: (state) => (
      <PublicEvaluateForm
        state={state}
        env={env}
        to={to === "true" ? true : to === "false" ? false : undefined}
      />
    ),
    done: (view) => ui.edit.environments(view.tenant, view.namespace),
  };
}

/**
 * The posted `public_evaluate` choice: `true`, or `false` (also when absent).
 *
 * @param form the posted form
 * @returns the choice
 * @throws {InvalidRequestError} naming `public_evaluate` for another value
 *
 * @example
 * ```ts
 * import { readPublic } from "./environment_public.tsx";
 * if (!readPublic(new Map([["public_evaluate", "true"]])) || readPublic(new Map())) throw new Error();
 * ```
 */
export function readPublic(form: ReadonlyMap<string, string>): boolean {
  const v = text(form, "public_evaluate");
  if (v === "true") return true;
  if (v === "false" || v === "") return false;
  throw new InvalidRequestError("Choose whether browser tokens may evaluate there", {
    details: { field: "public_evaluate" },
  });
}

/**
 * The warning and the yes/no choice (`public_evaluate`).
 *
 * @param props the form's state and the value as written
 * @returns the fieldset
 *
 * @example
 * ```tsx
 * import { PublicChoice } from "./environment_public.tsx";
 * const html = String(await (<PublicChoice state={{ posted: new Map() } as never} current={false} />));
 * if (!html.includes('id="public-warning"') || !html.includes('value="false" checked')) throw new Error(html);
 * ```
 */
export function PublicChoice(props: { state: FormState<unknown>; current: boolean }) {
  const { state } = props;
  const chosen = shown(state, "public_evaluate", String(props.current)) === "true";
  const invalid = fieldAttributes(state, "public_evaluate");
  return (
    <fieldset {...invalid}>
      <legend>Public evaluation (browser tokens)</legend>
      <Notice kind="error">
        <p id="public-warning">
          Public evaluation lets browser tokens (<code>namespace-client</code>) evaluate every flag
          of this namespace in this environment. Such a token is shipped in the web app, so anyone
          who loads the app can read what every flag serves there. Never put secrets in flags an
          environment with public evaluation serves.
        </p>
      </Notice>
      <div class="field check">
        <input
          id="public-no"
          type="radio"
          name="public_evaluate"
          value="false"
          {...(chosen ? {} : { checked: true })}
        />
        <label for="public-no">No: only server-side tokens and people evaluate</label>
      </div>
      <div class="field check">
        <input
          id="public-yes"
          type="radio"
          name="public_evaluate"
          value="true"
          aria-describedby="public-warning"
          {...(chosen ? { checked: true } : {})}
        />
        <label for="public-yes">Yes: browser tokens may evaluate (read the warning above)</label>
      </div>
    </fieldset>
  );
}

/** The form: which environment, and the choice. */
function PublicEvaluateForm(
  props: { state: FormState<PublicEvaluateInput>; env: string; to: boolean | undefined },
) {
  const { state } = props;
  const { view } = state;
  const envs = environmentsAsWritten(textsAt(view)).environments;
  if (envs.length === 0) {
    return (
      <p>
        No environment yet.{" "}
        <a href={ui.edit.environments(view.tenant, view.namespace)}>
          Add the first environment
        </a>
      </p>
    );
  }
  const selected = shown(state, "environment", props.env);
  const current = envs.find((e) => e.key === selected)?.public_evaluate ?? false;
  return (
    <EditorForm
      action={ui.edit.environments(view.tenant, view.namespace, "public")}
      state={state}
      suggested={selected === ""
        ? ""
        : `${props.to ?? !current ? "Open" : "Close"} public evaluation in ${selected}`}
    >
      <Field id="public-environment" label="Environment">
        <select
          id="public-environment"
          name="environment"
          required
          {...fieldAttributes(state, "environment")}
        >
          <Options
            choices={envs.map((
              e,
            ) => [e.key, `${e.key} (now ${e.public_evaluate ? "public" : "not public"})`])}
            selected={selected}
          />
        </select>
      </Field>
      <PublicChoice state={state} current={props.to ?? current} />
    </EditorForm>
  );
}
