/**
 * The editor of a flag's description, default and variations, in one
 * form prefilled from the flag's file as written. Each variation's row
 * carries the name it had (a hidden `variations.<row>.was`), so that a
 * changed name is read as a rename (every rule, rollout and override that
 * serves it follows), an emptied row as a removal (refused while something
 * uses it, naming what), a filled new row as an addition. The type is
 * shown, not edited: applications read the value as that type.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../../errors.ts";
import { flagAsWritten, variationValueFromInput } from "../../flags/authoring/mod.ts";
import { FLAG_TYPES, type FlagType } from "../../flags/model.ts";
import { flagIn, type NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { DescriptionField } from "./key_fields.tsx";
import { ui } from "../urls.ts";
import { Fact, Facts, Notice } from "../widgets.tsx";
import { rowIndices, text, textsAt } from "./fields.ts";
import { editFlag, type FlagEditInput, type VariationRowInput } from "./flag_edit_sequence.tsx";
import { ReferencedBy } from "./flag_referenced_by.tsx";
import { MoreRowsLink, VariationRows } from "./variation_rows.tsx";

/** The most variation rows the edit form posts. */
export const MAX_EDIT_ROWS = 100;

/**
 * The editor of flag `:flag`.
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag", deps, views, flagEditor);
 * ```
 */
export function flagEditor(c: Context<ConsoleEnv>): Editor<FlagEditInput> {
  const key = c.req.param("flag") ?? "";
  const rowsAsked = Number(c.req.query("rows") ?? "");
  return {
    title: (view) => {
      flagIn(view, key); // a 404 for a flag the version does not have
      return `Edit ${key}`;
    },
    action: (view) => ui.edit.flag(view.tenant, view.namespace, key),
    read: (form, view) => readFlagEdit(form, view, key),
    make: (view, input) => editFlag(textsAt(view), input),
    form: (state) => (
      <FlagEditForm
        state={state}
        flag={key}
        rows={Number.isInteger(rowsAsked) && rowsAsked > 0
          ? Math.min(rowsAsked, MAX_EDIT_ROWS)
          : undefined}
      />
    ),
    done: (view) => ui.flag(view.tenant, view.namespace, key),
  };
}

/**
 * Reads the posted form against the version it was made on (the flag's
 * type reads the values).
 *
 * @param form the posted form
 * @param view the version
 * @param key the flag
 * @returns the input
 * @throws {InvalidRequestError} naming the field
 * @throws {NotFoundError} when the version has no such flag
 *
 * @example
 * ```ts
 * import { readFlagEdit } from "./flag_edit.tsx";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 1 }, manifest: { flags: { a: { type: "number" } } } } as never;
 * const input = readFlagEdit(new Map([
 *   ["description", " Limit "], ["default", "1"],
 *   ["variations.0.was", "low"], ["variations.0.name", ""], ["variations.0.value", ""],
 *   ["variations.1.was", "high"], ["variations.1.name", "top"], ["variations.1.value", "99"],
 *   ["variations.2.name", ""], ["variations.2.value", ""],
 * ]), view, "a");
 * if (input.description !== "Limit" || input.rows.length !== 2 || input.rows[1]?.value !== 99) throw new Error();
 * if (input.rows[0]?.name !== "" || input.rows[0]?.was !== "low") throw new Error("an emptied row removes");
 * ```
 */
