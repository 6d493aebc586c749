/**
 * The one Server-Sent Events stream lifecycle of the service, used by the
 * event stream (lib/events/hub.ts) and the OFREP event stream
 * (lib/http/ofrep_events.ts):
 *
 * - framing: {@linkcode sseFrame} and the {@linkcode KEEPALIVE_FRAME}
 *   comment, built as text and encoded once, so a frame shared by many
 *   connections (an inline delta) costs one encoding;
 * - opening: {@linkcode sseHeaders} for the response;
 * - writing: {@linkcode createSseStream}, the byte stream of one response;
 *   a client that does not read is dropped once it lags by
 *   `maxQueuedBytes` (4 MiB), so a slow consumer costs bounded memory;
 * - keeping alive and closing: {@linkcode SseStreams}, one ticker for every
 *   stream of a route: a `:keepalive` comment once a stream wrote nothing
 *   for `keepaliveMs`, a close once it sent no event for `idleCloseMs`,
 *   and every stream closed when the shutdown signal aborts. A stream also
 *   ends when its client goes away.
 *
 * What an idle stream costs here is a handful of fields: no timer, no
 * function objects of its own, no copy of any frame (frames are shared
 * `Uint8Array`s that the runtime writes and lets go). Most of the memory of
 * an open subscriber is the runtime's: `Deno.serve` holding a streaming
 * response (bench/stream_memory.ts measures both).
 *
 * @module
 */

import { nextTurn } from "./next_turn.ts";

const encoder = new TextEncoder();

/** Unread bytes after which a stream is dropped (its client does not read). */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/** Bytes the stream queues before it reports backpressure to the runtime. */
const HIGH_WATER_MARK = 64 * 1024;

/**
 * One SSE event frame: `event:`, `id:` and one `data:` line (the data is
 * JSON, which never contains a raw newline), then a blank line.
 *
 * @param event the event name
 * @param id the event id
 * @param data the data (a single line)
 * @returns the encoded frame
 *
 * @example
 * ```ts
 * import { sseFrame } from "./sse.ts";
 * const text = new TextDecoder().decode(sseFrame("version", "web:1", "{}"));
 * if (text !== "event: version\nid: web:1\ndata: {}\n\n") throw new Error(text);
 * ```
 */
export function sseFrame(event: string, id: string, data: string): Uint8Array {
  if (/[\r\n]/.test(data) || /[\r\n]/.test(id)) {
    throw new TypeError("Cannot frame an SSE event: id and data must be single lines");
  }
  return encoder.encode(`event: ${event}\nid: ${id}\ndata: ${data}\n\n`);
}

/** The keepalive comment frame. */
export const KEEPALIVE_FRAME: Uint8Array = encoder.encode(":keepalive\n\n");

/**
 * The headers of an SSE response: `text/event-stream` in UTF-8, never
 * cached, not buffered by proxies that honour `X-Accel-Buffering`.
 *
 * @returns fresh headers (callers may add CORS headers)
 *
 * @example
 * ```ts
 * import { sseHeaders } from "./sse.ts";
 * const h = sseHeaders();
 * if (h.get("content-type") !== "text/event-stream; charset=utf-8") throw new Error();
 * if (h.get("cache-control") !== "no-store") throw new Error();
 * ```
 */
export function sseHeaders(): Headers {
  return new Headers(SSE_HEADERS);
}

/**
 * The same headers as a shared, frozen record, for a response that adds
 * none of its own (no `Headers` object built per response).
 *
 * @example
 * ```ts
 * import { SSE_HEADERS } from "./sse.ts";
 * const res = new Response(null, { headers: SSE_HEADERS });
 * if (res.headers.get("x-accel-buffering") !== "no") throw new Error();
 * ```
 */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-accel-buffering": "no",
});

/** A writable SSE byte stream for one response. */
export interface SseStream {
  /** The response body. */
  readonly body: ReadableStream<Uint8Array>;
  /**
   * Queues the bytes of an event (or any frame that is not a keepalive);
   * false when the stream is closed, or was closed now for lagging.
   */
  write(bytes: Uint8Array): boolean;
  /** Queues a `:keepalive` comment (does not count as an event). */
  keepalive(): boolean;
  /**
   * Runs `fn` once when the stream ends, whoever ends it; at once when it
   * has already ended.
   */
  onClose(fn: () => void): void;
  /** Ends the stream (idempotent). */
  close(): void;
  /** Whether the stream has ended. */
  readonly closed: boolean;
  /** Bytes queued so far. */
  readonly bytesWritten: number;
  /** When the last bytes were queued (keepalives included), ms. */
  readonly lastWriteAt: number;
  /** When the last event was queued (or the stream opened), ms. */
  readonly lastEventAt: number;
}

