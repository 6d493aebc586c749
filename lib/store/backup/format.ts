/**
 * The backup file: JSON lines, written and read here.
 *
 * ```text
 * {"format":"cfgtool-kv-backup","format_version":1,"cfgtool_version":"0.1.0","deno_version":"2.9.6","created_at":"…","source":{"kind":"sqlite_snapshot","location":"/var/lib/cfgtool/kv.sqlite3"}}
 * {"key":["blob","9f2c…",0],"value":["b","c2NoZW1h…"]}
 * {"key":["session","ssn_01…"],"value":{"id":"ssn_01…",…},"expires_at":"2026-11-23T10:00:00.000Z"}
 * {"end":"cfgtool-kv-backup","entries":2,"sha256":"<hex>"}
 * ```
 *
 * The first line is the header; then one line per KV entry, in key order,
 * with key and value in the lossless encoding of lib/store/backup/codec.ts
 * and, for an entry written with `expireIn`, when it expires; the last line
 * closes the file with the number of entries and the SHA-256 of every byte
 * before it. A reader refuses a file without that closing line (cut
 * short), whose count or digest disagree (damaged or changed after it was
 * written), or with anything after it. The digest detects truncation and
 * accidental damage, not someone who means harm: whoever can write a
 * backup file can write any record into the store restored from it (and
 * recompute the digest), so protect backups like the store itself.
 *
 * A line is refused unread past {@linkcode MAX_LINE} bytes, and an entry
 * nested deeper than {@linkcode MAX_DEPTH} is refused before it is
 * decoded: no real entry comes near either, and a crafted line cannot make
 * a reader use much memory or overflow its stack.
 *
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import { VERSION } from "../../version.ts";
import { BackupError, decodeKey, decodeValue, encodeKey, encodeValue, type Json } from "./codec.ts";

/** The `format` of the header line. */
export const BACKUP_FORMAT = "cfgtool-kv-backup";
/** The format version this code writes and reads. */
export const BACKUP_FORMAT_VERSION = 1;
/**
 * Longest line read, in bytes; longer lines are refused unread. Deno KV
 * keeps a value to 64 KiB and a key to 2 KiB (serialized); the JSON of
 * this format is at most about 6 times that (a control character or an
 * `undefined` of one serialized byte is written as 6), so about 400 KiB
 * for a whole entry line: 1 MiB leaves room and bounds what a crafted
 * line costs.
 */
export const MAX_LINE = 1024 * 1024;
/**
 * Deepest nesting of arrays and objects in an entry line. cfgtool's
 * records nest a few levels (each level of a stored value is one or two
 * here, with its tag); deeper lines are refused before they are decoded.
 */
export const MAX_DEPTH = 64;

/** How the entries were read from the store. */
export type BackupSourceKind = "sqlite_snapshot" | "kv_connect_scan";

/** The first line of a backup. */
export interface BackupHeader {
  /** Always {@linkcode BACKUP_FORMAT}. */
  format: typeof BACKUP_FORMAT;
  /** The format version ({@linkcode BACKUP_FORMAT_VERSION} when written by this code). */
  format_version: number;
  /** The cfgtool that wrote it. */
  cfgtool_version: string;
  /** The Deno runtime that wrote it. */
  deno_version: string;
  /** When the entries were read (the snapshot's time). */
  created_at: string;
  /** The store: `sqlite_snapshot` of a file, or `kv_connect_scan` of a URL. */
  source: { kind: BackupSourceKind; location: string };
}

/** One KV entry of a backup. */
export interface BackupEntry {
  /** The KV key. */
  key: Deno.KvKey;
  /** The KV value. */
  value: unknown;
  /** When the entry expires (ms since the epoch), or null when it does not. */
  expiresAt: number | null;
}

/** What a finished or verified backup holds. */
export interface BackupDigest {
  /** Number of entry lines. */
  entries: number;
  /** SHA-256 (hex) of every byte before the closing line. */
  sha256: string;
  /** Size of the whole file in bytes. */
  bytes: number;
}

