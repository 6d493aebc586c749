/**
 * Field checks of parsed TOML records, shared by the workspace loader and
 * the flag-manifest validator so that one mistake reads the same in both:
 * unknown keys, `schema_version`, required and optional strings, integers,
 * booleans, tables and arrays of tables. Each problem names the file and
 * the key path inside it (`resolve.rule[2].value`); the messages are
 *
 * - `unknown key "k" (allowed: a, b)`
 * - `required field is missing` (`required table is missing` for a table;
 *   with a hint for `schema_version` and for `[[x]]`)
 * - `expected a string, found the integer 3` (and the like)
 * - `unsupported schema_version 2 (this cfgtool reads schema_version 1)`
 *
 * Checks that only make sense for one kind of file (a flag's type, a
 * rollout's weights) stay with their callers, which build their messages
 * with {@linkcode describe} and report through {@linkcode FieldChecker.report}.
 *
 * @module
 */
import type { Problem } from "./errors.ts";
import type { TomlTable } from "./toml.ts";

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** What a missing required field is reported as. */
const MISSING = "required field is missing";

/**
 * Appends a key or an index to a key path: `resolve` + `rule` gives
 * `resolve.rule`, `resolve.rule` + 2 gives `resolve.rule[2]`. Keys that are
 * not bare TOML keys are quoted.
 *
 * @param prefix the key path so far (`""` at the top of the file)
 * @param key a key, or an index into an array
 * @returns the longer key path
 *
 * @example
 * ```ts
 * import { keyPath } from "./toml_fields.ts";
 * if (keyPath(keyPath(keyPath("resolve", "rule"), 2), "value") !== "resolve.rule[2].value") {
 *   throw new Error();
 * }
 * if (keyPath("", "a b") !== '"a b"') throw new Error();
 * ```
 */
export function keyPath(prefix: string, key: string | number): string {
  if (typeof key === "number") return `${prefix}[${key}]`;
  const k = BARE_KEY.test(key) ? key : JSON.stringify(key);
  return prefix === "" ? k : `${prefix}.${k}`;
}

/**
 * True for a plain object (a TOML table), false for arrays and scalars.
 *
 * @param v a parsed TOML value
 * @returns whether `v` is a table
 *
 * @example
 * ```ts
 * import { isTable } from "./toml_fields.ts";
 * if (!isTable({}) || isTable([]) || isTable(null)) throw new Error();
 * ```
 */
export function isTable(v: unknown): v is TomlTable {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Describes a value for a message: `the string "x"`, `the integer 3`,
 * `the number 2.5`, `the boolean true`, `an array`, `a table`; long strings
 * are shortened to 40 characters.
 *
 * @param v a parsed TOML value
 * @returns the words for it
 *
 * @example
 * ```ts
 * import { describe } from "./toml_fields.ts";
 * if (describe(3) !== "the integer 3" || describe([]) !== "an array") throw new Error();
 * if (describe("x") !== 'the string "x"') throw new Error();
 * ```
 */
export function describe(v: unknown): string {
  if (typeof v === "string") return `the string ${JSON.stringify(truncate(v))}`;
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    return Number.isInteger(v) ? `the integer ${v}` : `the number ${v}`;
  }
  if (typeof v === "boolean") return `the boolean ${v}`;
  if (Array.isArray(v)) return "an array";
  if (isTable(v)) return "a table";
  return String(v);
}