/** A close hook, or several (most streams have one or two). */
type Hooks = (() => void) | (() => void)[] | undefined;

/** The queuing strategy of every stream: one shared object (it holds no state of its own). */
const STRATEGY = new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_MARK });

/**
 * One SSE byte stream. A class rather than a closure per method: an open
 * subscriber costs its fields, not a dozen function objects, which counts
 * when a process holds tens of thousands of them. It is its own
 * `ReadableStream` source (`start`, `cancel`), so the body needs no
 * separate source object either.
 */
class ByteStream implements SseStream {
  readonly body: ReadableStream<Uint8Array>;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #closed = false;
  #bytes = 0;
  #lastWriteAt: number;
  #lastEventAt: number;
  #hooks: Hooks;
  readonly #maxQueuedBytes: number;
  readonly #now: () => number;
  /** The {@linkcode SseStreams} holding the stream, told first when it ends. */
  readonly #owner: ((s: ByteStream) => void) | undefined;

  constructor(
    onClose: (() => void) | undefined,
    maxQueuedBytes: number,
    now: () => number,
    owner?: (s: ByteStream) => void,
  ) {
    this.#hooks = onClose;
    this.#maxQueuedBytes = maxQueuedBytes;
    this.#now = now;
    this.#owner = owner;
    this.#lastWriteAt = this.#lastEventAt = now();
    this.body = new ReadableStream<Uint8Array>(this, STRATEGY);
  }

  /** `ReadableStream` source: keeps the controller. */
  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#controller = controller;
  }

  /** `ReadableStream` source: the client went away. */
  cancel(): void {
    this.#finish();
  }

  write(chunk: Uint8Array): boolean {
    if (!this.#enqueue(chunk)) return false;
    this.#lastEventAt = this.#lastWriteAt;
    return true;
  }

  keepalive(): boolean {
    return this.#enqueue(KEEPALIVE_FRAME);
  }

  onClose(fn: () => void): void {
    if (this.#closed) runQuietly(fn);
    else if (this.#hooks === undefined) this.#hooks = fn;
    else if (typeof this.#hooks === "function") this.#hooks = [this.#hooks, fn];
    else this.#hooks.push(fn);
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.#controller!.close();
    } catch {
      // already errored or cancelled
    }
    this.#finish();
  }

  get closed(): boolean {
    return this.#closed;
  }

  get bytesWritten(): number {
    return this.#bytes;
  }

  get lastWriteAt(): number {
    return this.#lastWriteAt;
  }

  get lastEventAt(): number {
    return this.#lastEventAt;
  }

  #enqueue(chunk: Uint8Array): boolean {
    if (this.#closed) return false;
    const controller = this.#controller!;
    if ((controller.desiredSize ?? 0) < -this.#maxQueuedBytes) {
      this.close(); // a slow consumer: drop it rather than buffer without bound
      return false;
    }
    try {
      controller.enqueue(chunk);
    } catch {
      this.close(); // errored underneath (the client went away)
      return false;
    }
    this.#bytes += chunk.length;
    this.#lastWriteAt = this.#now();
    return true;
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#owner?.(this);
    } catch {
      // the owner's bookkeeping failed; the hooks still run
    }
    const hooks = this.#hooks;
    this.#hooks = undefined;
    if (typeof hooks === "function") runQuietly(hooks);
    else if (hooks !== undefined) { for (const fn of hooks) runQuietly(fn); }
  }
}

/**
 * Creates the byte stream of an SSE response.
 *
 * @param onClose called once when the stream ends, whoever ended it
 * @param maxQueuedBytes unread bytes after which the connection is dropped
 * @param now clock for `lastWriteAt` / `lastEventAt`, ms
 * @returns the stream
 *
 * @example
 * ```ts
 * import { createSseStream } from "./sse.ts";
 * const s = createSseStream();
 * s.keepalive();
 * s.close();
 * const text = await new Response(s.body).text();
 * if (text !== ":keepalive\n\n") throw new Error(text);
 * ```
 */
export function createSseStream(
  onClose?: () => void,
  maxQueuedBytes: number = MAX_QUEUED_BYTES,
  now: () => number = Date.now,
): SseStream {
  return new ByteStream(onClose, maxQueuedBytes, now);
}

/** One close hook failing must not keep the others from running. */
function runQuietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // a cleanup failed; the stream is closed regardless
  }
}

