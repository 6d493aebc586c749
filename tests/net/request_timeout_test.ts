/**
 * The request read timeout of serveBounded, over raw sockets: trickled
 * bodies and heads lose their connection; whole requests, uploads at a
 * normal pace and long answers (event streams) are untouched.
 */
import { assert, assertEquals } from "../assert.ts";
import { serveBounded } from "../../lib/net/bounded_server.ts";
import { readAll, startBounded } from "./bounded_world.ts";
import { readWholeBody, watchedRequest } from "../../lib/net/request_timeout.ts";
import { HAVE_OPENSSL, makeCa, makeServerPair } from "../server/tls_fixture.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Generous upper bound on how late a timeout may act, ms (2 shared cores, parallel tests). */
const SLACK_MS = 2500;

/** Reads one answer with a `content-length` (a keep-alive connection stays open after it). */
async function readAnswer(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) return text;
    text += decoder.decode(buf.subarray(0, n));
    const end = text.indexOf("\r\n\r\n");
    const length = /content-length: (\d+)/i.exec(text)?.[1];
    if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) return text;
  }
}

/**
 * Writes `bytes` one at a time, `everyMs` apart, until done or the
 * connection is gone; resolves with how many it wrote.
 */
async function trickle(conn: Deno.Conn, bytes: string, everyMs: number): Promise<number> {
  let sent = 0;
  for (const ch of bytes) {
    await new Promise((r) => setTimeout(r, everyMs));
    try {
      await conn.write(encoder.encode(ch));
    } catch {
      return sent; // closed by the server
    }
    sent++;
  }
  return sent;
}

async function connect(port: number): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port });
}

/** A handler that reads the body the way the service's routes do, then answers its size. */
const readers: Record<string, (req: Request) => Promise<Response>> = {
  "arrayBuffer()": async (req) => new Response(`got ${(await req.arrayBuffer()).byteLength}`),
  "the body stream": async (req) => {
    let size = 0;
    for await (const chunk of req.body!) size += chunk.length;
    return new Response(`got ${size}`);
  },
};

/**
 * Handlers of a server whose handler watches bodies itself
 * (`handlerWatchesBodies`, as `serve` and `relay` run): the data plane's
 * readWholeBody(), and the router's watchedRequest() before any read.
 */
const ownReaders: Record<string, (req: Request) => Promise<Response>> = {
  "readWholeBody()": async (req) => new Response(`got ${(await readWholeBody(req)).byteLength}`),
  "watchedRequest(), then the body stream": (req) =>
    readers["the body stream"]!(watchedRequest(req)),
};

const variants = [
  ...Object.entries(readers).map(([how, handler]) => ({ how, handler, own: false })),
  ...Object.entries(ownReaders).map(([how, handler]) => ({ how, handler, own: true })),
];

for (const { how, handler, own } of variants) {
  Deno.test(`a body trickled a byte at a time (read with ${how}) gets 408 and its connection closed`, async () => {
    const s = startBounded(handler, { requestTimeoutMs: 400 }, { handlerWatchesBodies: own });
    const conn = await connect(s.port);
    try {
      const started = Date.now();
      await conn.write(
        encoder.encode("POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n"),
      );
      const sending = trickle(conn, "x".repeat(100), 50);
      const text = await readAll(conn);
      const waited = Date.now() - started;
      assert(text.startsWith("HTTP/1.1 408"), text);
      const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
      assertEquals(body.code, "request_timeout");
      assertEquals(typeof body.request_id, "string");
      assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
      assert((await sending) < 100, "the server stopped reading before the body was whole");
      const line = s.lines.find((l) => l.msg.startsWith("request not received in time"));
      assertEquals(line?.fields.path, "/upload");
      assertEquals(line?.fields.request_id, body.request_id);
      assertEquals(s.server.stats().inFlight, 0);
    } finally {
      conn.close();
      await s.stop();
    }
  });
}

Deno.test("the 408 is rendered by requestTimeoutResponse when given", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const ac = new AbortController();
  const server = serveBounded(listener, async (req) => new Response(await req.text()), {
    limits: {
      headerTimeoutMs: 5000,
      keepAliveTimeoutMs: 5000,
      requestTimeoutMs: 300,
      maxConnections: 10,
    },
    log: () => {},
    signal: ac.signal,
    requestTimeoutResponse: (err, req) =>
      new Response(`${err.code} ${new URL(req.url).pathname}`, { status: err.status }),
  });
  const conn = await connect(listener.addr.port);
  try {
    await conn.write(encoder.encode("PUT /x HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nab"));
    const text = await readAll(conn);
    assert(text.startsWith("HTTP/1.1 408"), text);
    assert(text.endsWith("request_timeout /x"), text);
  } finally {
    conn.close();
    ac.abort();
    await server.finished;
  }
});

