/**
 * A file set packed for a worker message: the paths as one JSON string and
 * every content in one buffer, so `postMessage` copies three values instead
 * of cloning ten thousand, and the receiving thread rebuilds the set as
 * views into that buffer.
 *
 * @module
 */

/** A file set as {@linkcode packFiles} packs it. */
export interface PackedFiles {
  /** The paths, in the set's order, as a JSON array. */
  paths: string;
  /** End offset in `bytes` of each content, in the same order. */
  ends: Uint32Array;
  /** Every content, one after another. */
  bytes: Uint8Array;
}

/**
 * Packs a file set (path → bytes) into one buffer and a path list.
 *
 * @param files the file set
 * @returns the packed form; its buffers may be transferred
 *
 * @example
 * ```ts
 * import { packFiles, unpackFiles } from "./packed_files.ts";
 * const files = new Map([["a.toml", new Uint8Array([1, 2])], ["b.toml", new Uint8Array([3])]]);
 * const back = unpackFiles(packFiles(files));
 * if ([...back.keys()].join() !== "a.toml,b.toml" || back.get("b.toml")![0] !== 3) throw new Error();
 * ```
 */
export function packFiles(files: ReadonlyMap<string, Uint8Array>): PackedFiles {
  let size = 0;
  for (const c of files.values()) size += c.length;
  const bytes = new Uint8Array(size);
  const ends = new Uint32Array(files.size);
  let off = 0;
  let i = 0;
  for (const c of files.values()) {
    bytes.set(c, off);
    off += c.length;
    ends[i++] = off;
  }
  return { paths: JSON.stringify([...files.keys()]), ends, bytes };
}

/**
 * Rebuilds a file set from {@linkcode packFiles}'s output; the contents are
 * views into `packed.bytes`, not copies.
 *
 * @param packed the packed file set
 * @returns path → bytes, in the packed order
 *
 * @example
 * ```ts
 * import { packFiles, unpackFiles } from "./packed_files.ts";
 * const back = unpackFiles(packFiles(new Map()));
 * if (back.size !== 0) throw new Error();
 * ```
 */
export function unpackFiles(packed: PackedFiles): Map<string, Uint8Array> {
  const paths = JSON.parse(packed.paths) as string[];
  const out = new Map<string, Uint8Array>();
  let start = 0;
  paths.forEach((path, i) => {
    const end = packed.ends[i]!;
    out.set(path, packed.bytes.subarray(start, end));
    start = end;
  });
  return out;
}

/**
 * The buffers of a packed file set, to list as `postMessage` transferables.
 *
 * @param packed the packed file set
 * @returns its two buffers
 *
 * @example
 * ```ts
 * import { packFiles, transferablesOf } from "./packed_files.ts";
 * if (transferablesOf(packFiles(new Map())).length !== 2) throw new Error();
 * ```
 */
export function transferablesOf(packed: PackedFiles): ArrayBuffer[] {
  return [packed.ends.buffer as ArrayBuffer, packed.bytes.buffer as ArrayBuffer];
}