/**
 * The header of a backup written now by this cfgtool.
 *
 * @param source how the store is read and where it is
 * @param at the moment the entries are read
 * @returns the header
 *
 * @example
 * ```ts
 * import { backupHeader } from "./format.ts";
 * const h = backupHeader({ kind: "sqlite_snapshot", location: "kv.sqlite3" }, new Date(0));
 * if (h.format_version !== 1 || h.created_at !== "1970-01-01T00:00:00.000Z") throw new Error();
 * ```
 */
export function backupHeader(
  source: { kind: BackupSourceKind; location: string },
  at: Date,
): BackupHeader {
  return {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    cfgtool_version: VERSION,
    deno_version: Deno.version.deno,
    created_at: at.toISOString(),
    source,
  };
}

const encoder = new TextEncoder();
/** Text buffered before a write. */
const FLUSH_AT = 1024 * 1024;

/**
 * Writes a backup line by line to `sink`, hashing as it goes: the header
 * at once, each {@linkcode BackupWriter.entry} in turn, and the closing
 * line in {@linkcode BackupWriter.finish}. A writer not finished leaves a
 * file without its closing line, which every reader refuses.
 *
 * @example
 * ```ts
 * import { BackupWriter, backupHeader } from "./format.ts";
 * const chunks: Uint8Array[] = [];
 * const w = new BackupWriter((b) => { chunks.push(b.slice()); return Promise.resolve(); },
 *   backupHeader({ kind: "sqlite_snapshot", location: "kv.sqlite3" }, new Date()));
 * await w.entry({ key: ["tenant", "acme"], value: { slug: "acme" }, expiresAt: null });
 * const done = await w.finish();
 * const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
 * if (done.entries !== 1 || text.split("\n").length !== 4) throw new Error(text);
 * ```
 */
export class BackupWriter {
  #sink: (bytes: Uint8Array) => Promise<void>;
  #hash: Hash = createHash("sha256");
  #pending = "";
  #entries = 0;
  #bytes = 0;

  /**
   * Starts a backup with its header line.
   *
   * @param sink writes bytes in order (a file, stdout)
   * @param header the first line
   */
  constructor(sink: (bytes: Uint8Array) => Promise<void>, header: BackupHeader) {
    this.#sink = sink;
    this.#pending = JSON.stringify(header) + "\n";
  }

