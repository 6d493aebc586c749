import { assert, assertEquals, assertRejects } from "../assert.ts";
import { CfgtoolError } from "../../lib/errors.ts";
import { ConnectionRegistry, type SharedCountOptions } from "../../lib/events/registry.ts";
import { connectionCounts, leaseHolderKey } from "../../lib/store/leases.ts";
import { withKv } from "../store/world.ts";

/** Polls `check` every 5 ms until it holds, failing after `ms`. */
async function eventually(check: () => Promise<boolean>, what: string, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resolves just after the next renewal of `holder`'s liveness lease. */
async function renewalOf(kv: Deno.Kv, holder: string): Promise<void> {
  const first = (await kv.get(leaseHolderKey(holder))).versionstamp;
  await eventually(
    async () => (await kv.get(leaseHolderKey(holder))).versionstamp !== first,
    "a renewal",
    3000,
  );
}

/** Tries to take a slot; true when it got one (the slot is kept). */
async function tryAcquire(r: ConnectionRegistry, id: string): Promise<boolean> {
  try {
    await r.acquire(id);
    return true;
  } catch (err) {
    if (err instanceof CfgtoolError && err.status === 429) return false;
    throw err;
  }
}

/** Registries standing for processes, with their own stop signals, closed after `fn`. */
async function withProcesses(
  kv: Deno.Kv,
  n: number,
  options: Omit<SharedCountOptions, "kv">,
  fn: (ps: { registry: ConnectionRegistry; die: () => void }[]) => Promise<void>,
): Promise<void> {
  const ps = Array.from({ length: n }, () => {
    const stop = new AbortController();
    return {
      registry: new ConnectionRegistry(16, { kv, ...options, signal: stop.signal }),
      die: () => stop.abort(), // renewals stop, nothing is cleaned up: a killed process
    };
  });
  try {
    await fn(ps);
  } finally {
    for (const p of ps) p.die();
    await Promise.all(ps.map((p) => p.registry.close()));
  }
}

Deno.test("a refused stream is 429 rate_limit_exceeded with the limit and retry_after", async () => {
  const r = new ConnectionRegistry(1);
  await r.acquire("tok_1");
  const err = await assertRejects(() => r.acquire("tok_1"), CfgtoolError, "the limit is 1");
  assertEquals([err.status, err.code, err.details], [429, "rate_limit_exceeded", {
    limit: 1,
    retry_after: 1,
  }]);
});

Deno.test("two processes share one limit per credential: 16 on one and 1 on the other is 17, refused", async () => {
  await withKv(async (kv) => {
    await withProcesses(kv, 2, { leaseMs: 10_000 }, async ([a, b]) => {
      const releases = [];
      for (let i = 0; i < 16; i++) releases.push(await a!.registry.acquire("tok_1"));
      assertEquals(await tryAcquire(b!.registry, "tok_1"), false);
      assert(await tryAcquire(b!.registry, "tok_2"), "another credential has its own slots");
      assertEquals([a!.registry.count("tok_1"), b!.registry.count("tok_1")], [16, 0]);
      // a stream ends on process a: its slot is free for process b a moment later
      releases[0]!();
      assertEquals(a!.registry.count("tok_1"), 15);
      await eventually(() => tryAcquire(b!.registry, "tok_1"), "b gets the freed slot");
      assertEquals(await tryAcquire(a!.registry, "tok_1"), false);
      const counts = await connectionCounts(kv, "tok_1");
      assertEquals(Object.values(counts).sort(), [1, 15]);
    });
  });
});

Deno.test("a process alone in a credential's record takes slots without reading it, and still counts a process that joins", async () => {
  await withKv(async (kv) => {
    await withProcesses(kv, 2, { leaseMs: 10_000 }, async ([a, b]) => {
      await a!.registry.acquire("t");
      // deno-lint-ignore no-explicit-any
      const proto = Object.getPrototypeOf(kv) as any;
      const get = proto.get;
      let reads = 0;
      proto.get = function (this: Deno.Kv, key: Deno.KvKey, ...rest: unknown[]) {
        if (key[0] === "conn_lease") reads++;
        return get.call(this, key, ...rest);
      };
      try {
        for (let i = 0; i < 9; i++) await a!.registry.acquire("t");
      } finally {
        proto.get = get;
      }
      assertEquals(reads, 0, "nine slots taken, the record never read");
      assertEquals(await connectionCounts(kv, "t"), { [a!.registry.holder!]: 10 });
      for (let i = 0; i < 5; i++) await b!.registry.acquire("t"); // 15 of 16
      const outcomes = await Promise.all([
        tryAcquire(a!.registry, "t"),
        tryAcquire(a!.registry, "t"),
      ]);
      assertEquals(outcomes, [true, false], "b's five count: one slot was left");
      assertEquals(await connectionCounts(kv, "t"), {
        [a!.registry.holder!]: 11,
        [b!.registry.holder!]: 5,
      });
    });
  });
});

Deno.test("the streams of a process that died stop counting once its lease ran out", async () => {
  await withKv(async (kv) => {
    let now = 1_000_000;
    await withProcesses(kv, 2, { leaseMs: 10_000, now: () => now }, async ([a, b]) => {
      for (let i = 0; i < 16; i++) await a!.registry.acquire("tok_1");
      a!.die();
      assertEquals(await tryAcquire(b!.registry, "tok_1"), false, "its lease still runs");
      now += 9_999;
      assertEquals(await tryAcquire(b!.registry, "tok_1"), false);
      now += 1;
      assert(await tryAcquire(b!.registry, "tok_1"), "lease over: a's streams do not count");
      assertEquals(Object.keys(await connectionCounts(kv, "tok_1")), [b!.registry.holder]);
    });
  });
});

Deno.test("a process that closes gracefully frees its slots at once", async () => {
  await withKv(async (kv) => {
    await withProcesses(kv, 2, { leaseMs: 60_000 }, async ([a, b]) => {
      for (let i = 0; i < 16; i++) await a!.registry.acquire("tok_1");
      assertEquals(await tryAcquire(b!.registry, "tok_1"), false);
      await a!.registry.close();
      assert(await tryAcquire(b!.registry, "tok_1"));
    });
  });
});

Deno.test("a process whose lease lapsed (too busy to renew) writes its counts back", async () => {
  await withKv(async (kv) => {
    let now = 1_000_000;
    const warnings: string[] = [];
    const log = (_: string, msg: string) => void warnings.push(msg);
    // renewals every second: the test acts just after one of a's, so none falls in between
    await withProcesses(kv, 2, { leaseMs: 3000, now: () => now, log }, async ([a, b]) => {
      for (let i = 0; i < 10; i++) await a!.registry.acquire("tok_1");
      await renewalOf(kv, a!.registry.holder!);
      now += 10_000; // a's lease lapsed before its next renewal came
      for (let i = 0; i < 16; i++) await b!.registry.acquire("tok_1"); // drops a's count
      assertEquals(Object.keys(await connectionCounts(kv, "tok_1")), [b!.registry.holder]);
      await eventually(
        async () => (await connectionCounts(kv, "tok_1"))[a!.registry.holder!] === 10,
        "a's renewal restores its count",
        4000,
      );
      assert(warnings.some((m) => m.includes("lapsed")), warnings.join());
      // with a counted again, nobody gets a slot until 10 streams end
      assertEquals(await tryAcquire(b!.registry, "tok_1"), false);
    });
  });
});

Deno.test("acquire in one process is serialised per credential: 20 at once take exactly 16", async () => {
  await withKv(async (kv) => {
    await withProcesses(kv, 2, { leaseMs: 10_000 }, async ([a, b]) => {
      const tries = Array.from(
        { length: 20 },
        (_, i) => tryAcquire((i % 2 ? a : b)!.registry, "t"),
      );
      const got = (await Promise.all(tries)).filter(Boolean).length;
      assertEquals(got, 16);
      assertEquals(a!.registry.count("t") + b!.registry.count("t"), 16);
    });
  });
});

Deno.test("streams of one credential that open together share commits, and the count stays exact", async () => {
  await withKv(async (kv) => {
    const stop = new AbortController();
    const r = new ConnectionRegistry(1000, { kv, leaseMs: 10_000, signal: stop.signal });
    try {
      await r.acquire("warm"); // the liveness lease is stored
      // deno-lint-ignore no-explicit-any
      const proto = Deno.AtomicOperation.prototype as any;
      const commit = proto.commit;
      let commits = 0;
      proto.commit = function (this: Deno.AtomicOperation) {
        commits++;
        return commit.call(this);
      };
      let releases: (() => void)[];
      try {
        releases = await Promise.all(Array.from({ length: 300 }, () => r.acquire("t")));
      } finally {
        proto.commit = commit;
      }
      assertEquals(r.count("t"), 300);
      assert(commits <= 3, `${commits} commits for 300 streams opened at once`);
      assertEquals((await connectionCounts(kv, "t"))[r.holder!], 300);
      for (const release of releases.slice(0, 100)) release();
      await eventually(
        async () => (await connectionCounts(kv, "t"))[r.holder!] === 200,
        "the released slots reach the store",
      );
    } finally {
      stop.abort();
      await r.close();
    }
  });
});

Deno.test("streams opened together beyond the limit: the first that fit are admitted, in order, the rest refused", async () => {
  await withKv(async (kv) => {
    await withProcesses(kv, 2, { leaseMs: 10_000 }, async ([a, b]) => {
      for (let i = 0; i < 10; i++) await a!.registry.acquire("t"); // another process holds 10 of 16
      await b!.registry.acquire("t"); // this one holds 1: 5 left
      const outcomes = await Promise.all(
        Array.from({ length: 9 }, () => tryAcquire(b!.registry, "t")),
      );
      assertEquals(outcomes, [true, true, true, true, true, false, false, false, false]);
      assertEquals(b!.registry.count("t"), 6);
      assertEquals((await connectionCounts(kv, "t"))[b!.registry.holder!], 6);
    });
  });
});
