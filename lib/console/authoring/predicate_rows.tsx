/**
 * The predicates of a segment as form rows: each row's attribute (a dotted
 * context path, or `segment.<key>` picked from a list of the other
 * segments), its operator (every operator of the engine, in words) and its
 * value (one text control: a list takes one value a line, see
 * segment_values.tsx), and a box to remove it. Rows post as
 * `predicates.<row>.attribute|op|value|remove`; the reader skips empty and
 * removed rows, and a refusal of the n-th predicate is named on its row.
 *
 * A list of ten thousand ids is one textarea, not one element per value:
 * the page stays small and quick to draw.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import type { PredicateAsWritten, PredicateInput } from "../../flags/authoring/mod.ts";
import { SEGMENT_OPERATORS } from "../../flags/authoring/mod.ts";
import { refName } from "../../flags/conditions.ts";
import type { FormState } from "../edit_flow.tsx";
import { fieldAttributes, rowIndices, text } from "./fields.ts";
import {
  LIST_OPERATORS,
  listCount,
  predicateValueFromText,
  predicateValueText,
} from "./segment_values.tsx";

/** The most predicate rows a form posts. */
export const MAX_PREDICATE_ROWS = 500;

/** Each operator in words (an operator the engine gains later shows as its name). */
export const OPERATOR_WORDS: Readonly<Record<string, string>> = {
  eq: "equals",
  neq: "does not equal",
  in: "is one of (one value a line)",
  not_in: "is none of (one value a line)",
  lt: "is less than",
  lte: "is at most",
  gt: "is more than",
  gte: "is at least",
  starts_with: "starts with",
  ends_with: "ends with",
  contains: "contains",
  matches: "matches the pattern (RE2)",
  exists: "is present (true) or absent (false)",
  semver_eq: "is the version",
  semver_lt: "is a version below",
  semver_gt: "is a version above",
  before: "is a date-time before",
  after: "is a date-time after",
};

/**
 * The predicates of a posted form, empty and removed rows left out. A row
 * with a value and no attribute, or without an operator, or a value that
 * does not fit its operator, is refused naming its row; a reference
 * (`segment.<key>`) without an operator means `eq`.
 *
 * @param form the posted form
 * @returns the predicates and the row each came from
 * @throws {InvalidRequestError} naming `predicates.<row>.attribute`, `.op` or `.value`
 *
 * @example
 * ```ts
 * import { readPredicateRows } from "./predicate_rows.tsx";
 * const form = new Map([
 *   ["predicates.0.attribute", "user.id"], ["predicates.0.op", "in"], ["predicates.0.value", "u1\r\nu2"],
 *   ["predicates.1.attribute", ""], ["predicates.1.op", "eq"], ["predicates.1.value", ""],
 *   ["predicates.2.attribute", "segment.paying"], ["predicates.2.op", ""], ["predicates.2.value", ""],
 *   ["predicates.3.attribute", "user.beta"], ["predicates.3.op", "eq"], ["predicates.3.value", "true"],
 *   ["predicates.3.remove", "yes"],
 * ]);
 * const { predicates, rows } = readPredicateRows(form);
 * if (rows.join() !== "0,2") throw new Error(rows.join());
 * if (JSON.stringify(predicates[1]) !== '{"attribute":"segment.paying","op":"eq","value":true}') throw new Error();
 * ```
 */
export function readPredicateRows(
  form: ReadonlyMap<string, string>,
): { predicates: PredicateInput[]; rows: number[] } {
  const predicates: PredicateInput[] = [];
  const rows: number[] = [];
  for (const row of rowIndices(form, "predicates", MAX_PREDICATE_ROWS)) {
    const at = `predicates.${row}`;
    if (form.get(`${at}.remove`) === "yes") continue;
    const attribute = text(form, `${at}.attribute`);
    let op = text(form, `${at}.op`);
    const raw = form.get(`${at}.value`) ?? "";
    if (attribute === "" && raw.trim() === "") continue;
    if (attribute === "") {
      throw new InvalidRequestError(`Give predicate ${row + 1} an attribute`, {
        details: { field: `${at}.attribute` },
      });
    }
    const reference = refName(attribute, "segment") !== undefined;
    if (op === "" && reference) op = "eq";
    if (op === "") {
      throw new InvalidRequestError(`Choose the operator of predicate ${row + 1}`, {
        details: { field: `${at}.op` },
      });
    }
    predicates.push({
      attribute,
      op,
      value: predicateValueFromText(op, reference, raw, `${at}.value`),
    });
    rows.push(row);
  }
  return { predicates, rows };
}

