/**
 * A Server-Sent Events reader over `fetch`: {@linkcode openSse} sends the
 * request and checks the answer (status, content type, the service's error
 * envelope), {@linkcode readSse} turns the body into messages with the
 * `eventsource-parser` package (never by splitting text by hand). Web APIs
 * only, so it runs in Deno and in Node 20+.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "sse-parser";
import { CfgtoolError } from "../errors.ts";
import { parseErrorEnvelope } from "../protocol/error_envelope.ts";

/** One event of the stream. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `id:` field, when the event carried one. */
  id: string | undefined;
  /** The `data:` lines joined by `\n`. */
  data: string;
}

/** Options of {@linkcode readSse}. */
export interface ReadSseOptions {
  /** Called with each comment line's text (`:keepalive` gives `keepalive`). */
  onComment?: (comment: string) => void;
  /** Called whenever bytes arrive (liveness). */
  onBytes?: () => void;
  /** Largest buffered event, characters (default 4 MiB); a larger one ends the stream with an error. */
  maxBufferSize?: number;
}

/**
 * Reads SSE messages from a byte stream until it ends. Comments (such as
 * `:keepalive`) never become messages. Breaking out of the loop cancels the
 * stream.
 *
 * @param body the response body
 * @param options callbacks and limits
 * @returns the messages in order
 *
 * @example
 * ```ts
 * import { readSse } from "./sse.ts";
 * const body = new Blob([":keepalive\n\nevent: version\nid: web:1\ndata: {}\n\n"]).stream();
 * const got = [];
 * for await (const m of readSse(body)) got.push(m);
 * if (got.length !== 1 || got[0]!.event !== "version" || got[0]!.id !== "web:1") throw new Error();
 * ```
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: ReadSseOptions = {},
): AsyncGenerator<SseMessage, void, undefined> {
  const queue: SseMessage[] = [];
  let failure: Error | null = null;
  const parser = createParser({
    maxBufferSize: options.maxBufferSize ?? 4 * 1024 * 1024,
    onEvent(m: EventSourceMessage) {
      queue.push({ event: m.event ?? "message", id: m.id, data: m.data });
    },
    onComment(comment: string) {
      options.onComment?.(comment.trim());
    },
    onError(err: Error) {
      failure ??= err;
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        parser.feed(decoder.decode());
      } else {
        options.onBytes?.();
        parser.feed(decoder.decode(value, { stream: true }));
      }
      while (queue.length > 0) yield queue.shift()!;
      if (failure !== null) {
        throw new CfgtoolError("stream_failed", `Cannot parse the event stream: ${failure}`, {
          cause: failure,
        });
      }
      if (done) return;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Options of {@linkcode openSse}. */
export interface OpenSseOptions {
  /** Request headers (`Accept: text/event-stream` is added). */
  headers?: Record<string, string>;
  /** Ends the request and the stream. */
  signal?: AbortSignal;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * Opens an SSE stream. A non-2xx answer becomes a {@linkcode CfgtoolError}
 * with the status and the `code` of the service's error envelope (or
 * `http_<status>`); a 2xx answer that is not `text/event-stream` is a
 * `stream_failed` error; a network failure is `unreachable`.
 *
 * @param url the stream URL
 * @param options headers, signal and fetch
 * @returns the response, whose body is the stream
 *
 * @example
 * ```ts
 * import { openSse } from "./sse.ts";
 * const fake = (() => Promise.resolve(new Response("{}", { status: 403, headers: { "content-type": "application/json" } }))) as typeof fetch;
 * try {
 *   await openSse("http://h/events", { fetch: fake });
 *   throw new Error("expected a failure");
 * } catch (err) {
 *   if ((err as { status?: number }).status !== 403) throw err;
 * }
 * ```
 */
export async function openSse(url: string, options: OpenSseOptions = {}): Promise<Response> {
  const doFetch = options.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(url, {
      headers: { accept: "text/event-stream", ...options.headers },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw new CfgtoolError("unreachable", `Cannot reach ${new URL(url).origin}: ${err}`, {
      status: 503,
      cause: err,
    });
  }
  if (!res.ok) throw await httpError(res, "the event stream");
  const type = res.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("text/event-stream") || res.body === null) {
    await res.body?.cancel();
    throw new CfgtoolError(
      "stream_failed",
      `The event stream answered with content type "${type}", not text/event-stream`,
      { status: 502 },
    );
  }
  return res;
}

/**
 * Turns a non-2xx response into a {@linkcode CfgtoolError}, reading the
 * service's error envelope (`{code, message, details}`) when there is one.
 * The body is always consumed.
 *
 * @param res the response
 * @param what what was requested, for the message
 * @returns the error
 *
 * @example
 * ```ts
 * import { httpError } from "./sse.ts";
 * const err = await httpError(new Response(null, { status: 429 }), "the event stream");
 * if (err.code !== "http_429" || err.status !== 429) throw new Error(err.code);
 * ```
 */
export async function httpError(res: Response, what: string): Promise<CfgtoolError> {
  let code = `http_${res.status}`;
  let message = `${what} answered ${res.status}`;
  let details: Record<string, unknown> | undefined;
  const text = await res.text().catch(() => "");
  if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") {
    const env = parseErrorEnvelope(text);
    if (env.code !== undefined) code = env.code;
    if (env.message !== undefined) message = `${what} answered ${res.status}: ${env.message}`;
    details = env.details;
  }
  return new CfgtoolError(code, message, {
    status: res.status,
    ...(details ? { details } : {}),
  });
}
