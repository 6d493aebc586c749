/**
 * An HTTP server that owns its accept loop, so that a hostile or careless
 * client cannot take it down: a connection that sends no complete request
 * head within `headerTimeoutMs` is closed, a keep-alive connection idle for
 * `keepAliveTimeoutMs` is closed, connections over `maxConnections` are shed
 * (accepted and closed at once), and running out of file descriptors only
 * pauses accepting (the ones it has keep being served; it accepts again once
 * descriptors free up). `Deno.serve` has none of these: its accept loop ends
 * the server on "Too many open files" and it never times out a request head.
 *
 * Each accepted connection is handed to Deno's own HTTP engine (hyper) with
 * `serveHttpOnConnection`, the per-connection form of `Deno.serve` that Deno
 * exposes internally; where it is missing, {@linkcode serveBounded} falls
 * back to `Deno.serve` and says so in the log.
 *
 * @module
 */
import type { Logger } from "../log.ts";

/** Limits of a {@linkcode serveBounded} server. */
export interface ConnectionLimits {
  /** Close a connection that sends no complete request head within this long, ms. */
  headerTimeoutMs: number;
  /** Close a keep-alive connection with no request in flight after this long, ms. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; more are closed as they arrive. */
  maxConnections: number;
}

/** The request handler, as `Deno.serve` takes it. */
export type ConnectionHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** A running {@linkcode serveBounded} server. */
export interface BoundedServer {
  /** Resolves once the listener is closed and every connection has ended. */
  finished: Promise<void>;
  /** Open connections, and requests in flight on them (event streams among them). */
  stats(): { connections: number; inFlight: number };
}

/** Options of {@linkcode serveBounded}. */
export interface BoundedServeOptions {
  /** Limits on connections. */
  limits: ConnectionLimits;
  /** Where accept problems are logged. */
  log: Logger;
  /** Aborting stops accepting and closes every connection once its requests end. */
  signal?: AbortSignal;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: ConnectionHandler,
  onError: (err: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

interface Tracked {
  close: AbortController;
  inFlight: number;
  /** performance.now() of the last request start or end (or of the accept). */
  since: number;
  /** Has it sent a complete request head yet? */
  served: boolean;
}

/** Delays between accept attempts while descriptors are exhausted, ms. */
const BACKOFF_START_MS = 20;
const BACKOFF_MAX_MS = 1000;
/** At most one "out of file descriptors" line (and its "available again") this often, ms. */
const EXHAUSTION_LOG_EVERY_MS = 10_000;

/**
 * Serves `handler` on a bound TCP listener within `limits` (see the module
 * documentation). The listener is closed when `signal` aborts.
 *
 * @example
 * ```ts
 * import { serveBounded } from "./bounded_server.ts";
 * const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const ac = new AbortController();
 * const server = serveBounded(listener, () => new Response("ok"), {
 *   limits: { headerTimeoutMs: 1000, keepAliveTimeoutMs: 1000, maxConnections: 10 },
 *   log: () => {},
 *   signal: ac.signal,
 * });
 * const res = await fetch(`http://127.0.0.1:${listener.addr.port}/`);
 * if ((await res.text()) !== "ok") throw new Error();
 * ac.abort();
 * await server.finished;
 * ```
 */
export function serveBounded(
  listener: Deno.TcpListener,
  handler: ConnectionHandler,
  options: BoundedServeOptions,
): BoundedServer {
  const serveOn = internalServeOnConnection();
  if (serveOn === null) return fallback(listener, handler, options);
  const { limits, log, signal } = options;
  const open = new Set<Tracked>();
  let live = 0; // connections whose HTTP engine has not finished yet
  let allEnded: (() => void) | undefined;
  let stopping = false;

  const onError = (err: unknown): Response => {
    log("error", "unhandled error", { error: err instanceof Error ? err.message : String(err) });
    return new Response("internal server error", { status: 500 });
  };

  const sweepEvery = Math.max(50, Math.min(limits.headerTimeoutMs, limits.keepAliveTimeoutMs) / 4);
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const t of open) {
      if (t.inFlight > 0) continue;
      const limit = t.served ? limits.keepAliveTimeoutMs : limits.headerTimeoutMs;
      if (now - t.since >= limit) {
        open.delete(t);
        abortQuietly(t.close);
      }
    }
  }, sweepEvery);
  Deno.unrefTimer(sweeper);

  const stop = () => {
    stopping = true;
    try {
      listener.close();
    } catch {
      // already closed
    }
    for (const t of open) abortQuietly(t.close);
  };
  if (signal?.aborted) stop();
  else signal?.addEventListener("abort", stop, { once: true });

  const track = (conn: Deno.TcpConn) => {
    const t: Tracked = {
      close: new AbortController(),
      inFlight: 0,
      since: performance.now(),
      served: false,
    };
    open.add(t);
    const done = () => {
      t.inFlight--;
      t.since = performance.now();
    };
    const wrapped: ConnectionHandler = (req, info) => {
      t.inFlight++;
      t.served = true;
      info.completed.then(done, done);
      return handler(req, info);
    };
    let running: { finished: Promise<void> };
    try {
      running = serveOn(conn, t.close.signal, wrapped, onError, noop);
    } catch (err) {
      open.delete(t);
      closeQuietly(conn);
      log("warn", "could not serve a connection", { error: String(err) });
      return;
    }
    live++;
    const end = () => {
      open.delete(t);
      if (--live === 0) allEnded?.();
    };
    // Resets and broken pipes end one connection, not the server.
    running.finished.then(end, end);
  };

  const acceptLoop = async () => {
    let backoff = 0;
    let exhaustedSince = 0;
    let lastExhaustionLog = -Infinity;
    let shed = 0;
    while (!stopping) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch (err) {
        if (stopping || err instanceof Deno.errors.BadResource) break;
        if (isDescriptorExhaustion(err)) {
          if (exhaustedSince === 0) {
            exhaustedSince = Date.now();
            // one pair of lines per episode, not per flap while descriptors come and go
            if (exhaustedSince - lastExhaustionLog >= EXHAUSTION_LOG_EVERY_MS) {
              lastExhaustionLog = exhaustedSince;
              log("warn", "out of file descriptors: new connections wait until some close", {
                connections: open.size,
              });
            }
          }
        }
        // Any other failure (a connection reset while it was being accepted, a
        // passing ENOMEM or ENOBUFS) ends no connection of ours; backing off on
        // every error keeps a persistent one from spinning the loop.
        backoff = Math.min(BACKOFF_MAX_MS, backoff === 0 ? BACKOFF_START_MS : backoff * 2);
        await sleep(backoff);
        continue;
      }
      backoff = 0;
      if (exhaustedSince !== 0) {
        if (lastExhaustionLog === exhaustedSince) {
          log("info", "file descriptors available again: accepting connections", {
            waited_ms: Date.now() - exhaustedSince,
            connections: open.size,
          });
        }
        exhaustedSince = 0;
      }
      if (open.size >= limits.maxConnections) {
        if (shed++ === 0) {
          log("warn", "connection limit reached: closing new connections", {
            max_connections: limits.maxConnections,
          });
        }
        closeQuietly(conn);
        continue;
      }
      if (shed > 0) {
        log("info", "below the connection limit again", { shed });
        shed = 0;
      }
      track(conn);
    }
  };

  const finished = acceptLoop().then(async () => {
    clearInterval(sweeper);
    if (live > 0) await new Promise<void>((resolve) => (allEnded = resolve));
  });
  return {
    finished,
    stats: () => {
      let inFlight = 0;
      for (const t of open) inFlight += t.inFlight;
      return { connections: open.size, inFlight };
    },
  };
}

