/**
 * A consistent copy of an embedded Deno KV store while servers keep
 * writing to it. The store is one SQLite database in WAL mode; SQLite's
 * `VACUUM INTO` (through `node:sqlite`) copies it inside one read
 * transaction, so the copy is the store as of one commit, and writers are
 * not held up. The copy is then read through the public Deno KV API, so
 * nothing here depends on how Deno encodes values.
 *
 * The one thing that API does not show is when an entry expires (sessions,
 * sign-ins in progress, rate counters, process leases are written with
 * `expireIn`). {@linkcode readExpirations} reads it from the copy's `kv`
 * table and decodes the keys, which Deno stores in the FoundationDB tuple
 * encoding; the caller matches every decoded key against the entries the
 * API lists, so a format this code does not know is reported instead of
 * silently losing expirations.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { BackupError } from "./codec.ts";

/**
 * Copies the live store at `source` into a new file `dest` as of one
 * moment (`VACUUM INTO` in one read transaction). Servers may keep writing
 * meanwhile. Throws a {@linkcode BackupError} `backup_source_invalid` when
 * `source` is missing or is not a Deno KV SQLite file.
 *
 * @param source the store's file (`--kv`)
 * @param dest a path that does not exist yet, in a private directory
 *
 * @example
 * ```ts
 * import { snapshotKvFile } from "./snapshot.ts";
 * const dir = await Deno.makeTempDir();
 * const live = await Deno.openKv(`${dir}/kv.sqlite3`);
 * await live.set(["greeting"], "hello");
 * await snapshotKvFile(`${dir}/kv.sqlite3`, `${dir}/copy.sqlite3`);
 * await live.set(["greeting"], "changed after the copy");
 * const copy = await Deno.openKv(`${dir}/copy.sqlite3`);
 * if ((await copy.get(["greeting"])).value !== "hello") throw new Error();
 * copy.close();
 * live.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function snapshotKvFile(source: string, dest: string): Promise<void> {
  try {
    const info = await Deno.stat(source);
    if (!info.isFile) throw new Error("not a file");
  } catch {
    throw new BackupError(
      "backup_source_invalid",
      `There is no KV store at ${source}: give --kv the store's file (the --kv of cfgtool serve)`,
    );
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(source, { readOnly: true });
    // A writer holding the WAL write lock never blocks a reader; this only
    // covers a checkpoint or WAL recovery in another process.
    db.exec("PRAGMA busy_timeout = 10000");
    const table = db.prepare(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'kv'",
    ).get() as { n: number } | undefined;
    if (table?.n !== 1) throw new Error("it has no kv table");
    db.prepare("VACUUM INTO ?").run(dest);
  } catch (err) {
    throw new BackupError(
      "backup_source_invalid",
      `Cannot read ${source} as a Deno KV store: ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    db?.close();
  }
}

/**
 * When each expiring entry of a store copy expires: a map from the key
 * (as {@linkcode keyId} gives it) to the expiry time in ms since the
 * epoch. Entries without expiry are absent. Read the copy made by
 * {@linkcode snapshotKvFile}, never a live store.
 *
 * @param path a store file no process writes to
 * @returns key id → expiry (ms)
 *
 * @example
 * ```ts
 * import { keyId, readExpirations } from "./snapshot.ts";
 * const dir = await Deno.makeTempDir();
 * const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
 * await kv.set(["session", "ssn_1"], {}, { expireIn: 60_000 });
 * await kv.set(["tenant", "acme"], {});
 * kv.close();
 * const expiring = await readExpirations(`${dir}/kv.sqlite3`);
 * const at = expiring.get(keyId(["session", "ssn_1"]))!;
 * if (expiring.size !== 1 || Math.abs(at - Date.now() - 60_000) > 5_000) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function readExpirations(path: string): Promise<Map<string, number>> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT k, expiration_ms FROM kv WHERE expiration_ms >= 0").all() as {
      k: Uint8Array;
      expiration_ms: number;
    }[];
    const out = new Map<string, number>();
    for (const row of rows) out.set(keyId(decodeSqliteKey(row.k)), Number(row.expiration_ms));
    return Promise.resolve(out);
  } finally {
    db.close();
  }
}

/**
 * A string that identifies a KV key (for maps keyed by KV keys): equal
 * keys give equal strings, different keys different ones.
 *
 * @param key a Deno KV key
 * @returns its identity string
 *
 * @example
 * ```ts
 * import { keyId } from "./snapshot.ts";
 * if (keyId(["a", 1]) === keyId(["a", 1n]) || keyId(["a", 1]) !== keyId(["a", 1])) throw new Error();
 * ```
 */
