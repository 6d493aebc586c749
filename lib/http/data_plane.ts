/**
 * The data plane: the four requests a flag service answers most, taken
 * before the router. `POST …/environments/{env}/evaluate`,
 * `POST …/evaluate/all`, `POST /ofrep/v1/evaluate/flags/{key}` and
 * `POST /ofrep/v1/evaluate/flags`, each with a bearer credential, are
 * matched by a few string comparisons and answered by a plain function; the
 * router (hono, with its chain of middleware) would cost about as much
 * again as the evaluation itself. `serve` (lib/server/data_plane.ts) and
 * `relay` (lib/relay/data_plane.ts) give their own authentication,
 * handlers and error shapes; this module keeps what both do around them:
 * the request id, the `X-Request-Id` and `Server` headers, the timing, and
 * the access-log line (lib/http/request_log.ts).
 *
 * Nothing a client can see differs from the router's answer to the same
 * request (tests/http/data_plane_test.ts sends each kind of request both
 * ways and compares). What the data plane does not take goes to the router
 * unchanged: any other method or path, a path with a percent escape, an
 * empty segment or an identifier of the wrong shape (the router's path
 * checks answer those), and a request without a bearer credential (the
 * browser session cookie and the 401 are the router's).
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import type { Logger } from "../log.ts";
import { recordingSpan } from "../telemetry/request_span.ts";
import type { Span } from "@opentelemetry/api";
import { SERVER_HEADER } from "../version.ts";
import { bearerOrNull } from "./authn.ts";
import { applyCors, corsOrigin } from "./cors.ts";
import { errorResponse } from "./errors.ts";
import { ofrepErrorResponse } from "./ofrep_errors.ts";
import { clientAbortResponse, isClientAbort } from "../net/client_abort.ts";
import type { FetchEnv } from "./client_ip.ts";
import { logRequest, requestIdOf } from "./request_log.ts";

/** The requests the data plane answers. */
export type DataPlaneRoute = "evaluate" | "evaluate-all" | "ofrep-flag" | "ofrep-bulk";

/** Each route's pattern, as the router names it (the metrics' `route` label, the span name). */
export const DATA_PLANE_PATTERNS: Readonly<Record<DataPlaneRoute, string>> = {
  "evaluate": "/api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate",
  "evaluate-all": "/api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate/all",
  "ofrep-flag": "/ofrep/v1/evaluate/flags/:key",
  "ofrep-bulk": "/ofrep/v1/evaluate/flags",
};

/** A request the data plane takes: its route and the identifiers of its path. */
export interface DataPlaneMatch {
  /** Which request. */
  route: DataPlaneRoute;
  /** The path, without the query. */
  path: string;
  /** The path's tenant (`…/evaluate[/all]`), else `""`. */
  tenant: string;
  /** The path's namespace, else `""`. */
  namespace: string;
  /** The path's environment, else `""`. */
  environment: string;
  /** The path's flag key (OFREP single), else `""`. */
  key: string;
}

const OFREP = "/ofrep/v1/evaluate/flags";
const TENANTS = "/api/v1/tenants/";

/**
 * The data-plane route of a request, or null when the router should take
 * it (see the module documentation).
 *
 * @param method the request method
 * @param url the request URL (absolute, as `Request.url`)
 * @returns the match, or null
 *
 * @example
 * ```ts
 * import { matchDataPlane } from "./data_plane.ts";
 * const m = matchDataPlane("POST", "http://x/api/v1/tenants/acme/namespaces/web/environments/prod/evaluate");
 * if (m?.route !== "evaluate" || m.environment !== "prod") throw new Error();
 * if (matchDataPlane("POST", "http://x/ofrep/v1/evaluate/flags/dark-mode")?.key !== "dark-mode") throw new Error();
 * if (matchDataPlane("GET", "http://x/ofrep/v1/evaluate/flags") !== null) throw new Error();
 * if (matchDataPlane("POST", "http://x/api/v1/tenants/Acme/namespaces/web/environments/prod/evaluate") !== null) {
 *   throw new Error("a bad slug is the router's 404");
 * }
 * ```
 */
export function matchDataPlane(method: string, url: string): DataPlaneMatch | null {
  if (method !== "POST") return null;
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme === -1 ? 0 : scheme + 3);
  if (start === -1) return null;
  const q = url.indexOf("?", start);
  const path = q === -1 ? url.slice(start) : url.slice(start, q);
  if (path.includes("%")) return null; // the router decodes escapes; rare enough to leave it
  if (path.startsWith(OFREP)) {
    if (path.length === OFREP.length) return match("ofrep-bulk", path, "", "", "", "");
    const key = path.slice(OFREP.length + 1);
    if (path[OFREP.length] !== "/" || key === "" || key.includes("/")) return null;
    return match("ofrep-flag", path, "", "", "", key);
  }
  if (!path.startsWith(TENANTS)) return null;
  // /api/v1/tenants/{t}/namespaces/{ns}/environments/{env}/evaluate[/all], scanned in place
  const t = slugEnd(path, TENANTS.length);
  if (t === -1 || !path.startsWith("/namespaces/", t)) return null;
  const nsStart = t + 12;
  const ns = slugEnd(path, nsStart);
  if (ns === -1 || !path.startsWith("/environments/", ns)) return null;
  const envStart = ns + 14;
  const env = slugEnd(path, envStart);
  if (env === -1 || !path.startsWith("/evaluate", env)) return null;
  const rest = path.length - env - 9;
  if (rest !== 0 && (rest !== 4 || !path.endsWith("/all"))) return null;
  return match(
    rest === 0 ? "evaluate" : "evaluate-all",
    path,
    path.slice(TENANTS.length, t),
    path.slice(nsStart, ns),
    path.slice(envStart, env),
    "",
  );
}

