/**
 * A predicate's value as the segment form types it, and back. One text
 * control holds every value; the operator says how it is read, as the
 * TOML author would write it:
 *
 * - `in`, `not_in`: a list, one value a line (lines trimmed, blank lines
 *   skipped). Every line a number: numbers; every line `true`/`false`:
 *   booleans; else texts (the engine wants items of one type).
 * - `eq`, `neq`, and a reference to another segment: `true`/`false` is a
 *   boolean, a number is a number, anything else a text. A reference's
 *   blank value is `true` (in that segment).
 * - `lt`, `lte`, `gt`, `gte`: a number. `exists`: `true` (blank) or `false`.
 * - every other operator: the text as typed (trimmed).
 *
 * A value in double quotes is read as a JSON string: it keeps `"10"` or
 * `"true"` as text, and spaces at either end. Drawing a value back quotes
 * exactly the texts that would otherwise be read as something else, so a
 * form posted unchanged writes the file unchanged.
 *
 * Numbers are TOML's decimal numbers: an optional sign, digits without a
 * leading zero, an optional fraction and exponent (`007` and `0x10` are
 * texts). No regular expression reads these values: a 10,000-line list is
 * a split and a scan per line.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import type { Scalar } from "../../flags/conditions.ts";

/** The operators whose value is a list, one value a line. */
export const LIST_OPERATORS: ReadonlySet<string> = new Set(["in", "not_in"]);
const NUMBER_OPERATORS: ReadonlySet<string> = new Set(["lt", "lte", "gt", "gte"]);
const INFERRED_OPERATORS: ReadonlySet<string> = new Set(["eq", "neq"]);

/**
 * The value a predicate's form control holds, read for its operator.
 *
 * @param op the operator
 * @param reference whether the attribute is `segment.<key>`
 * @param raw the control's text
 * @param field the control's name (refusals name it)
 * @returns the value
 * @throws {InvalidRequestError} naming `field` when the text does not fit the operator
 *
 * @example
 * ```ts
 * import { predicateValueFromText } from "./segment_values.tsx";
 * const ids = predicateValueFromText("in", false, "u1\r\n\r\n u2 \r\n", "v");
 * if (JSON.stringify(ids) !== '["u1","u2"]') throw new Error(JSON.stringify(ids));
 * if (JSON.stringify(predicateValueFromText("in", false, "1\n2.5", "v")) !== "[1,2.5]") throw new Error();
 * if (predicateValueFromText("eq", false, "true", "v") !== true) throw new Error();
 * if (predicateValueFromText("eq", false, '"10"', "v") !== "10") throw new Error();
 * if (predicateValueFromText("eq", true, "", "v") !== true) throw new Error("a reference: in it");
 * if (predicateValueFromText("after", false, "2026-01-01", "v") !== "2026-01-01") throw new Error();
 * try { predicateValueFromText("gt", false, "ten", "v"); throw new Error(); } catch (e) {
 *   if ((e as { details?: { field?: string } }).details?.field !== "v") throw e;
 * }
 * ```
 */
export function predicateValueFromText(
  op: string,
  reference: boolean,
  raw: string,
  field: string,
): Scalar | Scalar[] {
  if (LIST_OPERATORS.has(op)) return listFromText(raw, field);
  const value = raw.trim();
  if (value.includes("\n") || value.includes("\r")) {
    refuse('Only "is one of" and "is none of" take a list: give one value', field);
  }
  if (reference || op === "exists") {
    if (value === "" || value === "true") return true;
    if (value === "false") return false;
    refuse(
      reference
        ? "A reference to a segment is true (in it) or false (not in it)"
        : "Give true (the attribute is present) or false (it is absent)",
      field,
    );
  }
  if (value === "") refuse("Give the value the attribute is compared with", field);
  if (NUMBER_OPERATORS.has(op)) {
    const n = numberOf(value);
    if (n === undefined) {
      refuse(`${JSON.stringify(value)} is not a number (such as 10 or 2.5)`, field);
    }
    return n;
  }
  if (isQuoted(value)) return unquoted(value, field);
  if (!INFERRED_OPERATORS.has(op)) return value;
  if (value === "true" || value === "false") return value === "true";
  return numberOf(value) ?? value;
}

