import { assert, assertEquals } from "../assert.ts";
import { Backoff, backoffDelay, sleep } from "../../lib/client/backoff.ts";

Deno.test("backoffDelay() grows exponentially up to maxMs", () => {
  const opts = { initialMs: 100, maxMs: 1000, factor: 2, jitter: 0 };
  assertEquals([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(a, opts)), [
    100,
    200,
    400,
    800,
    1000,
    1000,
  ]);
});

Deno.test("backoffDelay() draws the jittered share uniformly below the base", () => {
  const opts = { initialMs: 1000, maxMs: 1000, jitter: 0.5 };
  assertEquals(backoffDelay(0, { ...opts, random: () => 0 }), 1000);
  assertEquals(backoffDelay(0, { ...opts, random: () => 0.999999 }), 500);
  for (let i = 0; i < 100; i++) {
    const d = backoffDelay(3, opts);
    assert(d >= 500 && d <= 1000, String(d));
  }
});

Deno.test("Backoff.next() advances and reset() starts over", () => {
  const b = new Backoff({ initialMs: 5, jitter: 0 });
  b.next();
  b.next();
  assertEquals(b.attempt, 2);
  assertEquals(b.next(), 20);
  b.reset();
  assertEquals(b.next(), 5);
});

Deno.test("sleep() ends early when its signal aborts and leaves no timer", async () => {
  const ac = new AbortController();
  const t = Date.now();
  const p = sleep(60_000, ac.signal);
  ac.abort();
  await p;
  assert(Date.now() - t < 1000);
  await sleep(1);
});
