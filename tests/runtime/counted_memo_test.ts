import { assertEquals } from "../assert.ts";
import { CountedMemo } from "../../lib/runtime/counted_memo.ts";

const entry = (n: number) => ({ archive: new Uint8Array(n), closureHash: "sha256:x", tarSize: n });

Deno.test("every lookup of a counted memo is a hit or a miss, getOrCreate included", async () => {
  const memo = new CountedMemo({ maxEntries: 1, maxBytes: 1024 });
  assertEquals(memo.get("a"), undefined);
  memo.set("a", entry(1));
  assertEquals(memo.get("a")?.tarSize, 1);
  await memo.getOrCreate("a", () => Promise.resolve(entry(2)));
  await memo.getOrCreate("b", () => Promise.resolve(entry(3))); // evicts a
  assertEquals(memo.get("a"), undefined);
  assertEquals([memo.hits, memo.misses], [2, 3]);
});
