/**
 * How OFREP answers errors (lib/http/ofrep.ts, "Errors", has the table):
 * 401/403/429 without a body, the others as `{key?, errorCode,
 * errorDetails}`. {@linkcode ofrepErrorHandler} is the `onError` of the OFREP
 * routes and of the OFREP event stream, so their handlers just throw; it is
 * the one place where an error becomes an OFREP response.
 *
 * @module
 */
import type { ErrorHandler } from "hono";
import { CfgtoolError, ForbiddenError, NotFoundError, RateLimitError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { clientAbortResponse, isClientAbort } from "../net/client_abort.ts";
import type { AppEnv } from "./deps.ts";
import { InvalidContextError } from "./context_input.ts";
import { applyCors, corsOrigin } from "./cors.ts";

/** OFREP error codes this server sends. */
export type OfrepErrorCode =
  | "PARSE_ERROR"
  | "TARGETING_KEY_MISSING"
  | "INVALID_CONTEXT"
  | "FLAG_NOT_FOUND"
  | "GENERAL";

/**
 * An OFREP-level refusal with its `errorCode` (400 unless said otherwise).
 *
 * @example
 * ```ts
 * import { OfrepError } from "./ofrep_errors.ts";
 * const err = new OfrepError("TARGETING_KEY_MISSING", "targetingKey is empty");
 * if (err.status !== 400) throw new Error();
 * ```
 */
export class OfrepError extends CfgtoolError {
  /** The OFREP `errorCode`. */
  readonly errorCode: OfrepErrorCode;

  constructor(errorCode: OfrepErrorCode, message: string, status = 400) {
    super(errorCode.toLowerCase(), message, { status });
    this.name = "OfrepError";
    this.errorCode = errorCode;
  }
}

/**
 * Turns an error into an OFREP response: the table of lib/http/ofrep.ts.
 *
 * @param err what was thrown
 * @param key the flag key (single-flag endpoint), or undefined (bulk, event stream)
 * @param log where unexpected errors are logged
 * @param requestId the request id, for the log
 * @returns the response (CORS headers are added by the caller)
 *
 * @example
 * ```ts
 * import { ofrepErrorResponse } from "./ofrep_errors.ts";
 * import { ForbiddenError } from "../errors.ts";
 * const res = ofrepErrorResponse(new ForbiddenError("no"), "f", () => {}, "r1");
 * if (res.status !== 403 || res.body !== null) throw new Error();
 * ```
 */
export function ofrepErrorResponse(
  err: unknown,
  key: string | undefined,
  log: Logger,
  requestId: string,
): Response {
  const headers = new Headers({ "cache-control": "no-store" });
  if (err instanceof CfgtoolError) {
    if (err.status === 401) {
      headers.set("www-authenticate", "Bearer");
      return new Response(null, { status: 401, headers });
    }
    if (err.status === 403 || err instanceof ForbiddenError) {
      return new Response(null, { status: 403, headers });
    }
    if (err instanceof RateLimitError) {
      headers.set("retry-after", String(err.retryAfter));
      return new Response(null, { status: 429, headers });
    }
  }
  const [status, errorCode, errorDetails] = classify(err, key);
  if (status >= 500) {
    log("error", "OFREP request failed", {
      request_id: requestId,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  }
  headers.set("content-type", "application/json");
  const body = key === undefined ? { errorCode, errorDetails } : { key, errorCode, errorDetails };
  return new Response(JSON.stringify(body), { status, headers });
}

function classify(err: unknown, key: string | undefined): [number, OfrepErrorCode, string] {
  if (err instanceof OfrepError) return [err.status, err.errorCode, err.message];
  if (err instanceof InvalidContextError) return [400, "INVALID_CONTEXT", err.message];
  if (err instanceof CfgtoolError) {
    if (err.code === "payload_too_large") {
      return [400, "INVALID_CONTEXT", `${err.message}: the context may be at most 32 KiB`];
    }
    // a body that is not JSON or not an object (InvalidRequestError)
    if (err.code === "invalid_request") return [400, "PARSE_ERROR", err.message];
    if (err instanceof NotFoundError) {
      return [404, key === undefined ? "GENERAL" : "FLAG_NOT_FOUND", err.message];
    }
    if (err.status < 500) return [400, "GENERAL", err.message];
  }
  return [500, "GENERAL", "internal server error"];
}

/**
 * The `onError` of the OFREP sub-apps: the OFREP response of the error,
 * with the CORS headers of the principal the request authenticated as (none
 * when it did not get that far). The flag key is the route's `:key`
 * parameter, if any. A client that went away gets the root app's 499.
 *
 * @param log where unexpected errors are logged
 * @returns the error handler
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { ofrepErrorHandler, OfrepError } from "./ofrep_errors.ts";
 * import type { AppEnv } from "./deps.ts";
 * const app = new Hono<AppEnv>();
 * app.onError(ofrepErrorHandler(() => {}));
 * app.post("/evaluate/flags/:key", () => {
 *   throw new OfrepError("TARGETING_KEY_MISSING", "context.targetingKey is empty");
 * });
 * const res = await app.request("/evaluate/flags/f", { method: "POST" });
 * const body = await res.json();
 * if (res.status !== 400 || body.key !== "f" || body.errorCode !== "TARGETING_KEY_MISSING") {
 *   throw new Error(JSON.stringify(body));
 * }
 * ```
 */
export function ofrepErrorHandler(log: Logger): ErrorHandler<AppEnv> {
  return function ofrepError(err, c) {
    const requestId = c.get("requestId") ?? crypto.randomUUID();
    if (isClientAbort(err)) return clientAbortResponse(requestId);
    const res = ofrepErrorResponse(err, c.req.param("key"), log, requestId);
    applyCors(res.headers, corsOrigin(c.get("principal"), c.req.header("origin")));
    return res;
  };
}
