/**
 * Why a file could not be read, in a few words for an error message
 * (`no such file`, `permission denied`, …): the configuration file and the
 * TLS files of `cfgtool serve` say it the same way.
 *
 * @module
 */

/**
 * Names the reason of a failed file read.
 *
 * @param err what the read threw
 * @returns `no such file`, `it is a directory`, `permission denied`, or the error's message
 *
 * @example
 * ```ts
 * import { readFailure } from "./file_failure.ts";
 * try {
 *   await Deno.readTextFile("/no/such/file");
 * } catch (err) {
 *   if (readFailure(err) !== "no such file") throw err;
 * }
 * ```
 */
export function readFailure(err: unknown): string {
  return err instanceof Deno.errors.NotFound
    ? "no such file"
    : err instanceof Deno.errors.IsADirectory
    ? "it is a directory"
    : err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable
    ? "permission denied"
    : err instanceof Error
    ? err.message
    : String(err);
}
