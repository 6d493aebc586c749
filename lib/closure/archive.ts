/**
 * Deterministic tar.gz archives of a file set, and a safe unpacker for
 * uploaded ones (docs/api.md, `PUT …/manifest`). Packing sorts entries by path (byte-wise over
 * UTF-8) and fixes every header field that could vary (mode 0644, uid/gid 0,
 * empty owner names, mtime 0), so identical input gives identical bytes.
 *
 * @module
 */
import { createTarDecoder, packTar, type TarEntry } from "tar";
import { CfgtoolError, UsageError } from "../errors.ts";
import type { FileSet } from "./hash.ts";
import { compareUtf8 } from "../bytes.ts";

/** Limits applied when unpacking an uploaded archive. */
export interface UnpackLimits {
  /** Most entries accepted (default 10,000). */
  maxEntries: number;
  /** Most bytes in all files together (default 16 MiB). */
  maxTotalBytes: number;
  /** Most bytes in one file (default 1 MiB). */
  maxFileBytes: number;
}

/** The archive limits (docs/api.md, `PUT …/manifest`). */
export const DEFAULT_UNPACK_LIMITS: Readonly<UnpackLimits> = {
  maxEntries: 10_000, // MAX_MANIFEST_FILES of lib/flags/model.ts; a test keeps them equal
  maxTotalBytes: 16 * 1024 * 1024,
  maxFileBytes: 1024 * 1024,
};

const EPOCH = new Date(0);

/**
 * Packs a file set into a deterministic tar.gz archive.
 *
 * @param files path → bytes; paths are relative and `/`-separated
 * @returns the gzip-compressed ustar archive
 *
 * @example
 * ```ts
 * import { packArchive } from "./archive.ts";
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const a = await packArchive(files);
 * const b = await packArchive(new Map(files));
 * if (a.length !== b.length || !a.every((x, i) => x === b[i])) throw new Error("not deterministic");
 * ```
 */
export async function packArchive(files: FileSet): Promise<Uint8Array> {
  const paths = [...files.keys()].sort(compareUtf8);
  const entries: TarEntry[] = paths.map((name) => {
    const body = files.get(name)!;
    return {
      header: {
        name,
        size: body.length,
        type: "file",
        mode: 0o644,
        uid: 0,
        gid: 0,
        uname: "",
        gname: "",
        mtime: EPOCH,
      },
      body,
    };
  });
  const tar = await packTar(entries);
  return await gzip(tar);
}

/**
 * Unpacks a tar.gz (or plain tar) archive into a file set, refusing what an
 * upload must never contain: absolute paths, `..` segments, links, devices and
 * other non-file entries (directory entries are skipped), duplicate paths, and
 * archives over the limits (413 `payload_too_large`). A leading `./` is
 * removed from paths. Bad archives throw {@linkcode UsageError}
 * (`invalid_request`, 400).
 *
 * @param bytes the archive
 * @param limits entry count and size limits
 * @returns path → bytes
 *
 * @example
 * ```ts
 * import { packArchive, unpackArchive } from "./archive.ts";
 * const files = new Map([["flags/a.toml", new Uint8Array([65])]]);
 * const back = await unpackArchive(await packArchive(files));
 * if (back.get("flags/a.toml")?.[0] !== 65) throw new Error();
 * ```
 */
export async function unpackArchive(
  bytes: Uint8Array,
  limits: UnpackLimits = DEFAULT_UNPACK_LIMITS,
): Promise<Map<string, Uint8Array>> {
  let stream = slices(bytes, SLICE_BYTES);
  // The tar stream may hold at most the file bytes plus a 512-byte header and
  // up to 511 bytes of padding per entry, and the end-of-archive blocks.
  const maxTarBytes = limits.maxTotalBytes + (limits.maxEntries + 4) * 1024;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    stream = stream
      .pipeThrough(new DecompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>)
      .pipeThrough(byteLimit(maxTarBytes));
  } else if (bytes.length > maxTarBytes) {
    throw tooLarge(`archive is larger than ${maxTarBytes} bytes`);
  }
  const out = new Map<string, Uint8Array>();
  let total = 0;
  let count = 0;
  try {
    for await (const entry of stream.pipeThrough(createTarDecoder({ strict: true }))) {
      const { header } = entry;
      count++;
      if (count > limits.maxEntries) {
        await entry.body.cancel();
        throw tooLarge(`archive has more than ${limits.maxEntries} entries`);
      }
      const type = header.type ?? "file";
      if (type === "directory") {
        await entry.body.cancel();
        continue;
      }
      if (type !== "file") {
        await entry.body.cancel();
        throw new UsageError(
          `archive entry "${header.name}" is a ${type}; only regular files are accepted`,
        );
      }
      const path = safePath(header.name);
      if (header.size > limits.maxFileBytes) {
        await entry.body.cancel();
        throw tooLarge(
          `"${path}" is ${header.size} bytes; the limit is ${limits.maxFileBytes} per file`,
        );
      }
      total += header.size;
      if (total > limits.maxTotalBytes) {
        await entry.body.cancel();
        throw tooLarge(`archive unpacks to more than ${limits.maxTotalBytes} bytes`);
      }
      const data = new Uint8Array(await new Response(entry.body).arrayBuffer());
      if (out.has(path)) throw new UsageError(`archive contains "${path}" twice`);
      out.set(path, data);
    }
  } catch (err) {
    if (err instanceof CfgtoolError) throw err;
    throw new UsageError(`not a valid tar or tar.gz archive: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return out;
}

/** Input slice size: the inflater never sees more than this at once. */
const SLICE_BYTES = 64 * 1024;

/** A pull-based stream of `bytes` in slices, so inflation proceeds step by step. */
function slices(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (off >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(off, off + size));
      off += size;
    },
  }, { highWaterMark: 0 });
}

/**
 * Passes bytes through until `max` have passed, then fails with 413: a
 * small gzip body cannot inflate past the archive limits (a gzip bomb).
 */
function byteLimit(max: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream<Uint8Array, Uint8Array>(
    {
      transform(chunk, controller) {
        seen += chunk.length;
        if (seen > max) {
          controller.error(tooLarge(`archive inflates to more than ${max} bytes`));
          return;
        }
        controller.enqueue(chunk);
      },
    },
    undefined,
    { highWaterMark: 0 },
  );
}

function safePath(name: string): string {
  let p = name;
  while (p.startsWith("./")) p = p.slice(2);
  if (
    p === "" || p.startsWith("/") || /^[A-Za-z]:/.test(p) || p.includes("\\") || p.includes("\0")
  ) {
    throw new UsageError(`archive entry "${name}" has an absolute or invalid path`);
  }
  if (p.split("/").some((seg) => seg === ".." || seg === "." || seg === "")) {
    throw new UsageError(`archive entry "${name}" leaves the archive root or is not normalized`);
  }
  return p;
}

function tooLarge(message: string): CfgtoolError {
  return new CfgtoolError("payload_too_large", message, { status: 413 });
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new CompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>,
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
