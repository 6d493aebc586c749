/**
 * Lint: every problem of a workspace at once, in a stable order (by file
 * path, byte-wise; within a file, in the order found). Problems are of two
 * weights: blocking ones (anything that makes resolution wrong or
 * impossible) and advisory ones (the context contract file on disk is
 * missing or stale). `lint` reports both; opening a workspace for
 * resolution refuses only blocking ones.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";
import { contractFileProblems, type ContractResult, generateContract } from "./context_contract.ts";
import { readWorkspaceFiles } from "./files.ts";
import { loadModel } from "./load.ts";
import { CONTEXT_CONTRACT_PATH, type WorkspaceModel } from "./model.ts";

/** The outcome of {@linkcode analyzeFiles}. */
export interface Analysis {
  /** The model, as far as it could be read. */
  model: WorkspaceModel;
  /** Problems that prevent resolution, sorted. */
  blocking: Problem[];
  /** Problems that do not (context contract file missing or stale), sorted. */
  advisory: Problem[];
  /** The generated contract; undefined while a qualifier file has problems. */
  contract: ContractResult | undefined;
}

/** How many of each resource a workspace holds. */
export interface WorkspaceCounts {
  /** Variable files. */
  variables: number;
  /** Catalog files. */
  catalogs: number;
  /** Entry files, over every catalog. */
  entries: number;
  /** Qualifier files. */
  qualifiers: number;
}

/** The outcome of {@linkcode lintWorkspace}. */
export interface LintReport {
  /** Every problem, sorted; empty when the workspace is clean. */
  problems: Problem[];
  /** What the workspace holds. */
  counts: WorkspaceCounts;
}

/**
 * Sorts problems by path (byte-wise over UTF-8), keeping the order found
 * within a file.
 *
 * @example
 * ```ts
 * import { sortProblems } from "./lint.ts";
 * const s = sortProblems([{ path: "b", message: "1" }, { path: "a", message: "2" }]);
 * if (s[0]!.path !== "a") throw new Error();
 * ```
 */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) => compareUtf8(a.path, b.path));
}

/**
 * Checks workspace files held in memory: the loader's problems, the
 * context contract's generation problems, and the contract file.
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
  const { model, problems } = loadModel(files);
  const blocking = [...found, ...problems];
  const advisory: Problem[] = [];
  let contract: ContractResult | undefined;
  if ([...model.qualifiers.values()].every((q) => q.valid)) {
    contract = generateContract(model.qualifiers.values());
    if (contract.ok) {
      advisory.push(...contractFileProblems(files.get(CONTEXT_CONTRACT_PATH), contract.text));
    } else {
      blocking.push(...contract.problems);
    }
  }
  return { model, blocking: sortProblems(blocking), advisory, contract };
}

/**
 * Counts the resources of a model.
 *
 * @example
 * ```ts
 * import { countModel } from "./lint.ts";
 * import { analyzeFiles } from "./lint.ts";
 * if (countModel(analyzeFiles(new Map()).model).variables !== 0) throw new Error();
 * ```
 */
export function countModel(model: WorkspaceModel): WorkspaceCounts {
  let entries = 0;
  let catalogs = 0;
  for (const c of model.catalogs.values()) {
    entries += c.entries.size;
    if (c.defined) catalogs++;
  }
  return {
    variables: model.variables.size,
    catalogs,
    entries,
    qualifiers: model.qualifiers.size,
  };
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
