/**
 * Field checks for the workspace's TOML files (variable, catalog, qualifier):
 * unknown keys, missing required fields, wrong types and `schema_version`,
 * each reported as a {@linkcode Problem} with a key path.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { SCHEMA_VERSION } from "./model.ts";

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/**
 * Appends a key or an index to a key path: `resolve` + `rule` gives
 * `resolve.rule`, `resolve.rule` + 2 gives `resolve.rule[2]`. Keys that are
 * not bare TOML keys are quoted.
 *
 * @example
 * ```ts
 * import { keyPath } from "./fields.ts";
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

/** The JSON-ish name of a value's type, for messages. */
function typeName(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (v === null) return "null";
  if (typeof v === "object") return "a table";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a float";
  return `a ${typeof v}`;
}

/**
 * Collects the problems of one file; `path` is the file's relative path.
 *
 * @example
 * ```ts
 * import { FieldChecker } from "./fields.ts";
 * const c = new FieldChecker("variables/x.toml");
 * c.knownKeys({ typo: 1 }, ["type"], "");
 * if (c.problems[0]?.key !== "typo") throw new Error();
 * ```
 */
export class FieldChecker {
  /** Problems found so far, in the order found. */
  readonly problems: Problem[] = [];

  constructor(readonly path: string) {}

  /** Records a problem at a key path. */
  add(key: string, message: string): void {
    this.problems.push({ path: this.path, key, message });
  }

  /** Reports every key of `table` not in `allowed`. */
  knownKeys(table: Record<string, unknown>, allowed: readonly string[], prefix: string): void {
    for (const k of Object.keys(table)) {
      if (!allowed.includes(k)) {
        this.add(keyPath(prefix, k), `unknown key "${k}" (allowed: ${allowed.join(", ")})`);
      }
    }
  }

  /** Checks `schema_version` is present and equal to 1. */
  schemaVersion(table: Record<string, unknown>): void {
    const v = table.schema_version;
    if (v === undefined) {
      this.add(
        "schema_version",
        `required field is missing (use schema_version = ${SCHEMA_VERSION})`,
      );
    } else if (typeof v !== "number" || !Number.isInteger(v)) {
      this.add("schema_version", `must be an integer, not ${typeName(v)}`);
    } else if (v !== SCHEMA_VERSION) {
      this.add(
        "schema_version",
        `unsupported schema_version ${v} (this cfgtool reads schema_version ${SCHEMA_VERSION})`,
      );
    }
  }

  /** Returns a string field; reports it when missing (if required) or not a string. */
  string(
    table: Record<string, unknown>,
    key: string,
    prefix: string,
    required: boolean,
  ): string | undefined {
    const v = table[key];
    const at = keyPath(prefix, key);
    if (v === undefined) {
      if (required) this.add(at, "required field is missing");
      return undefined;
    }
    if (typeof v !== "string") {
      this.add(at, `must be a string, not ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  /** Returns a table field; reports it when missing (if required) or not a table. */
  table(
    table: Record<string, unknown>,
    key: string,
    prefix: string,
    required: boolean,
  ): Record<string, unknown> | undefined {
    const v = table[key];
    const at = keyPath(prefix, key);
    if (v === undefined) {
      if (required) this.add(at, "required table is missing");
      return undefined;
    }
    if (!isTable(v)) {
      this.add(at, `must be a table, not ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  /** Returns an array-of-tables field (`[[x]]`); reports wrong shapes. */
  tables(
    table: Record<string, unknown>,
    key: string,
    prefix: string,
    required: boolean,
  ): Record<string, unknown>[] | undefined {
    const v = table[key];
    const at = keyPath(prefix, key);
    if (v === undefined) {
      if (required) this.add(at, `required field is missing (add at least one [[${at}]])`);
      return undefined;
    }
    if (!Array.isArray(v)) {
      this.add(at, `must be an array of tables ([[${at}]]), not ${typeName(v)}`);
      return undefined;
    }
    const out: Record<string, unknown>[] = [];
    v.forEach((item, i) => {
      if (isTable(item)) out.push(item);
      else this.add(keyPath(at, i), `must be a table, not ${typeName(item)}`);
    });
    return out.length === v.length ? out : undefined;
  }
}

/**
 * True for a plain object (a TOML table), false for arrays and scalars.
 *
 * @example
 * ```ts
 * import { isTable } from "./fields.ts";
 * if (!isTable({}) || isTable([]) || isTable(null)) throw new Error();
 * ```
 */
export function isTable(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
