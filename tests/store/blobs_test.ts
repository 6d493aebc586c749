import { assertEquals } from "../assert.ts";
import { BLOB_CHUNK_SIZE, getBlob, getBlobs, putBlob } from "../../lib/store/blobs.ts";
import { sha256Hex } from "../../lib/closure/hash.ts";

Deno.test("putBlob() chunks content over 60 KiB and getBlob() reads it back identical", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const bytes = new Uint8Array(1024 * 1024 + 17);
    for (let i = 0; i < bytes.length; i += 65536) {
      crypto.getRandomValues(bytes.subarray(i, Math.min(i + 65536, bytes.length)));
    }
    const id = await putBlob(kv, bytes);
    assertEquals(id, await sha256Hex(bytes));
    let chunks = 0;
    for await (const e of kv.list<Uint8Array>({ prefix: ["blob", id] })) {
      chunks++;
      assertEquals(e.value.length <= BLOB_CHUNK_SIZE, true);
    }
    assertEquals(chunks, Math.ceil(bytes.length / BLOB_CHUNK_SIZE));
    assertEquals(await getBlob(kv, id), bytes);
  } finally {
    kv.close();
  }
});

Deno.test("putBlob() is idempotent and stores the empty blob", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const a = await putBlob(kv, new Uint8Array([1, 2, 3]));
    const b = await putBlob(kv, new Uint8Array([1, 2, 3]));
    assertEquals(a, b);
    const empty = await putBlob(kv, new Uint8Array());
    assertEquals(await getBlob(kv, empty), new Uint8Array());
    assertEquals(await getBlob(kv, "00".repeat(32)), null);
  } finally {
    kv.close();
  }
});

Deno.test("getBlobs() reads many blobs at once, large and small, and leaves out missing ones", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const small = Array.from({ length: 23 }, (_, i) => new TextEncoder().encode(`file ${i}`));
    const large = crypto.getRandomValues(new Uint8Array(61 * 1024));
    const ids = await Promise.all([...small, large].map((b) => putBlob(kv, b)));
    const got = await getBlobs(kv, [...ids, "f".repeat(64), ids[0]!]);
    assertEquals(got.size, ids.length);
    [...small, large].forEach((bytes, i) => assertEquals(got.get(ids[i]!), bytes));
  } finally {
    kv.close();
  }
});
