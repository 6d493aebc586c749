import { assert, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { ClosureMemo } from "../../lib/closure/memo.ts";
import { ConnectionRegistry } from "../../lib/events/registry.ts";
import { createSseStream, KEEPALIVE_FRAME, sseFrame } from "../../lib/events/sse.ts";
import { inlineData, inlineParts, resyncData, snapshotData } from "../../lib/protocol/events.ts";
import { createParser } from "sse-parser";

Deno.test("sseFrame() output parses back with eventsource-parser; keepalives are comments", () => {
  const seen: unknown[] = [];
  const parser = createParser({
    onEvent: (e) => seen.push([e.event, e.id, e.data]),
    onComment: (c) => seen.push(["comment", c]),
  });
  const dec = new TextDecoder();
  parser.feed(dec.decode(sseFrame("version", "web:3", '{"a":1}')));
  parser.feed(dec.decode(KEEPALIVE_FRAME));
  assertEquals(seen, [["version", "web:3", '{"a":1}'], ["comment", "keepalive"]]);
  assertThrows(() => sseFrame("version", "x", "a\nb"), TypeError);
});

Deno.test("createSseStream() counts bytes, ends once, and drops a client that lags", async () => {
  let closes = 0;
  const s = createSseStream(() => closes++, 100);
  assert(s.write(new Uint8Array(64 * 1024)));
  assert(s.write(new Uint8Array(200))); // over the high-water mark but within the lag allowance
  assertEquals(s.write(new Uint8Array(10)), false); // lags by more than 100 bytes: dropped
  assert(s.closed);
  assertEquals(closes, 1);
  s.close();
  assertEquals(closes, 1);
  await s.body.cancel();
});

Deno.test("ConnectionRegistry counts per credential and releases once", async () => {
  const r = new ConnectionRegistry(2);
  const a = await r.acquire("a");
  await r.acquire("a");
  await assertRejects(() => r.acquire("a"), Error, "limit is 2");
  await r.acquire("b");
  assertEquals(r.total, 3);
  a();
  a();
  assertEquals(r.count("a"), 1);
});

Deno.test("ClosureMemo evicts least recently used entries by count and bytes", async () => {
  const entry = (n: number) => ({ archive: new Uint8Array(n), closureHash: "h", tarSize: n });
  const m = new ClosureMemo({ maxEntries: 2, maxBytes: 100 });
  m.set("a", entry(10));
  m.set("b", entry(10));
  m.get("a");
  m.set("c", entry(10));
  assertEquals([m.get("a") !== undefined, m.get("b"), m.get("c") !== undefined], [
    true,
    undefined,
    true,
  ]);
  m.set("d", entry(95));
  assertEquals([m.size, m.bytes], [1, 95]);
  let made = 0;
  const make = () => {
    made++;
    return Promise.resolve(entry(1));
  };
  await Promise.all([m.getOrCreate("x", make), m.getOrCreate("x", make)]);
  assertEquals(made, 1);
});

Deno.test("event payloads have the spec's fields", () => {
  const parts = inlineParts("web", 5, "sha256:a", "sha256:b", [{
    path: "flags/x.toml",
    op: "leave",
  }]);
  assertEquals(JSON.parse(inlineData(parts, 4)), {
    protocol: "v2",
    namespace: "web",
    version: 5,
    prev_version: 4,
    prev_closure_hash: "sha256:a",
    closure_hash: "sha256:b",
    delivery: "inline",
    files: [{ path: "flags/x.toml", op: "leave" }],
  });
  const snap = JSON.parse(snapshotData({
    namespace: "web",
    version: 5,
    prev_version: null,
    prev_closure_hash: "ignored",
    closure_hash: "sha256:b",
    snapshot_url: "http://h/x",
    snapshot_size_bytes: 2048,
  }));
  assertEquals(snap.prev_closure_hash, null);
  assertEquals(Object.keys(JSON.parse(resyncData("web", 2, "version_too_old", "u"))).sort(), [
    "current_version",
    "namespace",
    "protocol",
    "reason",
    "snapshot_url",
  ]);
});
