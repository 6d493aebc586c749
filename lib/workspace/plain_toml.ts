/**
 * A reader for plain TOML, the part of the language that workspace files
 * use: comments, `[table]` and `[[array of tables]]` headers, bare and
 * dotted keys, basic and literal strings on one line, decimal integers,
 * decimal fractions, booleans, arrays and inline tables. It reads such a
 * file to the same record as the full reader (`parseToml` in lib/toml.ts,
 * on smol-toml) and gives up on anything else (dates, multi-line strings,
 * quoted keys, exponents, `inf`, hexadecimal, a redefined table, a
 * duplicate key, a syntax error: the full reader then reads the file and
 * words its problems). A process that reads only plain files, such as a
 * `cfgtool resolve` of a usual workspace, then never loads smol-toml
 * (lib/workspace/toml_reader.ts). tests/workspace/plain_toml_test.ts checks
 * that both readers agree on every document this one reads.
 *
 * @module
 */

/** A record as the full reader returns it (plain objects and arrays). */
type Table = Record<string, unknown>;

/**
 * How a table or array came to be, which decides what may add to it later:
 * a `[header]`, a longer header on its way (`a` of `[a.b]`), a dotted key
 * (`a.b = 1`), or a value (an inline table or an array), which is closed.
 */
type Kind = "header" | "implicit" | "dotted" | "closed";

/** Thrown inside the reader when the text is not plain: caught at the top. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * The deepest nesting read here, counting each header key as two levels (it
 * may be an array of tables); deeper documents go to the full reader, which
 * refuses those past its own limit (64).
 */
const MAX_DEPTH = 32;

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const INTEGER = /^-?(?:0|[1-9][0-9]*)$/;
const DECIMAL = /^-?(?:0|[1-9][0-9]*)\.[0-9]+$/;

/**
 * Reads a plain TOML document, or returns undefined when the text is not
 * plain TOML in the sense above (including every text that is not TOML at
 * all). What it returns equals what `parseToml` in lib/toml.ts returns for
 * the same text.
 *
 * @param text the document
 * @returns the record, or undefined
 *
 * @example
 * ```ts
 * import { parsePlainToml } from "./plain_toml.ts";
 * const t = parsePlainToml('a = 1\n[b]\nc = ["x", \'y\'] # note\n[[d]]\ne = 1.5\n');
 * if (JSON.stringify(t) !== '{"a":1,"b":{"c":["x","y"]},"d":[{"e":1.5}]}') throw new Error();
 * if (parsePlainToml("when = 2026-12-02\n") !== undefined) throw new Error("dates are not plain");
 * if (parsePlainToml("a = 1\na = 2\n") !== undefined) throw new Error("nor is a duplicate key");
 * ```
 */
export function parsePlainToml(text: string): Table | undefined {
  try {
    return new Reader(text).document();
  } catch (err) {
    if (err === NOT_PLAIN) return undefined;
    throw err;
  }
}

function notPlain(): never {
  throw NOT_PLAIN;
}

class Reader {
  readonly #text: string;
  #pos = 0;
  /** The nesting of the table the current lines fill (see `MAX_DEPTH`). */
  #depth = 0;
  readonly #kinds = new WeakMap<object, Kind>();

  constructor(text: string) {
    this.#text = text;
  }

