/**
 * The console's event stream, `GET /ui/live?tenant=T&namespace=N`: one per
 * page at most (lib/console/assets/console.js opens it and closes it
 * when the page is left), telling the page when a new version of its
 * namespace lands (`event: version`, `data: {"version": N}`) or the
 * namespace is deleted (`event: deleted`). It sends no file content: the
 * page fetches what it shows, with the person's rights. The stream ends
 * when the session does (revoked, expired, idle) and when the server shuts
 * down. A session holds at most as many streams as a credential may hold on
 * the API's event streams (`--max-connections-per-token`; 429 beyond).
 * One head watcher per process serves every stream (lib/store/head_watcher.ts).
 *
 * @module
 */
import { Hono } from "hono";
import { InvalidRequestError } from "../errors.ts";
import { manifestTarget } from "../services/manifests.ts";
import { routeStreams } from "../events/route_streams.ts";
import { sseFrame, sseHeaders } from "../events/sse.ts";
import type { AppDeps } from "../http/deps.ts";
import type { ConsoleEnv } from "./env.ts";

const encoder = new TextEncoder();
/** A comment first, so the browser sees the stream open at once. */
const OPENING = encoder.encode(":ok\n\n");

/**
 * The live route, mounted at `/ui`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/", liveRoutes(deps));
 * ```
 */
export function liveRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const streams = routeStreams(deps.settings, deps.runtime.shutdown, deps.now);

  app.get("/live", async (c) => {
    const tenant = c.req.query("tenant");
    const namespace = c.req.query("namespace");
    if (!tenant || !namespace) {
      throw new InvalidRequestError("The live stream needs ?tenant= and ?namespace=");
    }
    const person = c.get("person");
    const head = await manifestTarget(deps, person, { tenant, namespace }, "manifest.read");
    // the same per-credential cap as the API's event streams (429 beyond it): tabs are cheap to open
    const release = await deps.runtime.hub.registry.acquire(person.session_id);
    const stream = streams.open(release);
    if (!stream.closed) {
      let last = head.version;
      const stop = deps.runtime.heads.watch(tenant, namespace, (h) => {
        if (h === null) {
          stream.write(sseFrame("deleted", String(last), "{}"));
          stream.close();
        } else if (h.version !== last) {
          last = h.version;
          stream.write(
            sseFrame("version", String(h.version), JSON.stringify({ version: h.version })),
          );
        }
      });
      stream.onClose(stop);
      stream.onClose(deps.runtime.guard.register(person.session_id, () => stream.close()));
      stream.write(OPENING);
      // a version that landed between the page's render and this stream is told at once
      const since = Number(c.req.header("last-event-id") ?? c.req.query("since"));
      if (Number.isInteger(since) && since !== head.version) {
        stream.write(
          sseFrame("version", String(head.version), JSON.stringify({ version: head.version })),
        );
      }
    }
    return new Response(stream.body, { headers: sseHeaders() });
  });

  return app;
}
