/**
 * lib/store/kv_batch.ts: Deno KV's per-call limits as KV_LIMITS states them
 * (each boundary probed on a `:memory:` store: the last value accepted,
 * the next refused), getMany in chunks of ten with the order kept, and
 * batched commits that hold as much as the limits allow, keep each group
 * together and commit in order.
 */
import { serialize } from "node:v8";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  CommitBatcher,
  commitInBatches,
  deleteInBatches,
  encodedKeySize,
  getManyChunked,
  KV_LIMITS,
} from "../../lib/store/kv_batch.ts";
import { withKv } from "./world.ts";

/** Counts the commits made through `kv` and the mutations each held. */
function countingCommits(kv: Deno.Kv): { kv: Deno.Kv; commits: number[] } {
  const commits: number[] = [];
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    let mutations = 0;
    const mutate = op.mutate.bind(op);
    op.mutate = (...ms) => {
      mutations += ms.length;
      return mutate(...ms);
    };
    const commit = op.commit.bind(op);
    op.commit = () => {
      commits.push(mutations);
      return commit();
    };
    return op;
  };
  return { kv, commits };
}

/** Counts the `getMany` calls made through `kv`, their sizes, and the most in flight at once. */
function countingReads(kv: Deno.Kv): { kv: Deno.Kv; sizes: number[]; most: () => number } {
  const sizes: number[] = [];
  let now = 0;
  let most = 0;
  const getMany = kv.getMany.bind(kv);
  kv.getMany =
    (async (keys: readonly Deno.KvKey[], options?: { consistency?: Deno.KvConsistencyLevel }) => {
      sizes.push(keys.length);
      most = Math.max(most, ++now);
      try {
        return await getMany(keys, options);
      } finally {
        now--;
      }
    }) as Deno.Kv["getMany"];
  return { kv, sizes, most: () => most };
}

const set = (key: Deno.KvKey, value: unknown): Deno.KvMutation => ({ type: "set", key, value });

/** Whether one commit of `build` is accepted (true) or refused by a limit (the message). */
async function commits(
  kv: Deno.Kv,
  build: (op: Deno.AtomicOperation) => void,
): Promise<true | string> {
  const op = kv.atomic();
  build(op);
  try {
    assert((await op.commit()).ok);
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A string key part of `n` bytes encoded with its type byte and terminator. */
const stringPart = (n: number, fill = "x") => fill.repeat(n - 2);

Deno.test("getMany reads at most KV_LIMITS.getManyKeys keys", async () => {
  await withKv(async (kv) => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => ["k", i]);
    assertEquals((await kv.getMany(keys(KV_LIMITS.getManyKeys))).length, 10);
    await assertRejects(() => kv.getMany(keys(KV_LIMITS.getManyKeys + 1)), Error, "max 10");
  });
});

Deno.test("a commit holds at most KV_LIMITS.checks checks and KV_LIMITS.mutations mutations", async () => {
  await withKv(async (kv) => {
    const checks = (n: number) => (op: Deno.AtomicOperation) => {
      for (let i = 0; i < n; i++) op.check({ key: ["c", i], versionstamp: null });
    };
    assertEquals(KV_LIMITS.checks, 100);
    assertEquals(await commits(kv, checks(KV_LIMITS.checks)), true);
    assertEquals(await commits(kv, checks(KV_LIMITS.checks + 1)), "Too many checks (max 100)");
    const deletes = (n: number) => (op: Deno.AtomicOperation) => {
      for (let i = 0; i < n; i++) op.delete(["m", i]);
    };
    assertEquals(await commits(kv, deletes(KV_LIMITS.mutations)), true);
    assertEquals(
      await commits(kv, deletes(KV_LIMITS.mutations + 1)),
      "Too many mutations (max 1000)",
    );
  });
});

Deno.test("encodedKeySize() measures keys as Deno KV does: the longest key it writes is KV_LIMITS.keyBytes", async () => {
  await withKv(async (kv) => {
    const zeros = (n: number) => new Uint8Array(n); // each zero byte is escaped as two
    const longest: Deno.KvKey[] = [
      [stringPart(KV_LIMITS.keyBytes)],
      ["é", stringPart(KV_LIMITS.keyBytes - 4 - 9 - 1), 7, true], // é is two UTF-8 bytes
      ["a\u0000b", stringPart(KV_LIMITS.keyBytes - 6)], // a NUL char escaped as two bytes
      [zeros(5), new Uint8Array(KV_LIMITS.keyBytes - 12 - 2).fill(1)],
      [stringPart(KV_LIMITS.keyBytes - 9), 1.5],
    ];
    for (const key of longest) {
      assertEquals(encodedKeySize(key), KV_LIMITS.keyBytes, JSON.stringify(key.map(String)));
      assertEquals(await commits(kv, (op) => op.set(key, 1)), true);
      const over = [...key, false];
      assertEquals(encodedKeySize(over), KV_LIMITS.keyBytes + 1);
      assertEquals(
        await commits(kv, (op) => op.set(over, 1)),
        "Key too large for write (max 2048 bytes)",
      );
    }
    // a bigint is bounded from above
    assert(encodedKeySize([2n ** 64n]) >= 1 + 9);
    assertEquals(await commits(kv, (op) => op.set([stringPart(2036), 2n ** 64n], 1)), true);
  });
});

