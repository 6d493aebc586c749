/**
 * Lint: every problem of a workspace at once, in a stable order (by file
 * path, byte-wise; within a file, in the order found), entry schemas always
 * checked by Ajv (lib/workspace/schemas.ts), never from a cache. Problems
 * are of two weights (lib/workspace/analysis.ts): blocking ones and advisory
 * ones (the context contract file on disk is missing or stale). `lint`
 * reports both; opening a workspace for resolution refuses only blocking
 * ones.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import {
  type Analysis,
  analyze,
  countModel,
  sortProblems,
  type WorkspaceCounts,
} from "./analysis.ts";
import { readWorkspaceFiles } from "./files.ts";
import { ajvSchemaChecker } from "./schemas.ts";

export { countModel, sortProblems } from "./analysis.ts";
export type { Analysis, WorkspaceCounts } from "./analysis.ts";

/** The outcome of {@linkcode lintWorkspace}. */
export interface LintReport {
  /** Every problem, sorted; empty when the workspace is clean. */
  problems: Problem[];
  /** What the workspace holds. */
  counts: WorkspaceCounts;
}

/**
 * Checks workspace files held in memory, entry schemas by Ajv: the loader's
 * problems, the context contract's generation problems, and the contract
 * file.
 *
 * @param files relative path → bytes
 * @param found problems already found while reading (links, special files)
 * @returns the model and its problems, split by weight
 *
 * @example
 * ```ts
 * import { analyzeFiles } from "./lint.ts";
 * const a = analyzeFiles(new Map());
 * if (a.blocking.length !== 0 || a.advisory.length !== 1) throw new Error();
 * ```
 */
export function analyzeFiles(
  files: ReadonlyMap<string, Uint8Array>,
  found: readonly Problem[] = [],
): Analysis {
  return analyze(files, found, ajvSchemaChecker);
}

/**
 * Lints the workspace in `dir`: reads every file once and returns every
 * problem (blocking and advisory together, sorted) with the resource
 * counts. Throws `workspace_not_found` when `dir` is not a directory.
 *
 * @param dir the workspace directory
 * @returns the problems and counts
 *
 * @example
 * ```ts
 * import { lintWorkspace } from "./lint.ts";
 * const dir = await Deno.makeTempDir();
 * const { problems } = await lintWorkspace(dir);
 * if (problems[0]?.path !== "schemas/context.schema.json") throw new Error();
 * ```
 */
export async function lintWorkspace(dir: string): Promise<LintReport> {
  const { files, problems } = await readWorkspaceFiles(dir);
  const a = analyzeFiles(files, problems);
  return {
    problems: sortProblems([...a.blocking, ...a.advisory]),
    counts: countModel(a.model),
  };
}
