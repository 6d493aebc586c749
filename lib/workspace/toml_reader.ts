/**
 * How the workspace reader reads a TOML file: plain TOML
 * (lib/workspace/plain_toml.ts) is read here; anything else, and every
 * syntax error with its wording, by the full reader (`parseToml` in
 * lib/toml.ts, on smol-toml). The full reader is loaded with this module,
 * unless the process asked for it to wait (`deferFullToml()`,
 * lib/workspace/toml_defer.ts): then it is loaded by
 * {@linkcode loadFullToml}, which lib/workspace/open.ts awaits when a file
 * is not plain. Reading stays synchronous either way.
 *
 * @module
 */
import type { TomlResult } from "../toml.ts";
import { CfgtoolError } from "../errors.ts";
import { parsePlainToml } from "./plain_toml.ts";
import { fullTomlDeferred } from "./toml_defer.ts";

let full: ((text: string, path: string) => TomlResult) | undefined;

/**
 * A file is not plain TOML and the full reader is not loaded (the process
 * deferred it). Never shown to a user: the caller loads the full reader
 * ({@linkcode loadFullToml}) and reads again.
 */
export class FullTomlNeededError extends CfgtoolError {
  /**
   * Creates the error.
   *
   * @param path the file that needs the full reader
   */
  constructor(path: string) {
    super("full_toml_needed", `${path} needs the full TOML reader`);
    this.name = "FullTomlNeededError";
  }
}

/**
 * Loads the full TOML reader (once; later calls return at once).
 *
 * @example
 * ```ts
 * import { fullTomlLoaded, loadFullToml } from "./toml_reader.ts";
 * await loadFullToml();
 * if (!fullTomlLoaded()) throw new Error();
 * ```
 */
export async function loadFullToml(): Promise<void> {
  // A computed URL: Deno reads ahead whatever a string-literal import()
  // reaches, and smol-toml on the module graph, even unrun, sets up npm
  // resolution (about 2.5 ms of a cold `resolve`). The compile task includes
  // lib/toml.ts by name.
  full ??= (await import(FULL_READER) as typeof import("../toml.ts")).parseToml;
}

/**
 * Whether the full TOML reader is loaded.
 *
 * @example
 * ```ts
 * import { fullTomlLoaded } from "./toml_reader.ts";
 * // loaded with this module unless the process deferred it
 * if (!fullTomlLoaded()) throw new Error();
 * ```
 */
export function fullTomlLoaded(): boolean {
  return full !== undefined;
}

/**
 * Reads one workspace file's TOML: the same result as `parseToml` in
 * lib/toml.ts (the record, or the syntax problem). Throws
 * {@linkcode FullTomlNeededError} when the text is not plain TOML and the
 * process deferred the full reader without loading it.
 *
 * @param text the file's text
 * @param path the file's workspace-relative path, for the problem
 * @returns `{ok: true, table}` or `{ok: false, problem}`
 *
 * @example
 * ```ts
 * import { readTomlText } from "./toml_reader.ts";
 * const plain = readTomlText("a = 1\n", "x.toml");
 * if (!plain.ok || plain.table.a !== 1) throw new Error();
 * const bad = readTomlText("a = = 1\n", "x.toml");
 * if (bad.ok || bad.problem.line !== 1) throw new Error();
 * ```
 */
export function readTomlText(text: string, path: string): TomlResult {
  const table = parsePlainToml(text);
  if (table !== undefined) return { ok: true, table };
  if (full === undefined) throw new FullTomlNeededError(path);
  return full(text, path);
}

/** The full reader's module (see the note where it is imported). */
const FULL_READER = new URL("../toml.ts", import.meta.url).href;

if (!fullTomlDeferred()) await loadFullToml();
