/**
 * Text from a server, made safe for a terminal: a server (or whoever wrote
 * a description, a message or a name it stores) could send escape
 * sequences that move the cursor, rewrite earlier lines or change the
 * terminal's title. Every command prints server text through one of these.
 *
 * @module
 */

/** C0 controls but tab and line feed, DEL and the C1 controls. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Every control character, and the bidirectional overrides and isolates that reorder a line. */
// deno-lint-ignore no-control-regex
const CELL_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Characters JSON may leave raw that a terminal reads as controls, or a line reader as breaks. */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * A line without control characters: each becomes U+FFFD (tab and line
 * feed stay).
 *
 * @param line text from a server
 * @returns the text, safe to print
 *
 * @example
 * ```ts
 * import { printable } from "./printable.ts";
 * if (printable("ok\u001b[2Jgone") !== "ok\uFFFD[2Jgone") throw new Error();
 * if (printable("two\nlines") !== "two\nlines") throw new Error();
 * ```
 */
export function printable(line: string): string {
  return line.replace(CONTROL, "\uFFFD");
}

/**
 * Text for one cell of a table row: line breaks and tabs become spaces,
 * other control characters and bidirectional overrides become U+FFFD, so
 * a value can neither break the row nor reorder it.
 *
 * @param text text from a server
 * @returns one safe line
 *
 * @example
 * ```ts
 * import { cellText } from "./printable.ts";
 * if (cellText("a\nb\tc\u202e\u009b") !== "a b c\uFFFD\uFFFD") throw new Error();
 * ```
 */
export function cellText(text: string): string {
  return text.replace(/[\t\n\r]/g, " ").replace(CELL_UNSAFE, "\uFFFD");
}

/**
 * A value as one line of JSON that a terminal cannot misread: what
 * `JSON.stringify` leaves raw among the controls (DEL, the C1 controls)
 * and the Unicode line and paragraph separators are written as `\u` escapes,
 * which parse back to the same value.
 *
 * @param value anything JSON can encode
 * @returns one line of JSON
 *
 * @example
 * ```ts
 * import { jsonLine } from "./printable.ts";
 * const line = jsonLine({ note: "x\u009b31m\u001b" });
 * if (line !== '{"note":"x\\u009b31m\\u001b"}') throw new Error(line);
 * if (JSON.parse(line).note !== "x\u009b31m\u001b") throw new Error();
 * ```
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    JSON_UNSAFE,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