/** Options of {@linkcode SseStreams}. */
export interface SseStreamsOptions {
  /** A keepalive comment is sent once a stream wrote nothing for this long, ms. */
  keepaliveMs: number;
  /** A stream that sent no event for this long is closed, ms. */
  idleCloseMs: number;
  /** Aborting it closes every stream; later streams are closed at once. */
  shutdown: AbortSignal;
  /** Clock, ms (default `Date.now`). */
  now?: () => number;
  /** Unread bytes after which a stream is dropped (default {@linkcode MAX_QUEUED_BYTES}). */
  maxQueuedBytes?: number;
}

/**
 * Streams one ticker round handles before it lets other work run; the rest
 * of a burst (every stream of a route falling due in the same round, as
 * after a push that reached them all) follows in later turns of the event
 * loop, so a keepalive burst over tens of thousands of streams never holds
 * the loop for long.
 */
export const TICK_SLICE = 2000;

/**
 * The open SSE streams of one route, kept alive and closed by one ticker:
 * a single interval for every stream (never a timer per stream, only while
 * a stream is open, never keeping the process alive), which sweeps the
 * streams in {@linkcode TICK_SLICE} slices.
 *
 * @example
 * ```ts
 * import { SseStreams } from "./sse.ts";
 * const ac = new AbortController();
 * const streams = new SseStreams({ keepaliveMs: 25_000, idleCloseMs: 60_000, shutdown: ac.signal });
 * const s = streams.open();
 * const open = streams.size;
 * ac.abort(); // shutdown closes every stream
 * if (open !== 1 || !s.closed || streams.size !== 0) throw new Error();
 * ```
 */
export class SseStreams {
  readonly #options: SseStreamsOptions;
  readonly #now: () => number;
  readonly #streams = new Set<ByteStream>();
  readonly #tickMs: number;
  readonly #maxQueuedBytes: number;
  /** Every stream's owner hook: one function for all of them. */
  readonly #drop = (stream: ByteStream) => {
    this.#streams.delete(stream);
    if (this.#streams.size === 0) this.#stopTimer();
  };
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The rest of a sweep that did not fit in one slice, or null. */
  #sweep: Iterator<ByteStream> | null = null;
  #closed = false;

  /**
   * Starts following the route's streams (its ticker runs while one is open).
   *
   * @param options the intervals, the shutdown signal and the clock
   */
  constructor(options: SseStreamsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
    const { keepaliveMs, idleCloseMs } = options;
    this.#tickMs = Math.max(5, Math.min(1000, Math.floor(Math.min(keepaliveMs, idleCloseMs) / 4)));
    if (options.shutdown.aborted) this.close();
    else options.shutdown.addEventListener("abort", () => this.close(), { once: true });
  }

  /** Number of open streams. */
  get size(): number {
    return this.#streams.size;
  }

  /**
   * Opens a stream (closed at once after shutdown).
   *
   * @param onClose called once when the stream ends
   * @returns the stream
   */
  open(onClose?: () => void): SseStream {
    if (this.#closed) {
      const stream = new ByteStream(onClose, this.#maxQueuedBytes, this.#now);
      stream.close();
      return stream;
    }
    const stream = new ByteStream(onClose, this.#maxQueuedBytes, this.#now, this.#drop);
    this.#streams.add(stream);
    this.#ensureTimer();
    return stream;
  }

  /** Closes every stream; later ones are closed at once. */
  close(): void {
    this.#closed = true;
    this.#stopTimer();
    for (const s of this.#streams) s.close(); // each close deletes itself: Set iteration allows it
  }

  /**
   * One round of the ticker: idle closes and keepalives (also for tests).
   * A round goes over every stream; past {@linkcode TICK_SLICE} streams the
   * rest follows in later turns of the event loop.
   */
  tick(): void {
    if (this.#sweep !== null) return; // the last round is still going
    this.#sweep = this.#streams.values();
    this.#continueSweep();
  }

  #continueSweep(): void {
    const sweep = this.#sweep;
    if (sweep === null) return;
    const t = this.#now();
    const { keepaliveMs, idleCloseMs } = this.#options;
    const due = keepaliveMs - this.#tickMs;
    for (let n = 0; n < TICK_SLICE; n++) {
      const next = sweep.next();
      if (next.done) {
        this.#sweep = null;
        return;
      }
      const s = next.value;
      if (t - s.lastEventAt >= idleCloseMs) s.close();
      else if (t - s.lastWriteAt >= due) s.keepalive();
    }
    // Let I/O (and the other work of the process) run before the next slice.
    void nextTurn().then(() => {
      if (this.#sweep === sweep) this.#continueSweep();
    });
  }

  #ensureTimer(): void {
    if (this.#timer !== undefined || this.#closed) return;
    const timer = setInterval(() => this.tick(), this.#tickMs);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sweep = null;
  }
}
