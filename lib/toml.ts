/**
 * The one place that reads TOML into plain records. Syntax errors become a
 * {@linkcode Problem} with the file, line and column that smol-toml reports,
 * and with a message that says what a person got wrong: smol-toml's wording
 * describes the parser's state ("control characters are not allowed in
 * strings" for a string left open), so the common cases are reworded here
 * from the message and the text at the error position. Field checks
 * (unknown keys, missing fields, wrong types, at key paths) are in
 * lib/toml_fields.ts.
 *
 * @module
 */
import { parse, TomlDate, TomlError } from "toml";
import type { Problem } from "./errors.ts";

/** A parsed TOML document: a plain object (prototype-free records converted). */
export type TomlTable = Record<string, unknown>;

/** The outcome of parsing one file: the table, or the syntax problem. */
export type TomlResult = { ok: true; table: TomlTable } | { ok: false; problem: Problem };

/**
 * Parses TOML text. `path` names the file in the problem it returns on a
 * syntax error (`<path>:<line>:<col>: <message>`). Dates become RFC 3339
 * strings, so every value is JSON-compatible.
 *
 * @param text the TOML source
 * @param path the file path to report, relative and `/`-separated
 * @returns `{ok: true, table}` or `{ok: false, problem}`
 *
 * @example
 * ```ts
 * import { parseToml } from "./toml.ts";
 * const r = parseToml("a = 1\n", "x.toml");
 * if (!r.ok || r.table.a !== 1) throw new Error();
 * const bad = parseToml("a = = 1\n", "x.toml");
 * if (bad.ok || bad.problem.line !== 1) throw new Error();
 * ```
 */
export function parseToml(text: string, path: string): TomlResult {
  try {
    const table = toPlain(parse(text));
    if (table === TOO_DEEP) {
      return {
        ok: false,
        problem: {
          path,
          message: `invalid TOML: tables and arrays nested deeper than ${MAX_TOML_DEPTH} levels`,
        },
      };
    }
    return { ok: true, table: table as TomlTable };
  } catch (err) {
    if (err instanceof TomlError) {
      const first = String(err.message).split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      const message = explainSyntaxError(first, text, err.line, err.column);
      return {
        ok: false,
        problem: { path, line: err.line, column: err.column, message: `invalid TOML: ${message}` },
      };
    }
    throw err;
  }
}

/**
 * Reads and parses a TOML file from disk. `relPath` is how the file is named
 * in problems.
 *
 * @example
 * ```ts
 * import { readToml } from "./toml.ts";
 * const file = await Deno.makeTempFile({ suffix: ".toml" });
 * await Deno.writeTextFile(file, "name = \"x\"\n");
 * const r = await readToml(file, "x.toml");
 * if (!r.ok || r.table.name !== "x") throw new Error();
 * ```
 */
export async function readToml(file: string | URL, relPath: string): Promise<TomlResult> {
  return parseToml(await Deno.readTextFile(file), relPath);
}

/**
 * Rewords a smol-toml syntax message for a person, using the text at the
 * error position (1-based `line` and `column`). Messages with no better
 * wording are returned as they are.
 *
 * @param message smol-toml's message, without its "Invalid TOML document: " prefix
 * @param text the TOML source
 * @param line the error's line
 * @param column the error's column
 * @returns the message to show
 *
 * @example
 * ```ts
 * import { explainSyntaxError } from "./toml.ts";
 * const m = explainSyntaxError("control characters are not allowed in strings", 'a = "x\n', 1, 7);
 * if (!m.startsWith("unterminated string")) throw new Error(m);
 * ```
 */
