import { assertEquals, assertRejects } from "../assert.ts";
import { SharedReads } from "../../lib/events/shared_reads.ts";

/** A store of numbers whose reads take a turn of the event loop and are counted. */
function store() {
  const values = new Map<string, number>();
  const reads: string[] = [];
  const failing = new Set<string>();
  const load = async (key: string) => {
    reads.push(key);
    const seen = values.get(key) ?? 0; // the value when the read starts
    await new Promise((r) => setTimeout(r, 2));
    if (failing.has(key)) throw new Error(`cannot read ${key}`);
    return seen;
  };
  return { values, reads, failing, load };
}

Deno.test("callers that ask while a read is under way share the next one, never an older value", async () => {
  const s = store();
  const shared = new SharedReads(s.load);
  s.values.set("web", 1);
  const first = shared.read("web");
  s.values.set("web", 2); // written after the first read started
  const later = Array.from({ length: 100 }, () => shared.read("web"));
  assertEquals(await first, 1);
  assertEquals(new Set(await Promise.all(later)), new Set([2]));
  assertEquals(s.reads.length, 2, "one read for the hundred later callers");
  assertEquals(await shared.read("web"), 2, "a caller after the storm reads afresh");
  assertEquals(s.reads.length, 3);
});

Deno.test("keys are read apart, and a failed read fails only the callers that shared it", async () => {
  const s = store();
  const shared = new SharedReads(s.load);
  s.values.set("a", 1);
  s.values.set("b", 2);
  s.failing.add("a");
  const a = shared.read("a");
  const b = shared.read("b");
  const aLater = shared.read("a");
  await assertRejects(() => a, Error, "cannot read a");
  assertEquals(await b, 2);
  await assertRejects(() => aLater, Error, "cannot read a");
  s.failing.delete("a");
  assertEquals(await shared.read("a"), 1, "the next read is made anew");
});
