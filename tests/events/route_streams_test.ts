import { assert, assertEquals } from "../assert.ts";
import { routeStreams } from "../../lib/events/route_streams.ts";

Deno.test("a route's streams close one idle for idleCloseMs, on the service's clock", () => {
  let t = 0;
  const ac = new AbortController();
  const streams = routeStreams(
    { keepaliveMs: 100_000, idleCloseMs: 1_000 },
    ac.signal,
    () => new Date(t),
  );
  const s = streams.open();
  t = 999;
  streams.tick();
  assert(!s.closed, "not idle long enough yet");
  t = 1_001;
  streams.tick();
  assert(s.closed, "idle for longer than idleCloseMs");
  ac.abort();
});

Deno.test("a route's streams all end when the process shuts down", () => {
  const ac = new AbortController();
  const streams = routeStreams({ keepaliveMs: 25_000, idleCloseMs: 60_000 }, ac.signal);
  const a = streams.open();
  const b = streams.open();
  assertEquals(streams.size, 2);
  ac.abort();
  assert(a.closed && b.closed);
  assert(streams.open().closed, "a stream opened after shutdown is closed at once");
});
