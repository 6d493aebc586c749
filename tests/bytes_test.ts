import { assert, assertEquals } from "./assert.ts";
import fc from "fast-check";
import {
  bytesEqual,
  compareBytes,
  compareUtf8,
  sha256All,
  sha256Hex,
  timingSafeEqual,
  toHex,
} from "../lib/bytes.ts";

const enc = new TextEncoder();

Deno.test("compareUtf8 orders strings exactly as their UTF-8 bytes compare", () => {
  const sign = (n: number) => Math.sign(n);
  fc.assert(
    fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
      assertEquals(sign(compareUtf8(a, b)), sign(compareBytes(enc.encode(a), enc.encode(b))));
    }),
    { numRuns: 2000 },
  );
  // the case UTF-16 order gets wrong: U+FF5E (0xEF …) before U+1F600 (0xF0 …)
  assert(compareUtf8("～", "😀") < 0 && "～" > "😀");
  assert(compareUtf8("\uE000", "\u{10000}") < 0);
  assert(compareUtf8("\u{10FFFF}", "\uFFFF") > 0);
});

Deno.test("toHex writes two lower-case digits per byte", () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
    assertEquals(toHex(bytes), [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""));
  }));
});

Deno.test("sha256All gives each content's digest, in input order, past one slice", async () => {
  const contents = Array.from({ length: 70 }, (_, i) => enc.encode(`file ${i}`));
  const digests = await sha256All(contents);
  assertEquals(digests.length, 70);
  for (const [i, c] of contents.entries()) assertEquals(toHex(digests[i]!), await sha256Hex(c));
});

Deno.test("bytesEqual and timingSafeEqual agree on equality", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
      const same = toHex(a) === toHex(b);
      assertEquals(bytesEqual(a, b), same);
      assertEquals(timingSafeEqual(a, b), same);
      assert(timingSafeEqual(a, a.slice()));
    }),
  );
});
