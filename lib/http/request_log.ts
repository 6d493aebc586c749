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
import type { MiddlewareHandler } from "hono";
import type { Principal } from "../auth/principal.ts";
import type { Logger } from "../log.ts";
import { SERVER_HEADER } from "../version.ts";
import { clientIpField } from "./client_ip.ts";
import type { AppEnv } from "./deps.ts";

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

/**
 * The router's side of the same: the middleware, mounted first, that gives
 * each request its id, puts `X-Request-Id` and `Server` on every answer
 * (errors included) and writes the access-log line once it is answered.
 *
 * @param log the logger
 * @param answered also told of each answered request (the relay counts them)
 * @returns the middleware
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { requestLog } from "./request_log.ts";
 * import type { AppEnv } from "./deps.ts";
 * const lines: unknown[] = [];
 * const app = new Hono<AppEnv>().use("*", requestLog((_l, _m, f) => lines.push(f)));
 * app.get("/x", (c) => c.text(c.get("requestId")));
 * const res = await app.request("/x", { headers: { "x-request-id": "r-1" } });
 * if (await res.text() !== "r-1" || res.headers.get("x-request-id") !== "r-1") throw new Error();
 * if (lines.length !== 1) throw new Error();
 * ```
 */
export function requestLog(
  log: Logger,
  answered?: (method: string, status: number) => void,
): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    const id = requestIdOf(c.req.header("x-request-id"));
    c.set("requestId", id);
    const started = performance.now();
    await next();
    c.res.headers.set("x-request-id", id);
    c.res.headers.set("server", SERVER_HEADER); // every answer, errors included
    answered?.(c.req.method, c.res.status);
    logRequest(log, {
      requestId: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      started,
      clientIp: clientIpField(c).client_ip, // only with --trusted-proxy
      principal: c.get("principal"),
    });
  };
}
