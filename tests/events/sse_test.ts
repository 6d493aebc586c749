import { assert, assertEquals } from "../assert.ts";
import { createSseStream, sseHeaders, SseStreams, TICK_SLICE } from "../../lib/events/sse.ts";
import { nextTurn } from "../../lib/events/next_turn.ts";

/** SseStreams over a clock the test moves, ticked by hand. */
function fakeStreams(settings: { keepaliveMs: number; idleCloseMs: number }) {
  let t = 1_000;
  const ac = new AbortController();
  const streams = new SseStreams({ ...settings, shutdown: ac.signal, now: () => t });
  return {
    streams,
    shutdown: () => ac.abort(),
    advance(ms: number) {
      t += ms;
      streams.tick();
    },
  };
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(body).text();
}

Deno.test("sseHeaders() are the headers of every SSE response", () => {
  assertEquals(Object.fromEntries(sseHeaders()), {
    "cache-control": "no-store",
    "content-type": "text/event-stream; charset=utf-8",
    "x-accel-buffering": "no",
  });
});

Deno.test("SseStreams sends :keepalive once a stream wrote nothing for keepaliveMs", async () => {
  const f = fakeStreams({ keepaliveMs: 100, idleCloseMs: 10_000 });
  const s = f.streams.open();
  f.advance(50);
  s.write(new TextEncoder().encode("data: a\n\n"));
  f.advance(60); // 60 ms since the last write: no keepalive yet
  f.advance(50); // 110 ms
  f.advance(10); // just after a keepalive: none again
  s.close();
  assertEquals(await readAll(s.body), "data: a\n\n:keepalive\n\n");
});

Deno.test("SseStreams closes a stream that sent no event for idleCloseMs; keepalives do not count", () => {
  const f = fakeStreams({ keepaliveMs: 100, idleCloseMs: 1000 });
  let closes = 0;
  const s = f.streams.open(() => closes++);
  for (let i = 0; i < 9; i++) f.advance(100);
  assert(!s.closed);
  assert(s.lastWriteAt > s.lastEventAt, "keepalives were written");
  s.write(new Uint8Array([10])); // an event restarts the idle clock
  for (let i = 0; i < 9; i++) f.advance(100);
  assert(!s.closed);
  f.advance(100);
  assert(s.closed);
  assertEquals([closes, f.streams.size], [1, 0]);
});

Deno.test("SseStreams closes every stream at shutdown, and later ones at once", async () => {
  const f = fakeStreams({ keepaliveMs: 100, idleCloseMs: 1000 });
  const a = f.streams.open();
  const b = f.streams.open();
  assertEquals(f.streams.size, 2);
  f.shutdown();
  assert(a.closed && b.closed);
  assertEquals(f.streams.size, 0);
  let closed = false;
  const late = f.streams.open(() => (closed = true));
  assert(late.closed && closed);
  assertEquals(late.write(new Uint8Array([1])), false);
  assertEquals(await readAll(late.body), "");
});

Deno.test("an SseStream runs each close hook once, at once when already closed", async () => {
  const calls: string[] = [];
  const s = createSseStream(() => calls.push("open-time"));
  s.onClose(() => calls.push("later"));
  s.onClose(() => {
    throw new Error("a failing hook does not stop the others");
  });
  s.onClose(() => calls.push("last"));
  await s.body.cancel(); // the client went away
  s.close();
  s.onClose(() => calls.push("after"));
  assertEquals(calls, ["open-time", "later", "last", "after"]);
  assertEquals(s.write(new Uint8Array([1])), false);
});

Deno.test("an SseStream counts keepalives as writes but not as events", () => {
  let t = 5;
  const s = createSseStream(undefined, undefined, () => t);
  t = 10;
  s.keepalive();
  assertEquals([s.lastWriteAt, s.lastEventAt, s.bytesWritten], [10, 5, ":keepalive\n\n".length]);
  t = 20;
  s.write(new TextEncoder().encode("data: x\n\n"));
  assertEquals([s.lastWriteAt, s.lastEventAt], [20, 20]);
  s.close();
});

Deno.test("a ticker round over more streams than TICK_SLICE does the first slice at once and the rest on later turns", async () => {
  const f = fakeStreams({ keepaliveMs: 100, idleCloseMs: 10_000 });
  const streams = Array.from({ length: TICK_SLICE + 10 }, () => f.streams.open());
  f.advance(100);
  const atOnce = streams.filter((s) => s.bytesWritten > 0).length;
  assertEquals(atOnce, TICK_SLICE);
  for (let i = 0; i < 5 && streams.some((s) => s.bytesWritten === 0); i++) await nextTurn();
  assert(streams.every((s) => s.bytesWritten === ":keepalive\n\n".length), "each stream once");
  f.shutdown();
});