/**
 * Aborts a connection's signal. Deno's HTTP engine cancels the connection
 * from an abort listener, which throws `BadResource` when the connection
 * died a moment before (its resource is gone): listener errors are reported
 * as uncaught and would end the process, so that one is swallowed here.
 *
 * @param controller the connection's controller
 *
 * @example
 * ```ts
 * import { abortQuietly } from "./bounded_server.ts";
 * const ac = new AbortController();
 * ac.signal.addEventListener("abort", () => {
 *   throw new Deno.errors.BadResource("Bad resource ID");
 * });
 * abortQuietly(ac);
 * if (!ac.signal.aborted) throw new Error();
 * ```
 */
export function abortQuietly(controller: AbortController): void {
  const swallow = (e: ErrorEvent) => {
    if (e.error instanceof Deno.errors.BadResource) e.preventDefault();
  };
  globalThis.addEventListener("error", swallow);
  try {
    controller.abort();
  } finally {
    globalThis.removeEventListener("error", swallow);
  }
}

/** Is this the error of an `accept` that found no free file descriptor? */
function isDescriptorExhaustion(err: unknown): boolean {
  const msg = err instanceof Error ? err.message : String(err);
  return /os error (23|24)\b|too many open files/i.test(msg);
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/** The per-connection `onListen` (nothing to announce): one function for all connections. */
function noop(): void {}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function internalServeOnConnection(): ServeOnConnection | null {
  const deno = Deno as unknown as Record<symbol | string, unknown> & { internal?: symbol };
  const key = deno.internal;
  if (typeof key !== "symbol") return null;
  const internal = deno[key] as { serveHttpOnConnection?: unknown } | undefined;
  const fn = internal?.serveHttpOnConnection;
  return typeof fn === "function" ? fn as ServeOnConnection : null;
}

/** Plain `Deno.serve` on the same address: no header timeout, no descriptor guard. */
function fallback(
  listener: Deno.TcpListener,
  handler: ConnectionHandler,
  options: BoundedServeOptions,
): BoundedServer {
  const { hostname, port } = listener.addr;
  listener.close();
  options.log("warn", "this Deno has no per-connection HTTP API: header timeouts are off");
  const server = Deno.serve({
    hostname,
    port,
    onListen: () => {},
    ...(options.signal ? { signal: options.signal } : {}),
  }, handler);
  return { finished: server.finished, stats: () => ({ connections: 0, inFlight: 0 }) };
}
