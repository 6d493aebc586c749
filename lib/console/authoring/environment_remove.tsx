/**
 * Removing an environment from `namespace.toml` (with the comment above
 * its section): refused while a flag overrides it, naming the flags.
 *
 * @module
 */
import type { Context } from "hono";
import { environmentsAsWritten, removeEnvironment } from "../../flags/authoring/mod.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field, Options } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { fieldAttributes, shown, text, textsAt } from "./fields.ts";
import { ReferencedBy } from "./flag_referenced_by.tsx";

/** The environment to remove. */
export interface EnvironmentRemoveInput {
  environment: string;
}

/**
 * The editor that removes an environment (`?env=` preselects it).
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/environments/remove", deps, views, environmentRemoveEditor);
 * ```
 */
export function environmentRemoveEditor(c: Context<ConsoleEnv>): Editor<EnvironmentRemoveInput> {
  const env = c.req.query("env") ?? "";
  return {
    title: () => "Remove an environment",
    action: (view) => ui.edit.environments(view.tenant, view.namespace, "remove"),
    read: (form) => ({ environment: text(form, "environment") }),
    make: (view, input) => removeEnvironment(textsAt(view), input),
    form: (state) => <EnvironmentRemoveForm state={state} env={env} />,
    done: (view) => ui.edit.environments(view.tenant, view.namespace),
  };
}

/** The form: what removing does, which environment. */
function EnvironmentRemoveForm(props: { state: FormState<EnvironmentRemoveInput>; env: string }) {
  const { state } = props;
  const { view } = state;
  const envs = environmentsAsWritten(textsAt(view)).environments;
  if (envs.length === 0) {
    return (
      <p>
        No environment to remove.{" "}
        <a href={ui.edit.environments(view.tenant, view.namespace)}>The environments</a>
      </p>
    );
  }
  const selected = shown(state, "environment", props.env);
  return (
    <>
      <Notice>
        <p id="remove-consequences">
          Removing an environment deletes its section of <code>namespace.toml</code>{" "}
          (and the comment above it). Applications and tokens that evaluate there get{" "}
          <code>environment_not_found</code>{" "}
          from then on. It is refused while a flag overrides it: change those flags first.
        </p>
      </Notice>
      <EditorForm
        action={ui.edit.environments(view.tenant, view.namespace, "remove")}
        state={state}
        suggested={selected === "" ? "" : `Remove environment ${selected}`}
      >
        <Field id="remove-environment" label="Environment">
          <select
            id="remove-environment"
            name="environment"
            required
            {...fieldAttributes(state, "environment", "remove-consequences")}
          >
            <Options choices={envs.map((e) => e.key)} selected={selected} />
          </select>
        </Field>
        <ReferencedBy state={state} />
      </EditorForm>
    </>
  );
}
