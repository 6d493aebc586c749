/**
 * The one client-IP helper: the address of the client of a request, as the
 * server handed it to the app (`app.fetch(req, { remoteAddr, clientAddr })`
 * in lib/server/create.ts and lib/relay/serve.ts). That is the peer
 * address, unless the process trusts proxies (`--trusted-proxy`,
 * lib/net/trusted_proxies.ts) and the peer is one: then the server resolved
 * the client from `X-Forwarded-For` before the app saw the request
 * ({@linkcode fetchEnv}). Forwarding headers are never read here: any client
 * can forge them.
 *
 * @module
 */
import type { Context } from "hono";
import type { TrustedProxies } from "../net/trusted_proxies.ts";

/** What a server passes to `app.fetch` as the environment of a request. */
export interface FetchEnv {
  /** The peer of the connection. */
  remoteAddr?: Deno.Addr;
  /** With trusted proxies: the client they vouch for (else the peer). */
  clientAddr?: string;
}

/**
 * The environment a server hands its app for one request: the peer, and,
 * when `proxies` trusts any, the client address they vouch for.
 *
 * @param req the request
 * @param info the server's handler info, if any
 * @param proxies the process's trusted proxies
 * @returns the environment
 *
 * @example
 * ```ts
 * import { fetchEnv } from "./client_ip.ts";
 * import { TrustedProxies } from "../net/trusted_proxies.ts";
 * const req = new Request("http://x/", { headers: { "x-forwarded-for": "203.0.113.9" } });
 * const remoteAddr = { transport: "tcp" as const, hostname: "10.0.0.2", port: 40000 };
 * const env = fetchEnv(req, { remoteAddr }, TrustedProxies.parse(["10.0.0.0/8"]));
 * if (env.clientAddr !== "203.0.113.9") throw new Error();
 * if (fetchEnv(req, { remoteAddr }, TrustedProxies.NONE).clientAddr !== undefined) throw new Error();
 * ```
 */
export function fetchEnv(
  req: Request,
  info: { remoteAddr: Deno.Addr } | undefined,
  proxies: TrustedProxies,
): FetchEnv {
  if (info === undefined) return {};
  const peer = info.remoteAddr;
  if (!proxies.any || !("hostname" in peer)) return { remoteAddr: peer };
  return {
    remoteAddr: peer,
    clientAddr: proxies.clientAddress(peer.hostname, req.headers.get("x-forwarded-for")),
  };
}

/**
 * The client address of a request, or undefined when the app was called
 * without one (in-process requests, a Unix socket).
 *
 * @param c the hono context
 * @returns the IP address
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { clientIp } from "./client_ip.ts";
 * const app = new Hono().get("/", (c) => c.text(clientIp(c) ?? "none"));
 * const remoteAddr = { transport: "tcp", hostname: "192.0.2.7", port: 40000 };
 * const res = await app.fetch(new Request("http://x/"), { remoteAddr });
 * if (await res.text() !== "192.0.2.7") throw new Error();
 * if (await (await app.request("/")).text() !== "none") throw new Error();
 * ```
 */
export function clientIp(c: Context): string | undefined {
  try {
    const env = c.env as FetchEnv | undefined;
    if (typeof env?.clientAddr === "string") return env.clientAddr;
    const info = env?.remoteAddr;
    return info && "hostname" in info ? info.hostname : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The request log line's `client_ip` field: present only when the process
 * trusts proxies (without them the log names no address, as before).
 *
 * @param c the hono context
 * @returns `{ client_ip }` or nothing
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { clientIpField } from "./client_ip.ts";
 * const app = new Hono().get("/", (c) => c.json(clientIpField(c)));
 * const remoteAddr = { transport: "tcp", hostname: "10.0.0.2", port: 40000 };
 * const res = await app.fetch(new Request("http://x/"), { remoteAddr, clientAddr: "203.0.113.9" });
 * if ((await res.json()).client_ip !== "203.0.113.9") throw new Error();
 * ```
 */
export function clientIpField(c: Context): { client_ip?: string } {
  try {
    const addr = (c.env as FetchEnv | undefined)?.clientAddr;
    return typeof addr === "string" ? { client_ip: addr } : {};
  } catch {
    return {};
  }
}
