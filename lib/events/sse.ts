/**
 * Server-Sent Events framing and the byte stream of one connection. Frames
 * are built as text once and encoded once, so a frame shared by many
 * connections (an inline delta) costs one encoding. A connection whose
 * client does not read is closed once it lags by `maxQueuedBytes`.
 *
 * @module
 */

const encoder = new TextEncoder();

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

/** A writable SSE byte stream for one response. */
export interface SseStream {
  /** The response body. */
  readonly body: ReadableStream<Uint8Array>;
  /** Queues bytes; false when the stream is closed (or was closed for lagging). */
  write(bytes: Uint8Array): boolean;
  /** Ends the stream (idempotent). */
  close(): void;
  /** Whether the stream has ended. */
  readonly closed: boolean;
  /** Bytes queued so far. */
  readonly bytesWritten: number;
}

/**
 * Creates the byte stream of an SSE response.
 *
 * @param onClose called once when the stream ends, whoever ended it
 * @param maxQueuedBytes unread bytes after which the connection is dropped
 * @returns the stream
 *
 * @example
 * ```ts
 * import { createSseStream, KEEPALIVE_FRAME } from "./sse.ts";
 * const s = createSseStream(() => {});
 * s.write(KEEPALIVE_FRAME);
 * s.close();
 * const text = await new Response(s.body).text();
 * if (text !== ":keepalive\n\n") throw new Error(text);
 * ```
 */
export function createSseStream(
  onClose: () => void,
  maxQueuedBytes = 4 * 1024 * 1024,
): SseStream {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let bytes = 0;
  const finish = () => {
    if (closed) return;
    closed = true;
    onClose();
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      finish(); // the client went away
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }));
  const stream: SseStream = {
    body,
    write(chunk) {
      if (closed) return false;
      if ((controller.desiredSize ?? 0) < -maxQueuedBytes) {
        stream.close();
        return false;
      }
      controller.enqueue(chunk);
      bytes += chunk.length;
      return true;
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
  };
  return stream;
}