/**
 * Where the slug that starts at `from` ends (the index of the `/` after
 * it), or -1 when the segment is no slug (`[a-z0-9][a-z0-9._-]{0,62}`, as
 * the router's path checks require) or is the path's last.
 */
function slugEnd(path: string, from: number): number {
  let i = from;
  for (; i < path.length && i - from <= 63; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x2f) break; // "/"
    const alnum = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39); // a-z 0-9
    if (!alnum && (i === from || (c !== 0x2e && c !== 0x5f && c !== 0x2d))) return -1; // . _ -
  }
  return i === from || i - from > 63 || i === path.length ? -1 : i;
}

function match(
  route: DataPlaneRoute,
  path: string,
  tenant: string,
  namespace: string,
  environment: string,
  key: string,
): DataPlaneMatch {
  return { route, path, tenant, namespace, environment, key };
}

/** One request on the data plane, as its server's handlers see it. */
export interface DataPlaneExchange extends DataPlaneMatch {
  /** The request. */
  req: Request;
  /** The bearer credential it presents. */
  credential: string;
  /** Its request id. */
  requestId: string;
  /** The client's address (the one trusted proxies vouch for, else the peer), for audit entries. */
  clientIp: string | undefined;
  /** Who made it, once the server's handler has authenticated the credential. */
  principal: Principal | undefined;
}

/** What a server gives the data plane. */
export interface DataPlaneServer {
  /** The access log. */
  log: Logger;
  /**
   * Authenticates and answers (it sets `principal` on the exchange once
   * authenticated); what it throws is answered as the routes answer it
   * ({@linkcode refusal}).
   */
  answer(x: DataPlaneExchange): Promise<Response>;
  /** Counts the answered request (status, seconds since it began) and names its trace span. */
  observe?(x: DataPlaneExchange, status: number, seconds: number, span: Span | undefined): void;
}

/** The data plane of a server: the answer to a request it takes, or null for the router's. */
export type DataPlane = (req: Request, env: FetchEnv) => Promise<Response> | null;

/**
 * The data plane of a server.
 *
 * @param server the server's authentication, handlers, error shapes and metrics
 * @returns the data plane
 *
 * @example
 * ```ts
 * import { dataPlane } from "./data_plane.ts";
 * const lines: unknown[] = [];
 * const plane = dataPlane({
 *   log: (_l, _m, f) => lines.push(f),
 *   answer: (x) => Promise.resolve(new Response(`${x.route} ${x.environment}`)),
 * });
 * const url = "http://x/api/v1/tenants/acme/namespaces/web/environments/prod/evaluate/all";
 * const res = await plane(new Request(url, { method: "POST", headers: { authorization: "Bearer t" } }), {});
 * if (await res?.text() !== "evaluate-all prod" || !res?.headers.get("x-request-id")) throw new Error();
 * if (plane(new Request(url, { method: "POST" }), {}) !== null) throw new Error("no bearer: the router's");
 * if (lines.length !== 1) throw new Error();
 * ```
 */
export function dataPlane(server: DataPlaneServer): DataPlane {
  return (req, env) => {
    const m = matchDataPlane(req.method, req.url);
    if (m === null) return null;
    const credential = bearerOrNull(req.headers);
    if (credential === null) return null;
    return run(server, m, req, env, credential);
  };
}

async function run(
  server: DataPlaneServer,
  m: DataPlaneMatch,
  req: Request,
  env: FetchEnv,
  credential: string,
): Promise<Response> {
  const span = server.observe === undefined ? undefined : recordingSpan();
  const started = performance.now();
  const requestId = requestIdOf(req.headers.get("x-request-id"));
  const peer = env.remoteAddr;
  const x: DataPlaneExchange = {
    route: m.route,
    path: m.path,
    tenant: m.tenant,
    namespace: m.namespace,
    environment: m.environment,
    key: m.key,
    req,
    credential,
    requestId,
    clientIp: env.clientAddr ??
      (peer !== undefined && "hostname" in peer ? peer.hostname : undefined),
    principal: undefined,
  };
  let res: Response;
  try {
    res = await server.answer(x);
  } catch (err) {
    res = refusal(x, err, server.log);
  }
  res.headers.set("x-request-id", requestId);
  res.headers.set("server", SERVER_HEADER);
  const ended = performance.now();
  server.observe?.(x, res.status, (ended - started) / 1000, span);
  logRequest(server.log, {
    requestId,
    method: "POST",
    path: m.path,
    status: res.status,
    started,
    ended,
    clientIp: env.clientAddr,
    principal: x.principal,
  });
  return res;
}

/**
 * An error's answer, shaped as the routes shape it: `…/evaluate[/all]` in
 * the error envelope (lib/http/errors.ts), with `Vary: Origin` and the
 * CORS headers the caller earns once authenticated (a refused credential
 * gets neither: authentication runs before the evaluation routes' CORS);
 * OFREP in OFREP's shape (lib/http/ofrep_errors.ts) with `Vary: Origin`
 * and the caller's CORS headers, if any; a client that went away, 499.
 */
function refusal(x: DataPlaneExchange, err: unknown, log: Logger): Response {
  let res: Response;
  if (x.route === "ofrep-flag" || x.route === "ofrep-bulk") {
    if (isClientAbort(err)) return clientAbortResponse(x.requestId);
    res = ofrepErrorResponse(err, x.key === "" ? undefined : x.key, log, x.requestId);
  } else {
    res = isClientAbort(err)
      ? clientAbortResponse(x.requestId)
      : errorResponse(err, x.requestId, log);
    if (x.principal === undefined) return res; // refused at the door
  }
  applyCors(res.headers, corsOrigin(x.principal, x.req.headers.get("origin") ?? undefined));
  return res;
}
