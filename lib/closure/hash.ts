/**
 * The closure hash (docs/events.md, "The closure hash"): one function that identifies a set of
 * files. It is the workspace source fingerprint, the manifest ETag and the
 * integrity check of the event stream.
 *
 * @module
 */

/** A set of files: path (relative, `/`-separated) to exact content bytes. */
export type FileSet = ReadonlyMap<string, Uint8Array>;

const encoder = new TextEncoder();

/** Byte-wise lexicographic comparison of two UTF-8 strings. */
export function compareUtf8(a: string, b: string): number {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]! - y[i]!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * SHA-256 of bytes as lower-case hex.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./hash.ts";
 * const hex = await sha256Hex(new Uint8Array());
 * if (!hex.startsWith("e3b0c442")) throw new Error(hex);
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(
    new Uint8Array(
      await crypto.subtle.digest("SHA-256", bytes as BufferSource),
    ),
  );
}

/** Digests started at once by {@linkcode sha256All}: bounds each burst of work on the event loop. */
const DIGEST_SLICE = 32;

/**
 * SHA-256 of many contents, in input order. Digests run a slice at a time, so
 * hashing ten thousand files never holds the event loop for long.
 *
 * @param contents the contents to digest
 * @returns one 32-byte digest per content
 *
 * @example
 * ```ts
 * import { sha256All, toHex } from "./hash.ts";
 * const [empty] = await sha256All([new Uint8Array()]);
 * if (!toHex(empty!).startsWith("e3b0c442")) throw new Error();
 * ```
 */
export async function sha256All(contents: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for (let i = 0; i < contents.length; i += DIGEST_SLICE) {
    const slice = contents.slice(i, i + DIGEST_SLICE);
    const digests = await Promise.all(
      slice.map((c) => crypto.subtle.digest("SHA-256", c as BufferSource)),
    );
    for (const d of digests) out.push(new Uint8Array(d));
  }
  return out;
}

/**
 * Computes the closure hash: sort entries by path (byte-wise over UTF-8), then
 * for each append the 4-byte big-endian path length, the path bytes and the
 * 32-byte SHA-256 of the content; SHA-256 the whole buffer and format it as
 * `sha256:<hex>`. The empty set hashes the empty buffer.
 *
 * @param files path → content bytes (a Map or a plain record)
 * @returns `sha256:` followed by 64 lower-case hex digits
 *
 * @example
 * ```ts
 * import { closureHash } from "./hash.ts";
 * const empty = await closureHash(new Map());
 * if (empty !== "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") {
 *   throw new Error(empty);
 * }
 * ```
 */
export async function closureHash(
  files: FileSet | Readonly<Record<string, Uint8Array>>,
): Promise<string> {
  const entries: [string, Uint8Array][] = files instanceof Map
    ? [...files.entries()]
    : Object.entries(files as Record<string, Uint8Array>);
  const paths = entries.map(([p, c]) => ({ p, pb: encoder.encode(p), c }));
  paths.sort((a, b) => compareBytes(a.pb, b.pb));
  const digests = await sha256All(paths.map(({ c }) => c));
  let size = 0;
  for (const { pb } of paths) size += 4 + pb.length + 32;
  const buf = new Uint8Array(size);
  const view = new DataView(buf.buffer);
  let off = 0;
  paths.forEach(({ pb }, i) => {
    view.setUint32(off, pb.length, false);
    off += 4;
    buf.set(pb, off);
    off += pb.length;
    buf.set(digests[i]!, off);
    off += 32;
  });
  return `sha256:${await sha256Hex(buf)}`;
}

function compareBytes(x: Uint8Array, y: Uint8Array): number {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]! - y[i]!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
