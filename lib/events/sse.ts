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
 * @module
 */

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
  return new Headers({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "x-accel-buffering": "no",
  });
}

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
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let bytes = 0;
  let lastWriteAt = now();
  let lastEventAt = lastWriteAt;
  const closers: (() => void)[] = onClose === undefined ? [] : [onClose];
  const finish = () => {
    if (closed) return;
    closed = true;
    for (const fn of closers.splice(0)) runQuietly(fn);
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      finish(); // the client went away
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_MARK }));
  const enqueue = (chunk: Uint8Array): boolean => {
    if (closed) return false;
    if ((controller.desiredSize ?? 0) < -maxQueuedBytes) {
      stream.close(); // a slow consumer: drop it rather than buffer without bound
      return false;
    }
    try {
      controller.enqueue(chunk);
    } catch {
      stream.close(); // errored underneath (the client went away)
      return false;
    }
    bytes += chunk.length;
    lastWriteAt = now();
    return true;
  };
  const stream: SseStream = {
    body,
    write(chunk) {
      if (!enqueue(chunk)) return false;
      lastEventAt = lastWriteAt;
      return true;
    },
    keepalive() {
      return enqueue(KEEPALIVE_FRAME);
    },
    onClose(fn) {
      if (closed) runQuietly(fn);
      else closers.push(fn);
    },
    close() {
      if (closed) return;
      try {
        controller.close();
      } catch {
        // already errored or cancelled
      }
      finish();
    },
    get closed() {
      return closed;
    },
    get bytesWritten() {
      return bytes;
    },
    get lastWriteAt() {
      return lastWriteAt;
    },
    get lastEventAt() {
      return lastEventAt;
    },
  };
  return stream;
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
 * The open SSE streams of one route, kept alive and closed by one ticker
 * (a timer only while a stream is open, never keeping the process alive).
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
  readonly #streams = new Set<SseStream>();
  readonly #tickMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(options: SseStreamsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
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
    const stream = createSseStream(onClose, this.#options.maxQueuedBytes, this.#now);
    if (this.#closed) {
      stream.close();
      return stream;
    }
    this.#streams.add(stream);
    stream.onClose(() => this.#drop(stream));
    this.#ensureTimer();
    return stream;
  }

  /** Closes every stream; later ones are closed at once. */
  close(): void {
    this.#closed = true;
    this.#stopTimer();
    for (const s of [...this.#streams]) s.close();
  }

  /** One round of the ticker: idle closes and keepalives (also for tests). */
  tick(): void {
    const t = this.#now();
    const { keepaliveMs, idleCloseMs } = this.#options;
    for (const s of [...this.#streams]) {
      if (t - s.lastEventAt >= idleCloseMs) s.close();
      else if (t - s.lastWriteAt >= keepaliveMs - this.#tickMs) s.keepalive();
    }
  }

  #drop(stream: SseStream): void {
    this.#streams.delete(stream);
    if (this.#streams.size === 0) this.#stopTimer();
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
  }
}
