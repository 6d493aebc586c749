import { assert, assertEquals, assertRejects } from "../assert.ts";
import { instrumentKv, type KvOutcome } from "../../lib/telemetry/instrumented_kv.ts";

/** An instrumented `:memory:` KV and what its observer saw. */
async function measured() {
  const seen: { op: string; seconds: number; outcome: KvOutcome }[] = [];
  const raw = await Deno.openKv(":memory:");
  const kv = instrumentKv(raw, (op, seconds, outcome) => seen.push({ op, seconds, outcome }));
  const ops = () => seen.map((s) => `${s.op}:${s.outcome}`);
  return { raw, kv, seen, ops };
}

Deno.test("get, getMany, set and delete answer as Deno.Kv does, each measured once", async () => {
  const { kv, seen, ops } = await measured();
  try {
    const set = await kv.set(["a"], 1);
    assert(set.ok && typeof set.versionstamp === "string");
    assertEquals((await kv.get<number>(["a"])).value, 1);
    const many = await kv.getMany<[number, number]>([["a"], ["b"]]);
    assertEquals(many.map((e) => e.value), [1, null]);
    await kv.delete(["a"]);
    assertEquals((await kv.get(["a"])).versionstamp, null);
    assertEquals(ops(), ["set:ok", "get:ok", "get_many:ok", "delete:ok", "get:ok"]);
    assert(seen.every((s) => s.seconds >= 0 && s.seconds < 5));
  } finally {
    kv.close();
  }
});

Deno.test("it is still a Deno.Kv, and close() closes the real handle", async () => {
  const { raw, kv } = await measured();
  assert(kv instanceof Deno.Kv);
  kv.close();
  await assertRejects(() => raw.get(["a"]));
});

Deno.test("atomic chains commit through the wrapper; a failed check is a conflict", async () => {
  const { kv, ops } = await measured();
  try {
    const first = await kv.atomic().check({ key: ["n"], versionstamp: null })
      .set(["n"], new Deno.KvU64(1n)).sum(["total"], 5n).commit();
    assert(first.ok);
    const stale = await kv.atomic().check({ key: ["n"], versionstamp: null }).set(["n"], 2)
      .commit();
    assertEquals(stale.ok, false);
    assertEquals((await kv.get<Deno.KvU64>(["total"])).value?.value, 5n);
    assertEquals(ops(), ["commit:ok", "commit:conflict", "get:ok"]);
  } finally {
    kv.close();
  }
});

Deno.test("list iterators keep their cursor and are measured once per iteration", async () => {
  const { kv, ops } = await measured();
  try {
    for (let i = 0; i < 5; i++) await kv.set(["item", i], i);
    const page = kv.list<number>({ prefix: ["item"] }, { limit: 2 });
    const first: number[] = [];
    for await (const e of page) first.push(e.value);
    const rest: number[] = [];
    for await (const e of kv.list<number>({ prefix: ["item"] }, { cursor: page.cursor })) {
      rest.push(e.value);
    }
    assertEquals([first, rest], [[0, 1], [2, 3, 4]]);
    for await (const _ of kv.list({ prefix: ["item"] })) break; // a loop that stops early
    assertEquals(ops().slice(5), ["list:ok", "list:ok", "list:ok"]);
  } finally {
    kv.close();
  }
});

Deno.test("an operation that throws is reported as an error and rethrown", async () => {
  const { kv, ops } = await measured();
  try {
    await assertRejects(() => kv.set([{} as unknown as string], 1));
    assertEquals(ops(), ["set:error"]);
  } finally {
    kv.close();
  }
});

Deno.test("watch and queues pass through untouched", async () => {
  const { kv } = await measured();
  const stream = kv.watch([["w"]]);
  const reader = stream.getReader();
  assertEquals((await reader.read()).value?.[0]?.value, null);
  await kv.set(["w"], "x");
  assertEquals((await reader.read()).value?.[0]?.value, "x");
  await reader.cancel();
  const got = Promise.withResolvers<unknown>();
  const listening = kv.listenQueue((msg) => got.resolve(msg));
  await kv.enqueue({ hello: 1 });
  assertEquals(await got.promise, { hello: 1 });
  kv.close();
  await listening;
});