Deno.test("a value holds at most KV_LIMITS.valueBytes bytes: bytes as they are, anything else serialized", async () => {
  await withKv(async (kv) => {
    const bytes = (n: number) => new Uint8Array(n);
    assertEquals(await commits(kv, (op) => op.set(["v"], bytes(KV_LIMITS.valueBytes))), true);
    assertEquals(
      await commits(kv, (op) => op.set(["v"], bytes(KV_LIMITS.valueBytes + 1))),
      "Value too large (max 65536 bytes)",
    );
    // a string of n one-byte characters serializes to n + 6 bytes here
    const text = "a".repeat(KV_LIMITS.valueBytes - 6);
    assertEquals(serialize(text).byteLength, KV_LIMITS.valueBytes);
    assertEquals(await commits(kv, (op) => op.set(["v"], text)), true);
    assertEquals(
      await commits(kv, (op) => op.set(["v"], text + "a")),
      "Value too large (max 65536 bytes)",
    );
  });
});

Deno.test("a commit holds at most KV_LIMITS.commitBytes: every key once, and key and value again for a set", async () => {
  await withKv(async (kv) => {
    const key = (i: number): Deno.KvKey => ["t", i]; // 3 + 9 bytes
    assertEquals(encodedKeySize(key(0)), 12);
    const chunk = 60 * 1024;
    // 13 sets of 60 KiB, one filler set, one delete: exactly 800 KiB
    const fixed = 13 * (2 * 12 + chunk) + 12;
    const filler = KV_LIMITS.commitBytes - fixed - 2 * 12;
    const build = (extra: number) => (op: Deno.AtomicOperation) => {
      for (let i = 0; i < 13; i++) op.set(key(i), new Uint8Array(chunk));
      op.set(key(13), new Uint8Array(filler + extra));
      op.delete(key(14));
    };
    assertEquals(await commits(kv, build(0)), true);
    assertEquals(
      await commits(kv, build(1)),
      "Total mutation size too large (max 819200 bytes)",
    );
    // a check's key counts too
    assertEquals(
      await commits(kv, (op) => {
        build(0)(op);
        op.check({ key: ["c"], versionstamp: null });
      }),
      "Total mutation size too large (max 819200 bytes)",
    );
  });
});

Deno.test("a commit holds at most KV_LIMITS.commitKeyBytes of keys of sets; deleted keys do not count", async () => {
  await withKv(async (kv) => {
    const sets = KV_LIMITS.commitKeyBytes / KV_LIMITS.keyBytes; // 40 keys of 2,048 bytes
    const key = (i: number): Deno.KvKey => [`${i}`.padEnd(KV_LIMITS.keyBytes - 2, "k")];
    assertEquals(encodedKeySize(key(0)), KV_LIMITS.keyBytes);
    const build = (op: Deno.AtomicOperation) => {
      for (let i = 0; i < sets; i++) op.set(key(i), 1);
    };
    assertEquals(await commits(kv, build), true);
    assertEquals(
      await commits(kv, (op) => {
        build(op);
        for (let i = 0; i < 100; i++) op.delete(["d".repeat(2000), i]);
      }),
      true,
    );
    assertEquals(
      await commits(kv, (op) => {
        build(op);
        op.set([true], 1); // one byte more
      }),
      "Total key size too large (max 81920 bytes)",
    );
  });
});

Deno.test("getManyChunked() reads 25 keys in order, ten at most per getMany", async () => {
  const { kv, sizes, most } = countingReads(await Deno.openKv(":memory:"));
  try {
    for (let i = 0; i < 25; i++) if (i % 3 !== 0) await kv.set(["n", i], `v${i}`);
    const keys = Array.from({ length: 25 }, (_, i) => ["n", i]);
    const entries = await getManyChunked<string>(kv, keys);
    assertEquals(entries.map((e) => e.key), keys);
    assertEquals(
      entries.map((e) => e.value),
      keys.map(([, i]) => (i as number) % 3 === 0 ? null : `v${i}`),
    );
    assertEquals(sizes, [10, 10, 5]);
    assertEquals(most(), 1, "one after another by default");
    sizes.length = 0;
    const parallel = await getManyChunked<string>(kv, keys, {
      inFlight: 2,
      consistency: "eventual",
    });
    assertEquals(parallel.map((e) => e.value), entries.map((e) => e.value));
    assertEquals(most(), 2);
    sizes.length = 0;
    assertEquals(await getManyChunked(kv, []), []);
    assertEquals(sizes, [], "no keys: no read");
  } finally {
    kv.close();
  }
});

