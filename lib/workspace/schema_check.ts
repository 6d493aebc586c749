/**
 * What checking a catalog's entries against its JSON Schema means, without
 * the validator itself: the draft cfgtool reads, the Ajv options, the shape
 * of a compiled schema ({@linkcode SchemaChecker}) and the identity of the
 * checking rules ({@linkcode schemaCheckerId}). The loader and the schema
 * verdict cache depend on this module only, so a command that finds every
 * verdict cached never loads Ajv; lib/workspace/schemas.ts is the Ajv
 * implementation.
 *
 * @module
 */
import type { Problem } from "../errors.ts";

/** The draft this cfgtool reads. */
export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/**
 * The version of cfgtool's schema checking rules (the `$schema` check, the
 * meta-schema check, how Ajv's errors become problems). Bump it whenever
 * lib/workspace/schemas.ts changes what it accepts: every cached verdict
 * then stops matching and entries are checked again.
 */
export const SCHEMA_CHECK_VERSION = 1;

/** The Ajv options of lib/workspace/schemas.ts; part of the checker identity. */
export const AJV_OPTIONS = {
  allErrors: true,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: false,
  logger: false,
} as const;

/** A compiled entry schema: the problems of one entry (none when it conforms). */
export type EntryValidator = (entry: unknown, path: string) => Problem[];

/** The outcome of compiling one schema file. */
export type SchemaResult = { ok: true; validate: EntryValidator } | {
  ok: false;
  problems: Problem[];
};

/** Compiles schema files; the loader takes one (lib/workspace/read_model.ts). */
export interface SchemaChecker {
  /**
   * Parses and compiles a schema file.
   *
   * @param text the file content
   * @param path the schema's workspace-relative path, for problems
   */
  compile(text: string, path: string): SchemaResult;
}

/**
 * The identity of the checking rules: cfgtool's rule version, the Ajv
 * options and the Ajv build that is resolved for this program (its resolved
 * module URL names the version). A cached verdict is used only under the
 * identity it was made with, so an upgrade of Ajv or a change of options
 * re-checks every entry. Resolving the URL does not load Ajv.
 *
 * @returns a string that changes whenever the rules may have changed
 *
 * @example
 * ```ts
 * import { schemaCheckerId } from "./schema_check.ts";
 * const id = schemaCheckerId();
 * if (!id.includes("ajv") || !id.startsWith("cfgtool-schema-check/1 ")) throw new Error(id);
 * ```
 */
export function schemaCheckerId(): string {
  let ajv: string;
  try {
    ajv = import.meta.resolve("ajv/dist/2020");
  } catch {
    ajv = "ajv (unresolved)";
  }
  return `cfgtool-schema-check/${SCHEMA_CHECK_VERSION} ${ajv} ${JSON.stringify(AJV_OPTIONS)}`;
}
