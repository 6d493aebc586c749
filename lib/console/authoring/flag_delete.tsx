/**
 * The deletion of a flag: the form says what follows (applications that
 * ask for it get `FLAG_NOT_FOUND` and fall back to the default in their
 * code) and asks for the key typed out, as the namespace's deletion does;
 * then the usual preview and commit. The library refuses a deletion that
 * something still reaches (`details.referenced_by`, shown); today nothing
 * in a manifest refers to a flag, so none is.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../../errors.ts";
import { deleteFlag } from "../../flags/authoring/mod.ts";
import { flagIn, type NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { fieldAttributes, text, textsAt } from "./fields.ts";
import { ReferencedBy } from "./flag_referenced_by.tsx";

/** A flag's deletion as confirmed. */
export interface FlagDeleteInput {
  /** The flag key. */
  flag: string;
}

/**
 * The deletion editor of flag `:flag`.
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/delete", deps, views, flagDeleteEditor);
 * ```
 */
export function flagDeleteEditor(c: Context<ConsoleEnv>): Editor<FlagDeleteInput> {
  const key = c.req.param("flag") ?? "";
  return {
    title: (view) => {
      flagIn(view, key); // a 404 for a flag the version does not have
      return `Delete ${key}`;
    },
    action: (view) => ui.edit.flagPart(view.tenant, view.namespace, key, "delete"),
    read: (form, view) => readFlagDelete(form, view, key),
    make: (view, input) => deleteFlag(textsAt(view), { flag: input.flag }),
    form: (state) => <FlagDeleteForm state={state} flag={key} />,
    done: (view) => ui.namespace(view.tenant, view.namespace),
  };
}

/**
 * Reads the confirmation: the key typed exactly.
 *
 * @param form the posted form
 * @param view the version the form was made on
 * @param key the flag
 * @returns the input
 * @throws {InvalidRequestError} naming `confirm` when the key typed is not the flag's
 * @throws {NotFoundError} when the version has no such flag
 *
 * @example
 * ```ts
 * import { readFlagDelete } from "./flag_delete.tsx";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 1 }, manifest: { flags: { a: {} } } } as never;
 * if (readFlagDelete(new Map([["confirm", " a "]]), view, "a").flag !== "a") throw new Error();
 * try { readFlagDelete(new Map([["confirm", "b"]]), view, "a"); throw new Error(); } catch (e) {
 *   if ((e as { details?: { field?: string } }).details?.field !== "confirm") throw e;
 * }
 * ```
 */
export function readFlagDelete(
  form: ReadonlyMap<string, string>,
  view: NamespaceView,
  key: string,
): FlagDeleteInput {
  flagIn(view, key);
  if (text(form, "confirm") !== key) {
    throw new InvalidRequestError(`Type ${key} exactly to delete it`, {
      details: { field: "confirm" },
    });
  }
  return { flag: key };
}

/** The form: the consequences, the key to type. */
function FlagDeleteForm(props: { state: FormState<FlagDeleteInput>; flag: string }) {
  const { state, flag } = props;
  const { view } = state;
  const { tenant, namespace } = view;
  if (!view.manifest.flags[flag]) {
    return (
      <Notice kind="error">
        <p>
          Version {view.meta.version} of {namespace} has no flag <code>{flag}</code>.{" "}
          <a href={ui.namespace(tenant, namespace)}>Its flags</a>
        </p>
      </Notice>
    );
  }
  return (
    <>
      <Notice kind="error">
        <p id="delete-consequences">
          Deleting <strong>{flag}</strong> deletes its file <code>flags/{flag}.toml</code>{" "}
          (its variations, rules and every environment's override) in a new version. From then on,
          applications that ask for it get the error <code>FLAG_NOT_FOUND</code>{" "}
          and use the default their code passes; remove it from the applications first. The version
          history keeps it: rolling back to an earlier version brings it back.
        </p>
      </Notice>
      <EditorForm
        action={ui.edit.flagPart(tenant, namespace, flag, "delete")}
        state={state}
        suggested={`Delete flag ${flag}`}
      >
        <Field
          id="delete-confirm"
          label={`Type ${flag} to confirm`}
          hint="As the namespace's deletion asks: the key, exactly."
        >
          <input
            id="delete-confirm"
            type="text"
            name="confirm"
            required
            autocomplete="off"
            value={state.posted.get("confirm") ?? ""}
            {...fieldAttributes(state, "confirm", "delete-confirm-hint")}
          />
        </Field>
        <ReferencedBy state={state} />
      </EditorForm>
      <p>
        <a href={ui.flag(tenant, namespace, flag)}>Keep it</a>
      </p>
    </>
  );
}
