/**
 * What every authoring form shares: the manifest's texts of the version a
 * form is drawn on, the field a refusal names, a control's attributes for
 * it, the value to draw (as posted, else as written), and the reading of
 * posted inputs (trimmed text, whole numbers, row lists).
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import { type ManifestTexts, textsOf } from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { FormState } from "../edit_flow.tsx";

const TEXTS = new WeakMap<ReadonlyMap<string, Uint8Array>, ManifestTexts>();

/**
 * A version's files as texts, decoded once per version held in memory.
 *
 * @param view the version
 * @returns path → text
 *
 * @example
 * ```ts
 * import { textsAt } from "./fields.ts";
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const view = { files } as unknown as Parameters<typeof textsAt>[0];
 * if (textsAt(view).get("namespace.toml") !== "schema_version = 1\n" || textsAt(view) !== textsAt(view)) throw new Error();
 * ```
 */
export function textsAt(view: Pick<NamespaceView, "files">): ManifestTexts {
  let texts = TEXTS.get(view.files);
  if (texts === undefined) {
    texts = textsOf(view.files);
    TEXTS.set(view.files, texts);
  }
  return texts;
}

/**
 * The form field a refusal names (`details.field`), if any.
 *
 * @param state the form's state
 * @returns the field
 *
 * @example
 * ```ts
 * import { refusedField } from "./fields.ts";
 * import { InvalidRequestError } from "../../errors.ts";
 * const refusal = new InvalidRequestError("no", { details: { field: "key" } });
 * if (refusedField({ refusal } as never) !== "key") throw new Error();
 * ```
 */
export function refusedField(state: Pick<FormState<unknown>, "refusal">): string | undefined {
  const field = (state.refusal?.details as { field?: unknown } | undefined)?.field;
  return typeof field === "string" ? field : undefined;
}

/**
 * The attributes of a control for `field`: marked invalid and described
 * by the refusal when the refusal names it (or a field under it), else by
 * its hint when it has one.
 *
 * @param state the form's state
 * @param field the library's field name (`key`, `variations.2.value`)
 * @param hint the id of the control's hint, if any
 * @returns `aria-invalid` and `aria-describedby`
 *
 * @example
 * ```ts
 * import { fieldAttributes } from "./fields.ts";
 * import { InvalidRequestError } from "../../errors.ts";
 * const refusal = new InvalidRequestError("no", { details: { field: "variations.1.value" } });
 * const a = fieldAttributes({ refusal } as never, "variations.1.value", "v-hint");
 * if (a["aria-invalid"] !== "true" || a["aria-describedby"] !== "edit-refusal v-hint") throw new Error();
 * if (fieldAttributes({} as never, "key")["aria-invalid"] !== undefined) throw new Error();
 * ```
 */
export function fieldAttributes(
  state: Pick<FormState<unknown>, "refusal">,
  field: string,
  hint?: string,
): Record<string, string> {
  const named = refusedField(state);
  const invalid = named !== undefined && (named === field || named.startsWith(`${field}.`));
  const described = [invalid ? "edit-refusal" : "", hint ?? ""].filter((s) => s !== "").join(" ");
  return {
    ...(invalid ? { "aria-invalid": "true" } : {}),
    ...(described === "" ? {} : { "aria-describedby": described }),
  };
}

/**
 * What a control shows: the value as posted when the form comes back
 * (a refusal, "edit again"), else the value as written.
 *
 * @param state the form's state
 * @param name the control's name
 * @param written the value in the version
 * @returns the value to draw
 *
 * @example
 * ```ts
 * import { shown } from "./fields.ts";
 * if (shown({ posted: new Map([["key", "x"]]) } as never, "key", "y") !== "x") throw new Error();
 * if (shown({ posted: new Map() } as never, "key", "y") !== "y") throw new Error();
 * ```
 */
export function shown(
  state: Pick<FormState<unknown>, "posted">,
  name: string,
  written: string,
): string {
  return state.posted.size === 0 ? written : state.posted.get(name) ?? "";
}

/**
 * A posted text field, trimmed (`""` when absent).
 *
 * @param form the posted form
 * @param name the field
 * @returns its text
 *
 * @example
 * ```ts
 * import { text } from "./fields.ts";
 * if (text(new Map([["key", " a "]]), "key") !== "a" || text(new Map(), "key") !== "") throw new Error();
 * ```
 */
export function text(form: ReadonlyMap<string, string>, name: string): string {
  return (form.get(name) ?? "").trim();
}

/**
 * A posted whole number in `[min, max]`, refused naming the field
 * otherwise.
 *
 * @param form the posted form
 * @param name the field
 * @param min the least value
 * @param max the greatest value
 * @param what what the number is, for the refusal
 * @returns the number
 * @throws {InvalidRequestError} when it is not such a number
 *
 * @example
 * ```ts
 * import { wholeNumber } from "./fields.ts";
 * if (wholeNumber(new Map([["to", "2"]]), "to", 0, 5, "The position") !== 2) throw new Error();
 * try { wholeNumber(new Map([["to", "x"]]), "to", 0, 5, "The position"); throw new Error(); } catch (e) {
 *   if ((e as { details?: { field?: string } }).details?.field !== "to") throw e;
 * }
 * ```
 */
export function wholeNumber(
  form: ReadonlyMap<string, string>,
  name: string,
  min: number,
  max: number,
  what: string,
): number {
  const raw = text(form, name);
  const n = /^-?\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidRequestError(`${what} must be a whole number from ${min} to ${max}`, {
      details: { field: name },
    });
  }
  return n;
}

/**
 * The indices of the rows a form posted under `prefix` (`variations.0.name`,
 * `variations.3.value` → 0, 3), in order, at most `max`.
 *
 * @param form the posted form
 * @param prefix the rows' prefix (`variations`)
 * @param max the most rows a form may post
 * @returns the row indices
 *
 * @example
 * ```ts
 * import { rowIndices } from "./fields.ts";
 * const form = new Map([["v.3.name", "a"], ["v.0.name", "b"], ["v.0.value", "1"], ["x", ""]]);
 * if (rowIndices(form, "v", 10).join() !== "0,3") throw new Error();
 * ```
 */
export function rowIndices(
  form: ReadonlyMap<string, string>,
  prefix: string,
  max: number,
): number[] {
  const found = new Set<number>();
  const head = `${prefix}.`;
  for (const name of form.keys()) {
    if (!name.startsWith(head)) continue;
    const rest = name.slice(head.length);
    const dot = rest.indexOf(".");
    const index = dot === -1 ? rest : rest.slice(0, dot);
    if (!/^\d{1,4}$/.test(index)) continue;
    const n = Number(index);
    if (n < max) found.add(n);
  }
  return [...found].sort((a, b) => a - b);
}
