import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import fc from "fast-check";
import { closureHash } from "../../lib/closure/hash.ts";
import { compareUtf8, sha256Hex } from "../../lib/bytes.ts";

const enc = new TextEncoder();

Deno.test("closure hash of the empty closure is sha256 of the empty buffer", async () => {
  assertEquals(
    await closureHash(new Map()),
    `sha256:${await sha256Hex(new Uint8Array())}`,
  );
});

Deno.test("closure hash follows the spec's byte layout", async () => {
  // Build the buffer by hand for two files given out of order.
  const files = new Map([["b.toml", enc.encode("B")], [
    "a.toml",
    enc.encode("A"),
  ]]);
  const parts: number[] = [];
  for (const [p, c] of [["a.toml", "A"], ["b.toml", "B"]] as const) {
    const pb = enc.encode(p);
    parts.push(0, 0, 0, pb.length, ...pb);
    parts.push(
      ...new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(c))),
    );
  }
  assertEquals(
    await closureHash(files),
    `sha256:${await sha256Hex(new Uint8Array(parts))}`,
  );
});

Deno.test("closure hash sorts paths byte-wise over UTF-8, not by UTF-16 code units", () => {
  // U+FF5E (3 UTF-8 bytes starting 0xEF) sorts after U+1F600 (4 bytes starting 0xF0)? No:
  // 0xEF < 0xF0, so "～" < "😀" byte-wise, while UTF-16 puts the surrogate 0xD83D first.
  assert(compareUtf8("～", "😀") < 0);
  assert("～" > "😀"); // the UTF-16 order differs, which is why the comparison matters
});

Deno.test("closure hash does not depend on insertion order", async () => {
  const a = new Map([["x", enc.encode("1")], ["y", enc.encode("2")]]);
  const b = new Map([["y", enc.encode("2")], ["x", enc.encode("1")]]);
  assertEquals(await closureHash(a), await closureHash(b));
});

Deno.test("closure hash depends on every byte and every path", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.uint8Array({ maxLength: 32 }),
        {
          minKeys: 1,
          maxKeys: 6,
        },
      ),
      fc.nat(),
      fc.nat(),
      async (rec, pick, bytePick) => {
        const files = new Map(Object.entries(rec));
        const base = await closureHash(files);
        const keys = [...files.keys()];
        const key = keys[pick % keys.length]!;
        const content = files.get(key)!;
        // flip one byte (or append one when empty)
        const changed = new Uint8Array(content.length === 0 ? [0] : content);
        if (content.length > 0) changed[bytePick % changed.length]! ^= 0xff;
        const byByte = new Map(files).set(key, changed);
        assertNotEquals(await closureHash(byByte), base);
        // rename the path
        const renamed = new Map(files);
        renamed.delete(key);
        let newKey = key + "~";
        while (renamed.has(newKey)) newKey += "~";
        renamed.set(newKey, content);
        assertNotEquals(await closureHash(renamed), base);
      },
    ),
    { numRuns: 60 },
  );
});