Deno.test("deleteInBatches() applies 2,500 deletes in three commits, from keys, entries or a listing", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const keys = Array.from({ length: 2500 }, (_, i) => ["doomed", i] as Deno.KvKey);
    const fill = () => commitInBatches(kv, keys.map((k) => set(k, 1)));
    const left = async () => (await Array.fromAsync(kv.list({ prefix: ["doomed"] }))).length;

    await fill();
    commits.length = 0;
    assertEquals(await deleteInBatches(kv, keys), 3);
    assertEquals(commits, [1000, 1000, 500]);
    assertEquals(await left(), 0);

    await fill();
    commits.length = 0;
    assertEquals(await deleteInBatches(kv, kv.list({ prefix: ["doomed"] })), 3);
    assertEquals(await left(), 0);

    await fill();
    const entries = await Array.fromAsync(kv.list({ prefix: ["doomed"] }));
    assertEquals(await deleteInBatches(kv, entries), 3);
    assertEquals(await left(), 0);
  } finally {
    kv.close();
  }
});

Deno.test("long keys: batches are cut by size, where a thousand to a commit is refused", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const keys = Array.from(
      { length: 1000 },
      (_, i) => ["long", "k".repeat(1000), i] as Deno.KvKey,
    );
    await commitInBatches(kv, keys.map((k) => set(k, 1)));
    const naive = kv.atomic();
    for (const k of keys) naive.delete(k);
    await assertRejects(() => naive.commit(), Error, "Total mutation size too large");
    commits.length = 0;
    assertEquals(await deleteInBatches(kv, keys), 2);
    assert(commits.every((n) => n < 1000), String(commits));
    assertEquals((await Array.fromAsync(kv.list({ prefix: ["long"] }))).length, 0);
  } finally {
    kv.close();
  }
});

Deno.test("commitInBatches() keeps the keys of sets under KV_LIMITS.commitKeyBytes and values under the total", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    // 1,000 sets of 100-byte keys: within the mutation count, over 80 KiB of keys
    const sets = Array.from({ length: 1000 }, (_, i) => set(["wide", "w".repeat(83), i], i));
    assertEquals(encodedKeySize(sets[0]!.key), 100);
    assertEquals(await commitInBatches(kv, sets), 2);
    assertEquals(commits, [819, 181]);
    // 40 objects of 30 KB (two-byte characters): a value's size is its serialization
    const objects = Array.from(
      { length: 40 },
      (_, i) => set(["obj", i], { i, text: "中".repeat(15_000) }),
    );
    commits.length = 0;
    assertEquals(await commitInBatches(kv, objects), 2);
    const back = await kv.get<{ i: number; text: string }>(["obj", 39]);
    assertEquals(back.value?.text.length, 15_000);
    assertEquals((await Array.fromAsync(kv.list({ prefix: ["wide"] }))).length, 1000);
  } finally {
    kv.close();
  }
});

/** Three groups of three sets, from an async source. */
async function* threes(): AsyncGenerator<Deno.KvMutation[]> {
  for (let i = 0; i < 3; i++) yield [set(["a", i], i), set(["b", i], i), set(["c", i], i)];
}

Deno.test("CommitBatcher keeps each group in one commit and commits in order", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const batch = new CommitBatcher(kv, { limits: { mutations: 4 } });
    for (let i = 0; i < 4; i++) {
      await batch.add(set(["rec", i], i), set(["idx", i], i));
    }
    await batch.add({ type: "delete", key: ["rec", 0] }); // after its set, in a later commit
    assertEquals(batch.pending, 1);
    await batch.flush();
    await batch.flush(); // nothing pending: no commit
    assertEquals(commits, [4, 4, 1]);
    assertEquals(batch.commits, 3);
    assertEquals((await kv.get(["rec", 0])).value, null);
    assertEquals((await kv.get(["idx", 0])).value, 0);
    // groups from an async source, arrays kept together
    commits.length = 0;
    assertEquals(await commitInBatches(kv, threes(), { limits: { mutations: 4 } }), 3);
    assertEquals(commits, [3, 3, 3]);
  } finally {
    kv.close();
  }
});

Deno.test("a group over the limits on its own is committed alone, for Deno KV to refuse", async () => {
  const { kv, commits } = countingCommits(await Deno.openKv(":memory:"));
  try {
    const batch = new CommitBatcher(kv);
    await batch.add(set(["before"], 1));
    const big = Array.from({ length: KV_LIMITS.mutations + 1 }, (_, i) => set(["big", i], i));
    await batch.add(...big); // the pending set goes first
    assertEquals(commits, [1]);
    assertEquals((await kv.get(["before"])).value, 1);
    await assertRejects(() => batch.flush(), Error, "Too many mutations");
    await assertRejects(
      () => commitInBatches(kv, [set(["huge"], new Uint8Array(KV_LIMITS.valueBytes + 1))]),
      Error,
      "Value too large",
    );
  } finally {
    kv.close();
  }
});
