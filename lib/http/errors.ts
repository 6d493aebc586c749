/**
 * The one place where errors become HTTP responses: the JSON error envelope of
 * docs/api.md, `{code, message, details?, request_id}` (lib/protocol/error_envelope.ts),
 * with the status the error carries. Unknown errors are logged and answered
 * 500 `internal` (lib/protocol/error_codes.ts) without their message.
 *
 * @module
 */
import type { Context } from "hono";
import { CfgtoolError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { ERROR_CODES } from "../protocol/error_codes.ts";
import { encodeErrorEnvelope } from "../protocol/error_envelope.ts";
import { errorPage } from "./auth/pages.ts";

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
    const body = encodeErrorEnvelope({
      code: err.code,
      message: capped(err.message),
      ...(err.details === undefined ? {} : { details: err.details }),
      request_id: requestId,
    });
    return new Response(body, { status: err.status, headers });
  }
  log("error", "unhandled error", {
    request_id: requestId,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  return new Response(
    encodeErrorEnvelope({
      code: "internal",
      message: "internal server error",
      request_id: requestId,
    }),
    { status: ERROR_CODES.internal.status, headers },
  );
}

/**
 * The error as a page, for a person's browser on the sign-in pages: the
 * same status and message as the envelope; unknown errors are logged and
 * shown only as a generic failure with the request id.
 *
 * @example
 * ```ts
 * import { errorPageResponse } from "./errors.ts";
 * import { ForbiddenError } from "../errors.ts";
 * const res = await errorPageResponse(new ForbiddenError("No"), "req1", () => {});
 * if (res.status !== 403 || !res.headers.get("content-type")?.startsWith("text/html")) throw new Error();
 * ```
 */
export function errorPageResponse(err: unknown, requestId: string, log: Logger): Promise<Response> {
  if (err instanceof CfgtoolError) {
    if (err.status >= 500) {
      log("error", "request failed", { request_id: requestId, code: err.code });
    }
    return errorPage(err.status, capped(err.message), requestId);
  }
  log("error", "unhandled error", {
    request_id: requestId,
    error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
  });
  return errorPage(500, "Something went wrong on the server.", requestId);
}

/**
 * Whether an error on this request should be a page rather than a JSON
 * envelope: sign-in pages (`/auth/…`) asked for by a browser.
 *
 * @param req the request
 * @returns true for a browser on a sign-in page
 *
 * @example
 * ```ts
 * import { wantsErrorPage } from "./errors.ts";
 * const page = new Request("http://x/auth/login", { headers: { accept: "text/html" } });
 * if (!wantsErrorPage(page) || wantsErrorPage(new Request("http://x/api/v1/me"))) throw new Error();
 * ```
 */
export function wantsErrorPage(req: Request): boolean {
  return new URL(req.url).pathname.startsWith("/auth/") &&
    (req.headers.get("accept") ?? "").includes("text/html");
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
