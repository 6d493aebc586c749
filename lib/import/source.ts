/**
 * What every importer shares while it reads a source tool's export: the
 * export parsed as JSON (a bad one is an {@linkcode ImportError} naming
 * the file), the shape checks on untyped JSON, a new item report, and
 * {@linkcode Unmappable}, thrown for a construct without an equivalent
 * and caught where a rule or segment starts, so the report can say why it
 * was left out.
 *
 * @example
 * ```ts
 * import { isObject, newReport, readJson } from "./source.ts";
 * const data = readJson('{"flags": {}}', "flags.json");
 * if (!isObject(data)) throw new Error();
 * const r = newReport("flag", "dark-mode", "darkMode");
 * if (r.sourceKey !== "darkMode" || r.written) throw new Error();
 * ```
 *
 * @module
 */
import { ImportError } from "./errors.ts";
import type { ItemReport } from "./types.ts";

/** A source construct without an equivalent: what it is and why. */
export class Unmappable extends Error {
  /**
   * @param what the construct, in the source tool's words
   * @param why why it has no equivalent
   */
  constructor(readonly what: string, readonly why: string) {
    super(`${what}: ${why}`);
    this.name = "Unmappable";
  }
}

/** A context attribute path of our predicates: letters, digits, `_` and `-` between dots. */
export const ATTRIBUTE_PATH_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * Reads an export as JSON.
 *
 * @throws {ImportError} when it is not JSON
 *
 * @example
 * ```ts
 * import { readJson } from "./source.ts";
 * if ((readJson('{"a":1}', "x.json") as { a: number }).a !== 1) throw new Error();
 * ```
 */
export function readJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ImportError(file, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Whether a value is a JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A string, or undefined for anything else. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * A new, empty report (`sourceKey` only when it differs from `key`).
 *
 * @example
 * ```ts
 * import { newReport } from "./source.ts";
 * if ("sourceKey" in newReport("segment", "beta", "beta")) throw new Error();
 * ```
 */
export function newReport(
  kind: "flag" | "segment",
  key: string,
  sourceKey: string = key,
): ItemReport {
  return {
    kind,
    key,
    ...(key === sourceKey ? {} : { sourceKey }),
    written: false,
    mapped: [],
    unmapped: [],
    notes: [],
  };
}

/** Adds a note to a report unless it is there already. */
export function noteOnce(report: ItemReport, note: string): void {
  if (!report.notes.includes(note)) report.notes.push(note);
}