  /**
   * Adds one entry line.
   *
   * @param e key, value and expiry
   */
  async entry(e: BackupEntry): Promise<void> {
    const line: Record<string, Json> = { key: encodeKey(e.key), value: encodeValue(e.value) };
    if (e.expiresAt !== null) line.expires_at = new Date(e.expiresAt).toISOString();
    const text = JSON.stringify(line);
    // never write a line a reader refuses (3 bytes at most per UTF-16 unit)
    if (text.length * 3 > MAX_LINE && encoder.encode(text).length > MAX_LINE) {
      throw new BackupError(
        "backup_unsupported_value",
        `Cannot write the entry ${short(line.key!)} to a backup: its line is longer than ` +
          `${MAX_LINE} bytes`,
      );
    }
    if (nestingDepth(text) > MAX_DEPTH) {
      throw new BackupError(
        "backup_unsupported_value",
        `Cannot write the entry ${short(line.key!)} to a backup: it nests deeper than ` +
          `${MAX_DEPTH} levels`,
      );
    }
    this.#pending += text + "\n";
    this.#entries++;
    if (this.#pending.length >= FLUSH_AT) await this.#flush(true);
  }

  /**
   * Writes the closing line (count and digest) and everything buffered.
   *
   * @returns the count, digest and size
   */
  async finish(): Promise<BackupDigest> {
    await this.#flush(true);
    const sha256 = this.#hash.digest("hex");
    this.#pending = JSON.stringify({ end: BACKUP_FORMAT, entries: this.#entries, sha256 }) + "\n";
    await this.#flush(false);
    return { entries: this.#entries, sha256, bytes: this.#bytes };
  }

  async #flush(hashed: boolean): Promise<void> {
    if (this.#pending === "") return;
    const bytes = encoder.encode(this.#pending);
    this.#pending = "";
    if (hashed) this.#hash.update(bytes);
    this.#bytes += bytes.length;
    await this.#sink(bytes);
  }
}

function short(j: Json): string {
  const s = JSON.stringify(j);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/**
 * The deepest nesting of arrays and objects in JSON text (brackets inside
 * strings do not count); stops counting past {@linkcode MAX_DEPTH}.
 *
 * @param text JSON text, or its UTF-8 bytes
 * @returns the depth (0 for a scalar), or `MAX_DEPTH + 1` for anything deeper
 *
 * @example
 * ```ts
 * import { MAX_DEPTH, nestingDepth } from "./format.ts";
 * if (nestingDepth('{"a":[["]]]]"]]}') !== 3) throw new Error();
 * if (nestingDepth("[".repeat(1000)) !== MAX_DEPTH + 1) throw new Error();
 * ```
 */
export function nestingDepth(text: string | Uint8Array): number {
  const at = typeof text === "string" ? (i: number) => text.charCodeAt(i) : (i: number) => text[i]!;
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) {
        max = depth;
        if (max > MAX_DEPTH) return max;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

/** One line of a file, without its newline; `terminated` is false for a last line cut short. */
interface Line {
  bytes: Uint8Array;
  number: number;
  terminated: boolean;
}

/** The lines of a file, read in chunks; `name` is the file as messages show it. */
async function* fileLines(path: string, name: string): AsyncGenerator<Line> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (err) {
    throw new BackupError("backup_invalid", `Cannot read ${name}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let pending: Uint8Array[] = [];
  let pendingSize = 0;
  let number = 0;
  const joined = (tail: Uint8Array): Uint8Array => {
    if (pending.length === 0) return tail;
    const out = new Uint8Array(pendingSize + tail.length);
    let off = 0;
    for (const p of pending) {
      out.set(p, off);
      off += p.length;
    }
    out.set(tail, off);
    pending = [];
    pendingSize = 0;
    return out;
  };
  const tooLong = () =>
    new BackupError(
      "backup_invalid",
      `${name} is not a cfgtool backup: line ${number + 1} is longer than any line a ` +
        `backup holds (${MAX_LINE} bytes)`,
    );
  try {
    for await (const chunk of file.readable) {
      let start = 0;
      while (true) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) break;
        if (pendingSize + nl - start > MAX_LINE) throw tooLong();
        yield { bytes: joined(chunk.subarray(start, nl)), number: ++number, terminated: true };
        start = nl + 1;
      }
      if (start < chunk.length) {
        pending.push(chunk.slice(start));
        pendingSize += chunk.length - start;
        if (pendingSize > MAX_LINE) throw tooLong();
      }
    }
    if (pendingSize > 0) {
      yield { bytes: joined(new Uint8Array()), number: ++number, terminated: false };
    }
  } finally {
    try {
      file.close();
    } catch {
      // closed by the stream already
    }
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parseHeader(path: string, line: Line | undefined): BackupHeader {
  const h = line === undefined ? undefined : parseJson(line.bytes);
  if (!isRecord(h) || h.format !== BACKUP_FORMAT) {
    throw new BackupError(
      "backup_invalid",
      `${path} is not a cfgtool backup: its first line is not a ${BACKUP_FORMAT} header`,
    );
  }
  if (typeof h.format_version !== "number" || h.format_version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(
      "backup_invalid",
      `${path} was written by a newer cfgtool (${String(h.cfgtool_version)}, backup format ` +
        `${String(h.format_version)}); this cfgtool ${VERSION} reads format ` +
        `${BACKUP_FORMAT_VERSION}: restore it with that cfgtool or a newer one`,
    );
  }
  return h as unknown as BackupHeader;
}

/** Decodes one entry line; throws a plain message for the caller to place. */
function parseEntry(bytes: Uint8Array): BackupEntry {
  if (nestingDepth(bytes) > MAX_DEPTH) {
    throw new BackupError(
      "backup_invalid",
      `nested deeper than ${MAX_DEPTH} levels, deeper than any record cfgtool stores`,
    );
  }
  const e = parseJson(bytes);
  if (!isRecord(e) || !Array.isArray(e.key) || !("value" in e)) {
    throw new BackupError("backup_invalid", "not an entry line");
  }
  let expiresAt: number | null = null;
  if (e.expires_at !== undefined) {
    expiresAt = typeof e.expires_at === "string" ? Date.parse(e.expires_at) : NaN;
    if (Number.isNaN(expiresAt)) throw new BackupError("backup_invalid", "a bad expires_at");
  }
  return {
    key: decodeKey(e.key as Json),
    value: decodeValue(e.value as Json),
    expiresAt,
  };
}

/** A verified backup: its header and what its closing line says. */
export interface VerifiedBackup extends BackupDigest {
  /** The header line. */
  header: BackupHeader;
}

/**
 * Reads a whole backup file and checks it without keeping it in memory:
 * a header this cfgtool reads, well-formed entry lines, and a closing line
 * whose count and SHA-256 match what comes before it. Throws a
 * {@linkcode BackupError} `backup_invalid` that says what is wrong: not a
 * backup, written by a newer cfgtool, incomplete (cut short), changed
 * after it was written, data after the closing line, or a malformed line.
 *
 * @param path the backup file
 * @param options `name`: the file as messages show it (default `path`);
 *   `onEntry`: told each entry as it is read, may throw to refuse the file
 * @returns its header, entry count, digest and size
 *
 * @example
 * ```ts
 * import { BackupWriter, backupHeader, verifyBackup } from "./format.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/b.jsonl`, { write: true, create: true });
 * const w = new BackupWriter(async (b) => { await file.write(b); },
 *   backupHeader({ kind: "sqlite_snapshot", location: "kv.sqlite3" }, new Date()));
 * await w.entry({ key: ["tenant", "acme"], value: { slug: "acme" }, expiresAt: null });
 * await w.finish();
 * file.close();
 * if ((await verifyBackup(`${dir}/b.jsonl`)).entries !== 1) throw new Error();
 * // cut short: refused
 * const bytes = await Deno.readFile(`${dir}/b.jsonl`);
 * await Deno.writeFile(`${dir}/b.jsonl`, bytes.subarray(0, bytes.length - 10));
 * let code = "";
 * try { await verifyBackup(`${dir}/b.jsonl`); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "backup_invalid") throw new Error(code);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function verifyBackup(
  path: string,
  options: { name?: string; onEntry?: (e: ReadEntry) => void } = {},
): Promise<VerifiedBackup> {
  let header: BackupHeader | undefined;
  let digest: BackupDigest | undefined;
  const hooks: ReadHooks = {
    onHeader: (h: BackupHeader) => (header = h),
    onEnd: (d: BackupDigest) => (digest = d),
    ...(options.name === undefined ? {} : { name: options.name }),
  };
  for await (const e of readEntries(path, hooks)) {
    // readEntries decodes and hashes every line
    options.onEntry?.(e);
  }
  return { header: header!, ...digest! };
}

/** One entry as read from a file, with its line number and size in bytes. */
export interface ReadEntry {
  /** The entry. */
  entry: BackupEntry;
  /** Its line number (the header is line 1). */
  line: number;
  /** Its line's size in bytes, newline included. */
  bytes: number;
}

/**
 * The entries of a backup file in order, each checked as it is read. The
 * file's closing line is checked when the last entry has been read: a
 * caller that acts on entries as they come must first verify the whole
 * file with {@linkcode verifyBackup}, and read the very bytes it verified
 * (restore reads a private copy: lib/store/backup/stage.ts).
 *
 * @param path the backup file
 * @param hooks `name`: the file as messages show it; `onHeader`: told the
 *   header before the first entry; `onEnd`: told the count and digest once
 *   the whole file checked out
 * @returns the entries
 *
 * @example
 * ```ts
 * import { BackupWriter, backupHeader, readEntries } from "./format.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/b.jsonl`, { write: true, create: true });
 * const w = new BackupWriter(async (b) => { await file.write(b); },
 *   backupHeader({ kind: "sqlite_snapshot", location: "kv.sqlite3" }, new Date()));
 * await w.entry({ key: ["n", 1n], value: NaN, expiresAt: null });
 * await w.finish();
 * file.close();
 * const read = [];
 * for await (const r of readEntries(`${dir}/b.jsonl`)) read.push(r.entry);
 * if (read[0]!.key[1] !== 1n || !Number.isNaN(read[0]!.value)) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function* readEntries(
  path: string,
  hooks: ReadHooks = {},
): AsyncGenerator<ReadEntry> {
  const name = hooks.name ?? path;
  const lines = fileLines(path, name);
  try {
    yield* checkedEntries(name, lines, hooks);
  } finally {
    // closes the file when reading stops early (a refused header, a caller that stops)
    await lines.return(undefined);
  }
}

/** Told about a backup file as {@linkcode readEntries} reads it. */
export interface ReadHooks {
  /** The file as messages show it (default: its path). */
  name?: string;
  /** Told the header before the first entry. */
  onHeader?: (h: BackupHeader) => void;
  /** Told the count and digest once the whole file checked out. */
  onEnd?: (d: BackupDigest) => void;
}

/** The body of {@linkcode readEntries} over the file's lines. */
async function* checkedEntries(
  path: string,
  lines: AsyncGenerator<Line>,
  hooks: ReadHooks,
): AsyncGenerator<ReadEntry> {
  const hash = createHash("sha256");
  const first = await lines.next();
  const headerLine = first.done ? undefined : first.value;
  const header = parseHeader(path, headerLine);
  if (!headerLine!.terminated) {
    throw new BackupError("backup_invalid", `${path} is incomplete: it ends inside its header`);
  }
  hooks.onHeader?.(header);
  hash.update(headerLine!.bytes).update("\n");
  let bytes = headerLine!.bytes.length + 1;
  let entries = 0;
  let held: Line | undefined;
  let firstBad: string | undefined;
  let sawEnd = false;
  for await (const line of lines) {
    bytes += line.bytes.length + (line.terminated ? 1 : 0);
    if (held !== undefined) {
      // the held line is not the last one: an entry
      hash.update(held.bytes).update("\n");
      entries++;
      let entry: BackupEntry | undefined;
      try {
        entry = parseEntry(held.bytes);
      } catch (err) {
        const parsed = parseJson(held.bytes);
        if (isRecord(parsed) && "end" in parsed) sawEnd = true;
        firstBad ??= `line ${held.number} is not a valid entry (${(err as Error).message})`;
      }
      if (entry !== undefined && firstBad === undefined) {
        yield { entry, line: held.number, bytes: held.bytes.length + 1 };
      }
    }
    held = line;
  }
  const digest = hash.digest("hex");
  if (sawEnd) {
    throw new BackupError(
      "backup_invalid",
      `${path} has lines after its closing line: it was changed after it was written`,
    );
  }
  const closing = held === undefined ? undefined : parseJson(held.bytes);
  if (held === undefined || !held.terminated || !isRecord(closing) || !("end" in closing)) {
    const got = held === undefined ? 0 : entries + (isRecord(closing) && "key" in closing ? 1 : 0);
    throw new BackupError(
      "backup_invalid",
      `${path} is incomplete: it ends after ${got} entr${got === 1 ? "y" : "ies"} without its ` +
        "closing line (a backup that was cut short, or a partial copy); use a complete backup",
    );
  }
  if (closing.end !== BACKUP_FORMAT || closing.entries !== entries || closing.sha256 !== digest) {
    throw new BackupError(
      "backup_invalid",
      `${path} was changed after it was written: ${
        closing.entries !== entries
          ? `its closing line counts ${String(closing.entries)} entries, the file holds ${entries}`
          : "its content does not match the SHA-256 of its closing line"
      }${firstBad === undefined ? "" : `; ${firstBad}`}. Use an unchanged backup`,
    );
  }
  if (firstBad !== undefined) throw new BackupError("backup_invalid", `${path}: ${firstBad}`);
  hooks.onEnd?.({ entries, sha256: digest, bytes });
}
