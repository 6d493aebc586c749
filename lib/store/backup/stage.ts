/**
 * A backup file staged for a restore: copied through one open file into a
 * private directory (mode 0700, the copy 0600), then verified there
 * (lib/store/backup/format.ts) together with every key's record kind
 * (lib/store/backup/keys.ts). The restore then reads the copy: the bytes
 * it writes are the bytes that were verified, even when the original file
 * is replaced or rewritten meanwhile.
 *
 * @module
 */
import { BackupError, encodeKey } from "./codec.ts";
import { type VerifiedBackup, verifyBackup } from "./format.ts";
import { restorableKey } from "./keys.ts";

/** A verified private copy of a backup file. */
export interface StagedBackup {
  /** The private copy: read this, never the original. */
  path: string;
  /** The original file, as messages show it. */
  name: string;
  /** What the verification of the copy found. */
  verified: VerifiedBackup;
  /** Deletes the copy and its directory. */
  remove(): Promise<void>;
}

/**
 * Copies the backup file at `path` into a new private directory under
 * `options.dir` (default: the system's temporary directory), reading the
 * original once, and verifies the copy: a complete, undamaged backup whose
 * every key is a record kind a backup holds. Throws a
 * {@linkcode BackupError} `backup_invalid` otherwise (nothing is left
 * behind then). Call `remove()` when done.
 *
 * @param path the backup file
 * @param options `dir`: where the private directory is made
 * @returns the staged copy
 *
 * @example
 * ```ts
 * import { backupStore } from "./backup.ts";
 * import { stageBackup } from "./stage.ts";
 * const dir = await Deno.makeTempDir();
 * const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
 * await kv.set(["tenant", "acme"], { slug: "acme" });
 * kv.close();
 * await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
 * const staged = await stageBackup(`${dir}/b.jsonl`, { dir });
 * await Deno.writeTextFile(`${dir}/b.jsonl`, "replaced\n"); // the copy is unaffected
 * if (staged.verified.entries !== 1 || staged.path === `${dir}/b.jsonl`) throw new Error();
 * await staged.remove();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function stageBackup(
  path: string,
  options: { dir?: string } = {},
): Promise<StagedBackup> {
  let source: Deno.FsFile;
  try {
    source = await Deno.open(path, { read: true });
  } catch (err) {
    throw new BackupError("backup_invalid", `Cannot read ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let workDir: string;
  try {
    workDir = await Deno.makeTempDir({
      prefix: ".cfgtool-restore-",
      ...(options.dir === undefined ? {} : { dir: options.dir }),
    });
  } catch (err) {
    source.close();
    throw err;
  }
  const remove = () => Deno.remove(workDir, { recursive: true }).catch(() => {});
  try {
    await Deno.chmod(workDir, 0o700).catch(() => {});
    const copy = `${workDir}/backup.jsonl`;
    const out = await Deno.open(copy, { write: true, createNew: true, mode: 0o600 });
    try {
      await source.readable.pipeTo(out.writable); // closes both files
    } catch (err) {
      throw new BackupError("backup_invalid", `Cannot read ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    let foreign: BackupError | undefined;
    const verified = await verifyBackup(copy, {
      name: path,
      onEntry: ({ entry, line }) => {
        if (!restorableKey(entry.key)) foreign ??= foreignKey(path, line, entry.key);
      },
    });
    if (foreign !== undefined) throw foreign;
    return { path: copy, name: path, verified, remove };
  } catch (err) {
    try {
      source.close();
    } catch {
      // closed by the copy already
    }
    await remove();
    throw err;
  }
}

function foreignKey(path: string, line: number, key: Deno.KvKey): BackupError {
  const shown = JSON.stringify(encodeKey(key));
  return new BackupError(
    "backup_invalid",
    `${path} line ${line} holds ${
      shown.length > 80 ? `${shown.slice(0, 77)}...` : shown
    }, which is no record a cfgtool backup holds (sign-ins in progress, sign-in rate ` +
      "counters and keys cfgtool does not write are never in one); nothing was written. " +
      "Restore a file written by `cfgtool admin backup`",
  );
}
