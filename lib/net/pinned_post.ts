/**
 * One HTTP/1.1 POST to an address checked beforehand
 * (lib/net/public_address.ts): the connection goes to that address, never
 * to a second lookup of the name, so a name cannot point at a public
 * address when checked and at a private one when connected to (DNS
 * rebinding). For HTTPS the certificate is checked against the URL's host
 * (and the name is sent as SNI) while the socket is the checked address's.
 *
 * Only the answer's status line is read; redirects are not followed (a
 * 3xx is an answer like any other). The whole exchange, connecting
 * included, has one deadline. Bodies are small JSON documents: no chunked
 * upload, no keep-alive (`Connection: close`).
 *
 * @module
 */

/** What {@linkcode pinnedPost} sends. */
export interface PinnedPost {
  /** The URL: its path and query are the request target, its host the `Host` header. */
  url: URL;
  /** The addresses to try, in order (the first that accepts a connection is used). */
  addresses: readonly string[];
  /** Request headers besides `Host`, `Content-Length` and `Connection`. */
  headers: Readonly<Record<string, string>>;
  /** The body (UTF-8). */
  body: string;
  /** The deadline of the whole exchange, ms. */
  timeoutMs: number;
  /** Certificates to trust besides the system's (tests). */
  caCerts?: string[];
}

/** The answer: its status code. */
export interface PinnedAnswer {
  /** The HTTP status. */
  status: number;
  /** The `Location` header of a redirect, if any. */
  location?: string;
}

/** Largest answer head read, bytes. */
const MAX_HEAD = 16 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Sends one POST to one of `request.addresses` and reads the status.
 * Throws an Error whose message says what failed (`connection refused`,
 * `timed out after 10000 ms`, a TLS error) when no answer comes.
 *
 * @param request the URL, addresses, headers, body and deadline
 * @returns the status (and the redirect target)
 *
 * @example
 * ```ts
 * import { pinnedPost } from "./pinned_post.ts";
 * const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) =>
 *   new Response(null, { status: (await req.text()) === "{}" ? 204 : 400 }));
 * const url = new URL(`http://receiver.test:${server.addr.port}/hook`);
 * const answer = await pinnedPost({
 *   url, addresses: ["127.0.0.1"], headers: { "content-type": "application/json" },
 *   body: "{}", timeoutMs: 5000,
 * });
 * if (answer.status !== 204) throw new Error(String(answer.status));
 * await server.shutdown();
 * ```
 */
export async function pinnedPost(request: PinnedPost): Promise<PinnedAnswer> {
  const { url } = request;
  const tls = url.protocol === "https:";
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let conn: Deno.Conn | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abort = new AbortController();
  const close = () => {
    try {
      conn?.close();
    } catch {
      // closed already (by the deadline, or the peer)
    }
  };
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      close();
      reject(new Error(`timed out after ${request.timeoutMs} ms`));
    }, request.timeoutMs);
  });
  const exchange = async (): Promise<PinnedAnswer> => {
    conn = await connectAny(request.addresses, port, abort.signal);
    if (abort.signal.aborted) close();
    if (tls) {
      conn = await Deno.startTls(conn as Deno.TcpConn, {
        hostname,
        alpnProtocols: ["http/1.1"],
        ...(request.caCerts ? { caCerts: request.caCerts } : {}),
      });
    }
    const body = encoder.encode(request.body);
    const lines = [
      `POST ${url.pathname || "/"}${url.search} HTTP/1.1`,
      `Host: ${url.host}`,
      ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${body.length}`,
      "Connection: close",
      "",
      "",
    ];
    await writeAll(conn, encoder.encode(lines.join("\r\n")));
    await writeAll(conn, body);
    return await readAnswer(conn);
  };
  try {
    return await Promise.race([exchange(), deadline]);
  } catch (err) {
    throw new Error(describe(err), { cause: err });
  } finally {
    clearTimeout(timer);
    abort.abort();
    close();
  }
}

/** Connects to the first address that accepts; the last failure otherwise. */
async function connectAny(
  addresses: readonly string[],
  port: number,
  signal: AbortSignal,
): Promise<Deno.TcpConn> {
  let last: unknown = new Error("no address to connect to");
  for (const hostname of addresses) {
    if (signal.aborted) break;
    try {
      return await Deno.connect({ hostname, port, transport: "tcp", signal });
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** Reads answer heads until a final (non-1xx) one; returns its status and location. */
async function readAnswer(conn: Deno.Conn): Promise<PinnedAnswer> {
  let text = "";
  const buf = new Uint8Array(4096);
  while (true) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const head = text.slice(0, end);
      const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(head)?.[1];
      if (status === undefined) throw new Error("the answer is not HTTP/1.x");
      const code = Number(status);
      if (code >= 100 && code < 200) {
        text = text.slice(end + 4);
        continue;
      }
      const location = /\r\nlocation:[ \t]*([^\r\n]*)/i.exec(head)?.[1];
      return location === undefined ? { status: code } : { status: code, location };
    }
    if (text.length > MAX_HEAD) throw new Error("the answer's head is too large");
    const n = await conn.read(buf);
    if (n === null) {
      throw new Error(
        text === "" ? "the connection closed without an answer" : "incomplete answer",
      );
    }
    text += decoder.decode(buf.subarray(0, n), { stream: true });
  }
}

/** A failure in words: what a delivery log shows. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof Deno.errors.ConnectionRefused) return "connection refused";
  if (err instanceof Deno.errors.ConnectionReset) return "connection reset";
  if (err instanceof Deno.errors.TimedOut) return "connection timed out";
  return err.message.split("\n")[0]!.slice(0, 300);
}
