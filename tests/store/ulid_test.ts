import { assert, assertEquals, assertMatch } from "../assert.ts";
import { ulid } from "../../lib/store/ulid.ts";

Deno.test("ulid() is 26 Crockford characters and strictly increasing within a millisecond", () => {
  const t = Date.now();
  const ids = Array.from({ length: 1000 }, () => ulid(t));
  for (const id of ids) assertMatch(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  for (let i = 1; i < ids.length; i++) assert(ids[i - 1]! < ids[i]!);
  assertEquals(new Set(ids).size, ids.length);
});

Deno.test("ulid() encodes the time in its first 10 characters", () => {
  const t = Date.now() + 5;
  const id = ulid(t);
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  let decoded = 0;
  for (const c of id.slice(0, 10)) decoded = decoded * 32 + alphabet.indexOf(c);
  assertEquals(decoded, t);
});

Deno.test("ulid() stays monotonic when the clock goes back", () => {
  const a = ulid(Date.now() + 10);
  const b = ulid(0);
  assert(a < b);
});
