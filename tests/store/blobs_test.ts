import { assertEquals } from "../assert.ts";
import { BLOB_CHUNK_SIZE, getBlob, getBlobs, putBlob, putBlobs } from "../../lib/store/blobs.ts";
import { sha256Hex } from "../../lib/bytes.ts";

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

/** Counts the atomic commits made through `kv`. */
function countingCommits(kv: Deno.Kv): { kv: Deno.Kv; commits: () => number } {
  let commits = 0;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => {
      commits++;
      return commit();
    };
    return op;
  };
  return { kv, commits: () => commits };
}

Deno.test("putBlobs() writes thousands of small blobs in a few atomic commits, readable after", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const enc = new TextEncoder();
    const contents = Array.from({ length: 3000 }, (_, i) => enc.encode(`flag ${i}\n`));
    const ids = await putBlobs(kv, contents);
    // before batching: two commits per file (6,000)
    assertEquals(commits() <= 20, true, `${commits()} commits`);
    assertEquals(ids.length, 3000);
    assertEquals(ids[7], await sha256Hex(contents[7]!));
    const back = await getBlobs(kv, ids);
    assertEquals(back.size, 3000);
    assertEquals(back.get(ids[2999]!), contents[2999]);
  } finally {
    kv.close();
  }
});

Deno.test("putBlobs() skips stored blobs, keeps duplicates in order and chunks large ones", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const small = new TextEncoder().encode("same");
    const large = new Uint8Array(BLOB_CHUNK_SIZE * 2 + 5).fill(7);
    const first = await putBlobs(kv, [small, large, small]);
    assertEquals(first[0], first[2]);
    assertEquals(await getBlob(kv, first[1]!), large);
    const before = commits();
    assertEquals(await putBlobs(kv, [large, small]), [first[1], first[0]]);
    assertEquals(commits(), before, "nothing written again");
  } finally {
    kv.close();
  }
});
