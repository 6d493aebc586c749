/**
 * The one place where errors become exit statuses and stderr lines: 0
 * success; 1 lint problems, unresolvable variable or a failed operation
 * (a request the server refused, a 400 `invalid_request` included); 2 usage
 * errors (bad flags, missing workspace: the command line's own mistakes,
 * found before anything is sent); 3 a store written by a newer cfgtool
 * (`store_layout_newer`: upgrade cfgtool, do not retry). Unknown errors print one line
 * (never a stack trace unless `CFGTOOL_DEBUG=1`) and exit 1. A rejected
 * credential or an unreachable server is followed by what to check
 * (lib/cli/error_hints.ts).
 *
 * It does not import commander: cli.ts names this module in a string-literal
 * `import()`, so Deno reads it (and would resolve commander) before running
 * any command line, a plain `resolve` included. Commander's errors are
 * recognised by their shape instead ({@linkcode isCommanderError}).
 *
 * @module
 */
import { CfgtoolError, formatProblem, ProblemsError, UsageError } from "../errors.ts";
import { hintsFor } from "./error_hints.ts";

/**
 * Error codes that are the caller's mistake rather than a failure: exit 2.
 * Not `invalid_request`: a 400 from the server is a failed operation (exit
 * 1); a mistake on the command line is a {@linkcode UsageError}.
 */
const USAGE_CODES = new Set([
  "workspace_not_found",
  "usage",
  "kv_access_token_missing",
]);

/** Error codes with an exit status of their own. */
const OWN_STATUS: ReadonlyMap<string, number> = new Map([["store_layout_newer", 3]]);

/**
 * Maps an error to its exit status and writes its lines to stderr.
 *
 * @param err what was thrown
 * @returns the exit status (1, 2 or 3)
 *
 * @example
 * ```ts
 * import { exitCodeFor } from "./exit.ts";
 * import { UsageError } from "../errors.ts";
 * if (exitCodeFor(new UsageError("bad"), () => {}) !== 2) throw new Error();
 * ```
 */
export function exitCodeFor(err: unknown, write: (line: string) => void = printErr): number {
  if (isCommanderError(err)) {
    // commander already printed its message; help and version exit 0
    return err.exitCode === 0 ? 0 : 2;
  }
  if (err instanceof ProblemsError) {
    for (const p of err.problems) write(formatProblem(p));
    write(`${err.problems.length} problem${err.problems.length === 1 ? "" : "s"} found`);
    return 1;
  }
  if (err instanceof UsageError || (err instanceof CfgtoolError && USAGE_CODES.has(err.code))) {
    write(`error: ${err.message}`);
    return 2;
  }
  if (err instanceof CfgtoolError) {
    write(`error: ${err.message}`);
    for (const line of hintsFor(err)) write(line);
    return OWN_STATUS.get(err.code) ?? 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`error: ${message}`);
  if (Deno.env.get("CFGTOOL_DEBUG") === "1" && err instanceof Error && err.stack) write(err.stack);
  return 1;
}

/**
 * Whether `err` is commander's `CommanderError` (or a subclass): an `Error`
 * with a numeric `exitCode` and a `code` in commander's `commander.*`
 * namespace, which no cfgtool error code uses (they are snake_case words).
 *
 * @param err what was thrown
 * @returns true for an error commander threw
 *
 * @example
 * ```ts
 * import { isCommanderError } from "./exit.ts";
 * import { CommanderError } from "commander-core";
 * import { UsageError } from "../errors.ts";
 * if (!isCommanderError(new CommanderError(1, "commander.unknownOption", "x"))) throw new Error();
 * if (isCommanderError(new UsageError("bad"))) throw new Error();
 * ```
 */
export function isCommanderError(err: unknown): err is Error & { exitCode: number; code: string } {
  if (!(err instanceof Error)) return false;
  const { exitCode, code } = err as { exitCode?: unknown; code?: unknown };
  return typeof exitCode === "number" && typeof code === "string" && code.startsWith("commander.");
}

function printErr(line: string): void {
  console.error(line);
}
