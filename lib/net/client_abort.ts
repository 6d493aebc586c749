/**
 * Telling a client that went away from a server fault: a request whose
 * connection closed while its body was being read fails with a transport
 * error, and is answered (to nobody) and logged with the non-standard status
 * 499 "client closed request" instead of a 500.
 *
 * @module
 */

/** The status logged for a request whose client went away. */
export const CLIENT_CLOSED_REQUEST = 499;

/** Transport errors Deno raises when the peer closes or resets the connection. */
const TRANSPORT_ERRORS = [
  "BadResource",
  "BrokenPipe",
  "ConnectionAborted",
  "ConnectionReset",
  "Http",
  "Interrupted",
  "UnexpectedEof",
];

/** Error classes that only a peer closing the connection raises. */
const PEER_ERRORS = ["BrokenPipe", "ConnectionAborted", "ConnectionReset", "UnexpectedEof"];

const TRANSPORT_MESSAGE =
  /error reading a body from connection|underlying resource unavailable|connection (reset|closed|aborted)|broken pipe|unexpected eof/i;

/**
 * Is `err` the failure of a request whose client went away (aborted upload,
 * closed connection) rather than a fault of the server?
 *
 * @example
 * ```ts
 * import { isClientAbort } from "./client_abort.ts";
 * if (isClientAbort(new Error("boom"))) throw new Error();
 * const gone = new Deno.errors.BadResource(
 *   "Cannot read request body as underlying resource unavailable",
 * );
 * if (!isClientAbort(gone)) throw new Error();
 * if (isClientAbort(new Deno.errors.BadResource("Database closed"))) throw new Error();
 * ```
 */
export function isClientAbort(err: unknown): boolean {
  // Not `req.signal`: reading it makes Deno.serve print a plain-text warning on
  // stderr (its legacy abort behaviour), which breaks the JSON-lines log.
  if (!(err instanceof Error)) return false;
  const cause = err.cause instanceof Error ? err.cause : undefined;
  for (const e of cause ? [err, cause] : [err]) {
    if (TRANSPORT_ERRORS.includes(e.name) && TRANSPORT_MESSAGE.test(e.message)) return true;
    if (PEER_ERRORS.includes(e.name)) return true;
  }
  return false;
}

/**
 * The response for a request whose client went away: nobody reads it; it
 * exists so the access log records 499.
 *
 * @example
 * ```ts
 * import { clientAbortResponse } from "./client_abort.ts";
 * if (clientAbortResponse("r1").status !== 499) throw new Error();
 * ```
 */
export function clientAbortResponse(requestId: string): Response {
  return new Response(null, {
    status: CLIENT_CLOSED_REQUEST,
    headers: { "x-request-id": requestId },
  });
}
