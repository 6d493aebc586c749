import { assertEquals } from "../assert.ts";
import { HeadWatcher } from "../../lib/store/head_watcher.ts";
import type { Head } from "../../lib/store/versions.ts";

const head = (version: number): Head => ({
  version,
  closure_hash: `h${version}`,
  environments: {},
});
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await tick(10);
}

Deno.test("HeadWatcher tells every listener of a namespace once per new head", async () => {
  const kv = await Deno.openKv(":memory:");
  const watcher = new HeadWatcher(kv, { pollIntervalMs: 10 });
  try {
    await kv.set(["ns_head", "acme", "web"], head(1));
    const a: number[] = [];
    const b: number[] = [];
    watcher.watch("acme", "web", (h) => a.push(h!.version));
    watcher.watch("acme", "web", (h) => b.push(h!.version));
    await tick(50);
    await kv.set(["ns_head", "acme", "web"], head(2));
    await until(() => a.length > 0 && b.length > 0);
    await tick(50); // both layers (watch and poll) saw it; still one call each
    await kv.set(["ns_head", "acme", "web"], head(3));
    await until(() => a.length > 1);
    await tick(50);
    assertEquals(a, [2, 3]);
    assertEquals(b, [2, 3]);
    assertEquals(watcher.size, 1);
  } finally {
    watcher.close();
    kv.close();
  }
});

Deno.test("HeadWatcher's poller alone sees changes (the cross-process path)", async () => {
  const kv = await Deno.openKv(":memory:");
  const watcher = new HeadWatcher(kv, { pollIntervalMs: 10, useWatch: false });
  try {
    const seen: number[] = [];
    // more than one getMany batch of 10 keys
    for (let i = 0; i < 25; i++) watcher.watch("acme", `ns${i}`, () => {});
    watcher.watch("acme", "ns24", (h) => seen.push(h?.version ?? -1));
    await tick(50);
    await kv.set(["ns_head", "acme", "ns24"], head(7));
    await until(() => seen.length > 0);
    assertEquals(seen, [7]);
    await kv.delete(["ns_head", "acme", "ns24"]);
    await until(() => seen.length > 1);
    assertEquals(seen, [7, -1], "a deleted namespace is reported as null");
  } finally {
    watcher.close();
    kv.close();
  }
});

Deno.test("HeadWatcher stops watching a namespace when its last listener leaves", async () => {
  const kv = await Deno.openKv(":memory:");
  const watcher = new HeadWatcher(kv, { pollIntervalMs: 10 });
  try {
    const seen: number[] = [];
    const stop = watcher.watch("acme", "web", (h) => seen.push(h!.version));
    await tick(30);
    stop();
    assertEquals(watcher.size, 0);
    await kv.set(["ns_head", "acme", "web"], head(5));
    await tick(60);
    assertEquals(seen, []);
  } finally {
    watcher.close();
    kv.close();
  }
});
