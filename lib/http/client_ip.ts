/**
 * The one client-IP helper: the address of the peer of a request, as the
 * server handed it to the app (`app.fetch(req, { remoteAddr })` in
 * server.ts). Forwarding headers are never read: any client can forge them.
 *
 * @module
 */
import type { Context } from "hono";

/**
 * The peer address of a request, or undefined when the app was called
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
    const info = (c.env as { remoteAddr?: Deno.NetAddr } | undefined)?.remoteAddr;
    return info && "hostname" in info ? info.hostname : undefined;
  } catch {
    return undefined;
  }
}
