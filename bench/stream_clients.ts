/**
 * One client process of the stream benchmarks: opens `count` event-stream
 * subscribers to a loopback server, then reports when frames arrive. Over
 * HTTP/1.1 (the default) each subscriber is one TCP connection with one
 * GET written by hand and no parser beyond finding `id:` lines, so a client
 * process costs little CPU and thousands fit in one. With `h2`, subscribers
 * are HTTP/2 streams over cleartext connections (prior knowledge, as
 * `Deno.serve` accepts them), 190 per connection (the server allows 200
 * concurrent streams per connection): how one process can hold more
 * subscribers than it may open file descriptors.
 *
 * ```sh
 * deno run -A bench/stream_clients.ts <port> <count> <path-and-query> [bearer-token|-] [h2]
 * ```
 *
 * stdout, one JSON line each:
 * - `{"ready":n,"failed":f,"error":"…"}` once every subscriber has its first
 *   frame with an `id:` (or failed: refused, not 200, closed, or no frame
 *   within 120 s);
 * - on the stdin line `await <id>`: `{"id":"…","arrivals":[ms…],"missing":m}`
 *   once every open subscriber has the frame with that id (or after 60 s),
 *   arrival times as wall-clock ms (`Date.now()`, comparable between
 *   processes of one machine);
 * - on `stats`: `{"open":n,"closed":c,"keepalives":k}` (`:keepalive`
 *   comments received in all); `quit` closes every connection and exits.
 *
 * Connects only to 127.0.0.1.
 *
 * @module
 */

import http2 from "node:http2";

const [portArg, countArg, path = "/", tokenArg, transport = "h1"] = Deno.args;
const token = tokenArg === "-" ? undefined : tokenArg;
const port = Number(portArg);
const count = Number(countArg);
/**
 * Subscribers a client opens before it waits for their first events: with
 * five clients, 500 connections in flight at most, under the server's
 * listen backlog (511 by default) so a slow accept loop does not overflow
 * it (the kernel then resets connections it had already acknowledged).
 */
const CONNECT_BATCH = 100;
const READ_BUFFER = 4096;
/** HTTP/2 streams per connection (Deno.serve allows 200). */
const STREAMS_PER_SESSION = 190;

