import { assert, assertEquals } from "../assert.ts";
import {
  connectionCounts,
  connectionLeaseKey,
  holderAlive,
  leaseConnection,
  leaseHolderKey,
  removeHolder,
  renewHolder,
  setConnectionCount,
  type SharedBucket,
  updateBucket,
} from "../../lib/store/leases.ts";
import { withKv } from "./world.ts";

/** What a lease decided, without the versionstamp it hands back. */
const decided = (l: { acquired: boolean; total: number }) => ({
  acquired: l.acquired,
  total: l.total,
});

Deno.test("a holder is alive until the stored until, whether or not the record was deleted yet", async () => {
  await withKv(async (kv) => {
    await renewHolder(kv, "p1", 5_000, 1_000);
    assert(await holderAlive(kv, "p1", 4_999));
    // expireIn deletes lazily: the record may still be there, the stored time decides
    assert((await kv.get(leaseHolderKey("p1"))).value !== null);
    assertEquals(await holderAlive(kv, "p1", 5_000), false);
    await renewHolder(kv, "p1", 9_000, 5_000);
    assert(await holderAlive(kv, "p1", 6_000), "a renewal extends it");
    await removeHolder(kv, "p1");
    assertEquals(await holderAlive(kv, "p1", 6_000), false);
  });
});

Deno.test("leaseConnection() sums the counts of live holders and refuses over the limit", async () => {
  await withKv(async (kv) => {
    for (const h of ["a", "b"]) await renewHolder(kv, h, 10_000, 0);
    assert((await leaseConnection(kv, "tok", "a", 3, 4, 0)).acquired);
    const over = await leaseConnection(kv, "tok", "b", 2, 4, 0);
    assertEquals(decided(over), { acquired: false, total: 5 });
    assertEquals(await connectionCounts(kv, "tok"), { a: 3 }, "a refusal writes nothing");
    assertEquals(decided(await leaseConnection(kv, "tok", "b", 1, 4, 0)), {
      acquired: true,
      total: 4,
    });
    assertEquals(await connectionCounts(kv, "tok"), { a: 3, b: 1 });
    assertEquals(
      (await leaseConnection(kv, "other", "b", 4, 4, 0)).acquired,
      true,
      "per credential",
    );
  });
});

Deno.test("leaseConnection() drops the counts of holders whose lease ended or is gone", async () => {
  await withKv(async (kv) => {
    await renewHolder(kv, "a", 1_000, 0);
    await renewHolder(kv, "b", 10_000, 0);
    await setConnectionCount(kv, "tok", "a", 4);
    await setConnectionCount(kv, "tok", "ghost", 4); // never had a lease
    assertEquals((await leaseConnection(kv, "tok", "b", 1, 4, 500)).acquired, false);
    const later = await leaseConnection(kv, "tok", "b", 4, 4, 1_000);
    assertEquals(decided(later), { acquired: true, total: 4 });
    assertEquals(await connectionCounts(kv, "tok"), { b: 4 });
  });
});

Deno.test("a holder's own entry counts as its new count, whatever its own lease says", async () => {
  await withKv(async (kv) => {
    await setConnectionCount(kv, "tok", "a", 7); // stale: the count is what the caller passes
    assertEquals(decided(await leaseConnection(kv, "tok", "a", 2, 2, 0)), {
      acquired: true,
      total: 2,
    });
    assertEquals(await connectionCounts(kv, "tok"), { a: 2 });
  });
});

Deno.test("two processes racing for the last slot: exactly one gets it", async () => {
  await withKv(async (kv) => {
    const holders = Array.from({ length: 8 }, (_, i) => `p${i}`);
    for (const h of holders) await renewHolder(kv, h, 10_000, 0);
    await setConnectionCount(kv, "tok", "p0", 15);
    const results = await Promise.all(
      holders.slice(1).map((h) => leaseConnection(kv, "tok", h, 1, 16, 0)),
    );
    assertEquals(results.filter((r) => r.acquired).length, 1);
    const counts = await connectionCounts(kv, "tok");
    assertEquals(Object.values(counts).reduce((a, b) => a + b, 0), 16);
  });
});

Deno.test("a holder alone in the record commits against it; any other write sends it back to reading", async () => {
  await withKv(async (kv) => {
    for (const h of ["a", "b"]) await renewHolder(kv, h, 10_000, 0);
    const first = await leaseConnection(kv, "tok", "a", 2, 4, 0);
    assert(first.acquired && first.sole !== null, "a alone: the next commit may skip the read");
    const second = await leaseConnection(kv, "tok", "a", 3, 4, 0, first.sole);
    assertEquals(decided(second), { acquired: true, total: 3 });
    assertEquals(await connectionCounts(kv, "tok"), { a: 3 });
    // another process takes the last slot: a's versionstamp no longer matches
    assert((await leaseConnection(kv, "tok", "b", 1, 4, 0)).acquired);
    const third = await leaseConnection(kv, "tok", "a", 4, 4, 0, second.sole);
    assertEquals(decided(third), { acquired: false, total: 5 }, "b's stream counts");
    assertEquals(third.sole, null);
    assertEquals(await connectionCounts(kv, "tok"), { a: 3, b: 1 }, "a refusal writes nothing");
  });
});

Deno.test("setConnectionCount() to 0 removes the entry, and the record with its last entry", async () => {
  await withKv(async (kv) => {
    await setConnectionCount(kv, "tok", "a", 2);
    await setConnectionCount(kv, "tok", "b", 1);
    await setConnectionCount(kv, "tok", "a", 0);
    assertEquals(await connectionCounts(kv, "tok"), { b: 1 });
    await setConnectionCount(kv, "tok", "b", 0);
    assertEquals((await kv.get(connectionLeaseKey("tok"))).value, null);
  });
});

Deno.test("updateBucket() stores what the update returns, nothing for null, and retries on a race", async () => {
  await withKv(async (kv) => {
    const seen: (SharedBucket | null)[] = [];
    const take = (b: SharedBucket | null) => {
      seen.push(b);
      const tokens = b?.tokens ?? 10;
      return tokens >= 1
        ? { next: { tokens: tokens - 1, at: 0 }, result: true }
        : { next: null, result: false };
    };
    assertEquals(await updateBucket(kv, "k", take, 60_000), true);
    assertEquals(seen, [null], "a missing bucket is passed as null");
    // ten concurrent takes on 9 tokens: nine succeed, none is lost or counted twice
    const results = await Promise.all(
      Array.from({ length: 10 }, () => updateBucket(kv, "k", take, 60_000)),
    );
    assertEquals(results.filter(Boolean).length, 9);
    assertEquals(await updateBucket(kv, "k", (b) => ({ next: null, result: b?.tokens }), 1), 0);
  });
});