/**
 * Runs an edit of predicates given in rows: a refusal naming the n-th
 * predicate (`predicates.<n>.…`) is thrown again naming its form row.
 *
 * @param rows the form row of each predicate
 * @param edit the edit
 * @returns what the edit returns
 *
 * @example
 * ```ts
 * import { predicateRowErrors } from "./predicate_rows.tsx";
 * import { InvalidRequestError } from "../../errors.ts";
 * try {
 *   predicateRowErrors([0, 4], () => { throw new InvalidRequestError("cycle", { details: { field: "predicates.1.attribute" } }); });
 * } catch (e) {
 *   if ((e as InvalidRequestError).details?.field !== "predicates.4.attribute") throw e;
 * }
 * ```
 */
export function predicateRowErrors<T>(rows: readonly number[], edit: () => T): T {
  try {
    return edit();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    const field = (err.details as { field?: unknown } | undefined)?.field;
    if (typeof field !== "string" || !field.startsWith("predicates.")) throw err;
    const [, n, ...rest] = field.split(".");
    const row = rows[Number(n)];
    if (row === undefined) throw err;
    throw new InvalidRequestError(err.message, {
      details: { ...err.details, field: ["predicates", row, ...rest].join(".") },
      cause: err,
    });
  }
}

/**
 * The rows: the predicates as written (or as posted when the form comes
 * back), then two empty rows to add predicates.
 *
 * @param props the form's state, the predicates as written, the other segments (references)
 * @returns the fieldset and the references' list
 *
 * @example
 * ```tsx
 * import { PredicateRows, OPERATOR_WORDS } from "./predicate_rows.tsx";
 * const state = { posted: new Map() } as never;
 * const html = String(await (
 *   <PredicateRows state={state} written={[{ attribute: "user.id", op: "in", value: ["a", "b"] }]} segments={["paying"]} />
 * ));
 * if (!html.includes('name="predicates.0.value"') || !html.includes("a\nb</textarea>")) throw new Error(html);
 * if (!html.includes('name="predicates.2.attribute"') || html.includes('name="predicates.3.attribute"')) throw new Error();
 * if (!html.includes('<option value="segment.paying">')) throw new Error("references to pick");
 * if (!html.includes(`>${OPERATOR_WORDS.after} (after)</option>`)) throw new Error();
 * ```
 */
