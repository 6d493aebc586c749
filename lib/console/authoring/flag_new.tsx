/**
 * The new-flag editor: first the type (a plain GET form, so the
 * variations' controls fit it without JavaScript), then the key, the
 * description, the variations with a control for the type (true/false, a
 * text, a number, a JSON object checked as you type) and the variation
 * served by default. Empty rows are ignored; a refusal names the row.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../../errors.ts";
import { createFlag, type NewFlag, variationValueFromInput } from "../../flags/authoring/mod.ts";
import { FLAG_TYPES, type FlagType } from "../../flags/model.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { DescriptionField, KeyField } from "./key_fields.tsx";
import { ui } from "../urls.ts";
import { rowIndices, shown, text, textsAt } from "./fields.ts";
import { MoreRowsLink, VariationRows } from "./variation_rows.tsx";

/** The most variation rows a form posts. */
export const MAX_VARIATION_ROWS = 20;

/** What each type's variations look like, for the type choice. */
const TYPE_HINTS: Record<FlagType, string> = {
  boolean: "on or off: two variations, true and false",
  string: "a text per variation, such as a banner or a theme name",
  number: "a number per variation, such as a limit or a timeout",
  object: "a JSON object per variation, such as a set of settings",
};

/** A new flag as the form entered it, and which form row each variation came from. */
export interface NewFlagInput {
  flag: NewFlag;
  /** The form row of each variation, in order (refusals name rows, not positions). */
  rows: number[];
}

/**
 * The new-flag editor for a request (`?type=` chooses the form's controls).
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/_new", deps, views, newFlagEditor);
 * ```
 */
export function newFlagEditor(c: Context<ConsoleEnv>): Editor<NewFlagInput> {
  const chosen = c.req.query("type") ?? "";
  const rowsAsked = Number(c.req.query("rows") ?? "");
  return {
    title: () => "New flag",
    action: (view) => ui.edit.newFlag(view.tenant, view.namespace),
    read: readNewFlag,
    make: (view, input) => rowErrors(input.rows, () => createFlag(textsAt(view), input.flag)),
    form: (state) => {
      const type = (state.posted.get("type") ?? chosen) as FlagType;
      if (!FLAG_TYPES.includes(type)) return <TypeChoice state={state} />;
      const rows = Number.isInteger(rowsAsked) && rowsAsked > 0
        ? Math.min(rowsAsked, MAX_VARIATION_ROWS)
        : undefined;
      return <NewFlagForm state={state} type={type} rows={rows} />;
    },
    done: (view, input) => ui.flag(view.tenant, view.namespace, input.flag.key),
  };
}

/** Reads the posted form (throws naming the field). */
function readNewFlag(form: ReadonlyMap<string, string>): NewFlagInput {
  const type = text(form, "type");
  if (!(FLAG_TYPES as readonly string[]).includes(type)) {
    throw new InvalidRequestError("Choose the flag's type", { details: { field: "type" } });
  }
  const { variations, rows } = readVariationRows(form, type as FlagType);
  const chosenDefault = text(form, "default");
  const at = rows.indexOf(Number(chosenDefault));
  if (chosenDefault === "" || at === -1) {
    throw new InvalidRequestError("Choose the variation served by default", {
      details: { field: "default" },
    });
  }
  const description = text(form, "description");
  return {
    flag: {
      key: text(form, "key"),
      type: type as FlagType,
      ...(description === "" ? {} : { description }),
      variations,
      default: variations[at]!.name,
    },
    rows,
  };
}

/**
 * The variations of a posted form (`variations.<row>.name`,
 * `variations.<row>.value`), empty rows left out; a row with a value and no
 * name, or a value that is not of the type, is refused naming its row.
 *
 * @param form the posted form
 * @param type the flag's type
 * @returns the variations and the row each came from
 * @throws {InvalidRequestError} naming `variations.<row>.name` or `.value`
 *
 * @example
 * ```ts
 * import { readVariationRows } from "./flag_new.tsx";
 * const form = new Map([["variations.0.name", "ten"], ["variations.0.value", "10"], ["variations.2.name", "x"], ["variations.2.value", "2.5"], ["variations.1.name", ""]]);
 * const { variations, rows } = readVariationRows(form, "number");
 * if (rows.join() !== "0,2" || variations[1]?.value !== 2.5) throw new Error();
 * ```
 */
