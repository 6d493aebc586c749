/**
 * An HTTP server that owns its accept loop, so that a hostile or careless
 * client cannot take it down: a connection that sends no complete request
 * head within `headerTimeoutMs` is closed, a keep-alive connection idle for
 * `keepAliveTimeoutMs` is closed, a request whose body has not arrived
 * within `requestTimeoutMs` is answered 408 and its connection closed,
 * connections over `maxConnections` are shed (accepted and closed at once),
 * and running out of file descriptors only pauses accepting (the ones it
 * has keep being served; it accepts again once descriptors free up).
 * `Deno.serve` has none of these: its accept loop ends the server on "Too
 * many open files" and it never times out a request head or body.
 *
 * Each accepted connection is handed to Deno's own HTTP engine (hyper) with
 * `serveHttpOnConnection`, the per-connection form of `Deno.serve` that Deno
 * exposes internally; where it is missing, {@linkcode serveBounded} falls
 * back to `Deno.serve` and says so in the log.
 *
 * The listener may be a TLS listener (`Deno.listenTls`): the HTTP engine
 * then speaks HTTPS on each connection (HTTP/2 when the listener offers
 * `h2` by ALPN and the client takes it). The header timeout, counted from
 * the accept, covers the TLS handshake too: a connection whose handshake is
 * not done by then is closed and stops counting toward `maxConnections`.
 * Deno 2.9.6 limits what that close achieves: its TLS layer runs the
 * handshake in a task of its own that holds the socket until the client
 * sends something or goes away, so the descriptor of a client that stays
 * silent is freed only then, not at the timeout (the fd limit's reserve,
 * and the accept loop's pause on exhaustion, bound the damage).
 * {@linkcode BoundedServer.replaceListener} swaps the
 * listener while the server runs (new connections arrive on the new one,
 * the open ones stay): lib/server/tls_reload.ts uses it to take a new
 * certificate.
 *
 * The request timeout (lib/net/request_timeout.ts) covers what a client
 * sends, never what the server writes: a request must arrive whole, head
 * and body, within `requestTimeoutMs`, counted from the accept for the
 * first request of a connection (its head must also come within
 * `headerTimeoutMs`, or the request timeout when shorter), and from the end
 * of its head for every later one. A body still unread at the deadline gets
 * a 408 when the handler has not answered yet, and its connection is closed
 * once that is sent; when the answer has started (an event stream that
 * never read its body) the connection is closed at once. A `GET`, or a body
 * read to its end in time, is never cut: event streams run as long as they
 * like. Deno's HTTP engine reads later request heads of a keep-alive
 * connection itself and shows nothing of them until they are complete (the
 * socket is its own, not a `Deno.Conn` this module could wrap), so the
 * start of a later head cannot be seen: such a head is bounded by the
 * keep-alive timeout instead, which runs from the end of the previous
 * answer until the head is complete.
 *
 * @module
 */
import { DEFAULT_SETTINGS } from "../settings.ts";
import type { Logger } from "../log.ts";
import {
  type BodyWatch,
  deferBodyWatch,
  mayHaveBody,
  RequestTimeoutError,
  requestTimeoutResponse,
  watchBody,
} from "./request_timeout.ts";

/** Limits of a {@linkcode serveBounded} server. */
export interface ConnectionLimits {
  /** Close a connection that sends no complete request head within this long, ms. */
  headerTimeoutMs: number;
  /** Close a keep-alive connection with no request in flight after this long, ms. */
  keepAliveTimeoutMs: number;
  /**
   * A request's head and body must arrive within this long, ms (see the
   * module documentation); default {@linkcode DEFAULT_SETTINGS}' 60 s.
   */
  requestTimeoutMs?: number;
  /** Open connections at most; more are closed as they arrive. */
  maxConnections: number;
}

/** The request handler, as `Deno.serve` takes it. */
export type ConnectionHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** A listener {@linkcode serveBounded} serves: plain TCP, or TLS. */
export type HttpListener = Deno.TcpListener | Deno.TlsListener;

