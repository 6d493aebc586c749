/**
 * OFREP push (ADR-0008 "Server-Sent Events for bulk evaluation changes",
 * as `@openfeature/ofrep-web-provider` implements it): the bulk response of a
 * `namespace-client` token carries
 *
 * ```json
 * "eventStreams": [{ "type": "sse", "url": "https://flags.example/ofrep/v1/event-stream?token=svc_client_…" }]
 * ```
 *
 * and `GET /ofrep/v1/event-stream?token=<namespace-client secret>` is a
 * `text/event-stream` that sends, whenever the manifest version of the
 * token's namespace changes,
 *
 * ```text
 * id: 8
 * data: {"type":"refetchEvaluation","etag":"\"v8-<closure hash>\""}
 * ```
 *
 * The provider then refetches the bulk evaluation with `If-None-Match` (a
 * 304 when this context's results did not change) and the event's `etag`
 * as `flagConfigEtag`, which makes the server evaluate at least version 8
 * whichever process answers. The event `etag` is the configuration's
 * (version and closure hash, as the manifest `ETag`); the bulk `ETag` is
 * per context and only the bulk endpoint can compute it.
 *
 * The credential is in the query because `EventSource` cannot send
 * headers; only `namespace-client` secrets, public by design
 * (docs/api.md, "Tokens"), are ever put in such a URL, and access logs record
 * the path without the query. The token is checked like an evaluation
 * request (401/403 without a body, the `public_evaluate` gate, the rate
 * limit counts each connection, CORS for an allowed Origin).
 *
 * On connect the stream sends `retry: 3000` and, unless `Last-Event-ID`
 * names the current version, one `refetchEvaluation` (this closes the gap
 * between the bulk response and the connection; with `If-None-Match` it
 * costs a 304). The stream's lifecycle is the one of `/api/v1/events`
 * (lib/events/sse.ts): a `:keepalive` comment once nothing was sent for
 * `keepaliveMs`, a client that does not read is dropped, and the stream ends
 * after `idleCloseMs` without an event and when the server shuts down. It
 * also ends when the environment stops being public, the namespace is
 * deleted or the token is revoked or expires (the client reconnects and
 * gets 403/401); before each event the token's right to evaluate there is
 * checked again (lib/auth/stream_guard.ts), so a token revoked anywhere
 * before a version committed is not told of that version. Errors before
 * the stream starts are OFREP's (lib/http/ofrep_errors.ts). Change
 * detection is the process's `HeadWatcher`: one KV watch and one poll key
 * per namespace, however many streams, and one listener per namespace that
 * writes one shared frame to all of them (lib/events/refetch_feed.ts).
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { Hono } from "hono";
import { versionEtag } from "../protocol/etag.ts";
import { routeStreams } from "../events/route_streams.ts";
import { sseHeaders } from "../events/sse.ts";
import { RefetchFeeds } from "../events/refetch_feed.ts";
import { evaluationStreamHead, type Head } from "../services/evaluation.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authenticate } from "./authn.ts";
import { applyCors, corsOrigin } from "./cors.ts";
import { ofrepErrorHandler } from "./ofrep_errors.ts";

/** Path of the event stream under `/ofrep/v1`. */
export const EVENT_STREAM_PATH = "/event-stream";

/** Reconnection delay the stream asks `EventSource` for, ms. */
export const RETRY_MS = 3000;

const encoder = new TextEncoder();

/**
 * The event-stream URL advertised to a `namespace-client` token: the
 * service's public origin (`--public-url`) when configured, else the
 * request's own origin, + `/ofrep/v1/event-stream?token=<secret>`.
 * Forwarding headers are ignored: clients can forge them.
 *
 * @param req the bulk evaluation request
 * @param secret the namespace-client secret it authenticated with
 * @param publicUrl the service's public origin, if configured
 * @returns the absolute URL
 *
 * @example
 * ```ts
 * import { eventStreamUrl } from "./ofrep_events.ts";
 * const url = eventStreamUrl(new Request("http://127.0.0.1:8080/ofrep/v1/evaluate/flags"), "svc_client_x");
 * if (url !== "http://127.0.0.1:8080/ofrep/v1/event-stream?token=svc_client_x") throw new Error(url);
 * ```
 */
export function eventStreamUrl(req: Request, secret: string, publicUrl?: string): string {
  // X-Forwarded-* headers are not trusted: any client can send them, and the
  // URL carries a credential. Behind a proxy, `--public-url` names the origin.
  const origin = publicUrl !== undefined ? trimTrailing(publicUrl, "/") : new URL(req.url).origin;
  return `${origin}/ofrep/v1${EVENT_STREAM_PATH}?token=${encodeURIComponent(secret)}`;
}

/**
 * The configuration ETag a `refetchEvaluation` event carries.
 *
 * @param head the new head
 * @returns `"v<version>-<closure hash>"`
 *
 * @example
 * ```ts
 * import { configEtag } from "./ofrep_events.ts";
 * if (configEtag({ version: 3, closure_hash: "ab", environments: {} }) !== '"v3-ab"') throw new Error();
 * ```
 */
export function configEtag(head: Head): string {
  return versionEtag(head.version, head.closure_hash);
}

/** The first bytes of every stream: the reconnection delay and a comment. */
const OPENING = encoder.encode(`retry: ${RETRY_MS}\n: cfgtool OFREP events\n\n`);

function refetchEvent(head: Head): Uint8Array {
  const data = JSON.stringify({ type: "refetchEvaluation", etag: configEtag(head) });
  return encoder.encode(`id: ${head.version}\ndata: ${data}\n\n`);
}

/**
 * The event-stream route (mounted with the OFREP routes at `/ofrep/v1`).
 *
 * @param deps the app dependencies
 * @returns the route
 *
 * @example
 * ```ts ignore
 * app.route("/", ofrepEventRoutes(deps));
 * ```
 */
export function ofrepEventRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(ofrepErrorHandler(deps.log)); // refusals before the stream starts are OFREP's
  const streams = routeStreams(deps.settings, deps.runtime.shutdown, deps.now);
  deps.runtime.metrics.addStreams("ofrep", () => streams.size); // cfgtool_event_streams_open
  const guard = deps.runtime.guard;
  const feeds = new RefetchFeeds(deps.runtime.heads, refetchEvent, guard);

  // An EventSource sets no headers: the client token rides in the query.
  app.get(EVENT_STREAM_PATH, authenticate(deps, { from: ["query"] }), async (c) => {
    const origin = c.req.header("origin");
    const p = c.get("principal");
    const { t, head, tokenId } = await evaluationStreamHead(deps, p, corsOrigin(p, origin) ?? "");

    const stream = streams.open(); // closed at once when the server is shutting down
    if (!stream.closed) {
      // a revoked or expired token's stream ends (checked by the stream guard), and
      // each event goes out only while the token may still evaluate there
      const watched = guard.watch(tokenId, () => stream.close(), [
        { action: "evaluate", target: t },
      ]);
      feeds.add(stream, t.tenant, t.namespace, t.environment, watched.grants[0]);
      stream.onClose(watched.release);
      stream.write(OPENING);
      if (c.req.header("last-event-id") !== String(head.version)) stream.write(feeds.frameOf(head));
    }
    const headers = sseHeaders();
    applyCors(headers, corsOrigin(p, origin));
    return new Response(stream.body, { headers });
  });

  return app;
}