Deno.test("a later request on a keep-alive connection whose body trickles gets 408", async () => {
  const s = startBounded(readers["arrayBuffer()"]!, { requestTimeoutMs: 400 });
  const conn = await connect(s.port);
  try {
    await conn.write(
      encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello"),
    );
    assert((await readAnswer(conn)).endsWith("got 5"), "the first request is answered");
    // idle for longer than the request timeout: the next request's time starts with its head
    await new Promise((r) => setTimeout(r, 600));
    await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n"));
    const started = Date.now();
    const sending = trickle(conn, "y".repeat(50), 50);
    const text = await readAll(conn);
    const waited = Date.now() - started;
    assert(text.startsWith("HTTP/1.1 408"), text);
    assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
    await sending;
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("a second request on a keep-alive connection whose head trickles is closed", async () => {
  let answered = 0;
  const s = startBounded(() => new Response(`answer ${++answered}`), { keepAliveTimeoutMs: 400 });
  const conn = await connect(s.port);
  try {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    assert((await readAnswer(conn)).endsWith("answer 1"));
    const started = Date.now();
    const sending = trickle(conn, "GET / HTTP/1.1\r\nhost: x\r\nx-padding: " + "z".repeat(200), 50);
    const text = await readAll(conn);
    const waited = Date.now() - started;
    assertEquals(text, "", "closed without an answer");
    assertEquals(answered, 1, "the trickled head never reached the handler");
    assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
    await sending;
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("the first request head is bounded by the request timeout when it is the shorter", async () => {
  const s = startBounded(() => new Response("ok"), {
    headerTimeoutMs: 20_000,
    requestTimeoutMs: 400,
  });
  const conn = await connect(s.port);
  try {
    const started = Date.now();
    const sending = trickle(conn, "GET / HTTP/1.1\r\nhost: x\r\nx-padding: " + "z".repeat(200), 50);
    assertEquals(await readAll(conn), "");
    const waited = Date.now() - started;
    assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
    await sending;
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("a POST whose body comes in pieces within the timeout is answered, and the connection kept", async () => {
  const s = startBounded(readers["the body stream"]!, { requestTimeoutMs: 3000 });
  const conn = await connect(s.port);
  try {
    await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 30\r\n\r\n"));
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await conn.write(encoder.encode("0123456789"));
    }
    assert((await readAnswer(conn)).endsWith("got 30"));
    await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nok"));
    assert((await readAnswer(conn)).endsWith("got 2"), "the connection is still served");
  } finally {
    conn.close();
    await s.stop();
  }
});

for (const [how, handler] of Object.entries(readers)) {
  Deno.test(`a large upload at a steady pace is answered (read with ${how})`, async () => {
    const size = 8 * 1024 * 1024;
    const s = startBounded(handler, { requestTimeoutMs: 5000 });
    const conn = await connect(s.port);
    try {
      await conn.write(encoder.encode(
        `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${size}\r\nconnection: close\r\n\r\n`,
      ));
      const chunk = new Uint8Array(64 * 1024).fill(97);
      const writing = (async () => {
        for (let sent = 0; sent < size; sent += chunk.length) {
          if (sent % (1024 * 1024) === 0) await new Promise((r) => setTimeout(r, 20));
          let off = 0;
          while (off < chunk.length) off += await conn.write(chunk.subarray(off));
        }
      })();
      const text = await readAll(conn);
      await writing;
      assert(text.startsWith("HTTP/1.1 200"), text.slice(0, 200));
      assert(text.endsWith(`got ${size}`), text.slice(-200));
    } finally {
      conn.close();
      await s.stop();
    }
  });
}

/** An SSE-like answer: one event every `everyMs`, `count` of them. */
function eventStream(count: number, everyMs: number): Response {
  let sent = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      return new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          controller.enqueue(encoder.encode(`data: ${++sent}\n\n`));
          if (sent === count) controller.close();
          resolve();
        }, everyMs);
      });
    },
    cancel() {
      clearTimeout(timer);
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

Deno.test("an event stream that runs far longer than the request timeout is not cut", async () => {
  const s = startBounded(async (req) => {
    if (req.method === "POST") await req.json(); // a body read to its end stops the clock
    return eventStream(12, 100);
  }, { requestTimeoutMs: 300, headerTimeoutMs: 300, keepAliveTimeoutMs: 300 });
  try {
    for (
      const head of [
        "GET /events HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        "POST /events HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}",
      ]
    ) {
      const conn = await connect(s.port);
      try {
        await conn.write(encoder.encode(head));
        const text = await readAll(conn);
        assert(text.startsWith("HTTP/1.1 200"), text);
        assert(text.includes("data: 12\n\n"), `cut short: ${JSON.stringify(text.slice(-80))}`);
      } finally {
        conn.close();
      }
    }
    assertEquals(s.lines.filter((l) => l.msg.includes("not received in time")), []);
  } finally {
    await s.stop();
  }
});

Deno.test("an answer that started before its body arrived has its connection closed at the deadline", async () => {
  const s = startBounded(() => eventStream(100, 100), { requestTimeoutMs: 400 });
  const conn = await connect(s.port);
  try {
    const started = Date.now();
    await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nab"));
    const text = await readAll(conn);
    const waited = Date.now() - started;
    assert(text.startsWith("HTTP/1.1 200"), text);
    assert(!text.includes("data: 100\n\n"), "the stream was not cut");
    assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
    assert(s.lines.some((l) => l.msg === "request body not received in time: connection closed"));
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("an answer sent without reading a trickled body: the connection is closed at the deadline", async () => {
  // Deno's engine would read (and drop) the rest of the body at the client's pace
  const s = startBounded(() => new Response("no", { status: 401 }), { requestTimeoutMs: 400 });
  const conn = await connect(s.port);
  try {
    const started = Date.now();
    await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n"));
    const sending = trickle(conn, "x".repeat(1000), 50);
    const text = await readAll(conn);
    const waited = Date.now() - started;
    assert(text.startsWith("HTTP/1.1 401"), text);
    assert(waited < 400 + SLACK_MS, `closed after ${waited} ms`);
    assert((await sending) < 1000);
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test("a whole body left unread does not close a keep-alive connection that goes on", async () => {
  const s = startBounded((req) => new Response(`answer to ${new URL(req.url).pathname}`), {
    requestTimeoutMs: 1000,
  });
  const conn = await connect(s.port);
  try {
    await conn.write(
      encoder.encode("POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello"),
    );
    assert((await readAnswer(conn)).endsWith("answer to /a"));
    await conn.write(encoder.encode("GET /b HTTP/1.1\r\nhost: x\r\n\r\n"));
    assert((await readAnswer(conn)).endsWith("answer to /b"));
    await new Promise((r) => setTimeout(r, 1300)); // past the first request's deadline
    await conn.write(encoder.encode("GET /c HTTP/1.1\r\nhost: x\r\n\r\n"));
    assert((await readAnswer(conn)).endsWith("answer to /c"), "the connection was kept");
  } finally {
    conn.close();
    await s.stop();
  }
});

Deno.test({
  name: "over HTTP/2 a trickled body gets 408 too, and the next request is served",
  ignore: !HAVE_OPENSSL,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-request-timeout-" });
    const ca = await makeCa(dir, "a");
    const pair = await makeServerPair(dir, ca, "a");
    const listener = Deno.listenTls({
      hostname: "127.0.0.1",
      port: 0,
      cert: pair.cert,
      key: pair.key,
      alpnProtocols: ["h2", "http/1.1"],
    });
    const ac = new AbortController();
    const server = serveBounded(listener, async (req) => {
      return new Response(req.method === "GET" ? "get" : `got ${(await req.bytes()).length}`);
    }, {
      limits: {
        headerTimeoutMs: 5000,
        keepAliveTimeoutMs: 5000,
        requestTimeoutMs: 400,
        maxConnections: 10,
      },
      log: () => {},
      signal: ac.signal,
    });
    using client = Deno.createHttpClient({ caCerts: [ca.pem], http1: false, http2: true });
    const url = `https://localhost:${listener.addr.port}/`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const slow = new ReadableStream<Uint8Array>({
        pull: (controller) =>
          new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              controller.enqueue(new Uint8Array([120]));
              resolve();
            }, 100);
          }),
        cancel: () => clearTimeout(timer),
      });
      const started = Date.now();
      const res = await fetch(url, { method: "POST", body: slow, client });
      assertEquals(res.status, 408);
      assertEquals((await res.json()).code, "request_timeout");
      assert(Date.now() - started < 400 + SLACK_MS);
      const normal = await fetch(url, { method: "POST", body: "hello", client });
      assertEquals(await normal.text(), "got 5");
    } finally {
      clearTimeout(timer);
      ac.abort();
      await server.finished;
      await Deno.remove(dir, { recursive: true });
    }
  },
});

for (const [how, handler] of Object.entries(ownReaders)) {
  Deno.test(`a handler that watches bodies itself (${how}): a body read in time keeps its connection past the deadline`, async () => {
    const s = startBounded(handler, { requestTimeoutMs: 600 }, { handlerWatchesBodies: true });
    const conn = await connect(s.port);
    try {
      await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 20\r\n\r\n"));
      for (let i = 0; i < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        await conn.write(encoder.encode("0123456789"));
      }
      assert((await readAnswer(conn)).endsWith("got 20"));
      // past the first request's deadline: a body not counted as read would close the connection
      await new Promise((r) => setTimeout(r, 600 + 400));
      await conn.write(encoder.encode("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nok"));
      assert((await readAnswer(conn)).endsWith("got 2"), "the connection is still served");
    } finally {
      conn.close();
      await s.stop();
    }
  });
}
