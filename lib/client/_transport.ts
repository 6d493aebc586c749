/**
 * The HTTP transport of {@linkcode ServiceClient}: builds `/api/v1` URLs,
 * sends the bearer token, applies the timeout, refuses redirects and turns a
 * non-2xx answer's error envelope into the matching {@linkcode CfgtoolError}
 * (remembering its `request_id`); a failed connection is `unreachable`,
 * with the reason in plain words (connection refused, name not resolved,
 * TLS, timeout) and in `details.reason`. A 401 names the server and the
 * credential's public prefix, never the secret.
 *
 * @module
 */
import {
  CfgtoolError,
  ConflictError,
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  PreconditionFailedError,
  ProblemsError,
  RateLimitError,
  UnauthorizedError,
} from "../errors.ts";
import { ERROR_CODES, genericCodeOf } from "../protocol/error_codes.ts";
import { describeNetworkFailure } from "../network_errors.ts";
import { parseErrorEnvelope } from "../protocol/error_envelope.ts";
import { unauthorizedError } from "./_credential.ts";
import { readJson, toProblem } from "./_response.ts";

/** What a request sends besides its method and path. */
export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

/** Where and how to send: the normalised server URL, the credential, limits. */
export interface TransportOptions {
  /** Base URL, without a trailing slash or `/api/v1`. */
  server: string;
  /** Bearer credential. */
  token: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs: number;
  /** The fetch to use. */
  fetch: typeof fetch;
}

const requestIds = new WeakMap<Error, string>();

/** The `request_id` recorded for an error thrown by a {@linkcode Transport}. */
export function recordedRequestId(err: unknown): string | undefined {
  return err instanceof Error ? requestIds.get(err) : undefined;
}

/** Sends requests to one service with one credential. */
export class Transport {
  readonly #server: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: TransportOptions) {
    this.#server = options.server;
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch;
  }

  /** Sends a request and reads the answer as JSON. */
  async json(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    return await readJson(await this.send(method, path, options));
  }

  /** Sends a request; resolves with a 2xx or 304 answer, throws for any other. */
  async send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = new URL(`${this.#server}/api/v1${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers = new Headers(options.headers);
    headers.set("authorization", `Bearer ${this.#token}`);
    headers.set("accept", options.accept ?? "application/json");
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      headers.set("content-type", options.contentType ?? "application/octet-stream");
      body = options.body as BodyInit;
    }
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      if (err instanceof DOMException && err.name === "TimeoutError") {
        throw new CfgtoolError(
          "timeout",
          `no answer from ${this.#server} within ${this.#timeoutMs / 1000}s (${method} ${path})`,
          { status: 504, cause: err },
        );
      }
      const failure = describeNetworkFailure(err, this.#server);
      throw new CfgtoolError("unreachable", `cannot reach ${this.#server}: ${failure.text}`, {
        status: 503,
        details: { server: this.#server, reason: failure.kind },
        cause: err,
      });
    }
    if (res.ok || res.status === 304) return res;
    const err = await errorFrom(res, method, path);
    if (err instanceof UnauthorizedError) {
      const named = unauthorizedError(this.#server, this.#token, err.message, err.details);
      const requestId = recordedRequestId(err);
      if (requestId) requestIds.set(named, requestId);
      throw named;
    }
    throw err;
  }
}

/** Builds a path from a template, percent-encoding every interpolated segment. */
export function p(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += encodeURIComponent(v) + (strings[i + 1] ?? "");
  });
  return out;
}

async function errorFrom(res: Response, method: string, path: string): Promise<CfgtoolError> {
  const env = parseErrorEnvelope(await res.text().catch(() => ""));
  const status = res.status;
  const hasEnvelope = env.code !== undefined && env.message !== undefined;
  let code = hasEnvelope ? env.code! : genericCodeOf(status) ?? "http_error";
  let message = hasEnvelope ? env.message! : `${method} /api/v1${path}: HTTP ${status}`;
  if (!hasEnvelope && !(res.headers.get("server") ?? "").startsWith("cfgtool/")) {
    // every answer of a cfgtool service carries an error envelope and `Server: cfgtool/…`
    message += ` from ${res.headers.get("server") ?? "a server"} that does not answer like ` +
      "cfgtool serve: is --server (CFGTOOL_SERVER) the address of the cfgtool service?";
  }
  if (status >= 300 && status < 400) {
    code = "unexpected_redirect";
    message = `the service redirected ${method} /api/v1${path} to ${
      res.headers.get("location") ?? "another URL"
    }; use that URL as --server`;
  }
  const details = env.details;
  const opts = details === undefined ? {} : { details };
  const is = (c: keyof typeof ERROR_CODES) => code === c && status === ERROR_CODES[c].status;
  let err: CfgtoolError;
  if (code === "invalid_manifest" && Array.isArray(details?.problems)) {
    err = new ProblemsError(details.problems.map(toProblem), code, message);
  } else if (is("unauthorized")) {
    err = new UnauthorizedError(message, opts);
  } else if (is("forbidden")) {
    err = new ForbiddenError(message, opts);
  } else if (is("conflict")) {
    err = new ConflictError(message, opts);
  } else if (is("precondition_failed")) {
    err = new PreconditionFailedError(message, opts);
  } else if (is("invalid_request")) {
    err = new InvalidRequestError(message, opts);
  } else if (status === 404) {
    err = new NotFoundError(code, message, opts);
  } else if (status === 429) {
    const header = res.headers.get("retry-after");
    const retry = header !== null && Number.isFinite(Number(header))
      ? Number(header)
      : Number(details?.retry_after ?? 1);
    err = new RateLimitError(message, retry, opts);
  } else {
    err = new CfgtoolError(code, message, { status, ...opts });
  }
  const requestId = env.request_id ?? res.headers.get("x-request-id");
  if (requestId) requestIds.set(err, requestId);
  return err;
}
