/**
 * The workspace source fingerprint: the closure hash (lib/closure/hash.ts)
 * over every file of the workspace, paths relative to the workspace root
 * with `/` separators. The same files give the same fingerprint on every
 * machine; any changed byte, added, removed or renamed workspace file
 * changes it. Documentation beside the workspace (`*.md`, `LICENSE*`, names
 * starting with `.`) is not part of it, so editing a README never changes
 * the fingerprint.
 *
 * @module
 */
import { closureHash } from "../closure/hash.ts";
import { readWorkspaceFiles } from "./files.ts";

/**
 * Computes the source fingerprint of the workspace in `dir` without opening
 * it (no validation). {@linkcode openWorkspace} computes the same value from
 * the bytes it loads.
 *
 * @param dir the workspace directory
 * @returns `sha256:<64 hex digits>`
 *
 * @example
 * ```ts
 * import { workspaceFingerprint } from "./fingerprint.ts";
 * const dir = await Deno.makeTempDir();
 * const empty = await workspaceFingerprint(dir);
 * if (!empty.startsWith("sha256:")) throw new Error();
 * ```
 */
export async function workspaceFingerprint(dir: string): Promise<string> {
  const { files } = await readWorkspaceFiles(dir);
  return await closureHash(files);
}
