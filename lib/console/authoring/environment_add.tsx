/**
 * Adding an environment: its key, a description (written as the comment
 * above its section of `namespace.toml`) and whether browser tokens may
 * evaluate there (`public_evaluate`, off unless chosen). In a namespace
 * without files yet, this writes its first `namespace.toml`.
 *
 * @module
 */
import { addEnvironment } from "../../flags/authoring/mod.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import { DescriptionField, KeyField } from "./key_fields.tsx";
import { ui } from "../urls.ts";
import { shown, text, textsAt } from "./fields.ts";
import { PublicChoice, readPublic } from "./environment_public.tsx";

/** A new environment as entered. */
export interface EnvironmentAddInput {
  key: string;
  description: string;
  public_evaluate: boolean;
}

/**
 * The editor that adds an environment.
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/environments/add", deps, views, () => environmentAddEditor);
 * ```
 */
export const environmentAddEditor: Editor<EnvironmentAddInput> = {
  title: () => "Add an environment",
  action: (view) => ui.edit.environments(view.tenant, view.namespace, "add"),
  read: (form) => ({
    key: text(form, "key"),
    description: text(form, "description"),
    public_evaluate: readPublic(form),
  }),
  make: (view, input) => addEnvironment(textsAt(view), input),
  form: (state) => <EnvironmentAddForm state={state} />,
  done: (view) => ui.edit.environments(view.tenant, view.namespace),
};

/**
 * The form (also drawn on the environments page, for those who may write).
 *
 * @param props the form's state
 * @returns the form
 *
 * @example
 * ```tsx
 * import { EnvironmentAddForm } from "./environment_add.tsx";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 0 } };
 * const state = { view, csrf: "t", message: "", input: null, posted: new Map(), status: 200 } as never;
 * const html = String(await (<EnvironmentAddForm state={state} />));
 * if (!html.includes('action="/ui/t/acme/ns/web/edit/environments/add"') || !html.includes('name="key"')) throw new Error(html);
 * ```
 */
export function EnvironmentAddForm(props: { state: FormState<EnvironmentAddInput> }) {
  const { state } = props;
  const { view } = state;
  const key = shown(state, "key", "");
  return (
    <EditorForm
      action={ui.edit.environments(view.tenant, view.namespace, "add")}
      state={state}
      suggested={key === "" ? "" : `Add environment ${key}`}
    >
      <KeyField
        state={state}
        id="environment-key"
        hint="Lower-case letters, digits, dots, dashes and underscores (production, staging, qa): applications and tokens name it, so it cannot be renamed later."
        value={key}
      />
      <DescriptionField
        state={state}
        id="environment-description"
        written=""
        hint="Written as a comment above the environment's section of namespace.toml."
      />
      <PublicChoice state={state} current={false} />
    </EditorForm>
  );
}
