/**
 * Rate limits of email sign-in starts (lib/login/email_limits.ts).
 */
import { assert, assertEquals } from "../assert.ts";
import {
  countEmailStart,
  EMAIL_START_LIMITS,
  retryAfterSeconds,
} from "../../lib/login/email_limits.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";

const T0 = 1_900_000_200_000 - (1_900_000_200_000 % (15 * 60 * 1000));

Deno.test("an address may start 5 times in 15 minutes, whatever its case, then again in the next window", async () => {
  const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
  try {
    assertEquals(EMAIL_START_LIMITS.address, { limit: 5, windowMs: 15 * 60 * 1000 });
    const seen: boolean[] = [];
    for (
      const email of [
        "ana@acme.test",
        "ANA@acme.test",
        "ana@ACME.test",
        "ana@acme.test",
        "Ana@acme.test",
        "ana@acme.test",
      ]
    ) {
      seen.push(await countEmailStart(deps, "address", email, T0));
    }
    assertEquals(seen, [true, true, true, true, true, false]);
    assert(await countEmailStart(deps, "address", "bob@acme.test", T0), "another address");
    assert(await countEmailStart(deps, "address", "ana@acme.test", T0 + 15 * 60 * 1000));
  } finally {
    deps.kv.close();
  }
});

Deno.test("a client IP may start 30 times in 15 minutes; the counters are keyed by digests", async () => {
  const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
  try {
    let allowed = 0;
    for (let i = 0; i < 31; i++) if (await countEmailStart(deps, "ip", "192.0.2.7", T0)) allowed++;
    assertEquals(allowed, 30);
    for await (const entry of deps.kv.list({ prefix: [] })) {
      assert(!JSON.stringify(entry.key).includes("192.0.2.7"), JSON.stringify(entry.key));
    }
  } finally {
    deps.kv.close();
  }
});

Deno.test("retry-after counts the seconds left in the window", () => {
  assertEquals(retryAfterSeconds("ip", T0), 900);
  assertEquals(retryAfterSeconds("ip", T0 + 899_001), 1);
});
