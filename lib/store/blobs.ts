/**
 * Content-addressed blobs: bytes stored under their SHA-256 (hex), split in
 * chunks of at most 60 KiB at `["blob", sha, i]` (Deno KV values are limited
 * to 64 KiB), with `["blob_meta", sha]` = `{size, chunks}` written last.
 * Writing the same bytes twice is a no-op; a blob is readable only once its
 * metadata exists, so a crash mid-write never exposes a partial blob.
 *
 * @module
 */
import { sha256All, sha256Hex, toHex } from "../bytes.ts";
import { blobChunkKey, blobChunkPrefix, blobMetaKey } from "./keys.ts";
import { commitInBatches, getManyChunked } from "./kv_batch.ts";

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
  // as many go to one atomic commit as the KV's size limit allows.
  await commitInBatches(
    kv,
    Array.from({ length: chunks }, (_, i): Deno.KvMutation => ({
      type: "set",
      key: blobChunkKey(id, i),
      value: bytes.subarray(i * BLOB_CHUNK_SIZE, (i + 1) * BLOB_CHUNK_SIZE),
    })),
  );
  await kv.set(blobMetaKey(id), { size: bytes.length, chunks });
  return id;
}

/** `getMany` lookups {@linkcode putBlobs} keeps in flight (200 blob ids): bounded bursts of work on the event loop. */
const LOOKUPS_IN_FLIGHT = 20;

/**
 * Stores many blobs (idempotently) and returns their ids in input order.
 * Metadata is looked up ten keys at a time, and the missing single-chunk
 * blobs are written chunk and metadata together, as many blobs to one
 * atomic commit as the KV's limits allow, so a push of thousands of small
 * files costs a few commits instead of two per file. Larger blobs go
 * through {@linkcode putBlob}.
 *
 * @param kv the store
 * @param contents the contents to store
 * @param knownIds each content's id (SHA-256 hex) when the caller has them
 * @returns the blob ids (SHA-256 hex), one per content
 *
 * @example
 * ```ts
 * import { getBlob, putBlobs } from "./blobs.ts";
 * const kv = await Deno.openKv(":memory:");
 * const enc = new TextEncoder();
 * const [a, b] = await putBlobs(kv, [enc.encode("a"), enc.encode("b")]);
 * if (new TextDecoder().decode((await getBlob(kv, b!))!) !== "b" || a === b) throw new Error();
 * kv.close();
 * ```
 */
export async function putBlobs(
  kv: Deno.Kv,
  contents: readonly Uint8Array[],
  knownIds?: readonly string[],
): Promise<string[]> {
  const ids = knownIds ? [...knownIds] : (await sha256All(contents)).map(toHex);
  const byId = new Map<string, Uint8Array>();
  ids.forEach((id, i) => byId.set(id, contents[i]!));
  const unique = [...byId.keys()];
  const metas = await getManyChunked<BlobMeta>(kv, unique.map((id) => blobMetaKey(id)), {
    inFlight: LOOKUPS_IN_FLIGHT,
  });
  const missing = unique.filter((_, i) => metas[i]!.value === null);
  const small: Deno.KvMutation[][] = [];
  for (const id of missing) {
    const bytes = byId.get(id)!;
    if (bytes.length > BLOB_CHUNK_SIZE) await putBlob(kv, bytes);
    else {
      // chunk and metadata in the same commit
      small.push([
        { type: "set", key: blobChunkKey(id, 0), value: bytes },
        { type: "set", key: blobMetaKey(id), value: { size: bytes.length, chunks: 1 } },
      ]);
    }
  }
  await commitInBatches(kv, small);
  return ids;
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

/**
 * Reads several blobs with as few KV round trips as possible: metadata in
 * `getMany` batches, single-chunk blobs (the common case: files under
 * 60 KiB) in `getMany` batches too, larger ones chunk by chunk.
 *
 * @param kv the store
 * @param ids blob ids (sha256 hex)
 * @returns id → bytes; a missing blob is absent from the map
 *
 * @example
 * ```ts
 * import { getBlobs, putBlob } from "./blobs.ts";
 * const kv = await Deno.openKv(":memory:");
 * const a = await putBlob(kv, new Uint8Array([1]));
 * const got = await getBlobs(kv, [a, "0".repeat(64)]);
 * if (got.get(a)?.[0] !== 1 || got.size !== 1) throw new Error();
 * kv.close();
 * ```
 */
export async function getBlobs(
  kv: Deno.Kv,
  ids: readonly string[],
): Promise<Map<string, Uint8Array>> {
  const unique = [...new Set(ids)];
  const reads = { inFlight: READS_IN_FLIGHT };
  const metas = new Map<string, BlobMeta>();
  const metaEntries = await getManyChunked<BlobMeta>(
    kv,
    unique.map((id) => blobMetaKey(id)),
    reads,
  );
  metaEntries.forEach((e, i) => {
    if (e.value !== null) metas.set(unique[i]!, e.value);
  });
  const out = new Map<string, Uint8Array>();
  const single = [...metas].filter(([, m]) => m.chunks === 1).map(([id]) => id);
  const chunks = await getManyChunked<Uint8Array>(
    kv,
    single.map((id) => blobChunkKey(id, 0)),
    reads,
  );
  chunks.forEach((e, i) => {
    const id = single[i]!;
    if (e.value !== null && e.value.length === metas.get(id)!.size) out.set(id, e.value);
  });
  await Promise.all(
    [...metas].filter(([, m]) => m.chunks !== 1).map(async ([id]) => {
      const bytes = await getBlob(kv, id);
      if (bytes !== null) out.set(id, bytes);
    }),
  );
  return out;
}

/** `getMany` reads {@linkcode getBlobs} keeps in flight: issuing a thousand at once holds the event loop. */
const READS_IN_FLIGHT = 16;
