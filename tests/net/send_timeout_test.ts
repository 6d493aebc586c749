/**
 * An answer the client does not take: the connection is closed once the
 * request timeout has passed since the answer was handed over (an unread
 * answer must not hold a connection slot for ever), except an event
 * stream, which lives as long as the client reads it.
 */
import { assert, assertEquals } from "../assert.ts";
import { startBounded } from "./bounded_world.ts";

const encoder = new TextEncoder();
/** Generous upper bound for a timeout to act on 2 shared cores. */
const SLACK_MS = 4000;

/** Resolves true once the server holds no connection, false after `ms`. */
async function drained(stats: () => { connections: number }, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (stats().connections === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

Deno.test("an answer the client never reads closes its connection after the request timeout", async () => {
  // A streamed answer (as a compressed one is) of more than socket buffers hold.
  const chunk = new Uint8Array(64 * 1024);
  const streamed = () => {
    let left = 512;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (left-- > 0) controller.enqueue(chunk);
        else controller.close();
      },
    });
  };
  const s = startBounded(() => new Response(streamed()), {
    requestTimeoutMs: 500,
    keepAliveTimeoutMs: 60_000,
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
  try {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    // never read: the answer stays in flight until the server gives up on it
    assert(await drained(() => s.server.stats(), 500 + SLACK_MS), "the connection was kept");
    assert(s.logged("answer not taken by the client in time: connection closed"));
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("an event stream the client reads slowly is not cut by the request timeout", async () => {
  const s = startBounded(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(() => controller.enqueue(encoder.encode(": keepalive\n\n")), 100);
      },
      cancel() {
        clearInterval(timer);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, { requestTimeoutMs: 300, keepAliveTimeoutMs: 300 });
  const res = await fetch(`http://127.0.0.1:${s.port}/`);
  try {
    const reader = res.body!.getReader();
    const end = Date.now() + 1500; // five request timeouts
    let received = 0;
    while (Date.now() < end) {
      const { value, done } = await reader.read();
      assertEquals(done, false, "the stream was cut");
      received += value!.length;
    }
    assert(received > 0);
    await reader.cancel();
  } finally {
    await s.stop();
  }
});
