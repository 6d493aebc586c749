/**
 * The error of an export that cannot be read: malformed or truncated, not
 * the format it was said to be, or of a shape the importer does not know.
 * The message names the file and the problem in one line; the CLI exits 1
 * and writes nothing.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";

/**
 * An export that cannot be imported.
 *
 * @example
 * ```ts
 * import { ImportError } from "./errors.ts";
 * const err = new ImportError("flags.json", "not JSON: Unexpected end of input");
 * if (err.code !== "import_failed" || err.message !== "flags.json: not JSON: Unexpected end of input") throw new Error();
 * ```
 */
export class ImportError extends CfgtoolError {
  /**
   * @param file the export's file name
   * @param problem what is wrong with it, in one line
   * @param details machine-readable facts (a JSON path)
   */
  constructor(file: string, problem: string, details?: Record<string, unknown>) {
    super("import_failed", `${file}: ${problem}`, {
      status: 400,
      ...(details === undefined ? {} : { details }),
    });
    this.name = "ImportError";
  }
}
