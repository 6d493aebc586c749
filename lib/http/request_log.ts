/**
 * What every answered request leaves behind, the same for `serve` and
 * `relay` and for both of their request paths (the router and the data
 * plane, lib/http/data_plane.ts): its request id (the client's
 * `X-Request-Id` when it is 1 to 64 characters of `A-Z a-z 0-9 . _ -`,
 * else a fresh UUID) and its access-log line (`request_id`, `method`,
 * `path`, `status`, `ms`, `client_ip` with trusted proxies, and who made
 * it: ids only, never a secret).
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import type { Logger } from "../log.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request id of a request: the client's own when it has a safe shape,
 * else a fresh UUID.
 *
 * @param incoming the request's `X-Request-Id` header
 * @returns the id to answer and log with
 *
 * @example
 * ```ts
 * import { requestIdOf } from "./request_log.ts";
 * if (requestIdOf("abc-1") !== "abc-1") throw new Error();
 * if (requestIdOf("a b").length !== 36 || requestIdOf(null).length !== 36) throw new Error();
 * ```
 */
export function requestIdOf(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/** One access-log line's facts. */
export interface RequestLine {
  /** The request id. */
  requestId: string;
  /** The request method. */
  method: string;
  /** The request path, without the query. */
  path: string;
  /** The answer's status. */
  status: number;
  /** `performance.now()` when the request began. */
  started: number;
  /** `performance.now()` when it was answered (default: now). */
  ended?: number;
  /** The client address trusted proxies vouched for, if any. */
  clientIp?: string | undefined;
  /** Who made the request, once authenticated. */
  principal?: Principal | undefined;
}

/**
 * Writes the access-log line of one answered request (`info`, message
 * `request`).
 *
 * @param log the logger
 * @param line the request's facts
 *
 * @example
 * ```ts
 * import { logRequest } from "./request_log.ts";
 * const lines: Record<string, unknown>[] = [];
 * logRequest((_l, _m, f) => lines.push(f!), {
 *   requestId: "r1", method: "GET", path: "/healthz", status: 200, started: performance.now(),
 * });
 * if (lines[0]!.path !== "/healthz" || typeof lines[0]!.ms !== "number") throw new Error();
 * ```
 */
export function logRequest(log: Logger, line: RequestLine): void {
  const fields: Record<string, unknown> = {
    request_id: line.requestId,
    method: line.method,
    path: line.path,
    status: line.status,
    ms: Math.round(((line.ended ?? performance.now()) - line.started) * 10) / 10,
  };
  if (typeof line.clientIp === "string") fields.client_ip = line.clientIp; // only with --trusted-proxy
  const p = line.principal;
  if (p !== undefined) {
    if (p.kind === "session") {
      fields.principal_type = "user";
      fields.principal_id = p.user_id;
    } else {
      fields.principal_type = p.token.type === "namespace-client" ? "client" : "service";
      fields.principal_id = p.token.id;
    }
  }
  log("info", "request", fields);
}
