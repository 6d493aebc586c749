/**
 * `cfgtool admin backup`: every entry of a store, as of one moment,
 * written to a backup file (lib/store/backup/format.ts) while servers keep
 * running.
 *
 * - A store file (embedded SQLite) is first copied as of one commit
 *   (lib/store/backup/snapshot.ts), and the copy is read through the Deno KV
 *   API. The copy is the store as it was at one moment, so every version
 *   it holds has its blobs, every token its indexes, and the retention
 *   task pruning versions or collecting blobs meanwhile changes nothing in
 *   it. Expiring entries keep their expiry; entries already expired are
 *   left out.
 * - A KV Connect store has no such copy: it is listed twice, and the
 *   backup is kept only when the second listing finds every entry at the
 *   same versionstamp as the first (nothing was written in between, so the
 *   first listing is the store at one moment). A store that servers write
 *   to fails that test; back it up with no server running, or with the
 *   backend's own tools. Expiry is not visible through KV Connect.
 *
 * Sign-ins in progress and sign-in rate counters are left out
 * (lib/store/backup/keys.ts): a restore must not bring back a single-use
 * sign-in code or link that was used or ended after the backup. Sessions
 * and service tokens are kept: they are what a restore is for.
 *
 * The file is written beside its destination under a temporary name with
 * mode 0600 (it holds token digests and session records) and renamed into
 * place when complete, so the destination is never a partial backup.
 *
 * @module
 */
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "../../errors.ts";
import { BackupError } from "./codec.ts";
import { type BackupDigest, type BackupHeader, backupHeader, BackupWriter } from "./format.ts";
import { kvLocation, openKv } from "../kv.ts";
import { leftOutOfBackup } from "./keys.ts";
import { keyId, readExpirations, snapshotKvFile } from "./snapshot.ts";

/** Options of {@linkcode backupStore}. */
export interface BackupOptions {
  /** The store: a file path or a KV Connect URL (the `--kv` of serve). */
  kv: string;
  /** The backup file, or `-` for `stdout`. */
  out: string;
  /** Where `-` writes (default: the process's stdout). */
  stdout?: (bytes: Uint8Array) => Promise<void>;
  /** Clock, for tests. */
  now?: () => Date;
}

/** What {@linkcode backupStore} wrote. */
export interface BackupResult extends BackupDigest {
  /** The header line written. */
  header: BackupHeader;
  /** The file written, or null for stdout. */
  path: string | null;
  /** Entries that had expired when the store was read, left out. */
  expired: number;
  /** Sign-ins in progress and sign-in rate counters, left out (lib/store/backup/keys.ts). */
  transient: number;
}

