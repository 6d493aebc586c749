import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import { digestsEqual, hmacHex } from "../../lib/auth/digest.ts";
import { timingSafeEqual } from "../../lib/bytes.ts";
import { importTokenKey, randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { toHex } from "../../lib/bytes.ts";

Deno.test("hmacHex() is HMAC-SHA-256 under the key, and differs per key", async () => {
  const raw = new Uint8Array(32).fill(1);
  const key = await importTokenKey(raw);
  const ref = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const expected = toHex(
    new Uint8Array(await crypto.subtle.sign("HMAC", ref, new TextEncoder().encode("svc_read_x"))),
  );
  assertEquals(await hmacHex(key, "svc_read_x"), expected);
  assertNotEquals(await hmacHex(await randomTokenKey(), "svc_read_x"), expected);
});

Deno.test("timingSafeEqual() compares every byte and refuses different lengths", () => {
  const a = new Uint8Array([1, 2, 3, 4]);
  assert(timingSafeEqual(a, new Uint8Array([1, 2, 3, 4])));
  assert(!timingSafeEqual(a, new Uint8Array([1, 2, 3, 5])));
  assert(!timingSafeEqual(a, new Uint8Array([0, 2, 3, 4])));
  assert(!timingSafeEqual(a, new Uint8Array([1, 2, 3])));
  assert(timingSafeEqual(new Uint8Array(), new Uint8Array()));
  assert(digestsEqual("abcd", "abcd") && !digestsEqual("abcd", "abce"));
});
