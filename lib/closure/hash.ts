/**
 * The closure hash (docs/events.md, "The closure hash"): one function that identifies a set of
 * files. It is the workspace source fingerprint, the manifest ETag and the
 * integrity check of the event stream.
 *
 * @module
 */
import { compareBytes, compareUtf8, sha256All, sha256Hex, toHex } from "../bytes.ts";

/** A set of files: path (relative, `/`-separated) to exact content bytes. */
export type FileSet = ReadonlyMap<string, Uint8Array>;

const encoder = new TextEncoder();
const SURROGATE = /[\uD800-\uDFFF]/;

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
  const digests = await sha256All(entries.map(([, c]) => c));
  return await closureHashOfDigests(entries.map(([p], i) => [p, digests[i]!]));
}

/**
 * The closure hash of files whose SHA-256 digests are already known, so a
 * caller that hashed each file once (to store it by content) need not hash
 * it again. Same layout and result as {@linkcode closureHash}.
 *
 * @param entries path and the 32-byte SHA-256 of its content, in any order
 * @returns `sha256:` followed by 64 lower-case hex digits
 *
 * @example
 * ```ts
 * import { closureHash, closureHashOfDigests } from "./hash.ts";
 * const a = new TextEncoder().encode("A");
 * const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", a));
 * const hash = await closureHashOfDigests([["a.toml", digest]]);
 * if (hash !== await closureHash(new Map([["a.toml", a]]))) throw new Error(hash);
 * ```
 */
export async function closureHashOfDigests(
  entries: readonly (readonly [string, Uint8Array])[],
): Promise<string> {
  const paths = entries.map(([p, digest]) => ({ p, pb: encoder.encode(p), digest }));
  // Without surrogates, comparing the strings gives the UTF-8 byte order, faster.
  if (paths.some(({ p }) => SURROGATE.test(p))) paths.sort((a, b) => compareBytes(a.pb, b.pb));
  else paths.sort((a, b) => compareUtf8(a.p, b.p));
  let size = 0;
  for (const { pb } of paths) size += 4 + pb.length + 32;
  const buf = new Uint8Array(size);
  const view = new DataView(buf.buffer);
  let off = 0;
  for (const { pb, digest } of paths) {
    view.setUint32(off, pb.length, false);
    off += 4;
    buf.set(pb, off);
    off += pb.length;
    buf.set(digest, off);
    off += 32;
  }
  return `sha256:${await sha256Hex(buf)}`;
}

/**
 * A file set's closure hash and each file's content id (the SHA-256 hex of
 * its bytes), every file hashed once: what `commitVersion` stores a version
 * under.
 *
 * @param files path → content bytes
 * @returns the closure hash and path → content id
 *
 * @example
 * ```ts
 * import { closureHash, hashFileSet } from "./hash.ts";
 * const files = new Map([["a.toml", new TextEncoder().encode("A")]]);
 * const { closureHash: hash, blobIds } = await hashFileSet(files);
 * if (hash !== await closureHash(files) || blobIds.get("a.toml")?.length !== 64) throw new Error();
 * ```
 */
export async function hashFileSet(
  files: ReadonlyMap<string, Uint8Array>,
): Promise<{ closureHash: string; blobIds: Map<string, string> }> {
  const list = await sha256All([...files.values()]);
  const paths = [...files.keys()];
  return {
    closureHash: await closureHashOfDigests(paths.map((p, i) => [p, list[i]!])),
    blobIds: new Map(paths.map((p, i) => [p, toHex(list[i]!)])),
  };
}
