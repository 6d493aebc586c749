/**
 * The library entry of the workspace tool: {@linkcode openWorkspace} reads
 * and checks a workspace once, then resolves from memory. Entry schemas are
 * checked by Ajv, loaded only when needed: with a verdict cache
 * ({@linkcode OpenOptions.verdictCache}) a workspace whose schemas and
 * entries Ajv already accepted, byte for byte, is opened without loading it
 * (lib/workspace/schema_verdicts.ts).
 *
 * @module
 */
import { closureHash } from "../closure/hash.ts";
import type { Context } from "../flags/conditions.ts";
import { type Problem, ProblemsError } from "../errors.ts";
import { type Analysis, analyze, countModel, type WorkspaceCounts } from "./analysis.ts";
import { readWorkspaceFiles } from "./files.ts";
import type { Resolution } from "./model.ts";
import { compileResolver } from "./resolve.ts";
import { type SchemaChecker, schemaCheckerId } from "./schema_check.ts";
import {
  parseVerdictRecord,
  recordingChecker,
  renderVerdictRecord,
  verdictChecker,
  VerdictMissingError,
} from "./schema_verdicts.ts";
import { loadVerdictText, saveVerdictText } from "./verdict_store.ts";
import { FullTomlNeededError, loadFullToml } from "./toml_reader.ts";

/** How {@linkcode openWorkspace} opens a workspace. */
export interface OpenOptions {
  /**
   * A directory for schema verdict records (the command line uses
   * lib/workspace/verdict_store.ts's `defaultVerdictDir()`). When set, a
   * workspace state Ajv accepted before opens without loading Ajv, and a
   * state it accepts now is recorded. Unset (the default): Ajv checks every
   * time and nothing is written.
   */
  verdictCache?: string;
}

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
 * fingerprint. Resolution never reads or re-checks files afterwards. With
 * `options.verdictCache`, entry schemas may be answered from verdicts that
 * Ajv gave on the very same schema texts and entry values; anything not
 * recorded there is checked by Ajv, so the outcome is the same either way.
 *
 * Throws `NotFoundError` with code `workspace_not_found` when `dir` is not
 * a directory, and {@linkcode ProblemsError} with every blocking problem when
 * the workspace is invalid. A missing or stale context contract does not
 * block opening; it is reported by {@linkcode Workspace.lint}.
 *
 * @param dir the workspace directory
 * @param options where to keep schema verdicts (none by default)
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
export async function openWorkspace(dir: string, options: OpenOptions = {}): Promise<Workspace> {
  const { files, problems } = await readWorkspaceFiles(dir);
  const fingerprint = await closureHash(files);
  const analysis = await check(files, problems, fingerprint, options.verdictCache);
  if (analysis.blocking.length > 0) throw new ProblemsError(analysis.blocking);
  const resolve = compileResolver(analysis.model);
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

/**
 * Analyzes the files: from the verdict record of this state when it vouches
 * for every schema and entry, else with Ajv (recording what Ajv accepts when
 * the workspace has no blocking problem).
 */
async function check(
  files: ReadonlyMap<string, Uint8Array>,
  found: readonly Problem[],
  fingerprint: string,
  cacheDir: string | undefined,
): Promise<Analysis> {
  const id = cacheDir === undefined ? "" : schemaCheckerId();
  if (cacheDir !== undefined) {
    const text = await loadVerdictText(cacheDir, fingerprint);
    const record = text === undefined ? undefined : parseVerdictRecord(text, id);
    if (record !== undefined) {
      try {
        return await analyzeLoadingToml(files, found, verdictChecker(record));
      } catch (err) {
        if (!(err instanceof VerdictMissingError)) throw err;
      }
    }
  }
  // Ajv's path costs far more than the full TOML reader: load it, and read once.
  await loadFullToml();
  // lazy: Ajv and the draft 2020-12 meta-schema load only when a verdict is missing
  // A computed URL: Deno reads ahead whatever a string-literal dynamic import
  // reaches (Ajv, 1 MB), run or not; `deno compile` gets schemas.ts through
  // the command tree (lib/cli/program.ts), which imports it.
  const { ajvSchemaChecker } = await import(SCHEMAS) as typeof import("./schemas.ts");
  if (cacheDir === undefined) return analyze(files, found, ajvSchemaChecker);
  const recording = recordingChecker(ajvSchemaChecker, id);
  const analysis = analyze(files, found, recording.checker);
  if (analysis.blocking.length === 0) {
    await saveVerdictText(cacheDir, fingerprint, renderVerdictRecord(recording.record()));
  }
  return analysis;
}

/**
 * {@linkcode analyze}, reading again with the full TOML reader loaded when a
 * file is not plain TOML in a process that deferred that reader
 * (lib/workspace/toml_reader.ts).
 */
async function analyzeLoadingToml(
  files: ReadonlyMap<string, Uint8Array>,
  found: readonly Problem[],
  checker: SchemaChecker,
): Promise<Analysis> {
  try {
    return analyze(files, found, checker);
  } catch (err) {
    if (!(err instanceof FullTomlNeededError)) throw err;
    await loadFullToml();
    return analyze(files, found, checker);
  }
}

/** Ajv's checker module (see the note where it is imported). */
const SCHEMAS = new URL("./schemas.ts", import.meta.url).href;
