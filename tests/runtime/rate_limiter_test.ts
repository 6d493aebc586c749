import { assert, assertEquals, assertThrows } from "../assert.ts";
import { RateLimitError } from "../../lib/errors.ts";
import { RateLimiter } from "../../lib/runtime/rate_limiter.ts";

Deno.test("RateLimiter.take() allows the quota as a burst, then refuses with Retry-After", () => {
  let now = 1_000_000;
  const limiter = new RateLimiter({ perMinute: 6, now: () => now });
  const key = RateLimiter.key("acme", "web", "staging", "https://a.example");
  for (let i = 0; i < 6; i++) assert(limiter.take(key).allowed, `request ${i + 1}`);
  const refused = limiter.take(key);
  assertEquals([refused.allowed, refused.retryAfter, refused.remaining], [false, 10, 0]);
  now += 9_999;
  assert(!limiter.take(key).allowed, "not yet refilled");
  now += 1;
  assert(limiter.take(key).allowed, "one request refilled after 10 s");
  assert(!limiter.take(key).allowed);
});

Deno.test("RateLimiter.take() refills continuously up to the quota, never beyond", () => {
  let now = 0;
  const limiter = new RateLimiter({ perMinute: 60, now: () => now });
  const key = "k";
  for (let i = 0; i < 60; i++) limiter.take(key);
  now += 3_600_000; // an hour later: still only 60
  let allowed = 0;
  while (limiter.take(key).allowed) allowed++;
  assertEquals(allowed, 60);
});

Deno.test("RateLimiter keys separate tenant, namespace, environment and Origin", () => {
  const limiter = new RateLimiter({ perMinute: 1, now: () => 0 });
  const keys = [
    RateLimiter.key("a", "web", "staging", ""),
    RateLimiter.key("b", "web", "staging", ""),
    RateLimiter.key("a", "api", "staging", ""),
    RateLimiter.key("a", "web", "prod", ""),
    RateLimiter.key("a", "web", "staging", "https://x.example"),
  ];
  for (const k of keys) assert(limiter.take(k).allowed, k);
  for (const k of keys) assert(!limiter.take(k).allowed, k);
});

Deno.test("RateLimiter keeps at most maxKeys buckets, least recently used evicted", () => {
  const limiter = new RateLimiter({ perMinute: 1, maxKeys: 3, now: () => 0 });
  for (const k of ["a", "b", "c"]) limiter.take(k);
  limiter.take("a"); // refused, and now the most recent
  limiter.take("d"); // evicts b
  assertEquals(limiter.size, 3);
  assert(limiter.take("b").allowed, "b was forgotten");
  assert(!limiter.take("a").allowed, "a was kept");
});

Deno.test("RateLimiter.check() throws RateLimitError with retry_after", () => {
  const limiter = new RateLimiter({ perMinute: 2, now: () => 0 });
  limiter.check("k");
  limiter.check("k");
  const err = assertThrows(() => limiter.check("k"), RateLimitError);
  assertEquals([err.status, err.code, err.retryAfter], [429, "rate_limit_exceeded", 30]);
  assertEquals(err.details?.retry_after, 30);
});

Deno.test("RateLimiter rejects a non-positive quota", () => {
  assertThrows(() => new RateLimiter({ perMinute: 0 }), RangeError);
});
