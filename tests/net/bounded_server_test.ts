import { assert, assertEquals } from "../assert.ts";
import { abortQuietly, type ConnectionLimits, serveBounded } from "../../lib/net/bounded_server.ts";

const encoder = new TextEncoder();

function start(
  handler: (req: Request) => Response | Promise<Response>,
  limits: Partial<ConnectionLimits> = {},
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const ac = new AbortController();
  const lines: string[] = [];
  const server = serveBounded(listener, handler, {
    limits: { headerTimeoutMs: 5000, keepAliveTimeoutMs: 5000, maxConnections: 100, ...limits },
    log: (_level, msg) => lines.push(msg),
    signal: ac.signal,
  });
  return {
    server,
    lines,
    port: listener.addr.port,
    async stop() {
      ac.abort();
      await server.finished;
    },
  };
}

async function readAll(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  const guard = setTimeout(() => conn.close(), 10_000);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return text;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch {
    return text;
  } finally {
    clearTimeout(guard);
  }
}

Deno.test("a request that takes longer than the keep-alive timeout is answered, then the idle connection closes", async () => {
  const s = start(async () => {
    await new Promise((r) => setTimeout(r, 400));
    return new Response("slow but whole");
  }, { keepAliveTimeoutMs: 100, headerTimeoutMs: 100 });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    const text = await readAll(conn);
    assert(text.startsWith("HTTP/1.1 200"), text);
    assert(text.endsWith("slow but whole"), text);
  } finally {
    await s.stop();
  }
});

Deno.test("connections over maxConnections are closed on arrival while the open ones keep being served", async () => {
  const s = start(() => new Response("ok"), { maxConnections: 1 });
  try {
    const first = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await first.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    const buf = new Uint8Array(1024);
    assert((await first.read(buf))! > 0, "the first connection is answered");
    const second = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await second.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n")).catch(() => 0);
    assertEquals(await readAll(second), "", "the second one is closed unanswered");
    assert(s.lines.includes("connection limit reached: closing new connections"));
    await first.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"));
    assert((await readAll(first)).includes("ok"), "the first one is still served");
  } finally {
    await s.stop();
  }
});

Deno.test("stats count open connections and the requests in flight on them", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const s = start(async () => {
    entered();
    await held;
    return new Response("done");
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"));
    await inHandler;
    assertEquals(s.server.stats(), { connections: 1, inFlight: 1 });
    release();
    assert((await readAll(conn)).endsWith("done"));
  } finally {
    await s.stop();
  }
});

Deno.test("closing a connection whose resource is already gone does not end the process", async () => {
  const ac = new AbortController();
  ac.signal.addEventListener("abort", () => {
    // what Deno's HTTP engine throws when the connection died a moment before
    throw new Deno.errors.BadResource("Bad resource ID");
  });
  abortQuietly(ac);
  await new Promise((r) => setTimeout(r, 10)); // an uncaught error would fail the test here
  assertEquals(ac.signal.aborted, true);
});
