/**
 * The analysis of a workspace held in memory, with a given schema checker:
 * every problem at once, in a stable order (by file path, byte-wise; within
 * a file, in the order found), split by weight. Blocking problems are
 * anything that makes resolution wrong or impossible; advisory ones are the
 * context contract file on disk being missing or stale. `lint` reports both
 * (lib/workspace/lint.ts); opening a workspace for resolution refuses only
 * blocking ones (lib/workspace/open.ts).
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import type { Problem } from "../errors.ts";
import { contractFileProblems, type ContractResult, generateContract } from "./context_contract.ts";
import { CONTEXT_CONTRACT_PATH, type WorkspaceModel } from "./model.ts";
import { readModel } from "./read_model.ts";
import type { SchemaChecker } from "./schema_check.ts";

/** The outcome of {@linkcode analyze}. */
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

/**
 * Sorts problems by path (byte-wise over UTF-8), keeping the order found
 * within a file.
 *
 * @example
 * ```ts
 * import { sortProblems } from "./analysis.ts";
 * const s = sortProblems([{ path: "b", message: "1" }, { path: "a", message: "2" }]);
 * if (s[0]!.path !== "a") throw new Error();
 * ```
 */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) => compareUtf8(a.path, b.path));
}

/**
 * Checks workspace files held in memory: the loader's problems (entry
 * schemas compiled by `checker`), the context contract's generation
 * problems, and the contract file. What the checker throws is thrown again.
 *
 * @param files relative path → bytes
 * @param found problems already found while reading (links, special files)
 * @param checker compiles entry schemas
 * @returns the model and its problems, split by weight
 *
 * @example
 * ```ts
 * import { analyze } from "./analysis.ts";
 * const acceptAll = { compile: () => ({ ok: true as const, validate: () => [] }) };
 * const a = analyze(new Map(), [], acceptAll);
 * if (a.blocking.length !== 0 || a.advisory.length !== 1) throw new Error();
 * ```
 */
export function analyze(
  files: ReadonlyMap<string, Uint8Array>,
  found: readonly Problem[],
  checker: SchemaChecker,
): Analysis {
  const { model, problems } = readModel(files, checker);
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
 * import { analyze, countModel } from "./analysis.ts";
 * const acceptAll = { compile: () => ({ ok: true as const, validate: () => [] }) };
 * if (countModel(analyze(new Map(), [], acceptAll).model).variables !== 0) throw new Error();
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
