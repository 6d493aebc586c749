/**
 * Checks of what a person typed into an authoring form. Each refusal is an
 * {@linkcode InvalidRequestError} whose message says what is wrong in
 * words and whose `details.field` names the form field
 * (`variations.0.value`, `rules.2.weights`, `predicates.1.value`).
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import { MAX_DESCRIPTION_LENGTH } from "../../protocol/limits.ts";
import { didYouMean, quoteName } from "../../suggest.ts";
import { MAX_TOML_DEPTH } from "../../toml.ts";
import { type FlagType, KEY_RE, VARIATION_NAME_RE, type VariationValue } from "../model.ts";
import { isTable } from "./_doc.ts";

/**
 * Refuses a request, naming the form field.
 *
 * @param message what is wrong, as a sentence
 * @param field the form field
 * @param details more facts for the caller
 */
export function refuse(
  message: string,
  field: string,
  details: Record<string, unknown> = {},
): never {
  throw new InvalidRequestError(message, { details: { field, ...details } });
}

/** A key for something new: a flag, a segment or an environment. */
export function checkKey(v: unknown, field: string, what: string): string {
  if (typeof v !== "string" || v === "") refuse(`Give the ${what} a key`, field);
  if (!KEY_RE.test(v)) {
    refuse(
      `${quoteName(v)} is not a valid ${what} key: use lower-case letters, digits, ".", "_" ` +
        'and "-", starting with a letter or digit, at most 63 characters',
      field,
    );
  }
  return v;
}

/** A string a person typed: text, not a lone half of a surrogate pair. */
export function checkString(v: unknown, field: string, label: string): string {
  if (typeof v !== "string") refuse(`${label} must be text`, field);
  if (!v.isWellFormed()) refuse(`${label} holds a character that is not valid Unicode`, field);
  return v;
}

/** A description: text of at most {@linkcode MAX_DESCRIPTION_LENGTH} characters. */
export function checkDescription(v: unknown, field = "description"): string {
  const s = checkString(v, field, "The description");
  if (s.length > MAX_DESCRIPTION_LENGTH) {
    refuse(
      `The description is ${s.length} characters long; the limit is ${MAX_DESCRIPTION_LENGTH}`,
      field,
      { limit: MAX_DESCRIPTION_LENGTH },
    );
  }
  return s;
}

/** A yes or no. */
export function checkBoolean(v: unknown, field: string, label: string): boolean {
  if (typeof v !== "boolean") refuse(`${label} must be true or false`, field);
  return v;
}

/** One item of a list of `length` (0-based; messages count from 1). */
export function checkIndex(
  v: unknown,
  field: string,
  length: number,
  what: string,
  where: string,
): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= length) {
    refuse(
      `There is no ${what} ${shown(v)} in ${where} (there ${
        length === 1 ? "is 1" : `are ${length}`
      })`,
      field,
    );
  }
  return v;
}

/** A position to insert at in a list of `length` (0 to `length`; messages count from 1). */
export function checkPosition(v: unknown, field: string, length: number, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > length) {
    refuse(`A new ${what} goes at a position from 1 to ${length + 1}, not ${shown(v)}`, field);
  }
  return v;
}

function shown(v: unknown): string {
  return typeof v === "number" && Number.isInteger(v) ? String(v + 1) : JSON.stringify(v) ?? "none";
}

/** A variation name. */
export function checkVariationName(v: unknown, field: string): string {
  if (typeof v !== "string" || v === "") refuse("Give the variation a name", field);
  if (!VARIATION_NAME_RE.test(v)) {
    refuse(
      `${quoteName(v)} is not a valid variation name: start with a letter, then letters, ` +
        'digits, ".", "_" or "-", at most 63 characters',
      field,
    );
  }
  return v;
}

/**
 * A variation value of the flag's type; an object value must be a JSON
 * object that TOML can hold (no `null`, no `NaN` or `Infinity`).
 */
export function checkValue(type: FlagType, v: unknown, field: string): VariationValue {
  switch (type) {
    case "boolean":
      if (typeof v !== "boolean") refuse(`A boolean flag's value is true or false`, field);
      return v;
    case "string":
      return checkString(v, field, "The value");
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) {
        refuse("A number flag's value is a finite number", field);
      }
      return v;
    case "object": {
      if (!isTable(v) || Object.getPrototypeOf(v) !== Object.prototype) {
        refuse("An object flag's value is a JSON object ({ … })", field);
      }
      checkJson(v, "value", field, 1);
      return v as VariationValue;
    }
  }
}

function checkJson(v: unknown, at: string, field: string, depth: number): void {
  if (depth > MAX_TOML_DEPTH - 4) {
    refuse(`The value nests deeper than ${MAX_TOML_DEPTH - 4} levels at ${at}`, field);
  }
  if (v === null) {
    refuse(`${at} is null, which TOML cannot hold: remove it or give it a value`, field);
  }
  if (typeof v === "string") {
    if (!v.isWellFormed()) refuse(`${at} holds a character that is not valid Unicode`, field);
    return;
  }
  if (typeof v === "boolean") return;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) refuse(`${at} is ${v}, which is not a JSON number`, field);
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => checkJson(x, `${at}[${i}]`, field, depth + 1));
    return;
  }
  if (isTable(v) && Object.getPrototypeOf(v) === Object.prototype) {
    for (const [k, x] of Object.entries(v)) {
      if (!k.isWellFormed()) refuse(`A key in ${at} is not valid Unicode`, field);
      checkJson(x, `${at}.${k}`, field, depth + 1);
    }
    return;
  }
  refuse(`${at} is not a JSON value`, field);
}

/** A name from a list the person picks from (a variation, a segment, an environment). */
export function checkKnown(
  v: unknown,
  known: readonly string[],
  field: string,
  what: string,
  plural: string,
): string {
  if (typeof v !== "string" || !known.includes(v)) {
    const name = typeof v === "string" ? quoteName(v) : String(v);
    const hint = typeof v === "string" ? didYouMean(v, known) : "";
    const list = known.length === 0
      ? "none"
      : known.length <= 10
      ? known.join(", ")
      : `${known.slice(0, 10).join(", ")}, … (${known.length} in all)`;
    refuse(`Unknown ${what} ${name}${hint} (${plural}: ${list})`, field);
  }
  return v;
}

/** The message and field of the first problem of a list, for {@linkcode refuse}. */
export function capitalized(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}