/** A running {@linkcode serveBounded} server. */
export interface BoundedServer {
  /** Resolves once the listener is closed and every connection has ended. */
  finished: Promise<void>;
  /** Open connections, and requests in flight on them (event streams among them). */
  stats(): { connections: number; inFlight: number };
  /**
   * Serves new connections from `next` and closes the current listener;
   * connections already accepted keep being served, under the same limits.
   * Resolves with true once the old listener's socket is closed (Deno
   * drops it when its pending accept ends, a moment after `close()`), or
   * with false (closing `next`) when the server is stopping or cannot swap
   * listeners (the `Deno.serve` fallback).
   */
  replaceListener(next: HttpListener): Promise<boolean>;
}

/** Options of {@linkcode serveBounded}. */
export interface BoundedServeOptions {
  /** Limits on connections. */
  limits: ConnectionLimits;
  /** Where accept problems are logged. */
  log: Logger;
  /** Aborting stops accepting and closes every connection once its requests end. */
  signal?: AbortSignal;
  /**
   * The certificate and key of a TLS listener, for the `Deno.serve`
   * fallback only (which binds its own listener).
   */
  tls?: { cert: string; key: string };
  /**
   * The 408 answer to a request that did not arrive within
   * `requestTimeoutMs` (default: the JSON error envelope,
   * {@linkcode requestTimeoutResponse}).
   */
  requestTimeoutResponse?: (err: RequestTimeoutError, req: Request) => Response;
  /**
   * The handler reads bodies through {@linkcode readWholeBody}, and passes
   * any other request through {@linkcode watchedRequest} before its body is
   * read in some other way (default false: every request with a body is
   * watched in place before the handler sees it). The watch then costs
   * nothing on the requests the handler reads itself (the data plane of
   * lib/http/data_plane.ts); the deadline and the 408 are the same.
   */
  handlerWatchesBodies?: boolean;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: ConnectionHandler,
  onError: (err: unknown) => Response,
  onListen: () => void,
) => { finished: Promise<void> };

/**
 * One request in flight on a connection, for the send deadline: an answer
 * other than an event stream that the client does not take must not hold
 * the connection. Nothing is looked at while an exchange is younger than
 * the request timeout (the hot path adds no promise); once it is older,
 * the sweeper looks at its answer once: an event stream is left alone,
 * anything else gets one more request timeout to be taken.
 */
interface Exchange {
  started: number;
  answer: Response | Promise<Response> | undefined;
  /** performance.now() by which it must have ended, once inspected. */
  due?: number;
  /** Its answer is an event stream (or failed): never due. */
  exempt?: boolean;
  inspected?: boolean;
}

interface Tracked {
  close: AbortController;
  inFlight: number;
  /** Requests it has begun. */
  started: number;
  /** performance.now() of the accept. */
  accepted: number;
  /** The client's address. */
  remote: Deno.NetAddr;
  /** performance.now() of the last request start or end (or of the accept). */
  since: number;
  /** Has it sent a complete request head yet? */
  served: boolean;
  /** Has the sweeper (or the handshake limit) closed it already? */
  closing: boolean;
  /** The bodies of its requests not yet read to their end, with their deadlines. */
  reads: Set<BodyWatch>;
  /** Its requests not yet answered in full (see {@linkcode Exchange}). */
  exchanges: Set<Exchange>;
  /** Closes it after a 408 (see {@linkcode FLUSH_GRACE_MS}). */
  closeTimer?: ReturnType<typeof setTimeout>;
}

/** Delays between accept attempts while descriptors are exhausted, ms. */
const BACKOFF_START_MS = 20;
const BACKOFF_MAX_MS = 1000;
/** At most one "out of file descriptors" line (and its "available again") this often, ms. */
const EXHAUSTION_LOG_EVERY_MS = 10_000;
/** A connection answered 408 is closed by then at the latest, even if the answer is not sent, ms. */
const TIMEOUT_CLOSE_GRACE_MS = 1000;
/**
 * …and this long after the answer is handed over. `info.completed` says
 * the engine has the answer, not that it wrote it: closing at once loses it.
 * Without the close, the engine would go on reading (and dropping) the rest
 * of the body at the client's pace.
 */