export function PredicateRows(
  props: {
    state: FormState<unknown>;
    written: readonly PredicateAsWritten[];
    /** The keys of the segments a predicate may refer to. */
    segments: readonly string[];
  },
) {
  const { state, written, segments } = props;
  const posted = state.posted.size > 0;
  const count = posted ? postedRowCount(state.posted) : written.length + 2;
  const rows = Array.from({ length: Math.min(count, MAX_PREDICATE_ROWS) }, (_, i) => i);
  const valueOf = (i: number): [op: string, text: string] => {
    if (posted) {
      return [
        state.posted.get(`predicates.${i}.op`) ?? "",
        state.posted.get(`predicates.${i}.value`) ?? "",
      ];
    }
    const p = written[i];
    return p === undefined ? ["", ""] : [p.op, writtenText(p)];
  };
  return (
    <>
      <fieldset class="rows" id="predicates" {...fieldAttributes(state, "predicates")}>
        <legend>Predicates</legend>
        <p id="predicate-attribute-hint" class="small muted">
          Attribute: a dotted path into the context, such as <code>user.email</code> or{" "}
          <code>account.country</code>; or <code>segment.&lt;key&gt;</code>{" "}
          to test another segment (choose it from the list; value <code>true</code>: in it,{" "}
          <code>false</code>: not in it; a blank value is{" "}
          <code>true</code>). Leave a row empty to skip it.
        </p>
        <p id="predicate-value-hint" class="small muted">
          Value: "is one of" and "is none of" take one value a line (blank lines are skipped).
          Numbers and <code>true</code>/<code>false</code>{" "}
          are read as such, as in the TOML file (a list of them only when every line is one); put a
          value in double quotes to keep it as text (<code>"10"</code>). Dates for "before" and
          "after": an RFC 3339 date-time with its zone (<code>2026-01-01T00:00:00Z</code>) or a date
          (<code>2026-01-01</code>, midnight UTC).
        </p>
        {rows.map((i) => {
          const at = `predicates.${i}`;
          const [op, value] = valueOf(i);
          const attribute = posted
            ? state.posted.get(`${at}.attribute`) ?? ""
            : written[i]?.attribute ?? "";
          const filled = attribute !== "" || value.trim() !== "";
          const list = LIST_OPERATORS.has(op);
          const lines = list ? listCount(value) : 0;
          return (
            <fieldset class="row predicate">
              <legend>Predicate {i + 1}</legend>
              <div class="field">
                <label for={`predicate-${i}-attribute`}>Attribute</label>
                <input
                  id={`predicate-${i}-attribute`}
                  type="text"
                  name={`${at}.attribute`}
                  maxlength={256}
                  autocomplete="off"
                  spellcheck={false}
                  value={attribute}
                  {...(segments.length > 0 ? { list: "segment-references" } : {})}
                  {...fieldAttributes(state, `${at}.attribute`, "predicate-attribute-hint")}
                />
              </div>
              <div class="field">
                <label for={`predicate-${i}-op`}>Operator</label>
                <select
                  id={`predicate-${i}-op`}
                  name={`${at}.op`}
                  {...fieldAttributes(state, `${at}.op`)}
                >
                  <option value="">—</option>
                  {SEGMENT_OPERATORS.map((o) => (
                    <option value={o} selected={o === op}>
                      {OPERATOR_WORDS[o] ?? o} ({o})
                    </option>
                  ))}
                </select>
              </div>
              <div class="field predicate-value">
                <label for={`predicate-${i}-value`}>Value</label>
                <textarea
                  id={`predicate-${i}-value`}
                  name={`${at}.value`}
                  class={list ? "predicate-value list" : "predicate-value"}
                  rows={list ? Math.min(Math.max(lines, 3), 12) : 1}
                  spellcheck={false}
                  {...fieldAttributes(
                    state,
                    `${at}.value`,
                    list ? `predicate-${i}-count predicate-value-hint` : "predicate-value-hint",
                  )}
                >
                  {value}
                </textarea>
                {list
                  ? (
                    <span id={`predicate-${i}-count`} class="small muted">
                      {lines} value{lines === 1 ? "" : "s"}
                    </span>
                  )
                  : null}
              </div>
              {filled
                ? (
                  <div class="field check">
                    <input
                      id={`predicate-${i}-remove`}
                      type="checkbox"
                      name={`${at}.remove`}
                      value="yes"
                      checked={state.posted.get(`${at}.remove`) === "yes"}
                    />
                    <label for={`predicate-${i}-remove`}>Remove</label>
                  </div>
                )
                : null}
            </fieldset>
          );
        })}
      </fieldset>
      {segments.length === 0 ? null : (
        <datalist id="segment-references">
          {segments.map((s) => <option value={`segment.${s}`}></option>)}
        </datalist>
      )}
    </>
  );
}

/** The texts of lists as written, per list held in memory (the segment's as-written cache). */
const LIST_TEXTS = new WeakMap<readonly unknown[], string>();

/** A written predicate's value as its control shows it (a long list joined once). */
function writtenText(p: PredicateAsWritten): string {
  if (!Array.isArray(p.value)) return predicateValueText(p.op, p.value);
  let text = LIST_TEXTS.get(p.value);
  if (text === undefined) LIST_TEXTS.set(p.value, text = predicateValueText(p.op, p.value));
  return text;
}

/** The rows to draw again: every posted row, and two empty ones after the last filled. */
function postedRowCount(posted: ReadonlyMap<string, string>): number {
  const rows = rowIndices(posted, "predicates", MAX_PREDICATE_ROWS);
  let lastFilled = -1;
  for (const r of rows) {
    const filled = (posted.get(`predicates.${r}.attribute`) ?? "").trim() !== "" ||
      (posted.get(`predicates.${r}.value`) ?? "").trim() !== "";
    if (filled) lastFilled = r;
  }
  return Math.max(lastFilled + 3, (rows[rows.length - 1] ?? -1) + 1, 1);
}
