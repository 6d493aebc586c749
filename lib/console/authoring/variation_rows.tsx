/**
 * The variations of a flag as form rows: each row's name, its value with a
 * control that fits the flag's type (a true/false choice, a text, a
 * number, a JSON object checked as you type by the console's script and
 * by the server either way), and the choice of the variation served by
 * default. Rows post as `variations.<row>.name`, `variations.<row>.value`
 * and `default` = the row; empty rows are ignored by the reader.
 *
 * @module
 */
import type { VariationValue } from "../../flags/model.ts";
import type { FlagType } from "../../flags/model.ts";
import type { FormState } from "../edit_flow.tsx";
import { fieldAttributes, rowIndices } from "./fields.ts";

/** A variation's value as a form control shows it. */
export function valueText(value: VariationValue): string {
  return typeof value === "object" && value !== null
    ? JSON.stringify(value, null, 2)
    : String(value);
}

/**
 * The rows.
 *
 * @param props the form's state, the type, the variations as written and
 * the default's name (a fresh form), how many rows at least
 * @returns the fieldset
 *
 * @example
 * ```tsx
 * import { VariationRows } from "./variation_rows.tsx";
 * const state = { posted: new Map() } as never;
 * const html = String(await (
 *   <VariationRows state={state} type="number" written={[{ name: "ten", value: 10 }]} writtenDefault="ten" />
 * ));
 * if (!html.includes('name="variations.0.value"') || !html.includes('value="10"')) throw new Error(html);
 * if (!html.includes('name="variations.3.name"')) throw new Error("empty rows to add variations");
 * ```
 */
export function VariationRows(
  props: {
    state: FormState<unknown>;
    type: FlagType;
    written: readonly { name: string; value: VariationValue }[];
    writtenDefault: string;
    rows?: number | undefined;
  },
) {
  const { state, type, written } = props;
  const posted = state.posted.size > 0;
  const postedRows = posted ? rowIndices(state.posted, "variations", 100) : [];
  const count = Math.max(
    type === "boolean" ? 2 : written.length + 2,
    type === "boolean" ? 2 : 4,
    postedRows.length === 0 ? 0 : postedRows[postedRows.length - 1]! + 1,
    props.rows ?? 0,
  );
  const rows = Array.from({ length: count }, (_, i) => i);
  const nameOf = (i: number) =>
    posted ? state.posted.get(`variations.${i}.name`) ?? "" : written[i]?.name ?? "";
  const valueOf = (i: number) =>
    posted
      ? state.posted.get(`variations.${i}.value`) ?? ""
      : written[i] === undefined
      ? ""
      : valueText(written[i]!.value);
  const isDefault = (i: number) =>
    posted
      ? state.posted.get("default") === String(i)
      : written[i] !== undefined && written[i]!.name === props.writtenDefault;
  return (
    <fieldset class="rows" {...fieldAttributes(state, "variations")}>
      <legend>Variations</legend>
      <p class="small muted">
        What the flag can serve. Names: a letter first, then letters, digits, dots, dashes and
        underscores. Leave a row empty to skip it; choose the one served when no rule matches.
      </p>
      {rows.map((i) => (
        <fieldset class="row">
          <legend>Variation {i + 1}</legend>
          <div class="field">
            <label for={`variation-${i}-name`}>Name</label>
            <input
              id={`variation-${i}-name`}
              type="text"
              name={`variations.${i}.name`}
              maxlength={63}
              autocomplete="off"
              value={nameOf(i)}
              {...fieldAttributes(state, `variations.${i}.name`)}
            />
          </div>
          <div class="field">
            <label for={`variation-${i}-value`}>Value</label>
            <ValueControl
              id={`variation-${i}-value`}
              name={`variations.${i}.value`}
              type={type}
              value={valueOf(i)}
              attributes={fieldAttributes(state, `variations.${i}.value`)}
            />
          </div>
          <div class="field check">
            <input
              id={`variation-${i}-default`}
              type="radio"
              name="default"
              value={String(i)}
              {...(isDefault(i) ? { checked: true } : {})}
              {...fieldAttributes(state, "default")}
            />
            <label for={`variation-${i}-default`}>Served by default</label>
          </div>
        </fieldset>
      ))}
    </fieldset>
  );
}

/**
 * A value's control for a flag type.
 *
 * @param props the control's id and name, the type, the value as text, extra attributes
 * @returns the control
 *
 * @example
 * ```tsx
 * import { ValueControl } from "./variation_rows.tsx";
 * const html = String(await (<ValueControl id="v" name="v" type="object" value="{}" />));
 * if (!html.includes("data-json") || !html.includes("<textarea")) throw new Error(html);
 * ```
 */
export function ValueControl(
  props: {
    id: string;
    name: string;
    type: FlagType;
    value: string;
    attributes?: Record<string, string>;
  },
) {
  const { id, name, type, value } = props;
  const extra = props.attributes ?? {};
  switch (type) {
    case "boolean":
      return (
        <select id={id} name={name} {...extra}>
          <option value="">—</option>
          <option value="true" {...(value.trim() === "true" ? { selected: true } : {})}>
            true
          </option>
          <option value="false" {...(value.trim() === "false" ? { selected: true } : {})}>
            false
          </option>
        </select>
      );
    case "number":
      return <input id={id} type="text" inputmode="decimal" name={name} value={value} {...extra} />;
    case "object":
      return (
        <>
          <textarea
            id={id}
            name={name}
            class="short"
            spellcheck={false}
            data-json="object"
            {...extra}
            aria-describedby={[extra["aria-describedby"], `${id}-json`].filter(Boolean).join(" ")}
          >
            {value}
          </textarea>
          <span id={`${id}-json`} class="small error" aria-live="polite"></span>
        </>
      );
    default:
      return <input id={id} type="text" name={name} value={value} {...extra} />;
  }
}

/**
 * The link to the same form with more variation rows (a fresh form: what
 * was typed is not carried over).
 *
 * @example
 * ```tsx
 * import { MoreRowsLink } from "./variation_rows.tsx";
 * const html = String(await (<MoreRowsLink href="/ui/new?rows=10" />));
 * if (!html.includes('<a href="/ui/new?rows=10">More variation rows</a> (a fresh form)')) throw new Error(html);
 * ```
 */
export function MoreRowsLink(props: { href: string }) {
  return (
    <p class="small">
      <a href={props.href}>More variation rows</a> (a fresh form)
    </p>
  );
}
