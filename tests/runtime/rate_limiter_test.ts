import { assert, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { RateLimitError } from "../../lib/errors.ts";
import { RateLimiter } from "../../lib/runtime/rate_limiter.ts";
import { withKv } from "../store/world.ts";

Deno.test("RateLimiter.take() allows the quota as a burst, then refuses with Retry-After", async () => {
  let now = 1_000_000;
  const limiter = new RateLimiter({ perMinute: 6, now: () => now });
  const key = RateLimiter.key("acme", "web", "staging", "https://a.example");
  for (let i = 0; i < 6; i++) assert((await limiter.take(key)).allowed, `request ${i + 1}`);
  const refused = await limiter.take(key);
  assertEquals([refused.allowed, refused.retryAfter, refused.remaining], [false, 10, 0]);
  now += 9_999;
  assert(!(await limiter.take(key)).allowed, "not yet refilled");
  now += 1;
  assert((await limiter.take(key)).allowed, "one request refilled after 10 s");
  assert(!(await limiter.take(key)).allowed);
});

Deno.test("RateLimiter.take() refills continuously up to the quota, never beyond", async () => {
  let now = 0;
  const limiter = new RateLimiter({ perMinute: 60, now: () => now });
  const key = "k";
  for (let i = 0; i < 60; i++) await limiter.take(key);
  now += 3_600_000; // an hour later: still only 60
  let allowed = 0;
  while ((await limiter.take(key)).allowed) allowed++;
  assertEquals(allowed, 60);
});

Deno.test("RateLimiter keys separate tenant, namespace, environment and Origin", async () => {
  const limiter = new RateLimiter({ perMinute: 1, now: () => 0 });
  const keys = [
    RateLimiter.key("a", "web", "staging", ""),
    RateLimiter.key("b", "web", "staging", ""),
    RateLimiter.key("a", "api", "staging", ""),
    RateLimiter.key("a", "web", "prod", ""),
    RateLimiter.key("a", "web", "staging", "https://x.example"),
  ];
  for (const k of keys) assert((await limiter.take(k)).allowed, k);
  for (const k of keys) assert(!(await limiter.take(k)).allowed, k);
});

Deno.test("RateLimiter keeps at most maxKeys buckets, least recently used evicted", async () => {
  const limiter = new RateLimiter({ perMinute: 1, maxKeys: 3, now: () => 0 });
  for (const k of ["a", "b", "c"]) await limiter.take(k);
  await limiter.take("a"); // refused, and now the most recent
  await limiter.take("d"); // evicts b
  assertEquals(limiter.size, 3);
  assert((await limiter.take("b")).allowed, "b was forgotten");
  assert(!(await limiter.take("a")).allowed, "a was kept");
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

// Shared through the KV (several processes, one installation-wide bucket).

/** A KV handle that counts the reads and commits made through it. */
function counting(kv: Deno.Kv): { kv: Deno.Kv; reads: () => number; commits: () => number } {
  let reads = 0;
  let commits = 0;
  const proxy = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get") {
        return (...args: Parameters<Deno.Kv["get"]>) => {
          reads++;
          return target.get(...args);
        };
      }
      if (prop === "atomic") {
        return () => {
          commits++;
          return target.atomic();
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { kv: proxy, reads: () => reads, commits: () => commits };
}

Deno.test("two limiters on one KV spend one quota between them", async () => {
  await withKv(async (kv) => {
    const now = () => 0;
    const a = new RateLimiter({ perMinute: 10, kv, blockSize: 1, now });
    const b = new RateLimiter({ perMinute: 10, kv, blockSize: 1, now });
    let allowed = 0;
    for (let i = 0; i < 30; i++) if ((await (i % 2 ? a : b).take("k")).allowed) allowed++;
    assertEquals(allowed, 10);
  });
});

Deno.test("a shared limiter writes the KV once per block, not once per request", async () => {
  await withKv(async (raw) => {
    const { kv, commits } = counting(raw);
    const limiter = new RateLimiter({ perMinute: 600, kv, now: () => 0 });
    assertEquals(limiter.blockSize, 12, "1/50 of the quota");
    for (let i = 0; i < 119; i++) assert((await limiter.take("k")).allowed);
    assertEquals(commits(), 10);
    // the last token of the tenth block is spent from memory: a decision without a promise
    const d = limiter.take("k");
    assert(!(d instanceof Promise) && d.allowed);
    assertEquals(commits(), 10);
  });
});

Deno.test("an empty shared bucket refuses from memory until it would hold a token again", async () => {
  await withKv(async (raw) => {
    const { kv, reads, commits } = counting(raw);
    let now = 0;
    const limiter = new RateLimiter({ perMinute: 6, kv, blockSize: 3, now: () => now });
    for (let i = 0; i < 6; i++) assert((await limiter.take("k")).allowed, `request ${i + 1}`);
    const refused = await limiter.take("k");
    assertEquals([refused.allowed, refused.retryAfter], [false, 10]);
    const [r, c] = [reads(), commits()];
    for (let i = 0; i < 100; i++) assert(!(await limiter.take("k")).allowed);
    assertEquals([reads(), commits()], [r, c], "no KV access while known empty");
    now += 10_000;
    assert((await limiter.take("k")).allowed, "one token refilled after 10 s");
    assert(!(await limiter.take("k")).allowed);
  });
});

Deno.test("shared limiters admit at most N x blockSize over the quota", async () => {
  await withKv(async (kv) => {
    let now = 0;
    const clock = () => now;
    const limiters = [0, 1, 2].map(() =>
      new RateLimiter({ perMinute: 100, kv, blockSize: 5, now: clock })
    );
    // each process leases a block and spends one token of it
    for (const l of limiters) assert((await l.take("k")).allowed);
    now += 60_000; // the bucket is full again; the blocks are still held
    let allowed = 0;
    for (let i = 0; i < 300; i++) if ((await limiters[i % 3]!.take("k")).allowed) allowed++;
    assertEquals(allowed, 100 + 3 * 4, "the quota plus what the blocks still held");
    assert(allowed <= 100 + 3 * 5);
  });
});

Deno.test("unused leased tokens go back to the shared bucket after holdMs", async () => {
  await withKv(async (kv) => {
    let now = 0;
    const stop = new AbortController();
    const options = { perMinute: 20, kv, blockSize: 10, holdMs: 20, now: () => now };
    const a = new RateLimiter({ ...options, signal: stop.signal });
    const b = new RateLimiter({ ...options, signal: stop.signal });
    assert((await a.take("k")).allowed); // a holds 9
    now += 20;
    await new Promise((r) => setTimeout(r, 60)); // a's sweeper gives them back
    let allowed = 0;
    while ((await b.take("k")).allowed) allowed++;
    assertEquals(allowed, 19, "everything but the one request a spent");
    stop.abort();
  });
});

Deno.test("a shared limiter's Retry-After is the time until the shared bucket holds a token", async () => {
  await withKv(async (kv) => {
    const limiter = new RateLimiter({ perMinute: 2, kv, now: () => 0 });
    await limiter.check("k");
    await limiter.check("k");
    const err = await assertRejects(async () => await limiter.check("k"), RateLimitError);
    assertEquals([err.status, err.retryAfter], [429, 30]);
  });
});

Deno.test("many requests waiting for the first lease of a key are all served by it", async () => {
  await withKv(async (raw) => {
    const { kv, commits } = counting(raw);
    const limiter = new RateLimiter({ perMinute: 600, kv, now: () => 0 });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.take("k")));
    assertEquals(decisions.filter((d) => d.allowed).length, 100);
    assert(commits() <= 2, `${commits()} commits`);
  });
});
