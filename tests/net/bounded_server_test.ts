import { assert, assertEquals } from "../assert.ts";
import { abortQuietly, serveBounded } from "../../lib/net/bounded_server.ts";
import { readAll, startBounded } from "./bounded_world.ts";
import { HAVE_OPENSSL, makeCa, makeServerPair } from "../server/tls_fixture.ts";

const encoder = new TextEncoder();

Deno.test("a request that takes longer than the keep-alive timeout is answered, then the idle connection closes", async () => {
  const s = startBounded(async () => {
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
  const s = startBounded(() => new Response("ok"), { maxConnections: 1 });
  try {
    const first = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await first.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    const buf = new Uint8Array(1024);
    assert((await first.read(buf))! > 0, "the first connection is answered");
    const second = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
    await second.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n")).catch(() => 0);
    assertEquals(await readAll(second), "", "the second one is closed unanswered");
    assert(s.logged("connection limit reached: closing new connections"));
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
  const s = startBounded(async () => {
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

Deno.test("replaceListener serves new connections from the new listener and keeps the open ones", async () => {
  const first = Deno.listen({ hostname: "127.0.0.1", port: 0, reusePort: true });
  const port = first.addr.port;
  let served = "first";
  const ac = new AbortController();
  const server = serveBounded(first, () => new Response(served), {
    limits: { headerTimeoutMs: 5000, keepAliveTimeoutMs: 5000, maxConnections: 100 },
    log: () => {},
    signal: ac.signal,
  });
  // a keep-alive connection opened on the first listener
  const kept = await Deno.connect({ hostname: "127.0.0.1", port });
  const ask = async (conn: Deno.Conn, close: boolean) => {
    await conn.write(
      encoder.encode(
        `GET / HTTP/1.1\r\nhost: x\r\n${close ? "connection: close\r\n" : ""}\r\n`,
      ),
    );
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0));
  };
  assert((await ask(kept, false)).endsWith("first"));

  const second = Deno.listen({ hostname: "127.0.0.1", port, reusePort: true });
  served = "second";
  assert(await server.replaceListener(second));
  // the first listener is closed: nothing else can be accepted from it
  let refused = false;
  try {
    await first.accept();
  } catch {
    refused = true;
  }
  assert(refused, "the replaced listener is closed");
  for (let i = 0; i < 20; i++) {
    const fresh = await Deno.connect({ hostname: "127.0.0.1", port });
    assert((await readAll(await sent(fresh))).endsWith("second"));
  }
  assert((await ask(kept, true)).endsWith("second"), "the open connection is still served");
  kept.close();
  ac.abort();
  await server.finished;
  const late = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  assertEquals(await server.replaceListener(late), false, "a stopped server takes no listener");
});

async function sent(conn: Deno.Conn): Promise<Deno.Conn> {
  await conn.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"));
  return conn;
}

Deno.test({
  name:
    "a TLS connection that never finishes its handshake stops counting after the header timeout",
  ignore: !HAVE_OPENSSL,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-bounded-" });
    const ca = await makeCa(dir, "a");
    const pair = await makeServerPair(dir, ca, "a");
    const listener = Deno.listenTls({
      hostname: "127.0.0.1",
      port: 0,
      cert: pair.cert,
      key: pair.key,
    });
    const ac = new AbortController();
    const lines: string[] = [];
    const server = serveBounded(listener, () => new Response("ok"), {
      limits: { headerTimeoutMs: 300, keepAliveTimeoutMs: 5000, maxConnections: 4 },
      log: (_level, msg) => lines.push(msg),
      signal: ac.signal,
    });
    const port = listener.addr.port;
    const stuck: Deno.Conn[] = [];
    try {
      for (let i = 0; i < 3; i++) stuck.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      const half = await Deno.connect({ hostname: "127.0.0.1", port });
      // the first 11 bytes of a ClientHello that announces 512
      await half.write(new Uint8Array([22, 3, 1, 2, 0, 1, 0, 1, 252, 3, 3]));
      stuck.push(half);
      const started = Date.now();
      while (server.stats().connections < 4 && Date.now() - started < 1000) {
        await new Promise((r) => setTimeout(r, 10));
      }
      assertEquals(server.stats().connections, 4, "each one counts while it handshakes");
      while (server.stats().connections > 0 && Date.now() - started < 3000) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const waited = Date.now() - started;
      assertEquals(server.stats().connections, 0, `still counted after ${waited} ms`);
      assert(waited >= 250, `closed after ${waited} ms, before the limit`);
      assert(lines.includes("tls handshake not finished in time: connection closed"));
      // the slots are free again: a real client is served
      using client = Deno.createHttpClient({ caCerts: [ca.pem] });
      const res = await fetch(`https://localhost:${port}/`, { client });
      assertEquals(await res.text(), "ok");
    } finally {
      for (const c of stuck) c.close();
      ac.abort();
      await server.finished;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