function truncate(s: string): string {
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** The inclusive bounds of an integer field. */
export interface IntegerRange {
  /** The smallest allowed value. */
  min: number;
  /** The largest allowed value. */
  max: number;
}

/**
 * Checks the fields of one file and collects its problems. Every getter
 * takes the table, the key path of that table (`""` at the top of the file)
 * and the key; it returns the value when it has the right type, and
 * `undefined` when it is absent (a problem if `required`) or wrong (always
 * a problem).
 *
 * @example
 * ```ts
 * import { FieldChecker } from "./toml_fields.ts";
 * const c = new FieldChecker("variables/x.toml");
 * c.unknownKeys({ typo: 1 }, "", ["type"]);
 * if (c.string({ type: 3 }, "", "type", true) !== undefined) throw new Error();
 * const lines = c.problems.map((p) => `${p.key}: ${p.message}`);
 * if (lines[0] !== 'typo: unknown key "typo" (allowed: type)') throw new Error();
 * if (lines[1] !== "type: expected a string, found the integer 3") throw new Error();
 * ```
 */
export class FieldChecker {
  /**
   * @param path the file, relative and `/`-separated, as problems name it
   * @param problems where problems are added (a new list unless given)
   */
  constructor(readonly path: string, readonly problems: Problem[] = []) {}

  /** Records a problem at a key path (`""`: the file as a whole). */
  report(key: string, message: string): void {
    this.problems.push(
      key === "" ? { path: this.path, message } : { path: this.path, key, message },
    );
  }

  /** Reports every key of `table` (at `prefix`) not in `allowed`. */
  unknownKeys(table: TomlTable, prefix: string, allowed: readonly string[]): void {
    for (const k of Object.keys(table)) {
      if (!allowed.includes(k)) {
        this.report(
          keyPath(prefix, k),
          `unknown key ${JSON.stringify(k)} (allowed: ${allowed.join(", ")})`,
        );
      }
    }
  }

  /**
   * Reports `key` when `table` lacks it; returns whether it is present.
   * For fields whose type the caller checks itself.
   */
  present(table: TomlTable, prefix: string, key: string): boolean {
    if (table[key] !== undefined) return true;
    this.report(keyPath(prefix, key), MISSING);
    return false;
  }

  /** Checks that the top-level `schema_version` is the integer `supported`. */
  schemaVersion(table: TomlTable, supported: number): void {
    const v = table.schema_version;
    if (v === undefined) {
      this.report("schema_version", `${MISSING} (use schema_version = ${supported})`);
    } else if (typeof v !== "number" || !Number.isInteger(v)) {
      this.report("schema_version", `expected an integer, found ${describe(v)}`);
    } else if (v !== supported) {
      this.report(
        "schema_version",
        `unsupported schema_version ${v} (this cfgtool reads schema_version ${supported})`,
      );
    }
  }

  /** A string field. */
  string(table: TomlTable, prefix: string, key: string, required: boolean): string | undefined {
    const v = this.#get(table, prefix, key, required);
    if (v === undefined || typeof v === "string") return v;
    this.report(keyPath(prefix, key), `expected a string, found ${describe(v)}`);
    return undefined;
  }

  /** An integer field, optionally within `range` (both ends included). */
  integer(
    table: TomlTable,
    prefix: string,
    key: string,
    required: boolean,
    range?: IntegerRange,
  ): number | undefined {
    const v = this.#get(table, prefix, key, required);
    if (v === undefined) return undefined;
    if (
      typeof v === "number" && Number.isInteger(v) &&
      (range === undefined || (v >= range.min && v <= range.max))
    ) {
      return v;
    }
    const want = range === undefined
      ? "an integer"
      : `an integer from ${range.min} to ${range.max}`;
    this.report(keyPath(prefix, key), `expected ${want}, found ${describe(v)}`);
    return undefined;
  }

  /** A boolean field. */
  boolean(table: TomlTable, prefix: string, key: string, required: boolean): boolean | undefined {
    const v = this.#get(table, prefix, key, required);
    if (v === undefined || typeof v === "boolean") return v;
    this.report(keyPath(prefix, key), `expected a boolean, found ${describe(v)}`);
    return undefined;
  }

  /** A table field (`[key]` or an inline table). */
  table(
    table: TomlTable,
    prefix: string,
    key: string,
    required: boolean,
  ): TomlTable | undefined {
    const v = table[key];
    const at = keyPath(prefix, key);
    if (v === undefined) {
      if (required) this.report(at, "required table is missing");
      return undefined;
    }
    if (isTable(v)) return v;
    this.report(at, `expected a table, found ${describe(v)}`);
    return undefined;
  }

  /**
   * An array-of-tables field (`[[key]]`). Returns one slot per item, in
   * order, so that item `i` keeps its key path `key[i]`: the table, or
   * `undefined` for an item that is not a table (reported).
   */
  tables(
    table: TomlTable,
    prefix: string,
    key: string,
    required: boolean,
  ): (TomlTable | undefined)[] | undefined {
    const v = table[key];
    const at = keyPath(prefix, key);
    if (v === undefined) {
      if (required) this.report(at, `${MISSING} (add at least one [[${at}]])`);
      return undefined;
    }
    if (!Array.isArray(v)) {
      this.report(at, `expected an array of tables ([[${at}]]), found ${describe(v)}`);
      return undefined;
    }
    return v.map((item, i) => this.asTable(item, keyPath(at, i)));
  }

  /** Returns `v` when it is a table; otherwise reports it at `key` and returns undefined. */
  asTable(v: unknown, key: string): TomlTable | undefined {
    if (isTable(v)) return v;
    this.report(key, `expected a table, found ${describe(v)}`);
    return undefined;
  }

  /** The value of `key`, reporting it when required and absent. */
  #get(table: TomlTable, prefix: string, key: string, required: boolean): unknown {
    const v = table[key];
    if (v === undefined && required) this.report(keyPath(prefix, key), MISSING);
    return v;
  }
}
