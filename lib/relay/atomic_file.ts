/**
 * Whole-file writes that a crash cannot tear: the bytes go to a temporary
 * file in the same directory, are flushed, and the temporary file is
 * renamed over the target (one atomic step on POSIX file systems). A
 * reader sees the old file or the new one, never a part of either.
 *
 * @module
 */
import { dirname } from "node:path";

/**
 * Writes `bytes` to `path` atomically, creating the directory if needed.
 *
 * @param path the file
 * @param bytes its new content
 * @param mode permission bits of a new file (default 0600)
 * @returns resolves once the rename is done
 *
 * @example
 * ```ts
 * import { writeFileAtomic } from "./atomic_file.ts";
 * const dir = await Deno.makeTempDir();
 * await writeFileAtomic(`${dir}/a/b.json`, new TextEncoder().encode("{}"));
 * if (await Deno.readTextFile(`${dir}/a/b.json`) !== "{}") throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array,
  mode = 0o600,
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  const file = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
    await file.sync();
  } finally {
    file.close();
  }
  try {
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}
