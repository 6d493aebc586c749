/**
 * The workspace loader with Ajv as its schema checker: {@linkcode loadModel}
 * is lib/workspace/read_model.ts's {@linkcode readModel} with every entry
 * schema compiled and every entry validated by lib/workspace/schemas.ts.
 * This is what `lint` and `init` use; `resolve` may answer from cached
 * verdicts instead (lib/workspace/open.ts).
 *
 * @module
 */
import { type LoadResult, readModel } from "./read_model.ts";
import { ajvSchemaChecker } from "./schemas.ts";

export type { LoadResult } from "./read_model.ts";

/**
 * Reads a workspace model from its files (relative path → bytes), checking
 * entries against their schemas with Ajv. Never throws on bad content:
 * every problem is returned.
 *
 * @param files the workspace files, as {@linkcode readWorkspaceFiles} returns them
 * @returns the model and the problems
 *
 * @example
 * ```ts
 * import { loadModel } from "./load.ts";
 * const enc = new TextEncoder();
 * const { problems } = loadModel(new Map([["variables/x.toml", enc.encode("schema_version = 2\n")]]));
 * if (!problems.some((p) => p.key === "schema_version")) throw new Error();
 * ```
 */
export function loadModel(files: ReadonlyMap<string, Uint8Array>): LoadResult {
  return readModel(files, ajvSchemaChecker);
}