/**
 * Writes a backup of the store named by `options.kv` to `options.out`
 * (see the module comment for how each kind of store is read). Throws a
 * {@linkcode UsageError} for `:memory:` or an output directory that does
 * not exist, and a {@linkcode BackupError} when the store cannot be read
 * (`backup_source_invalid`) or a KV Connect store changed during the
 * backup (`backup_store_changed`); no file is left behind then.
 *
 * @param options store, output, clock
 * @returns the header, entry count, digest and size of what was written
 *
 * @example
 * ```ts
 * import { backupStore } from "./backup.ts";
 * const dir = await Deno.makeTempDir();
 * const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
 * await kv.set(["tenant", "acme"], { slug: "acme" });
 * const r = await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/backup.jsonl` });
 * kv.close();
 * if (r.entries !== 1 || r.header.source.kind !== "sqlite_snapshot") throw new Error();
 * if (((await Deno.stat(`${dir}/backup.jsonl`)).mode! & 0o777) !== 0o600) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function backupStore(options: BackupOptions): Promise<BackupResult> {
  const loc = kvLocation(options.kv);
  if (loc.kind === "memory") {
    throw new UsageError("--kv :memory: is a store private to one process: name the KV file");
  }
  const now = options.now ?? (() => new Date());
  const output = await openOutput(options);
  const workDir = loc.kind === "file"
    ? await Deno.makeTempDir({
      prefix: ".cfgtool-backup-",
      ...(output.path === null ? {} : { dir: dirname(output.path) }),
    })
    : null;
  try {
    const result = loc.kind === "file"
      ? await backupFile(resolve(loc.path), join(workDir!, "snapshot.sqlite3"), output, now)
      : await backupByDoubleScan(loc.url, output, now);
    await output.commit();
    return { ...result, path: output.path };
  } catch (err) {
    await output.abort();
    throw err;
  } finally {
    if (workDir !== null) await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
}

/** Where a backup is written: a temporary file renamed on commit, or stdout. */
interface Output {
  path: string | null;
  write(bytes: Uint8Array): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

async function openOutput(options: BackupOptions): Promise<Output> {
  if (options.out === "-") {
    const write = options.stdout ?? writeStdout;
    return { path: null, write, commit: () => Promise.resolve(), abort: () => Promise.resolve() };
  }
  const path = resolve(options.out);
  const dir = dirname(path);
  try {
    if (!(await Deno.stat(dir)).isDirectory) throw new Error();
  } catch {
    throw new UsageError(`Cannot write ${options.out}: the directory ${dir} does not exist`);
  }
  const tmp = join(dir, `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  await Deno.chmod(tmp, 0o600).catch(() => {});
  let open = true;
  const close = () => {
    if (open) file.close();
    open = false;
  };
  return {
    path,
    async write(bytes) {
      let off = 0;
      while (off < bytes.length) off += await file.write(bytes.subarray(off));
    },
    async commit() {
      await file.syncData();
      close();
      await Deno.rename(tmp, path);
    },
    async abort() {
      close();
      await Deno.remove(tmp).catch(() => {});
    },
  };
}

async function writeStdout(bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await Deno.stdout.write(bytes.subarray(off));
}

/** A backup written, before the output is committed. */
type Written = Omit<BackupResult, "path">;

/** A store file: copy it as of one commit, then read the copy. */
async function backupFile(
  source: string,
  snapshot: string,
  output: Output,
  now: () => Date,
): Promise<Written> {
  const at = now();
  await snapshotKvFile(source, snapshot);
  const expiring = await readExpirations(snapshot);
  const kv = await Deno.openKv(snapshot);
  try {
    const header = backupHeader({ kind: "sqlite_snapshot", location: source }, at);
    const writer = new BackupWriter(output.write, header);
    const cutoff = at.getTime();
    const matched = new Set<string>();
    let transient = 0;
    for await (const e of kv.list({ prefix: [] })) {
      const id = keyId(e.key);
      const expiresAt = expiring.get(id) ?? null;
      if (expiresAt !== null) matched.add(id);
      if (leftOutOfBackup(e.key)) {
        if (expiresAt === null || expiresAt > cutoff) transient++;
        continue;
      }
      // expired entries may still be listed until the store cleans them up
      if (expiresAt !== null && expiresAt <= cutoff) continue;
      await writer.entry({ key: e.key, value: e.value, expiresAt });
    }
    // Every expiring row must be an entry the API listed (or already gone):
    // otherwise this Deno stores keys in a way the decoder does not know.
    const unmatched = [...expiring].filter(([id, t]) => !matched.has(id) && t > cutoff);
    if (unmatched.length > 0) {
      throw new BackupError(
        "backup_source_invalid",
        `Cannot read the expiry of ${unmatched.length} entries of ${source}: this Deno ` +
          `(${Deno.version.deno}) stores KV keys in a way this cfgtool does not know`,
      );
    }
    const expired = [...expiring.values()].filter((t) => t <= cutoff).length;
    return { header, expired, transient, ...await writer.finish() };
  } finally {
    kv.close();
  }
}

/** A KV Connect store: open it and back it up by a double scan. */
async function backupByDoubleScan(
  url: string,
  output: Output,
  now: () => Date,
): Promise<Written> {
  const kv = await openKv(url);
  try {
    return await writeByDoubleScan(kv, withoutCredentials(url), output.write, now);
  } finally {
    kv.close();
  }
}

/**
 * Backs up a store that has no snapshot read (KV Connect): lists every
 * entry, writing each, then lists again; when any entry's key or
 * versionstamp differs between the two listings the backup is refused
 * with a {@linkcode BackupError} `backup_store_changed` (the caller drops
 * what was written). Sign-ins in progress and sign-in rate counters are
 * left out of the backup and of the comparison. Expiry is not visible this
 * way: entries are written without it.
 *
 * @param kv the store
 * @param location the store as shown in the header and messages
 * @param write where the backup's bytes go
 * @param now clock
 * @returns the header, counts and digest
 *
 * @example
 * ```ts
 * import { writeByDoubleScan } from "./backup.ts";
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(["tenant", "acme"], { slug: "acme" });
 * const r = await writeByDoubleScan(kv, "test", () => Promise.resolve(), () => new Date());
 * if (r.entries !== 1 || r.header.source.kind !== "kv_connect_scan") throw new Error();
 * kv.close();
 * ```
 */
export async function writeByDoubleScan(
  kv: Deno.Kv,
  location: string,
  write: (bytes: Uint8Array) => Promise<void>,
  now: () => Date,
): Promise<Omit<BackupResult, "path">> {
  const header = backupHeader({ kind: "kv_connect_scan", location }, now());
  const writer = new BackupWriter(write, header);
  const seen: string[] = [];
  let transient = 0;
  for await (const e of kv.list({ prefix: [] }, { consistency: "strong" })) {
    if (leftOutOfBackup(e.key)) {
      transient++;
      continue;
    }
    seen.push(`${keyId(e.key)} ${e.versionstamp}`);
    await writer.entry({ key: e.key, value: e.value, expiresAt: null });
  }
  let i = 0;
  for await (const e of kv.list({ prefix: [] }, { consistency: "strong" })) {
    if (leftOutOfBackup(e.key)) continue;
    if (seen[i] !== `${keyId(e.key)} ${e.versionstamp}`) throw storeChanged(location);
    i++;
  }
  if (i !== seen.length) throw storeChanged(location);
  return { header, expired: 0, transient, ...await writer.finish() };
}

function storeChanged(location: string): BackupError {
  return new BackupError(
    "backup_store_changed",
    `The store ${location} changed while it was read, so the backup would not ` +
      "be the store at one moment; nothing was kept. A KV Connect store cannot be copied as " +
      "of one moment: stop every cfgtool serve using it and run the backup again, or use the " +
      "backend's own backup (a self-hosted denokv: `cfgtool admin backup --kv <its SQLite " +
      "file>` on its host; Deno Deploy: its KV backups)",
  );
}

function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.href.replace(/\/$/, "");
  } catch {
    return url;
  }
}