const request = new TextEncoder().encode(
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n` +
    (token ? `Authorization: Bearer ${token}\r\n` : "") + "\r\n",
);
const decoder = new TextDecoder();

/** Arrival times per frame id, one entry per subscriber that got it. */
const arrivals = new Map<string, number[]>();
const waiters = new Set<() => void>();
let open = 0;
let closed = 0;
/** `:keepalive` comments received, all subscribers together. */
let keepalives = 0;
let failed = 0;
let firstError = "";

function record(id: string, at: number): void {
  let list = arrivals.get(id);
  if (list === undefined) arrivals.set(id, list = []);
  list.push(at);
  for (const w of waiters) w();
}

/** Finds `id:` lines in a subscriber's text, which may split anywhere. */
class IdScanner {
  #tail = "";
  /** Records the ids in `chunk`; returns how many there were. */
  feed(chunk: string, at: number): number {
    let text = this.#tail + chunk;
    let n = 0;
    for (const m of text.matchAll(/\nid: ([^\n]+)\n/g)) {
      record(m[1]!, at);
      n++;
    }
    for (let i = text.indexOf(":keepalive\n"); i >= 0; i = text.indexOf(":keepalive\n", i + 1)) {
      keepalives++;
    }
    // keep the last partial line: an `id:` line may span two reads
    const cut = text.lastIndexOf("\n");
    text = cut >= 0 ? text.slice(cut) : text;
    this.#tail = text.length > 256 ? text.slice(-256) : text;
    return n;
  }
}

/** Reads one subscriber until it ends; resolves `first` with its first frame id. */
async function subscribe(first: (ok: boolean) => void): Promise<void> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(request);
  } catch (err) {
    firstError ||= String(err);
    return first(false);
  }
  const buf = new Uint8Array(READ_BUFFER);
  const scanner = new IdScanner();
  let head = "";
  let headerSeen = false;
  let gotFirst = false;
  const timer = setTimeout(() => {
    if (!gotFirst) conn.close();
  }, 120_000);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      const at = Date.now();
      let text = decoder.decode(buf.subarray(0, n));
      if (!headerSeen) {
        text = head + text;
        if (text.length < 12) {
          head = text;
          continue;
        }
        if (!text.startsWith("HTTP/1.1 200")) {
          firstError ||= text.split("\r\n")[0]!;
          break;
        }
        headerSeen = true;
      }
      if (scanner.feed(text, at) > 0 && !gotFirst) {
        gotFirst = true;
        open++;
        first(true);
      }
    }
  } catch (err) {
    // reset by the server, or closed by us
    if (!gotFirst) firstError ||= String(err);
  } finally {
    if (!gotFirst) {
      firstError ||= headerSeen ? "closed before its first event" : "closed before a response";
    }
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // already closed
    }
    if (gotFirst) {
      open--;
      closed++;
    } else first(false);
  }
}

const sessions: http2.ClientHttp2Session[] = [];

/** One HTTP/2 subscriber on `session`; resolves `first` with its first frame. */
function subscribeH2(session: http2.ClientHttp2Session, first: (ok: boolean) => void): void {
  const headers: Record<string, string> = { ":path": path, accept: "text/event-stream" };
  if (token) headers.authorization = `Bearer ${token}`;
  const req = session.request(headers);
  const scanner = new IdScanner();
  let gotFirst = false;
  const end = () => {
    if (gotFirst) {
      gotFirst = false;
      open--;
      closed++;
    } else first(false);
  };
  req.setEncoding("utf8");
  req.on("response", (h) => {
    if (h[":status"] !== 200) {
      firstError ||= `HTTP/2 ${h[":status"]}`;
      req.close();
    }
  });
  req.on("data", (chunk: string) => {
    if (scanner.feed(chunk, Date.now()) > 0 && !gotFirst) {
      gotFirst = true;
      open++;
      first(true);
    }
  });
  req.on("error", (err) => {
    firstError ||= String(err);
  });
  req.on("close", end);
}

const firsts: Promise<boolean>[] = [];
let session: http2.ClientHttp2Session | null = null;
for (let i = 0; i < count; i += CONNECT_BATCH) {
  const batch: Promise<boolean>[] = [];
  for (let j = i; j < Math.min(count, i + CONNECT_BATCH); j++) {
    let resolve!: (ok: boolean) => void;
    const p = new Promise<boolean>((r) => (resolve = r));
    let settled = false;
    const first = (ok: boolean) => {
      if (!settled) resolve(ok);
      settled = true;
    };
    if (transport === "h2") {
      if (j % STREAMS_PER_SESSION === 0) {
        session = http2.connect(`http://127.0.0.1:${port}`);
        session.on("error", (err) => (firstError ||= String(err)));
        sessions.push(session);
      }
      subscribeH2(session!, first);
    } else void subscribe(first);
    batch.push(p);
    firsts.push(p);
  }
  // let the server accept this batch before the next arrives (the listen backlog is finite)
  await Promise.race([Promise.all(batch), new Promise((r) => setTimeout(r, 2000))]);
}
for (const ok of await Promise.all(firsts)) if (!ok) failed++;
console.log(JSON.stringify({ ready: open, failed, ...(firstError ? { error: firstError } : {}) }));

/** Resolves once every open subscriber has frame `id`, or after 60 s. */
function awaitFrame(id: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if ((arrivals.get(id)?.length ?? 0) >= open) done();
    };
    const done = () => {
      waiters.delete(check);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 60_000);
    waiters.add(check);
    check();
  });
}

let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const [cmd, arg = ""] = buffered.slice(0, nl).trim().split(" ");
    buffered = buffered.slice(nl + 1);
    if (cmd === "await") {
      await awaitFrame(arg);
      const got = arrivals.get(arg) ?? [];
      console.log(
        JSON.stringify({ id: arg, arrivals: got, missing: Math.max(0, open - got.length) }),
      );
      arrivals.delete(arg);
    } else if (cmd === "stats") {
      console.log(JSON.stringify({ open, closed, keepalives }));
    } else if (cmd === "quit") {
      for (const s of sessions) s.destroy();
      Deno.exit(0);
    }
  }
}
Deno.exit(0);
