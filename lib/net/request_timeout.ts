/**
 * The request read timeout of lib/net/bounded_server.ts: the body of a
 * request must have been read to its end by a deadline, or the request
 * fails with {@linkcode RequestTimeoutError} (408 `request_timeout`).
 *
 * Deno's HTTP engine reads the body only as the handler asks for it, and
 * says nothing when it is done, so {@linkcode watchBody} watches the
 * handler's reads instead: it gives the request a prototype whose body
 * methods (`arrayBuffer()`, `bytes()`, `text()`, `json()`, `formData()`,
 * `blob()`) and `body` stream are the originals, tracked. Every other
 * property stays the request's own, the fast path Deno takes for a body
 * that came whole with its head (one `arrayBuffer()` without a stream)
 * included; a new `Request` with a wrapped stream would cost that fast path
 * and several times the CPU per request.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import { encodeErrorEnvelope } from "../protocol/error_envelope.ts";

/**
 * A request whose head and body did not arrive within the request
 * timeout: 408 `request_timeout`, with `details.timeout_ms`.
 *
 * @example
 * ```ts
 * import { RequestTimeoutError } from "./request_timeout.ts";
 * const err = new RequestTimeoutError(30_000);
 * if (err.status !== 408 || err.code !== "request_timeout" || err.timeoutMs !== 30_000) {
 *   throw new Error(err.message);
 * }
 * ```
 */
export class RequestTimeoutError extends CfgtoolError {
  /** The timeout that ran out, ms. */
  readonly timeoutMs: number;

