/**
 * The checks every manifest file shares: reporting a problem at a key path,
 * unknown keys, `schema_version`, optional strings, tables and arrays of
 * tables, and describing a wrong value in a message.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import type { TomlTable } from "../toml.ts";
import { join } from "./_key_path.ts";
import { SCHEMA_VERSION } from "./model.ts";

/**
 * How strictly a manifest is checked: `stored` is set when loading a version
 * already in the store (see `validateManifest`), and `warnings` collects
 * what is tolerated then.
 */
export interface CheckMode {
  /** Loading a stored version: skip the push-only limits. */
  stored: boolean;
  /** Where tolerated findings go. */
  warnings: Problem[];
}

/** Reports the problems of one file into a shared list. */
export class FileChecker {
  constructor(
    readonly path: string,
    readonly problems: Problem[],
    readonly mode: CheckMode = { stored: false, warnings: [] },
  ) {}

  report(key: string, message: string): void {
    this.problems.push(
      key === "" ? { path: this.path, message } : { path: this.path, key, message },
    );
  }

  /** Records a finding that does not make the manifest invalid. */
  warn(key: string, message: string): void {
    this.mode.warnings.push(
      key === "" ? { path: this.path, message } : { path: this.path, key, message },
    );
  }

  /** Reports keys of `t` not in `allowed`. */
  keys(t: TomlTable, prefix: string, allowed: readonly string[]): void {
    for (const k of Object.keys(t)) {
      if (!allowed.includes(k)) {
        this.report(
          join(prefix, k),
          `unknown key ${JSON.stringify(k)} (allowed: ${allowed.join(", ")})`,
        );
      }
    }
  }

  schemaVersion(t: TomlTable): void {
    const v = t.schema_version;
    if (v === undefined) this.report("schema_version", "missing required key");
    else if (typeof v !== "number") {
      this.report("schema_version", `expected an integer, found ${describe(v)}`);
    } else if (v !== SCHEMA_VERSION) {
      this.report("schema_version", `unsupported schema_version ${v}; it must be 1`);
    }
  }

  /** An optional string; returns it, `fallback` when absent, undefined when wrong. */
  optString(t: TomlTable, prefix: string, k: string, fallback: string): string | undefined {
    const v = t[k];
    if (v === undefined) return fallback;
    if (typeof v === "string") return v;
    this.report(join(prefix, k), `expected a string, found ${describe(v)}`);
    return undefined;
  }

  /** An optional table; returns it, `{}` when absent, undefined when wrong. */
  optTable(t: TomlTable, prefix: string, k: string): TomlTable | undefined {
    const v = t[k];
    if (v === undefined) return {};
    if (isTable(v)) return v;
    this.report(join(prefix, k), `expected a table, found ${describe(v)}`);
    return undefined;
  }

  /** An optional array of tables (`[[k]]`); returns its items, `[]` when absent. */
  tableArray(t: TomlTable, prefix: string, k: string): unknown[] | undefined {
    const v = t[k];
    if (v === undefined) return [];
    if (Array.isArray(v)) return v;
    this.report(join(prefix, k), `expected an array of tables ([[${k}]]), found ${describe(v)}`);
    return undefined;
  }
}

/** Whether a TOML value is a table (not an array, not a scalar). */
export function isTable(v: unknown): v is TomlTable {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Describes a value for a message: `the string "x"`, `the integer 3`, `a table`. */
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