const FLUSH_GRACE_MS = 50;

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
  listener: HttpListener,
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
  /** The listener new connections come from; a replaced one's accept loop ends. */
  let current = listener;
  /** The accept loop of each listener, until it ends. */
  const loops = new Map<HttpListener, Promise<void>>();
  let acceptEnded!: () => void;
  const noMoreAccepts = new Promise<void>((resolve) => (acceptEnded = resolve));

  const onError = (err: unknown): Response => {
    log("error", "unhandled error", { error: err instanceof Error ? err.message : String(err) });
    return new Response("internal server error", { status: 500 });
  };

  const requestTimeoutMs = limits.requestTimeoutMs ?? DEFAULT_SETTINGS.requestTimeoutMs;
  // The first head is part of the first request: the request timeout bounds it too.
  const headTimeoutMs = Math.min(limits.headerTimeoutMs, requestTimeoutMs);
  const deferWatch = options.handlerWatchesBodies === true;
  const renderTimeout = options.requestTimeoutResponse ??
    ((err: RequestTimeoutError) => requestTimeoutResponse(err));

  const sweepEvery = Math.max(
    50,
    Math.min(headTimeoutMs, limits.keepAliveTimeoutMs, requestTimeoutMs) / 4,
  );
  const sweeper = setInterval(() => {
    const now = performance.now();
    for (const t of open) {
      if (t.reads.size > 0) expireReads(t.reads, now, requestTimeoutMs);
      if (t.exchanges.size > 0 && !t.closing && overdue(t.exchanges, now, requestTimeoutMs)) {
        log("info", "answer not taken by the client in time: connection closed", {
          remote: t.remote.hostname,
        });
        closeNow(t);
        continue;
      }
      if (t.inFlight > 0) continue;
      const limit = t.served ? limits.keepAliveTimeoutMs : headTimeoutMs;
      // It stays in `open` (counted toward maxConnections) until its HTTP engine has ended.
      if (!t.closing && now - t.since >= limit) {
        t.closing = true;
        abortQuietly(t.close);
      }
    }
  }, sweepEvery);
  Deno.unrefTimer(sweeper);

  const stop = () => {
    stopping = true;
    closeListener(current);
    for (const t of open) abortQuietly(t.close);
  };
  if (signal?.aborted) stop();
  else signal?.addEventListener("abort", stop, { once: true });

  const track = (conn: Deno.TcpConn | Deno.TlsConn) => {
    const now = performance.now();
    const t: Tracked = {
      close: new AbortController(),
      inFlight: 0,
      exchanges: new Set(),
      started: 0,
      accepted: now,
      remote: conn.remoteAddr,
      since: now,
      served: false,
      closing: false,
      reads: new Set(),
    };
    open.add(t);
    if (isTls(conn)) {
      // hyper would wait forever for a handshake that never comes (no header timeout runs
      // until it ends): the handshake gets the header time limit, counted from the accept.
      t.closing = true; // the sweeper leaves it to the handshake limit
      live++;
      handshakeWithin(conn, headTimeoutMs, t.close.signal).then((ok) => {
        if (ok) {
          t.closing = false;
          serveTracked(conn, t); // counts itself in `live` before this one leaves
        } else {
          closeQuietly(conn);
          open.delete(t);
          log("debug", "tls handshake not finished in time: connection closed", {
            remote: `${conn.remoteAddr.hostname}:${conn.remoteAddr.port}`,
          });
        }
        if (--live === 0) allEnded?.();
      });
      return;
    }
    serveTracked(conn, t);
  };

  /** Closes a connection now (its HTTP engine ends; it leaves `open` when it has). */
  const closeNow = (t: Tracked) => {
    if (t.closing) return;
    t.closing = true;
    abortQuietly(t.close);
  };

  /** Closes `t` once the answer of `info`'s request is written (a 408), or in a second. */
  const closeWhenSent = (t: Tracked, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
    const closeIn = (ms: number) => {
      clearTimeout(t.closeTimer);
      t.closeTimer = setTimeout(() => closeNow(t), ms);
    };
    closeIn(TIMEOUT_CLOSE_GRACE_MS);
    info.completed.then(() => closeIn(FLUSH_GRACE_MS), () => closeNow(t));
  };

  /** The 408 for a request the handler has not answered by its deadline; closes `t` once sent. */
  const timeoutAnswer = (
    t: Tracked,
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    names: RequestNames,
    err: RequestTimeoutError,
  ): Response => {
    const res = renderTimeout(err, req);
    const id = res.headers.get("x-request-id");
    log("info", "request not received in time: answered 408, connection closed", {
      ...timeoutFields(names, err),
      ...(id !== null ? { request_id: id } : {}),
    });
    closeWhenSent(t, info);
    return res;
  };

  /**
   * The handler's answer to a request with a body, or a 408 when the body
   * is not read to its end by `deadline` and the handler has not answered
   * yet (see the module documentation). A body the handler left unread
   * when it answered keeps its deadline: Deno's engine reads (and drops)
   * it before the next request, at the client's pace, so the connection
   * is closed at the deadline unless a later request has begun by then.
   */
  const answerInTime = (
    t: Tracked,
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    deadline: number,
  ): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      let answered = false;
      let timedOut = false;
      /** `t.started` when the answer was sent, if it was. */
      let startedWhenSent: number | undefined;
      const names: RequestNames = { remote: t.remote, method: req.method, url: req.url };
      const watch = (deferWatch ? deferBodyWatch : watchBody)(req, deadline, (err) => {
        if (!answered) {
          timedOut = true;
          resolve(timeoutAnswer(t, req, info, names, err));
        } else if (
          startedWhenSent === undefined || (startedWhenSent === t.started && t.inFlight === 0)
        ) {
          const fields = timeoutFields(names, err);
          log("info", "request body not received in time: connection closed", fields);
          closeNow(t);
        }
      });
      t.reads.add(watch);
      const sent = () => {
        if (watch.done) t.reads.delete(watch);
        else startedWhenSent = t.started;
      };
      info.completed.then(sent, sent);
      let result: Response | Promise<Response>;
      try {
        result = handler(req, info);
      } catch (err) {
        reject(err);
        return;
      }
      Promise.resolve(result).then((res) => {
        if (timedOut) {
          res.body?.cancel().catch(noop); // nobody will read it
          return;
        }
        answered = true;
        resolve(res);
      }, reject); // after a 408, a no-op
    });

  const serveTracked = (conn: Deno.TcpConn | Deno.TlsConn, t: Tracked) => {
    const done = () => {
      t.inFlight--;
      t.since = performance.now();
    };
    const wrapped: ConnectionHandler = (req, info) => {
      // the first request's time runs from the accept; a later head's start cannot be seen
      const now = performance.now();
      const started = t.served ? now : t.accepted;
      t.inFlight++;
      t.started++;
      t.served = true;
      const exchange: Exchange = { started: now, answer: undefined };
      t.exchanges.add(exchange);
      const ended = () => {
        t.exchanges.delete(exchange);
        done();
      };
      info.completed.then(ended, ended);
      exchange.answer = mayHaveBody(req)
        ? answerInTime(t, req, info, started + requestTimeoutMs)
        : handler(req, info);
      return exchange.answer;
    };
    let running: { finished: Promise<void> };
    try {
      running = serveOn(conn, t.close.signal, wrapped, onError, noop);
    } catch (err) {
      open.delete(t);
      closeQuietly(conn);
      log("warn", "could not serve a connection", { error: String(err) });
      if (live === 0) allEnded?.();
      return;
    }
    live++;
    const end = () => {
      clearTimeout(t.closeTimer);
      open.delete(t);
      if (--live === 0) allEnded?.();
    };
    // Resets, broken pipes and failed TLS handshakes (a client that does not
    // trust the certificate, plain HTTP sent to the TLS port) end one
    // connection, not the server.
    running.finished.then(end, (err) => {
      log("debug", "connection ended with an error", {
        remote: `${conn.remoteAddr.hostname}:${conn.remoteAddr.port}`,
        error: err instanceof Error ? err.message : String(err),
      });
      end();
    });
  };

  const acceptLoop = async (from: HttpListener) => {
    let backoff = 0;
    let exhaustedSince = 0;
    let lastExhaustionLog = -Infinity;
    let shed = 0;
    while (!stopping && from === current) {
      let conn: Deno.TcpConn | Deno.TlsConn;
      try {
        conn = await from.accept();
      } catch (err) {
        if (stopping || from !== current || err instanceof Deno.errors.BadResource) break;
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
    // A replaced listener's loop just ends; the server's own listener ending ends the server.
    if (from === current) acceptEnded();
  };
  const run = (from: HttpListener) => {
    const loop = acceptLoop(from).finally(() => loops.delete(from));
    loops.set(from, loop);
  };
  run(listener);

  const finished = noMoreAccepts.then(async () => {
    stopping = true;
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
    replaceListener: async (next) => {
      if (stopping) {
        closeListener(next);
        return false;
      }
      const previous = current;
      current = next;
      run(next);
      // Its pending accept fails with BadResource and its loop ends (it is no longer current);
      // the socket stays in the kernel's SO_REUSEPORT group until then.
      closeListener(previous);
      await loops.get(previous);
      return true;
    },
  };
}

function isTls(conn: Deno.TcpConn | Deno.TlsConn): conn is Deno.TlsConn {
  return typeof (conn as Deno.TlsConn).handshake === "function";
}

/**
 * Runs `conn`'s TLS handshake; resolves true once it is done, false when it
 * fails, takes longer than `ms` or `signal` aborts (the caller closes it).
 */
async function handshakeWithin(
  conn: Deno.TlsConn,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const limit = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([conn.handshake().then(() => true, () => false), limit]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort!);
  }
}

/** Expires the body reads whose deadline has passed; forgets those read to their end. */
function expireReads(reads: Set<BodyWatch>, now: number, timeoutMs: number): void {
  for (const watch of reads) {
    if (watch.done) {
      reads.delete(watch);
    } else if (now >= watch.deadline) {
      reads.delete(watch);
      watch.expire(new RequestTimeoutError(timeoutMs));
    }
  }
}

/** A request, as its timeout is logged; read when it begins (Deno forgets it once answered). */
interface RequestNames {
  remote: Deno.NetAddr;
  method: string;
  url: string;
}

/** The log fields of a request that timed out: no query string (it may hold a token). */
function timeoutFields(names: RequestNames, err: RequestTimeoutError): Record<string, unknown> {
  return {
    remote: `${names.remote.hostname}:${names.remote.port}`,
    method: names.method,
    path: new URL(names.url).pathname,
    timeout_ms: err.timeoutMs,
  };
}

function closeListener(listener: HttpListener): void {
  try {
    listener.close();
  } catch {
    // already closed
  }
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

/**
 * Plain `Deno.serve` on the same address (with the same certificate for a
 * TLS listener): no header timeout, no descriptor guard, no listener swap.
 */
function fallback(
  listener: HttpListener,
  handler: ConnectionHandler,
  options: BoundedServeOptions,
): BoundedServer {
  const { hostname, port } = listener.addr;
  listener.close();
  options.log(
    "warn",
    "this Deno has no per-connection HTTP API: header and request timeouts are off",
  );
  const server = Deno.serve({
    hostname,
    port,
    onListen: () => {},
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
  }, handler);
  return {
    finished: server.finished,
    stats: () => ({ connections: 0, inFlight: 0 }),
    replaceListener: (next) => {
      closeListener(next);
      return Promise.resolve(false);
    },
  };
}

/**
 * Whether an exchange of the connection is past its send deadline; starts
 * the inspection of exchanges older than the request timeout (see
 * {@linkcode Exchange}).
 */
function overdue(exchanges: ReadonlySet<Exchange>, now: number, timeoutMs: number): boolean {
  for (const x of exchanges) {
    if (x.exempt) continue;
    if (x.due !== undefined) {
      if (now >= x.due) return true;
      continue;
    }
    if (x.inspected || now - x.started < timeoutMs) continue;
    x.inspected = true;
    Promise.resolve(x.answer).then((res) => {
      if (res?.headers.get("content-type")?.startsWith("text/event-stream")) x.exempt = true;
      else x.due = performance.now() + timeoutMs;
    }, () => (x.exempt = true));
  }
  return false;
}