  /**
   * Creates the error.
   *
   * @param timeoutMs the request timeout that ran out, ms
   */
  constructor(timeoutMs: number) {
    super(
      "request_timeout",
      `the request (head and body) did not arrive within ${timeoutMs} ms`,
      { status: 408, details: { timeout_ms: timeoutMs } },
    );
    this.name = "RequestTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The answer to a request that timed out when the server was not told how
 * to render it: the JSON error envelope of docs/api.md, 408. (The service
 * passes lib/http/errors.ts's `errorResponse` instead, the one renderer of
 * its errors.)
 *
 * @param err the timeout
 * @param requestId the request id of the envelope and `x-request-id`
 * @returns the 408 response
 *
 * @example
 * ```ts
 * import { RequestTimeoutError, requestTimeoutResponse } from "./request_timeout.ts";
 * const res = requestTimeoutResponse(new RequestTimeoutError(100), "r1");
 * const body = await res.json();
 * if (res.status !== 408 || body.code !== "request_timeout" || body.request_id !== "r1") {
 *   throw new Error(JSON.stringify(body));
 * }
 * ```
 */
export function requestTimeoutResponse(
  err: RequestTimeoutError,
  requestId: string = crypto.randomUUID(),
): Response {
  const body = encodeErrorEnvelope({
    code: err.code,
    message: err.message,
    ...(err.details === undefined ? {} : { details: err.details }),
    request_id: requestId,
  });
  return new Response(body, {
    status: err.status,
    headers: { "content-type": "application/json", "x-request-id": requestId },
  });
}

/**
 * Could this request have a body to wait for? Not for `GET`, `HEAD` and
 * `CONNECT` (Deno hands them none) nor with `Content-Length: 0`. Any other
 * request may have one, even without a length (HTTP/2 sends bodies
 * without).
 *
 * @param req the request as the HTTP engine handed it over
 * @returns false when there is nothing to read
 *
 * @example
 * ```ts
 * import { mayHaveBody } from "./request_timeout.ts";
 * const post = (headers: Record<string, string>) =>
 *   new Request("http://x/", { method: "POST", headers, body: "" });
 * if (mayHaveBody(new Request("http://x/"))) throw new Error("GET");
 * if (mayHaveBody(post({ "content-length": "0" }))) throw new Error("empty");
 * if (!mayHaveBody(post({ "content-length": "12" }))) throw new Error("POST");
 * ```
 */
export function mayHaveBody(req: Request): boolean {
  const method = req.method;
  if (method === "GET" || method === "HEAD" || method === "CONNECT") return false;
  return req.headers.get("content-length") !== "0";
}

/** The body methods of `Request` that read the whole body. */
const CONSUMERS = ["arrayBuffer", "blob", "bytes", "formData", "json", "text"] as const;

const WATCH: unique symbol = Symbol("cfgtool.bodyWatch");

/** A request under watch: its prototype finds its watch here. */
interface Watched extends Request {
  [WATCH]: BodyWatch;
}

/**
 * The reads of one request's body, until it has been read to its end or
 * its deadline passes ({@linkcode watchBody}).
 */
export class BodyWatch {
  /** `performance.now()` by which the body must have been read to its end. */
  readonly deadline: number;
  #done = false;
  #error: RequestTimeoutError | undefined;
  readonly #onExpire: (err: RequestTimeoutError) => void;
  /** Rejects the pending whole-body reads (`arrayBuffer()`, …). */
  readonly #rejects = new Set<(err: unknown) => void>();
  #stream: ReadableStream<Uint8Array> | null | undefined;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  /**
   * Creates a watch; {@linkcode watchBody} attaches it to a request.
   *
   * @param deadline `performance.now()` by which the body must be read
   * @param onExpire called once, by {@linkcode BodyWatch.expire}
   */
  constructor(deadline: number, onExpire: (err: RequestTimeoutError) => void) {
    this.deadline = deadline;
    this.#onExpire = onExpire;
  }

  /** Has the body been read to its end? */
  get done(): boolean {
    return this.#done;
  }

  /** Has the deadline passed with the body unread (see {@linkcode BodyWatch.expire})? */
  get expired(): boolean {
    return this.#error !== undefined;
  }

  /**
   * Ends the watch with `err` unless the body was read: pending and later
   * reads fail with it (the handler's `arrayBuffer()` rejects, its body
   * stream errors), then the `onExpire` of the constructor runs.
   *
   * @param err the timeout
   */
  expire(err: RequestTimeoutError): void {
    if (this.#done || this.#error !== undefined) return;
    this.#error = err;
    for (const reject of this.#rejects) reject(err);
    this.#rejects.clear();
    this.#controller?.error(err);
    this.#reader?.cancel(err).catch(ignore);
    this.#onExpire(err);
  }

  /** A whole-body read: done when it resolves; rejected at once if the watch expires first. */
  track<T>(read: Promise<T>): Promise<T> {
    if (this.#error !== undefined) {
      read.catch(ignore);
      return Promise.reject(this.#error);
    }
    return new Promise<T>((resolve, reject) => {
      this.#rejects.add(reject);
      read.then((value) => {
        this.#rejects.delete(reject);
        this.#finish();
        resolve(value);
      }, (err) => {
        this.#rejects.delete(reject);
        reject(err);
      });
    });
  }

  /**
   * The body as a stream that pulls from the request's own stream (taken
   * from `source` once, locked only at the first read): done at its end.
   */
  stream(source: () => ReadableStream<Uint8Array> | null): ReadableStream<Uint8Array> | null {
    if (this.#stream !== undefined) return this.#stream;
    const body = source();
    this.#stream = body === null ? null : this.#passThrough(body);
    return this.#stream;
  }

  #passThrough(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        if (this.#error !== undefined) controller.error(this.#error);
      },
      pull: async (controller) => {
        this.#reader ??= body.getReader();
        const { done, value } = await this.#reader.read();
        if (this.#error !== undefined) return; // the stream is errored already
        if (done) {
          this.#finish();
          controller.close();
        } else controller.enqueue(value);
      },
      cancel: (reason) => (this.#reader ?? body).cancel(reason),
    }, { highWaterMark: 0 });
  }

  #finish(): void {
    if (this.#error !== undefined) return;
    this.#done = true;
    this.#rejects.clear();
  }
}

const WATCHED_PROTOTYPE: Request = watchedPrototype();

/** `Request.prototype` with tracked body reads, for {@linkcode watchBody}. */
function watchedPrototype(): Request {
  const proto = Request.prototype;
  const out = Object.create(proto) as Request;
  for (const name of CONSUMERS) {
    const original = proto[name] as (this: Request) => Promise<unknown>;
    Object.defineProperty(out, name, {
      value: function (this: Watched) {
        return this[WATCH].track(original.call(this));
      },
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  const body = Object.getOwnPropertyDescriptor(proto, "body")!.get!;
  Object.defineProperty(out, "body", {
    get(this: Watched) {
      return this[WATCH].stream(() => body.call(this) as ReadableStream<Uint8Array> | null);
    },
    enumerable: true,
    configurable: true,
  });
  return out;
}

/**
 * Watches `req`'s body reads in place (the same object, see the module
 * documentation) until the body has been read to its end; the caller
 * calls {@linkcode BodyWatch.expire} once `deadline` has passed.
 *
 * @param req the request, before the handler sees it
 * @param deadline `performance.now()` by which the body must be read
 * @param onExpire called when the watch expires
 * @returns the watch
 *
 * @example
 * ```ts
 * import { RequestTimeoutError, watchBody } from "./request_timeout.ts";
 * const whole = new Request("http://x/", { method: "POST", body: "abc" });
 * const read = watchBody(whole, performance.now() + 1000, () => {});
 * if ((await whole.text()) !== "abc" || !read.done) throw new Error("not done");
 *
 * const stuck = new Request("http://x/", {
 *   method: "POST",
 *   body: new ReadableStream({ pull() {} }), // never sends a byte
 *   duplex: "half",
 * } as RequestInit);
 * let expired = false;
 * const watch = watchBody(stuck, performance.now(), () => (expired = true));
 * const pending = stuck.arrayBuffer();
 * watch.expire(new RequestTimeoutError(0));
 * const failure = await pending.catch((err) => err);
 * if (!(failure instanceof RequestTimeoutError) || !expired) throw new Error("not expired");
 * ```
 */
export function watchBody(
  req: Request,
  deadline: number,
  onExpire: (err: RequestTimeoutError) => void,
): BodyWatch {
  const watch = new BodyWatch(deadline, onExpire);
  (req as Watched)[WATCH] = watch;
  Object.setPrototypeOf(req, WATCHED_PROTOTYPE);
  return watch;
}

/**
 * Where a request holds the watch left for the handler to honour
 * ({@linkcode deferBodyWatch}): a property of its own, not a WeakMap (whose
 * entries cost the garbage collector about 20 µs per request under load).
 */
const DEFERRED: unique symbol = Symbol("cfgtool.deferredBodyWatch");

/** A request whose watch is deferred. */
interface Deferred extends Request {
  [DEFERRED]?: BodyWatch | undefined;
}

/**
 * Watches `req`'s body like {@linkcode watchBody}, but leaves the request
 * untouched: the handler reads the body with {@linkcode readWholeBody}, or
 * passes the request through {@linkcode watchedRequest} before reading it
 * in any other way. Changing a request's prototype is what costs on the
 * hot path; a handler that reads its bodies itself spares it.
 *
 * @param req the request, before the handler sees it
 * @param deadline `performance.now()` by which the body must be read
 * @param onExpire called when the watch expires
 * @returns the watch
 *
 * @example
 * ```ts
 * import { deferBodyWatch, readWholeBody } from "./request_timeout.ts";
 * const req = new Request("http://x/", { method: "POST", body: "abc" });
 * const watch = deferBodyWatch(req, performance.now() + 1000, () => {});
 * await readWholeBody(req);
 * if (!watch.done) throw new Error("not done");
 * ```
 */
export function deferBodyWatch(
  req: Request,
  deadline: number,
  onExpire: (err: RequestTimeoutError) => void,
): BodyWatch {
  const watch = new BodyWatch(deadline, onExpire);
  (req as Deferred)[DEFERRED] = watch;
  return watch;
}

/**
 * The request with its deferred watch attached in place
 * ({@linkcode watchBody}), so that every read of its body counts; a
 * request without one is returned as it is.
 *
 * @param req the request
 * @returns the same request
 *
 * @example
 * ```ts
 * import { deferBodyWatch, watchedRequest } from "./request_timeout.ts";
 * const req = new Request("http://x/", { method: "POST", body: "abc" });
 * const watch = deferBodyWatch(req, performance.now() + 1000, () => {});
 * await watchedRequest(req).text();
 * if (!watch.done) throw new Error("not done");
 * ```
 */
export function watchedRequest(req: Request): Request {
  const watch = (req as Deferred)[DEFERRED];
  if (watch === undefined) return req;
  (req as Deferred)[DEFERRED] = undefined; // the prototype's reads count from now on
  (req as Watched)[WATCH] = watch;
  Object.setPrototypeOf(req, WATCHED_PROTOTYPE);
  return req;
}

/**
 * The whole body of a request as bytes, the read counted by the request's
 * watch (deferred or attached): it fails with the watch's
 * {@linkcode RequestTimeoutError} once the deadline has passed.
 *
 * @param req the request
 * @returns the body
 *
 * @example
 * ```ts
 * import { readWholeBody } from "./request_timeout.ts";
 * const req = new Request("http://x/", { method: "POST", body: "abc" });
 * if ((await readWholeBody(req)).byteLength !== 3) throw new Error();
 * ```
 */
export function readWholeBody(req: Request): Promise<ArrayBuffer> {
  const watch = (req as Deferred)[DEFERRED];
  return watch === undefined ? req.arrayBuffer() : watch.track(req.arrayBuffer());
}

function ignore(): void {}