export function readFlagEdit(
  form: ReadonlyMap<string, string>,
  view: NamespaceView,
  key: string,
): FlagEditInput {
  const type = flagIn(view, key).type as FlagType;
  if (!FLAG_TYPES.includes(type)) throw new InvalidRequestError(`Unknown type ${type}`);
  const rows: VariationRowInput[] = [];
  const seen = new Set<string>();
  for (const row of rowIndices(form, "variations", MAX_EDIT_ROWS)) {
    const wasText = text(form, `variations.${row}.was`);
    const was = wasText === "" ? undefined : wasText;
    if (was !== undefined) {
      if (seen.has(was)) {
        throw new InvalidRequestError(`Two rows are variation ${was}: load the form again`, {
          details: { field: `variations.${row}.name` },
        });
      }
      seen.add(was);
    }
    const name = text(form, `variations.${row}.name`);
    const raw = form.get(`variations.${row}.value`) ?? "";
    if (name === "" && raw.trim() === "") {
      if (was !== undefined) rows.push({ row, was, name: "" });
      continue;
    }
    if (name === "") {
      throw new InvalidRequestError(
        was === undefined
          ? `Give variation ${row + 1} a name`
          : `Give variation ${row + 1} a name, or empty its value too to remove it`,
        { details: { field: `variations.${row}.name` } },
      );
    }
    const value = variationValueFromInput(type, raw, `variations.${row}.value`);
    rows.push({ row, was, name, value });
  }
  const chosen = text(form, "default");
  const defaultRow = /^\d{1,4}$/.test(chosen) ? Number(chosen) : -1;
  if (!rows.some((r) => r.row === defaultRow && r.name !== "")) {
    throw new InvalidRequestError("Choose the variation served by default among those kept", {
      details: { field: "default" },
    });
  }
  return { flag: key, description: text(form, "description"), rows, defaultRow };
}

/** The form. */
function FlagEditForm(
  props: { state: FormState<FlagEditInput>; flag: string; rows: number | undefined },
) {
  const { state, flag } = props;
  const { view } = state;
  const texts = textsAt(view);
  if (!view.manifest.flags[flag]) {
    return (
      <Notice kind="error">
        <p>
          Version {view.meta.version} of {view.namespace} has no flag <code>{flag}</code>.{" "}
          <a href={ui.namespace(view.tenant, view.namespace)}>Its flags</a>
        </p>
      </Notice>
    );
  }
  const written = flagAsWritten(texts, flag);
  const type = written.type as FlagType;
  const was = (i: number): string =>
    state.posted.size > 0
      ? state.posted.get(`variations.${i}.was`) ?? ""
      : written.variations[i]?.name ?? "";
  const wasRows = state.posted.size > 0
    ? rowIndices(state.posted, "variations", MAX_EDIT_ROWS).filter((i) => was(i) !== "")
    : written.variations.map((_, i) => i);
  const rows = Math.max(written.variations.length, props.rows ?? 0);
  return (
    <EditorForm
      action={ui.edit.flag(view.tenant, view.namespace, flag)}
      state={state}
      suggested={`Edit flag ${flag}`}
    >
      <Facts>
        <Fact label="Flag">
          <a href={ui.flag(view.tenant, view.namespace, flag)}>{flag}</a>
        </Fact>
        <Fact label="Type">
          {type}{" "}
          <span class="small muted">
            (it cannot change here: applications read the value as a{" "}
            {type}, so a flag of another type is a new flag: create it, move the applications to it,
            then delete this one)
          </span>
        </Fact>
      </Facts>
      <DescriptionField
        state={state}
        id="flag-description"
        written={written.description}
      />
      {wasRows.map((i) => <input type="hidden" name={`variations.${i}.was`} value={was(i)} />)}
      <p class="small muted" id="variations-edit-hint">
        Renaming a variation renames it wherever the flag serves it (rules, rollouts, each
        environment's override). Empty a row (its name and its value) to remove that variation: it
        is refused while something still serves it.
      </p>
      <VariationRows
        state={state}
        type={type}
        written={written.variations}
        writtenDefault={written.default}
        rows={rows}
      />
      <ReferencedBy state={state} />
      {type === "boolean" || rows + 2 >= MAX_EDIT_ROWS ? null : (
        <MoreRowsLink
          href={`${ui.edit.flag(view.tenant, view.namespace, flag)}?rows=${
            Math.min(MAX_EDIT_ROWS, Math.max(rows + 2, props.rows ?? 0) + 6)
          }`}
        />
      )}
    </EditorForm>
  );
}
