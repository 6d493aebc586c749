/**
 * The library entry of the workspace tool: {@linkcode openWorkspace} reads
 * and checks a workspace once, then resolves from memory.
 *
 * @module
 */
import { closureHash } from "../closure/hash.ts";
import type { Context } from "../conditions.ts";
import { type Problem, ProblemsError } from "../errors.ts";
import { readWorkspaceFiles } from "./files.ts";
import { analyzeFiles, countModel, type WorkspaceCounts } from "./lint.ts";
import type { Resolution } from "./model.ts";
import { compileResolver } from "./resolve.ts";

/** An opened workspace: checked once, resolved from memory. */
export interface Workspace {
  /** The directory it was opened from, as given. */
  readonly dir: string;
  /**
   * Resolves a variable against a context (a JSON object of runtime facts):
   * the first rule whose qualifier is true selects its entry, else the
   * default entry. Rejects with `NotFoundError` (`variable_not_found`) for an
   * unknown variable.
   */
  resolveVariable(name: string, context?: Context): Promise<Resolution>;
  /** The closure hash of every workspace file, `sha256:<hex>`. */
  sourceFingerprint(): string;
  /**
   * Problems that did not block opening: the context contract file missing
   * or different from the generated one. Empty when lint is clean.
   */
  lint(): Problem[];
  /** Variable names, sorted. */
  variables(): string[];
  /** How many variables, catalogs, entries and qualifiers it holds. */
  counts(): WorkspaceCounts;
}

/**
 * Opens the workspace in `dir`: reads every file once, checks everything
 * lint checks, compiles qualifiers and entries, and computes the source
 * fingerprint. Resolution never reads or re-checks files afterwards.
 *
 * Throws `NotFoundError` with code `workspace_not_found` when `dir` is not
 * a directory, and {@linkcode ProblemsError} with every blocking problem when
 * the workspace is invalid. A missing or stale context contract does not
 * block opening; it is reported by {@linkcode Workspace.lint}.
 *
 * @param dir the workspace directory
 * @returns the opened workspace
 *
 * @example
 * ```ts
 * import { openWorkspace } from "./open.ts";
 * const ws = await openWorkspace("examples/notification-workspace");
 * const r = await ws.resolveVariable("notification-delivery-policy", {
 *   notification: { kind: "security_alert" },
 * });
 * if (r.value_key !== "immediate-security") throw new Error(r.value_key);
 * if (!ws.sourceFingerprint().startsWith("sha256:")) throw new Error();
 * ```
 */
export async function openWorkspace(dir: string): Promise<Workspace> {
  const { files, problems } = await readWorkspaceFiles(dir);
  const analysis = analyzeFiles(files, problems);
  if (analysis.blocking.length > 0) throw new ProblemsError(analysis.blocking);
  const resolve = compileResolver(analysis.model);
  const fingerprint = await closureHash(files);
  const advisory = analysis.advisory;
  const names = [...analysis.model.variables.keys()].sort();
  const counts = countModel(analysis.model);
  return {
    dir,
    resolveVariable(name: string, context: Context = {}): Promise<Resolution> {
      try {
        return Promise.resolve(resolve(name, context));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    sourceFingerprint: () => fingerprint,
    lint: () => advisory.map((p) => ({ ...p })),
    variables: () => [...names],
    counts: () => ({ ...counts }),
  };
}
