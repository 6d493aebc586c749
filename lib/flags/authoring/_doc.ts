/**
 * Parsed TOML as plain data, and the few questions every editor asks of
 * it: is this a table, are two values the same, how is a key written.
 *
 * @module
 */

/** A parsed TOML table. */
// deno-lint-ignore no-explicit-any
export type Doc = Record<string, any>;

/** A path into parsed TOML: table keys, and array indices for arrays of tables. */
export type DataPath = readonly (string | number)[];

/** Whether a parsed value is a table (not an array, not a date). */
export function isTable(v: unknown): v is Doc {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** A key as TOML writes it: bare when it can be, else quoted. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key).replaceAll("\x7f", "\\u007F");
}

/**
 * Deep equality of parsed TOML: arrays in order, tables ignoring key
 * order, dates by instant.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const ak = Object.keys(a as Doc);
  const bo = b as Doc;
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(bo, k) || !sameValue((a as Doc)[k], bo[k])) return false;
  }
  return true;
}

/** A string that two values share exactly when {@linkcode sameValue} holds (for hashing). */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v instanceof Date) return `Date(${v.getTime()})`;
  if (isTable(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  }
  if (typeof v === "bigint") return `${v}n`;
  return JSON.stringify(v) ?? "undefined";
}

/**
 * A copy of a table with the keys of `order` first, in that order, then
 * the others as they were: the key order a new key is written in (an edit
 * writes it before the next key that the file already has).
 */
export function withOrder<T extends Doc>(table: T, order: readonly string[]): T {
  const out: Doc = {};
  for (const k of order) if (Object.hasOwn(table, k)) out[k] = table[k];
  for (const [k, v] of Object.entries(table)) if (!Object.hasOwn(out, k)) out[k] = v;
  return out as T;
}

/** The top-level keys of a flag file, in the order files write them. */
export const FLAG_ORDER = [
  "schema_version",
  "description",
  "type",
  "default",
  "variations",
  "rule",
  "environments",
] as const;

/** The keys of an environment's override of a flag, in order. */
export const OVERRIDE_ORDER = ["enabled", "default", "rule"] as const;

/** The keys of a rule, in order. */
export const RULE_ORDER = ["segment", "variation", "bucket_by", "rollout"] as const;

/** The top-level keys of a segment file, in order. */
export const SEGMENT_ORDER = ["schema_version", "description", "match", "predicate"] as const;