export function readVariationRows(
  form: ReadonlyMap<string, string>,
  type: FlagType,
): { variations: NewFlag["variations"]; rows: number[] } {
  const variations: NewFlag["variations"] = [];
  const rows: number[] = [];
  for (const row of rowIndices(form, "variations", MAX_VARIATION_ROWS)) {
    const name = text(form, `variations.${row}.name`);
    const raw = form.get(`variations.${row}.value`) ?? "";
    if (name === "" && raw.trim() === "") continue;
    if (name === "") {
      throw new InvalidRequestError(`Give variation ${row + 1} a name`, {
        details: { field: `variations.${row}.name` },
      });
    }
    variations.push({ name, value: variationValueFromInput(type, raw, `variations.${row}.value`) });
    rows.push(row);
  }
  return { variations, rows };
}

/**
 * Runs an edit of variations given in rows: a refusal naming the n-th
 * variation (`variations.<n>.…`) is thrown again naming its form row.
 *
 * @param rows the form row of each variation
 * @param edit the edit
 * @returns what the edit returns
 *
 * @example
 * ```ts
 * import { rowErrors } from "./flag_new.tsx";
 * import { InvalidRequestError } from "../../errors.ts";
 * try {
 *   rowErrors([0, 3], () => { throw new InvalidRequestError("dup", { details: { field: "variations.1.name" } }); });
 * } catch (e) {
 *   if ((e as InvalidRequestError).details?.field !== "variations.3.name") throw e;
 * }
 * ```
 */
export function rowErrors<T>(rows: readonly number[], edit: () => T): T {
  try {
    return edit();
  } catch (err) {
    const field = err instanceof InvalidRequestError
      ? (err.details as { field?: unknown } | undefined)?.field
      : undefined;
    if (typeof field !== "string" || !field.startsWith("variations.")) throw err;
    const [, n, ...rest] = field.split(".");
    const row = rows[Number(n)];
    if (row === undefined) throw err;
    throw new InvalidRequestError((err as InvalidRequestError).message, {
      details: {
        ...(err as InvalidRequestError).details,
        field: ["variations", row, ...rest].join("."),
      },
      cause: err,
    });
  }
}

/** Step one: the type, as a GET form that draws step two. */
function TypeChoice(props: { state: FormState<NewFlagInput> }) {
  const { view } = props.state;
  return (
    <form method="get" action={ui.edit.newFlag(view.tenant, view.namespace)} class="editor">
      <fieldset>
        <legend>What does the flag serve?</legend>
        {FLAG_TYPES.map((t, i) => (
          <div class="field check">
            <input
              id={`type-${t}`}
              type="radio"
              name="type"
              value={t}
              required
              aria-describedby={`type-${t}-hint`}
              {...(i === 0 ? { checked: true } : {})}
            />
            <label for={`type-${t}`}>
              {t} <span id={`type-${t}-hint`} class="small muted">({TYPE_HINTS[t]})</span>
            </label>
          </div>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit">Continue</button>
      </div>
    </form>
  );
}

/** Step two: the flag itself. */
function NewFlagForm(
  props: { state: FormState<NewFlagInput>; type: FlagType; rows: number | undefined },
) {
  const { state, type } = props;
  const { view } = state;
  const key = shown(state, "key", "");
  return (
    <EditorForm
      action={ui.edit.newFlag(view.tenant, view.namespace)}
      state={state}
      suggested={key === "" ? "" : `Add flag ${key}`}
    >
      <input type="hidden" name="type" value={type} />
      <p>
        A <strong>{type}</strong> flag.{" "}
        <a href={ui.edit.newFlag(view.tenant, view.namespace)}>Choose another type</a>
      </p>
      <KeyField
        state={state}
        id="flag-key"
        hint="What applications ask for: lower-case letters, digits, dots, dashes and underscores. It names the file flags/<key>.toml and cannot be changed later."
        value={key}
      />
      <DescriptionField
        state={state}
        id="flag-description"
        written=""
      />
      <VariationRows
        state={state}
        type={type}
        written={type === "boolean"
          ? [{ name: "on", value: true }, { name: "off", value: false }]
          : []}
        writtenDefault={type === "boolean" ? "off" : ""}
        rows={props.rows}
      />
      {type === "boolean" || (props.rows ?? 0) >= MAX_VARIATION_ROWS ? null : (
        <MoreRowsLink
          href={`${ui.edit.newFlag(view.tenant, view.namespace)}?type=${type}&rows=${
            Math.min(MAX_VARIATION_ROWS, (props.rows ?? 4) + 6)
          }`}
        />
      )}
    </EditorForm>
  );
}
