/**
 * Test helper: a {@linkcode serveBounded} server on a free loopback port,
 * for raw-socket tests, with the log lines it wrote, and a reader of
 * everything a socket receives until it closes.
 *
 * @module
 */
import { type ConnectionLimits, serveBounded } from "../../lib/net/bounded_server.ts";

/** One log line of the server. */
export interface LogLine {
  msg: string;
  fields: Record<string, unknown>;
}

/**
 * Starts a server with generous limits (5 s timeouts, 100 connections)
 * overridden by `limits`.
 *
 * @param handler the request handler
 * @param limits the limits to change
 * @returns the server, its log lines, its port and `stop()`
 */
export function startBounded(
  handler: (req: Request) => Response | Promise<Response>,
  limits: Partial<ConnectionLimits> = {},
  options: { handlerWatchesBodies?: boolean } = {},
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const ac = new AbortController();
  const lines: LogLine[] = [];
  const server = serveBounded(listener, handler, {
    limits: {
      headerTimeoutMs: 5000,
      keepAliveTimeoutMs: 5000,
      requestTimeoutMs: 5000,
      maxConnections: 100,
      ...limits,
    },
    log: (_level, msg, fields = {}) => lines.push({ msg, fields }),
    signal: ac.signal,
    ...options,
  });
  return {
    server,
    lines,
    /** Whether a line with exactly this message was logged. */
    logged: (msg: string) => lines.some((l) => l.msg === msg),
    port: listener.addr.port,
    async stop() {
      ac.abort();
      await server.finished;
    },
  };
}

/**
 * Everything the server sends on `conn` until it closes the connection (or
 * 10 s pass, when the test closes it).
 *
 * @param conn the socket
 * @returns the text received
 */
export async function readAll(conn: Deno.Conn): Promise<string> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(4096);
  let text = "";
  const guard = setTimeout(() => conn.close(), 10_000);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return text;
      text += decoder.decode(buf.subarray(0, n), { stream: true });
    }
  } catch {
    return text;
  } finally {
    clearTimeout(guard);
  }
}
