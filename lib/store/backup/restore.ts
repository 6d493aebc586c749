/**
 * `cfgtool admin restore`: a backup file (lib/store/backup/format.ts)
 * written into an empty store. The file is read once, into a private copy
 * that is checked whole (complete, undamaged, every line readable, every
 * key a record kind a backup holds: lib/store/backup/stage.ts) and then
 * restored, so a bad file writes nothing and a file replaced meanwhile
 * changes nothing; a store
 * that holds anything is refused, so a restore never overwrites. Entries
 * are then written in atomic batches well inside Deno KV's limits (at most
 * 100 keys, about 600 KiB a batch), each batch checking that its keys are
 * still absent, so a process writing to the store meanwhile stops the
 * restore instead of being overwritten. An entry that expires keeps its
 * expiry; one that has expired since the backup is left out.
 *
 * A restored store is the installation as of the backup: revocations made
 * after it are lost (tokens revoked later are active again, sessions ended
 * later live again until their own expiry). Sign-ins in progress are never
 * in a backup (lib/store/backup/keys.ts).
 *
 * @module
 */
import { BackupError, encodeKey } from "./codec.ts";
import { type BackupHeader, readEntries } from "./format.ts";
import { restorableKey } from "./keys.ts";
import { stageBackup, type StagedBackup } from "./stage.ts";

/** Keys in one atomic batch (Deno KV allows 100 checks per operation). */
const BATCH_KEYS = 100;
/** Line bytes in one batch: above the values' own size, under the 800 KiB limit. */
const BATCH_BYTES = 600 * 1024;

/** Options of {@linkcode restoreStore}. */
export interface RestoreOptions {
  /** The target as the user named it, for messages (default "the target store"). */
  target?: string;
  /** Told after each batch how many of the file's entries are done. */
  onProgress?: (done: number, total: number) => void;
  /**
   * The file staged by {@linkcode stageBackup} when the caller did so
   * already (then the caller removes it); else it is staged here, in the
   * system's temporary directory, and removed afterwards.
   */
  staged?: StagedBackup;
  /** Clock, for tests. */
  now?: () => Date;
}

/** What {@linkcode restoreStore} did. */
export interface RestoreResult {
  /** The backup's header. */
  header: BackupHeader;
  /** Entries in the file. */
  entries: number;
  /** Entries written. */
  written: number;
  /** Entries left out because they expired since the backup. */
  expired: number;
}

/**
 * Writes every entry of the backup at `path` into the empty store `kv`.
 * Throws a {@linkcode BackupError}: `backup_invalid` for a file that is not
 * a complete, undamaged backup of cfgtool records (nothing is written),
 * `restore_target_not_empty`
 * for a store that holds anything (nothing is written), `restore_conflict`
 * when another process wrote one of the restored keys meanwhile.
 *
 * @param kv the target store, empty
 * @param path the backup file (read once, into a private copy; with
 *   `options.staged`, only named in messages)
 * @param options target name for messages, progress, the staged file, clock
 * @returns the header and counts
 *
 * @example
 * ```ts
 * import { backupStore } from "./backup.ts";
 * import { restoreStore } from "./restore.ts";
 * const dir = await Deno.makeTempDir();
 * const live = await Deno.openKv(`${dir}/kv.sqlite3`);
 * await live.set(["tenant", "acme"], { slug: "acme" });
 * await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
 * const fresh = await Deno.openKv(":memory:");
 * const r = await restoreStore(fresh, `${dir}/b.jsonl`);
 * if (r.written !== 1 || (await fresh.get(["tenant", "acme"])).value === null) throw new Error();
 * // a second restore into the same (now not empty) store is refused
 * let code = "";
 * try { await restoreStore(fresh, `${dir}/b.jsonl`); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "restore_target_not_empty") throw new Error(code);
 * fresh.close();
 * live.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function restoreStore(
  kv: Deno.Kv,
  path: string,
  options: RestoreOptions = {},
): Promise<RestoreResult> {
  const target = options.target ?? "the target store";
  const now = options.now ?? (() => new Date());
  for await (const e of kv.list({ prefix: [] }, { limit: 1 })) {
    throw new BackupError(
      "restore_target_not_empty",
      `${target} is not empty (it holds ${JSON.stringify(encodeKey(e.key))}, and maybe more): ` +
        "a restore writes only into an empty store, so nothing was written. Restore into a " +
        "new --kv path (or move the old store aside first)",
    );
  }
  const staged = options.staged ?? await stageBackup(path);
  try {
    return await restoreStaged(kv, staged, target, now, options.onProgress);
  } finally {
    if (options.staged === undefined) await staged.remove();
  }
}

async function restoreStaged(
  kv: Deno.Kv,
  staged: StagedBackup,
  target: string,
  now: () => Date,
  onProgress: ((done: number, total: number) => void) | undefined,
): Promise<RestoreResult> {
  const { verified, name: path } = staged;
  let written = 0;
  let expired = 0;
  let batch: { key: Deno.KvKey; value: unknown; expireIn: number | null; line: number }[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const op = kv.atomic();
    for (const e of batch) {
      op.check({ key: e.key, versionstamp: null });
      if (e.expireIn === null) op.set(e.key, e.value);
      else op.set(e.key, e.value, { expireIn: e.expireIn });
    }
    let ok: boolean;
    try {
      ok = (await op.commit()).ok;
    } catch (err) {
      throw new BackupError(
        "restore_failed",
        `Cannot write lines ${batch[0]!.line}–${batch.at(-1)!.line} of ${path} into ${target}: ` +
          (err as Error).message,
        { cause: err },
      );
    }
    if (!ok) {
      throw new BackupError(
        "restore_conflict",
        `Another process wrote to ${target} during the restore (one of the keys of lines ` +
          `${batch[0]!.line}–${batch.at(-1)!.line} appeared meanwhile); the restore stopped. ` +
          "Stop every process using that store (cfgtool serve), and restore again into a new, " +
          "empty store",
      );
    }
    written += batch.length;
    batch = [];
    batchBytes = 0;
    onProgress?.(written + expired, verified.entries);
  };
  for await (const { entry, line, bytes } of readEntries(staged.path, { name: path })) {
    if (!restorableKey(entry.key)) {
      throw new BackupError("backup_invalid", `${path} line ${line} is no record a backup holds`);
    }
    let expireIn: number | null = null;
    if (entry.expiresAt !== null) {
      expireIn = entry.expiresAt - now().getTime();
      if (expireIn <= 0) {
        expired++;
        continue;
      }
    }
    if (batch.length >= BATCH_KEYS || batchBytes + bytes > BATCH_BYTES) await flush();
    batch.push({ key: entry.key, value: entry.value, expireIn, line });
    batchBytes += bytes;
  }
  await flush();
  return { header: verified.header, entries: verified.entries, written, expired };
}
