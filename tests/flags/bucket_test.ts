import fc from "fast-check";
import murmurhash from "murmurhash";
import { assertEquals } from "../assert.ts";
import {
  bucketOf,
  bucketValueOf,
  murmur3,
  murmur3Finalize,
  murmur3MixBlock,
  murmur3Strings,
} from "../../lib/flags/bucket.ts";
import { referenceMurmur3 } from "./_murmur3_reference.ts";

const enc = new TextEncoder();

/**
 * The published bucketing test vectors (also in docs/flags.md, "Bucketing test
 * vectors"): flag key, bucket value, UTF-8 length of `<flag key>/<bucket value>`,
 * murmur3 x86 32-bit (seed 0) of that string, and the bucket (hash % 100000).
 */
export const VECTORS: readonly [string, string, number, number, number][] = [
  ["new-checkout", "user-1", 19, 1707527752, 27752],
  ["new-checkout", "user-2", 19, 1121911356, 11356],
  ["new-checkout", "user-1000", 22, 1683834378, 34378],
  ["checkout-theme", "acct-42", 22, 1012662303, 62303],
  ["search-ranking", "42", 17, 3296432659, 32659],
  ["search-ranking", "true", 19, 2358743860, 43860],
  ["search-ranking", "1.5", 18, 668047021, 47021],
  ["a", "b", 3, 2494077863, 77863],
  ["flag.with_dots-1", "x", 18, 487695536, 95536],
  ["notification-route", "user-1004", 28, 4212216960, 16960],
  ["new-checkout", "é", 15, 2232316767, 16767],
  ["new-checkout", "José", 18, 1572198112, 98112],
  ["new-checkout", "😀", 17, 1733169862, 69862],
  ["new-checkout", "ユーザー", 25, 1280110321, 10321],
  ["new-checkout", "Zoë 👩‍💻", 29, 2729872376, 72376],
];

Deno.test("murmur3() matches the published MurmurHash3_x86_32 vectors", () => {
  assertEquals(murmur3(""), 0);
  assertEquals(murmur3("", 1), 0x514e28b7);
  assertEquals(murmur3("hello"), 613153351);
  assertEquals(murmur3("The quick brown fox jumps over the lazy dog"), 0x2e4ff723);
  assertEquals(murmur3(enc.encode("The quick brown fox jumps over the lazy dog")), 0x2e4ff723);
});

Deno.test("bucketOf() reproduces the test vectors with three implementations", () => {
  for (const [flag, value, length, hash, bucket] of VECTORS) {
    const bytes = enc.encode(`${flag}/${value}`);
    assertEquals(bytes.length, length, `${flag}/${value} length`);
    assertEquals(referenceMurmur3(bytes), hash, `${flag}/${value} reference`);
    assertEquals(murmurhash.v3(bytes, 0), hash, `${flag}/${value} murmurhash npm`);
    assertEquals(murmur3(`${flag}/${value}`), hash, `${flag}/${value} murmur3`);
    assertEquals(murmur3Strings(`${flag}/`, value), hash, `${flag}/${value} murmur3Strings`);
    assertEquals(bucketOf(flag, value), bucket, `${flag}/${value} bucket`);
    assertEquals(hash % 100000, bucket);
  }
});

Deno.test("murmur3Strings() equals the reference on UTF-8 bytes for any strings", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
      const expected = referenceMurmur3(enc.encode(a + b));
      return murmur3Strings(a, b) === expected && murmur3(a + b) === expected &&
        murmur3(enc.encode(a + b)) === expected;
    }),
    { numRuns: 2000 },
  );
});

Deno.test("folding 32-bit words with murmur3MixBlock() and murmur3Finalize() is murmur3 of their bytes", () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffffffff })), fc.nat(), (words, seed) => {
      let h = seed | 0;
      for (const w of words) h = murmur3MixBlock(h, w);
      const bytes = new Uint8Array(words.length * 4);
      words.forEach((w, i) => new DataView(bytes.buffer).setUint32(i * 4, w, true));
      return murmur3Finalize(h, bytes.length) === referenceMurmur3(bytes, seed);
    }),
    { numRuns: 1000 },
  );
});

Deno.test("murmur3Strings() encodes lone surrogates as U+FFFD, like TextEncoder", () => {
  for (const s of ["\ud800", "a\udc00b", "\udbff\udbff", "😀\ud83d", "\ud83d", "x\ude00"]) {
    assertEquals(murmur3(s), referenceMurmur3(enc.encode(s)), JSON.stringify(s));
    assertEquals(murmur3Strings(s, s), referenceMurmur3(enc.encode(s + s)));
  }
  // A pair split across the two parts is two lone surrogates, as in separate encodings.
  assertEquals(murmur3Strings("\ud83d", "\ude00"), referenceMurmur3(enc.encode("\ufffd\ufffd")));
});

Deno.test("bucketValueOf() stringifies numbers and booleans and rejects the rest", () => {
  assertEquals(bucketValueOf("user-1"), "user-1");
  assertEquals(bucketValueOf(42), "42");
  assertEquals(bucketValueOf(1.5), "1.5");
  assertEquals(bucketValueOf(-0), "0");
  assertEquals(bucketValueOf(1e21), "1e+21");
  assertEquals(bucketValueOf(true), "true");
  assertEquals(bucketValueOf(false), "false");
  for (const v of ["", null, undefined, {}, [], ["a"], NaN, Infinity]) {
    assertEquals(bucketValueOf(v), undefined, String(v));
  }
});

Deno.test("bucketOf() spreads keys evenly over the buckets", () => {
  const counts = new Array(10).fill(0);
  for (let i = 0; i < 100_000; i++) counts[Math.floor(bucketOf("spread", `user-${i}`) / 10000)]++;
  for (const c of counts) {
    if (c < 9600 || c > 10400) throw new Error(`decile count ${c} (expected about 10000)`);
  }
});