export function keyId(key: Deno.KvKey): string {
  return JSON.stringify(key.map((p) => {
    if (p instanceof Uint8Array) return ["b", p.toBase64()];
    if (typeof p === "bigint") return ["i", p.toString()];
    if (typeof p === "number") return ["n", Object.is(p, -0) ? "-0" : String(p)];
    return p;
  }));
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes a key as Deno's SQLite backend stores it (the FoundationDB tuple
 * encoding of each part: 0x01 bytes, 0x02 string, 0x0b–0x1d integers for
 * bigints, 0x21 double for numbers, 0x26/0x27 false/true). Throws on
 * anything else, so an unknown format is never guessed at.
 *
 * @param bytes the `k` column of the `kv` table
 * @returns the key
 *
 * @example
 * ```ts
 * import { decodeSqliteKey } from "./snapshot.ts";
 * // "a", then the number 2
 * const key = decodeSqliteKey(new Uint8Array([2, 97, 0, 0x21, 0xc0, 0, 0, 0, 0, 0, 0, 0]));
 * if (key[0] !== "a" || key[1] !== 2) throw new Error(String(key));
 * ```
 */
export function decodeSqliteKey(bytes: Uint8Array): Deno.KvKey {
  const parts: Deno.KvKeyPart[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new BackupError("backup_source_invalid", `Cannot decode a stored key: ${why}`);
  };
  const escaped = (): Uint8Array => {
    const out: number[] = [];
    while (true) {
      if (i >= bytes.length) fail("unterminated bytes");
      const b = bytes[i++]!;
      if (b !== 0) {
        out.push(b);
      } else if (bytes[i] === 0xff) {
        out.push(0);
        i++;
      } else {
        return new Uint8Array(out);
      }
    }
  };
  const take = (n: number): Uint8Array => {
    if (i + n > bytes.length) fail("a part runs past the end");
    const out = bytes.subarray(i, i + n);
    i += n;
    return out;
  };
  const bigEndian = (b: Uint8Array): bigint => {
    let v = 0n;
    for (const x of b) v = (v << 8n) | BigInt(x);
    return v;
  };
  while (i < bytes.length) {
    const code = bytes[i++]!;
    if (code === 0x01) {
      parts.push(escaped());
    } else if (code === 0x02) {
      parts.push(utf8.decode(escaped()));
    } else if (code === 0x14) {
      parts.push(0n);
    } else if (code > 0x14 && code < 0x1d) {
      parts.push(bigEndian(take(code - 0x14)));
    } else if (code < 0x14 && code > 0x0b) {
      const n = 0x14 - code;
      parts.push(bigEndian(take(n)) - ((1n << BigInt(8 * n)) - 1n));
    } else if (code === 0x1d) {
      parts.push(bigEndian(take(take(1)[0]!)));
    } else if (code === 0x0b) {
      const n = take(1)[0]! ^ 0xff;
      parts.push(bigEndian(take(n)) - ((1n << BigInt(8 * n)) - 1n));
    } else if (code === 0x21) {
      const b = take(8).slice();
      if (b[0]! & 0x80) b[0]! ^= 0x80;
      else for (let j = 0; j < 8; j++) b[j]! ^= 0xff;
      parts.push(new DataView(b.buffer).getFloat64(0, false));
    } else if (code === 0x26) {
      parts.push(false);
    } else if (code === 0x27) {
      parts.push(true);
    } else {
      fail(`unknown type code 0x${code.toString(16)}`);
    }
  }
  return parts;
}
