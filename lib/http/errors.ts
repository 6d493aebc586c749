/**
 * The one place where errors become HTTP responses: the JSON error envelope of
 * docs/api.md, `{code, message, details?, request_id}`, with the status the
 * error carries. Unknown errors are logged and answered 500 `internal` without
 * their message.
 *
 * @module
 */
import type { Context } from "hono";
import { CfgtoolError } from "../errors.ts";
import type { Logger } from "../log.ts";

/**
 * Builds the error envelope response for an error.
 *
 * @example
 * ```ts
 * import { errorResponse } from "./errors.ts";
 * import { NotFoundError } from "../errors.ts";
 * const res = errorResponse(new NotFoundError("tenant_not_found", "No tenant x"), "req1", () => {});
 * if (res.status !== 404) throw new Error();
 * ```
 */
export function errorResponse(err: unknown, requestId: string, log: Logger): Response {
  const headers = new Headers({ "content-type": "application/json", "x-request-id": requestId });
  if (err instanceof CfgtoolError) {
    if (err.status === 401) headers.set("www-authenticate", "Bearer");
    const retry = err.details?.["retry_after"];
    if (err.status === 429 && typeof retry === "number") headers.set("retry-after", String(retry));
    if (err.status >= 500) {
      log("error", "request failed", { request_id: requestId, code: err.code });
    }
    const body: Record<string, unknown> = { code: err.code, message: capped(err.message) };
    if (err.details !== undefined) body.details = err.details;
    body.request_id = requestId;
    return new Response(JSON.stringify(body), { status: err.status, headers });
  }
  log("error", "unhandled error", {
    request_id: requestId,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  return new Response(
    JSON.stringify({ code: "internal", message: "internal server error", request_id: requestId }),
    { status: 500, headers },
  );
}

/**
 * The request id of a hono context (set by the request-id middleware).
 *
 * @example
 * ```ts ignore
 * const id = requestIdOf(c);
 * ```
 */
export function requestIdOf(c: Context): string {
  return (c.get("requestId" as never) as string | undefined) ?? "unknown";
}

/** Longest error message sent: messages may quote request fields of any size. */
const MAX_MESSAGE = 500;

function capped(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE)}… (truncated)`;
}
