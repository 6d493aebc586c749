/**
 * Entry schemas: JSON Schema draft 2020-12 through Ajv (`allErrors`). Parses
 * a schema file, checks it against the draft 2020-12 meta-schema, compiles
 * it, and turns Ajv's errors on an entry into problems keyed by the entry's
 * key path (`channels[1]`, `digest_interval_hours`).
 *
 * `format` is an annotation only (the draft 2020-12 default): no format
 * validation is done. Unknown keywords are refused (Ajv strict schema mode),
 * which catches typos such as `requried`.
 *
 * @module
 */
import { Ajv2020 } from "ajv/dist/2020";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020";
import type { Problem } from "../errors.ts";
import { isTable, keyPath } from "../toml_fields.ts";
import {
  AJV_OPTIONS,
  DRAFT_2020_12,
  type SchemaChecker,
  type SchemaResult,
} from "./schema_check.ts";

export { DRAFT_2020_12 } from "./schema_check.ts";
export type { EntryValidator, SchemaResult } from "./schema_check.ts";

let shared: Ajv2020 | undefined;

function ajv(): Ajv2020 {
  // One instance for the process: compiling the draft 2020-12 meta-schema is
  // the expensive part and is done once. Compiled user schemas are removed
  // from its cache right after compilation.
  shared ??= new Ajv2020({ ...AJV_OPTIONS });
  return shared;
}

/**
 * Parses and compiles a schema file. Invalid JSON gives a problem with line
 * and column; a document that is not a valid draft 2020-12 schema gives one
 * problem per offending key path in the schema.
 *
 * @param text the file content
 * @param path the schema's workspace-relative path, for problems
 * @returns the validator, or the problems
 *
 * @example
 * ```ts
 * import { compileSchema } from "./schemas.ts";
 * const r = compileSchema('{"type":"object","required":["a"]}', "schemas/x.schema.json");
 * if (!r.ok) throw new Error();
 * const problems = r.validate({}, "catalogs/x-entries/default.toml");
 * if (problems[0]?.key !== "a") throw new Error();
 * ```
 */
export function compileSchema(text: string, path: string): SchemaResult {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [jsonProblem(err as Error, text, path)] };
  }
  if (!isTable(schema) && typeof schema !== "boolean") {
    return {
      ok: false,
      problems: [{ path, message: "a JSON Schema must be an object or a boolean" }],
    };
  }
  if (isTable(schema) && schema.$schema !== undefined) {
    const s = schema.$schema;
    if (typeof s !== "string" || s.replace(/#$/, "") !== DRAFT_2020_12) {
      return {
        ok: false,
        problems: [{
          path,
          key: "$schema",
          message: `cfgtool reads JSON Schema draft 2020-12 ("${DRAFT_2020_12}")`,
        }],
      };
    }
  }
  const a = ajv();
  if (!a.validateSchema(schema)) {
    const seen = new Set<string>();
    const problems: Problem[] = [];
    for (const e of a.errors ?? []) {
      if (seen.has(e.instancePath)) continue;
      seen.add(e.instancePath);
      problems.push({
        path,
        key: pointerToKeyPath(e.instancePath, schema),
        message: `not a valid JSON Schema: ${e.message ?? e.keyword}`,
      });
    }
    return { ok: false, problems };
  }
  let fn: ValidateFunction;
  try {
    fn = a.compile(schema as Record<string, unknown>);
  } catch (err) {
    return {
      ok: false,
      problems: [{ path, message: `not a valid JSON Schema: ${(err as Error).message}` }],
    };
  } finally {
    try {
      a.removeSchema(schema as Record<string, unknown>);
    } catch { /* not added: nothing to remove */ }
  }
  return {
    ok: true,
    validate: (entry, entryPath) =>
      fn(entry) ? [] : entryProblems(fn.errors ?? [], entry, entryPath),
  };
}

/**
 * {@linkcode compileSchema} as a {@linkcode SchemaChecker}, for the loader.
 *
 * @example
 * ```ts
 * import { ajvSchemaChecker } from "./schemas.ts";
 * const r = ajvSchemaChecker.compile('{"type":"object"}', "schemas/x.schema.json");
 * if (!r.ok || r.validate([], "catalogs/x-entries/a.toml").length !== 1) throw new Error();
 * ```
 */
export const ajvSchemaChecker: SchemaChecker = { compile: compileSchema };

function entryProblems(errors: ErrorObject[], entry: unknown, path: string): Problem[] {
  const out: Problem[] = [];
  for (const e of errors) {
    // `if` errors only say "must match then": the `then` errors say what.
    if (e.keyword === "if") continue;
    const at = pointerToKeyPath(e.instancePath, entry);
    const p = e.params as Record<string, unknown>;
    if (e.keyword === "required") {
      out.push({
        path,
        key: keyPath(at, String(p.missingProperty)),
        message: "required field is missing",
      });
    } else if (e.keyword === "additionalProperties") {
      out.push({
        path,
        key: keyPath(at, String(p.additionalProperty)),
        message: "unknown key (the catalog schema does not allow it)",
      });
    } else if (e.keyword === "enum") {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
      out.push({ path, key: at, message: `must be one of ${allowed}` });
    } else if (e.keyword === "const") {
      out.push({ path, key: at, message: `must be ${JSON.stringify(p.allowedValue)}` });
    } else {
      out.push({ path, key: at, message: e.message ?? `fails "${e.keyword}"` });
    }
  }
  return out;
}

/**
 * Turns a JSON Pointer into the instance (`/channels/1`) into a key path
 * (`channels[1]`); a segment is an index when the value at that level is an
 * array.
 *
 * @example
 * ```ts
 * import { pointerToKeyPath } from "./schemas.ts";
 * if (pointerToKeyPath("/channels/1", { channels: ["a", "b"] }) !== "channels[1]") throw new Error();
 * if (pointerToKeyPath("/a~1b", {}) !== '"a/b"') throw new Error();
 * ```
 */
export function pointerToKeyPath(pointer: string, root: unknown): string {
  if (pointer === "") return "";
  let out = "";
  let cur: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur) && /^(0|[1-9][0-9]*)$/.test(seg)) {
      out = keyPath(out, Number(seg));
      cur = cur[Number(seg)];
    } else {
      out = keyPath(out, seg);
      cur = isTable(cur) ? cur[seg] : undefined;
    }
  }
  return out;
}

function jsonProblem(err: Error, text: string, path: string): Problem {
  const message = `invalid JSON: ${
    err.message.replace(/ at position \d+( \(line \d+ column \d+\))?$/, "")
  }`;
  const lc = /\(line (\d+) column (\d+)\)/.exec(err.message);
  if (lc) return { path, line: Number(lc[1]), column: Number(lc[2]), message };
  const pos = /at position (\d+)/.exec(err.message);
  const offset = pos ? Number(pos[1]) : text.length;
  const before = text.slice(0, offset).split("\n");
  return { path, line: before.length, column: before[before.length - 1]!.length + 1, message };
}