/**
 * A predicate's value as its form control shows it: a list one value a
 * line, texts quoted where reading them back would give something else.
 *
 * @param op the operator
 * @param value the value as written
 * @returns the control's text
 *
 * @example
 * ```ts
 * import { predicateValueFromText, predicateValueText } from "./segment_values.tsx";
 * if (predicateValueText("in", ["a", "b"]) !== "a\nb") throw new Error();
 * if (predicateValueText("in", ["1", "2"]) !== '"1"\n"2"') throw new Error("texts that look like numbers");
 * if (predicateValueText("eq", "true") !== '"true"' || predicateValueText("eq", true) !== "true") throw new Error();
 * for (const [op, v] of [["in", ["1", "x"]], ["eq", " x "], ["neq", 10], ["in", [true]], ["starts_with", "10"]] as const) {
 *   const back = predicateValueFromText(op, false, predicateValueText(op, v), "v");
 *   if (JSON.stringify(back) !== JSON.stringify(v)) throw new Error(`${op} ${JSON.stringify(back)}`);
 * }
 * ```
 */
export function predicateValueText(op: string, value: unknown): string {
  if (Array.isArray(value)) {
    const texts = value.every((v) => typeof v === "string");
    // A list of texts each of which reads as a number (or each as a boolean) would come back converted.
    const converted = texts && value.length > 0 &&
      (value.every((v) => numberOf(v) !== undefined) ||
        value.every((v) => v === "true" || v === "false"));
    return value.map((v) =>
      typeof v !== "string" ? String(v) : converted || needsQuotes(v) ? JSON.stringify(v) : v
    ).join("\n");
  }
  if (typeof value !== "string") return value === undefined || value === null ? "" : String(value);
  const inferred = INFERRED_OPERATORS.has(op) &&
    (value === "true" || value === "false" || numberOf(value) !== undefined);
  return inferred || needsQuotes(value) ? JSON.stringify(value) : value;
}

/**
 * How many values a list control holds (its non-blank lines), for its hint.
 *
 * @param raw the control's text
 * @returns the count
 *
 * @example
 * ```ts
 * import { listCount } from "./segment_values.tsx";
 * if (listCount("a\r\n\r\nb\n  \n") !== 2) throw new Error();
 * ```
 */
export function listCount(raw: string): number {
  let n = 0;
  for (const line of raw.split("\n")) if (line.trim() !== "") n++;
  return n;
}

/** The list of `in`/`not_in`. */
function listFromText(raw: string, field: string): Scalar[] {
  const lines: string[] = [];
  let quoted = false;
  for (const line of raw.split("\n")) {
    const t = line.trim();
    if (t === "") continue;
    if (isQuoted(t)) quoted = true;
    lines.push(t);
  }
  if (lines.length === 0) refuse("Give at least one value, one a line", field);
  if (!quoted) {
    if (lines.every((l) => l === "true" || l === "false")) return lines.map((l) => l === "true");
    const numbers: number[] = [];
    for (const l of lines) {
      const n = numberOf(l);
      if (n === undefined) break;
      numbers.push(n);
    }
    if (numbers.length === lines.length) return numbers;
  }
  return lines.map((l, i) => isQuoted(l) ? unquoted(l, field, i + 1) : l);
}

/** A TOML decimal number, or undefined (no leading zeros, no hex, no `inf`). */
function numberOf(s: string): number | undefined {
  const n = s.length;
  let i = 0;
  if (s[i] === "-" || s[i] === "+") i++;
  const start = i;
  while (i < n && isDigit(s.charCodeAt(i))) i++;
  if (i === start || (s[start] === "0" && i - start > 1)) return undefined;
  if (s[i] === ".") {
    const from = ++i;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (i === from) return undefined;
  }
  if (s[i] === "e" || s[i] === "E") {
    i++;
    if (s[i] === "-" || s[i] === "+") i++;
    const from = i;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (i === from) return undefined;
  }
  if (i !== n) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isQuoted(s: string): boolean {
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"');
}

/** A text that reads back as itself only in quotes. */
function needsQuotes(s: string): boolean {
  return s === "" || s.trim() !== s || s.startsWith('"') || s.includes("\n") || s.includes("\r");
}

function unquoted(s: string, field: string, line?: number): string {
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    v = undefined;
  }
  if (typeof v !== "string") {
    refuse(
      `${line === undefined ? "The value" : `Line ${line}`} is in double quotes but is not a ` +
        'quoted text (write \\" for a quote inside it)',
      field,
    );
  }
  return v;
}

function refuse(message: string, field: string): never {
  throw new InvalidRequestError(message, { details: { field } });
}
