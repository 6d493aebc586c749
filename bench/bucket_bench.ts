/**
 * Bucketing hash: the hand-written streaming UTF-8 murmur3 of lib/flags/bucket.ts against
 * the `murmurhash` npm package (`v3`, which encodes strings with a new TextEncoder per call).
 * Run: deno bench -A bench/bucket_bench.ts
 */
import murmurhash from "murmurhash";
import { murmur3Strings } from "../lib/flags/bucket.ts";

const keys = Array.from({ length: 1024 }, (_, i) => `user-${(i * 7919) % 1_000_000}`);
const prefix = "notification-route/";
let sink = 0;

Deno.bench("murmur3Strings(prefix, value) [ours, no allocation]", {
  group: "ascii",
  baseline: true,
}, () => {
  for (let i = 0; i < keys.length; i++) sink ^= murmur3Strings(prefix, keys[i]!);
});
Deno.bench("murmurhash.v3(prefix + value) [npm murmurhash@2.0.1]", { group: "ascii" }, () => {
  for (let i = 0; i < keys.length; i++) sink ^= murmurhash.v3(prefix + keys[i]!, 0);
});
const enc = new TextEncoder();
Deno.bench("murmurhash.v3(shared TextEncoder bytes) [npm, bytes]", { group: "ascii" }, () => {
  for (let i = 0; i < keys.length; i++) sink ^= murmurhash.v3(enc.encode(prefix + keys[i]!), 0);
});
const uni = keys.map((k) => k + "-é😀");
Deno.bench("murmur3Strings non-ASCII [ours]", { group: "utf8", baseline: true }, () => {
  for (let i = 0; i < uni.length; i++) sink ^= murmur3Strings(prefix, uni[i]!);
});
Deno.bench("murmurhash.v3 non-ASCII [npm]", { group: "utf8" }, () => {
  for (let i = 0; i < uni.length; i++) sink ^= murmurhash.v3(prefix + uni[i]!, 0);
});
globalThis.addEventListener("unload", () => {
  if (sink === 0.5) console.log(sink);
});
