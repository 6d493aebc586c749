/**
 * Writing TOML for new content: values, `key = value` rows, `[table]` and
 * `[[array]]` sections, in the house style of examples/flags: one blank
 * line between sections, arrays of scalars on one line when they fit in
 * {@linkcode LINE_WIDTH} columns and one item a line (with a trailing
 * comma) when they do not, arrays of tables (rollouts) always one entry a
 * line, inline tables as `{ key = value, … }`. Only what is new is
 * rendered: everything already in a file keeps its own text (see
 * `_rewrite.ts`).
 *
 * @module
 */
import { isTable, tomlKey } from "./_doc.ts";

/** Columns a rendered line may take before an array breaks into one item a line. */
export const LINE_WIDTH = 100;

/** Where a value is written: its indentation and the column it starts at. */
export interface Place {
  /** Indentation of the row that holds it (the items of a long array are indented one more step). */
  indent: string;
  /** Column (0-based) of the value's first character. */
  column: number;
  /** Line ending. */
  nl: string;
}

/**
 * A TOML basic string: JSON's escapes are TOML's, except that TOML also
 * refuses a raw DEL (U+007F).
 */
export function tomlString(s: string): string {
  return JSON.stringify(s).replaceAll("\x7f", "\\u007F");
}

/**
 * A finite number as TOML reads it back: integers within the safe range
 * as integers, everything else as a float (an integral value beyond 2^53
 * with an exponent, since a TOML integer is 64-bit).
 */
export function tomlNumber(n: number): string {
  if (Number.isSafeInteger(n)) return String(n);
  if (Number.isInteger(n)) return n.toExponential();
  return String(n);
}

/** The value on one line. */
export function inlineValue(v: unknown): string {
  if (typeof v === "string") return tomlString(v);
  if (typeof v === "number") return tomlNumber(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    const items = v.map(inlineValue).join(", ");
    return v.some(isTable) ? `[ ${items} ]` : `[${items}]`;
  }
  if (isTable(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([k, x]) => `${tomlKey(k)} = ${inlineValue(x)}`).join(", ")} }`;
  }
  throw new TypeError(`cannot write ${String(v)} in TOML`);
}

/**
 * The value as it starts at `place`: an array of tables, or an array that
 * does not fit on the line, is written one item a line.
 */
export function renderValue(v: unknown, place: Place): string {
  const one = inlineValue(v);
  if (!Array.isArray(v) || v.length === 0) return one;
  if (!v.some(isTable) && place.column + one.length <= LINE_WIDTH) return one;
  const inner = place.indent + "  ";
  return `[${place.nl}${
    v.map((x) => `${inner}${inlineValue(x)},${place.nl}`).join("")
  }${place.indent}]`;
}

/** A `key = value` row. */
export function renderRow(key: string, v: unknown, indent: string, nl: string): string {
  const head = `${indent}${tomlKey(key)} = `;
  return head + renderValue(v, { indent, column: head.length, nl });
}

/** A table path as a section header writes it: `environments.production.rule`. */
export function headerKey(path: readonly (string | number)[]): string {
  return path.filter((p): p is string => typeof p === "string").map(tomlKey).join(".");
}

/** Whether a value is a non-empty array of tables (written as `[[…]]` sections). */
export function isTableArray(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.length > 0 && v.every(isTable);
}

/** Which arrays of tables are written as `[[…]]` sections (the others inline). */
export type SectionArrays = (path: readonly (string | number)[]) => boolean;

/** Options of {@linkcode renderSection}. */
export interface SectionOptions {
  /** `[[…]]`: one element of an array of tables. */
  element?: boolean;
  /** Line ending. */
  nl: string;
  /** A blank line between sections. */
  blank: boolean;
  /** Which arrays of tables are sections. */
  arrays: SectionArrays;
}

/**
 * A section with its rows, then its sub-tables that do not fit on a row
 * and its arrays of tables as sections of their own. Returns the lines
 * without a final line ending.
 */
export function renderSection(
  path: readonly (string | number)[],
  table: Record<string, unknown>,
  options: SectionOptions,
): string {
  const { nl } = options;
  const sep = options.blank ? nl + nl : nl;
  // Inside an element of an array of tables, everything is written inline.
  const indexed = hasIndex(path);
  const entries = Object.entries(table);
  // A table that only holds tables needs no header of its own: its
  // sub-tables are sections (`[variations.a]`, `[environments.production]`).
  const container = !options.element && !indexed && entries.length > 0 &&
    entries.every(([k, v]) => isTable(v) || (isTableArray(v) && options.arrays([...path, k])));
  const rows: string[] = [];
  const subs: string[] = [];
  for (const [k, v] of entries) {
    if (isTableArray(v) && !indexed && options.arrays([...path, k])) {
      v.forEach((item, i) =>
        subs.push(renderSection([...path, k, i], item, { ...options, element: true }))
      );
    } else if (isTable(v) && !indexed && (container || !fitsInline(k, v, ""))) {
      subs.push(renderSection([...path, k], v, { ...options, element: false }));
    } else rows.push(renderRow(k, v, "", nl));
  }
  if (container) return subs.join(sep);
  const head = options.element ? `[[${headerKey(path)}]]` : `[${headerKey(path)}]`;
  return [[head, ...rows].join(nl), ...subs].join(sep);
}

/** Whether `key = { … }` fits on one line (and holds no array of tables). */
export function fitsInline(key: string, v: Record<string, unknown>, indent: string): boolean {
  if (Object.values(v).some((x) => isTableArray(x))) return false;
  return indent.length + tomlKey(key).length + 3 + inlineValue(v).length <= LINE_WIDTH;
}

function hasIndex(path: readonly (string | number)[]): boolean {
  return path.some((p) => typeof p === "number");
}

/**
 * A whole new file: the root's rows, then its tables and arrays of tables
 * as sections, one blank line between sections (when `blank`).
 */
export function renderDocument(doc: Record<string, unknown>, options: SectionOptions): string {
  const { nl } = options;
  const rows: string[] = [];
  const subs: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    if (isTableArray(v) && options.arrays([k])) {
      v.forEach((item, i) => subs.push(renderSection([k, i], item, { ...options, element: true })));
    } else if (isTable(v)) subs.push(renderSection([k], v, { ...options, element: false }));
    else rows.push(renderRow(k, v, "", nl));
  }
  const parts = rows.length > 0 ? [rows.join(nl), ...subs] : subs;
  return parts.join(options.blank ? nl + nl : nl) + nl;
}