  document(): Table {
    const root: Table = {};
    let table = root;
    const text = this.#text;
    while (true) {
      this.#spaces();
      if (this.#pos >= text.length) return root;
      const c = text[this.#pos];
      if (c === "\n") {
        this.#pos++;
        continue;
      }
      if (c === "#") {
        this.#comment();
        continue;
      }
      if (c === "[") {
        table = this.#header(root);
      } else {
        this.#keyValue(table);
      }
      this.#endOfLine();
    }
  }

  /** `[a.b]` or `[[a.b]]`; returns the table that the lines below fill. */
  #header(root: Table): Table {
    const text = this.#text;
    const array = text[this.#pos + 1] === "[";
    this.#pos += array ? 2 : 1;
    this.#spaces();
    const keys = this.#keys();
    this.#spaces();
    if (text[this.#pos] !== "]") notPlain();
    if (array && text[this.#pos + 1] !== "]") notPlain();
    this.#pos += array ? 2 : 1;
    this.#depth = 2 * keys.length;
    if (this.#depth > MAX_DEPTH) notPlain();
    let table = root;
    for (let i = 0; i < keys.length - 1; i++) table = this.#descend(table, keys[i]!);
    const last = keys[keys.length - 1]!;
    if (array) {
      let list = table[last];
      if (list === undefined) {
        list = [];
        table[last] = list;
      } else if (!Array.isArray(list) || this.#kinds.get(list) === "closed") {
        notPlain();
      }
      const element: Table = {};
      this.#kinds.set(element, "header");
      (list as Table[]).push(element);
      return element;
    }
    if (Object.hasOwn(table, last)) notPlain();
    const made: Table = {};
    this.#kinds.set(made, "header");
    table[last] = made;
    return made;
  }

  /** The table a header names under `table` by `key`, made when missing. */
  #descend(table: Table, key: string): Table {
    if (!Object.hasOwn(table, key)) {
      const made: Table = {};
      this.#kinds.set(made, "implicit");
      table[key] = made;
      return made;
    }
    const v = table[key];
    if (Array.isArray(v)) {
      // an array of tables: its last element
      if (this.#kinds.get(v) === "closed" || v.length === 0) notPlain();
      return v[v.length - 1] as Table;
    }
    const kind = typeof v === "object" && v !== null ? this.#kinds.get(v) : undefined;
    if (kind !== "header" && kind !== "implicit") notPlain();
    return v as Table;
  }

  /** `a.b.c = value` in `table`. */
  #keyValue(table: Table): void {
    const keys = this.#keys();
    this.#spaces();
    if (this.#text[this.#pos] !== "=") notPlain();
    this.#pos++;
    this.#spaces();
    let t = table;
    for (let i = 0; i < keys.length - 1; i++) {
      const k = keys[i]!;
      if (!Object.hasOwn(t, k)) {
        const made: Table = {};
        this.#kinds.set(made, "dotted");
        t[k] = made;
        t = made;
        continue;
      }
      const v = t[k];
      if (typeof v !== "object" || v === null || this.#kinds.get(v) !== "dotted") notPlain();
      t = v as Table;
    }
    const last = keys[keys.length - 1]!;
    if (Object.hasOwn(t, last)) notPlain();
    t[last] = this.#value(this.#depth + keys.length);
  }

  /** Bare keys joined by dots, no spaces around the dots. */
  #keys(): string[] {
    const keys = [this.#bareKey()];
    while (this.#text[this.#pos] === ".") {
      this.#pos++;
      keys.push(this.#bareKey());
    }
    return keys;
  }

  #bareKey(): string {
    const text = this.#text;
    const start = this.#pos;
    while (this.#pos < text.length && isBareKeyChar(text.charCodeAt(this.#pos))) this.#pos++;
    const key = text.slice(start, this.#pos);
    // `__proto__` would be the prototype, not a key, of a plain object
    if (key === "" || key === "__proto__" || !BARE_KEY.test(key)) notPlain();
    return key;
  }

  #value(depth: number): unknown {
    if (depth > MAX_DEPTH) notPlain();
    const text = this.#text;
    const c = text[this.#pos];
    if (c === '"') return this.#basicString();
    if (c === "'") return this.#literalString();
    if (c === "[") return this.#array(depth);
    if (c === "{") return this.#inlineTable(depth);
    const start = this.#pos;
    while (this.#pos < text.length && isAtomChar(text.charCodeAt(this.#pos))) this.#pos++;
    const atom = text.slice(start, this.#pos);
    if (atom === "true") return true;
    if (atom === "false") return false;
    if (atom === "-0") notPlain();
    if (INTEGER.test(atom)) {
      const n = Number(atom);
      if (!Number.isSafeInteger(n)) notPlain();
      return n;
    }
    if (DECIMAL.test(atom) && atom.length <= 24) return Number(atom);
    return notPlain();
  }

  #basicString(): string {
    const text = this.#text;
    if (text.startsWith('"""', this.#pos)) notPlain();
    let out = "";
    let i = this.#pos + 1;
    let from = i;
    while (true) {
      if (i >= text.length) notPlain();
      const code = text.charCodeAt(i);
      if (code === 0x22) break;
      if (isControl(code)) notPlain();
      if (code !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(from, i);
      const e = text[i + 1];
      const simple = e === undefined ? undefined : ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        i += 2;
      } else if (e === "u" || e === "U") {
        const len = e === "u" ? 4 : 8;
        const hex = text.slice(i + 2, i + 2 + len);
        if (hex.length !== len || !/^[0-9A-Fa-f]+$/.test(hex)) notPlain();
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) notPlain();
        out += String.fromCodePoint(cp);
        i += 2 + len;
      } else {
        notPlain();
      }
      from = i;
    }
    out += text.slice(from, i);
    this.#pos = i + 1;
    return out;
  }

  #literalString(): string {
    const text = this.#text;
    if (text.startsWith("'''", this.#pos)) notPlain();
    const start = this.#pos + 1;
    let i = start;
    while (true) {
      if (i >= text.length) notPlain();
      const code = text.charCodeAt(i);
      if (code === 0x27) break;
      if (isControl(code)) notPlain();
      i++;
    }
    this.#pos = i + 1;
    return text.slice(start, i);
  }

  /** `[v, v, …]`, over several lines with comments, a trailing comma allowed. */
  #array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.#kinds.set(out, "closed");
    this.#pos++;
    while (true) {
      this.#blank();
      if (this.#text[this.#pos] === "]") break;
      out.push(this.#value(depth + 1));
      this.#blank();
      const c = this.#text[this.#pos];
      if (c === ",") {
        this.#pos++;
        continue;
      }
      if (c !== "]") notPlain();
      break;
    }
    this.#pos++;
    return out;
  }

  /** `{ a = v, b = v }` on one line: bare keys, no trailing comma. */
  #inlineTable(depth: number): Table {
    const out: Table = {};
    this.#kinds.set(out, "closed");
    this.#pos++;
    this.#spaces();
    if (this.#text[this.#pos] === "}") {
      this.#pos++;
      return out;
    }
    while (true) {
      this.#spaces();
      const key = this.#bareKey();
      if (Object.hasOwn(out, key)) notPlain();
      this.#spaces();
      if (this.#text[this.#pos] !== "=") notPlain();
      this.#pos++;
      this.#spaces();
      out[key] = this.#value(depth + 1);
      this.#spaces();
      const c = this.#text[this.#pos];
      this.#pos++;
      if (c === "}") return out;
      if (c !== ",") notPlain();
    }
  }

  /** Spaces and tabs. */
  #spaces(): void {
    const text = this.#text;
    while (this.#pos < text.length) {
      const c = text.charCodeAt(this.#pos);
      if (c !== 0x20 && c !== 0x09) return;
      this.#pos++;
    }
  }

  /** Spaces, tabs, newlines and comments, between the values of an array. */
  #blank(): void {
    const text = this.#text;
    while (this.#pos < text.length) {
      const c = text[this.#pos];
      if (c === " " || c === "\t" || c === "\n") this.#pos++;
      else if (c === "#") this.#comment();
      else return;
    }
  }

  /** A comment up to (not including) the newline; control characters are not plain. */
  #comment(): void {
    const text = this.#text;
    this.#pos++;
    while (this.#pos < text.length) {
      const code = text.charCodeAt(this.#pos);
      if (code === 0x0a) return;
      if (isControl(code)) notPlain();
      this.#pos++;
    }
  }

  /** After a header or a key/value: spaces, a comment, then a newline or the end. */
  #endOfLine(): void {
    this.#spaces();
    if (this.#text[this.#pos] === "#") this.#comment();
    if (this.#pos >= this.#text.length) return;
    if (this.#text[this.#pos] !== "\n") notPlain();
    this.#pos++;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  '"': '"',
  "\\": "\\",
};

/** A control character other than tab (a carriage return included: `\r\n` files are not plain). */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09) || code === 0x7f;
}

function isBareKeyChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x2d;
}

/** Characters of a number or boolean as written here (`+`, `_`, `:` are not plain). */
function isAtomChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2d ||
    code === 0x2e || (code >= 0x41 && code <= 0x5a);
}
