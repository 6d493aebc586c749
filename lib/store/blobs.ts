/**
 * Content-addressed blobs: bytes stored under their SHA-256 (hex), split in
 * chunks of at most 60 KiB at `["blob", sha, i]` (Deno KV values are limited
 * to 64 KiB), with `["blob_meta", sha]` = `{size, chunks}` written last.
 * Writing the same bytes twice is a no-op; a blob is readable only once its
 * metadata exists, so a crash mid-write never exposes a partial blob.
 *
 * @module
 */
import { sha256Hex } from "../closure/hash.ts";
import { blobChunkKey, blobChunkPrefix, blobMetaKey } from "./keys.ts";

/** Largest chunk stored in one KV value. */
export const BLOB_CHUNK_SIZE = 60 * 1024;

/** Metadata of a stored blob. */
export interface BlobMeta {
  /** Total size in bytes. */
  size: number;
  /** Number of chunks. */
  chunks: number;
}

/**
 * Stores bytes (idempotently) and returns their id, the SHA-256 hex.
 *
 * @param kv the store
 * @param bytes the content
 * @returns the blob id
 *
 * @example
 * ```ts
 * import { putBlob } from "./blobs.ts";
 * const kv = await Deno.openKv(":memory:");
 * const id = await putBlob(kv, new TextEncoder().encode("hi"));
 * if (id.length !== 64) throw new Error(id);
 * kv.close();
 * ```
 */
export async function putBlob(kv: Deno.Kv, bytes: Uint8Array): Promise<string> {
  const id = await sha256Hex(bytes);
  const meta = await kv.get<BlobMeta>(blobMetaKey(id));
  if (meta.value !== null) return id;
  const chunks = Math.max(1, Math.ceil(bytes.length / BLOB_CHUNK_SIZE));
  // Chunks are content-addressed, so concurrent writers write equal bytes;
  // batches keep each atomic commit well under the KV size limit.
  for (let start = 0; start < chunks; start += 8) {
    const op = kv.atomic();
    for (let i = start; i < Math.min(chunks, start + 8); i++) {
      op.set(
        blobChunkKey(id, i),
        bytes.subarray(i * BLOB_CHUNK_SIZE, (i + 1) * BLOB_CHUNK_SIZE),
      );
    }
    await op.commit();
  }
  await kv.set(blobMetaKey(id), { size: bytes.length, chunks });
  return id;
}

/**
 * Reads a blob back, or `null` when no complete blob has that id.
 *
 * @param kv the store
 * @param id the blob id (SHA-256 hex)
 * @returns the content, or null
 *
 * @example
 * ```ts
 * import { getBlob, putBlob } from "./blobs.ts";
 * const kv = await Deno.openKv(":memory:");
 * const id = await putBlob(kv, new Uint8Array([1, 2, 3]));
 * const back = await getBlob(kv, id);
 * if (back?.length !== 3) throw new Error();
 * kv.close();
 * ```
 */
export async function getBlob(
  kv: Deno.Kv,
  id: string,
): Promise<Uint8Array | null> {
  const meta = await kv.get<BlobMeta>(blobMetaKey(id));
  if (meta.value === null) return null;
  const out = new Uint8Array(meta.value.size);
  let off = 0;
  for await (
    const entry of kv.list<Uint8Array>({ prefix: blobChunkPrefix(id) })
  ) {
    out.set(entry.value, off);
    off += entry.value.length;
  }
  if (off !== meta.value.size) {
    throw new Error(`Cannot read blob ${id}: ${off} of ${meta.value.size} bytes`);
  }
  return out;
}