export function explainSyntaxError(
  message: string,
  text: string,
  line: number,
  column: number,
): string {
  const lineText = text.split(/\r?\n/)[line - 1] ?? "";
  const rest = lineText.slice(column - 1);
  const at = rest[0];
  switch (message) {
    case "control characters are not allowed in strings":
      if (at === undefined || at === "\r") {
        return 'unterminated string: close it on the same line ("""…""" strings may span lines)';
      }
      return `control character U+${
        at.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
      } is not allowed in a string; write it as an escape such as \\u${
        at.charCodeAt(0).toString(16).padStart(4, "0")
      }`;
    case "unfinished string":
      return "unterminated string: the file ends before the closing quote";
    case "invalid value": {
      if (rest.trim() === "" || rest.trimStart().startsWith("#")) {
        return 'missing value after "="';
      }
      const word = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(rest)?.[0];
      if (word !== undefined && /^(true|false)$/i.test(word)) {
        return `invalid value ${word}: booleans are lower-case true or false`;
      }
      if (word !== undefined) {
        return `invalid value ${word}: a string must be quoted ("${word}")`;
      }
      return "invalid value: expected a quoted string, a number, true or false, a date, " +
        "an [array] or an {inline table}";
    }
    case "illegal character in key": {
      if (/^\s*\[/.test(lineText) && !lineText.includes("=") && !lineText.includes("]")) {
        return 'unterminated table header: expected "]"';
      }
      if (at === ":") return 'expected "=" after the key (TOML writes key = value, not key: value)';
      const key = /^\s*([A-Za-z0-9_-]+)\s+$/.exec(lineText.slice(0, column - 1))?.[1];
      if (key !== undefined) return `expected "=" after the key ${JSON.stringify(key)}`;
      const found = at === undefined ? "the end of the line" : JSON.stringify(at);
      return `unexpected ${found} in a key: a key is a bare word (letters, digits, "_" and "-") ` +
        'or a quoted string, followed by "="';
    }
    case "unexpected end of key":
      return 'missing key before "="';
    case "incomplete key-value: cannot find end of key":
      return 'expected "=" after the key';
    case "trying to redefine an already defined table or value":
    case "trying to redefine an already defined value": {
      const table = tableHeaderName(lineText);
      if (table !== undefined) {
        return `duplicate table: [${shortened(table)}] is already defined above`;
      }
      const found = keyBeforeEquals(lineText);
      if (found === undefined) return "duplicate key: already defined above";
      const key = shortened(found);
      return key.includes(".")
        ? `duplicate key: ${key} conflicts with a key or table defined above`
        : `duplicate key: ${key} is already defined above`;
    }
    case "unrecognised escape sequence":
      return "invalid escape sequence in a string: write a backslash as \\\\, or use a " +
        "'literal string' where backslashes are plain characters";
    case "expected comma or end of structure":
      return 'expected "," or the closing "]" or "}" of an array or inline table left open';
    case "each key-value declaration must be followed by an end-of-line":
      return "expected the end of the line after the value (one key = value per line)";
    case "expected end of table array declaration":
      return 'unterminated table array header: expected "]]"';
    default:
      return message;
  }
}

/** Longest key or table name quoted in a message; longer ones are cut with "…". */
const MAX_QUOTED_NAME = 80;

/** A name as a message quotes it: at most {@linkcode MAX_QUOTED_NAME} characters. */
function shortened(name: string): string {
  return name.length <= MAX_QUOTED_NAME ? name : `${name.slice(0, MAX_QUOTED_NAME)}…`;
}

/** Whether a UTF-16 code unit is TOML whitespace (space or tab). */
const isTomlSpace = (code: number) => code === 0x20 || code === 0x09;

/** `line` from `from` on, without the TOML whitespace at both ends. */
function trimmedSlice(line: string, from: number, to: number): string {
  while (from < to && isTomlSpace(line.charCodeAt(from))) from++;
  while (to > from && isTomlSpace(line.charCodeAt(to - 1))) to--;
  return line.slice(from, to);
}

/**
 * The end of the quoted string that starts at `at` (the index after its
 * closing quote), or the line's length when it is not closed. Basic strings
 * (`"…"`) skip escaped characters; literal strings (`'…'`) have none.
 */
function endOfQuoted(line: string, at: number): number {
  const quote = line[at];
  for (let i = at + 1; i < line.length; i++) {
    if (quote === '"' && line[i] === "\\") i++;
    else if (line[i] === quote) return i + 1;
  }
  return line.length;
}

/**
 * The name of a table or table-array header line (`[a.b]`, `[[a]]`), as
 * written between the brackets, or undefined when the line is not a
 * header. One pass; `]` inside a quoted part of the name does not end it.
 *
 * @param line one line of TOML
 * @returns the name, or undefined
 *
 * @example
 * ```ts
 * import { tableHeaderName } from "./toml.ts";
 * if (tableHeaderName('  [[ environments."a]b" ]] # x') !== 'environments."a]b"') throw new Error();
 * if (tableHeaderName("a = [1]") !== undefined) throw new Error();
 * ```
 */
export function tableHeaderName(line: string): string | undefined {
  let i = 0;
  while (i < line.length && isTomlSpace(line.charCodeAt(i))) i++;
  if (line[i] !== "[") return undefined;
  while (line[i] === "[") i++;
  const start = i;
  while (i < line.length && line[i] !== "]") {
    i = line[i] === '"' || line[i] === "'" ? endOfQuoted(line, i) : i + 1;
  }
  if (i >= line.length) return undefined;
  const name = trimmedSlice(line, start, i);
  return name === "" ? undefined : name;
}

/**
 * The key of a `key = value` line, as written before the `=` (dotted and
 * quoted keys included), or undefined when the line has no `=` outside a
 * quoted key. One pass; `=` inside a quoted key does not end it.
 *
 * @param line one line of TOML
 * @returns the key, or undefined
 *
 * @example
 * ```ts
 * import { keyBeforeEquals } from "./toml.ts";
 * if (keyBeforeEquals('  a."b=c" = 1') !== 'a."b=c"') throw new Error();
 * if (keyBeforeEquals("[table]") !== undefined) throw new Error();
 * ```
 */
export function keyBeforeEquals(line: string): string | undefined {
  let i = 0;
  while (i < line.length && line[i] !== "=") {
    i = line[i] === '"' || line[i] === "'" ? endOfQuoted(line, i) : i + 1;
  }
  if (i >= line.length) return undefined;
  const key = trimmedSlice(line, 0, i);
  return key === "" ? undefined : key;
}

/** Deepest nesting of tables and arrays a document may have (`a.b.c…` counts each dot). */
export const MAX_TOML_DEPTH = 64;

/** What {@linkcode toPlain} returns for a document nested deeper than {@linkcode MAX_TOML_DEPTH}. */
const TOO_DEEP: unique symbol = Symbol("too deep");

/**
 * A parsed document as plain data (dates as RFC 3339 strings, records
 * without prototypes turned into plain objects), built with an explicit
 * stack: a key of 100,000 dots must not overflow the call stack.
 */
function toPlain(root: unknown): unknown {
  const leaf = (v: unknown) => v instanceof TomlDate ? v.toISOString() : v;
  const isNode = (v: unknown): v is object =>
    v !== null && typeof v === "object" && !(v instanceof TomlDate);
  if (!isNode(root)) return leaf(root);
  const out: Record<string, unknown> | unknown[] = Array.isArray(root) ? [] : {};
  const stack: { from: object; to: Record<string, unknown> | unknown[]; depth: number }[] = [
    { from: root, to: out, depth: 1 },
  ];
  while (stack.length > 0) {
    const { from, to, depth } = stack.pop()!;
    if (depth > MAX_TOML_DEPTH) return TOO_DEEP;
    for (const [k, x] of Object.entries(from)) {
      let value: unknown = leaf(x);
      if (isNode(x)) {
        value = Array.isArray(x) ? [] : {};
        stack.push({ from: x, to: value as Record<string, unknown> | unknown[], depth: depth + 1 });
      }
      if (Array.isArray(to)) to.push(value);
      else to[k] = value;
    }
  }
  return out;
}
