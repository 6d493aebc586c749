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
 * costs a 304). Then a comment every `keepaliveMs`; the stream ends when the
 * environment stops being public or the namespace is deleted (the client
 * reconnects and gets 403/401), after `idleCloseMs`, and when the server
 * shuts down. Change detection is the process's {@linkcode HeadWatcher}:
 * one KV watch and one poll key per namespace, however many streams.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context as HonoContext } from "hono";
import { authenticate } from "../auth/principal.ts";
import { ForbiddenError } from "../errors.ts";
import type { Head } from "../store/versions.ts";
import { getHead } from "../store/versions.ts";
import type { AppDeps, AppEnv } from "./app.ts";
import { authDeps } from "./authn.ts";
import { applyCors, corsOrigin } from "./cors.ts";
import { admitEvaluation, type EvaluationService, type Triple } from "./evaluate.ts";
import { ofrepErrorResponse } from "./ofrep.ts";

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
  const origin = publicUrl !== undefined ? publicUrl.replace(/\/+$/, "") : new URL(req.url).origin;
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
  return `"v${head.version}-${head.closure_hash}"`;
}

function refetchEvent(head: Head): Uint8Array {
  const data = JSON.stringify({ type: "refetchEvaluation", etag: configEtag(head) });
  return encoder.encode(`id: ${head.version}\ndata: ${data}\n\n`);
}

/**
 * The event-stream route (mounted with the OFREP routes at `/ofrep/v1`).
 *
 * @param deps the app dependencies
 * @param svc the evaluation state
 * @returns the route
 *
 * @example
 * ```ts ignore
 * app.route("/", ofrepEventRoutes(deps, svc));
 * ```
 */
export function ofrepEventRoutes(deps: AppDeps, svc: EvaluationService): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get(EVENT_STREAM_PATH, async (c: HonoContext<AppEnv>) => {
    const origin = c.req.header("origin");
    let t: Triple;
    let head: Head | null;
    try {
      const token = c.req.query("token");
      const p = await authenticate(
        authDeps(deps),
        token === undefined ? undefined : `Bearer ${token}`,
        { requestId: c.get("requestId") },
      );
      c.set("principal", p);
      if (p.kind !== "token" || p.token.type !== "namespace-client") {
        throw new ForbiddenError("Only namespace-client tokens may open the OFREP event stream");
      }
      t = {
        tenant: p.token.tenant_slug ?? "",
        namespace: p.token.namespace_slug ?? "",
        environment: p.token.environment_slug ?? "",
      };
      await admitEvaluation(deps, svc, p, t, origin);
      head = await getHead(deps.kv, t.tenant, t.namespace);
      if (head === null) throw new ForbiddenError(`Namespace ${t.tenant}/${t.namespace} is gone`);
    } catch (err) {
      const res = ofrepErrorResponse(err, undefined, deps.log, c.get("requestId"));
      applyCors(res.headers, corsOrigin(c.get("principal"), origin));
      return res;
    }

    const lastId = c.req.header("last-event-id");
    const first = head;
    const env = t.environment;
    let cleanup = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let closed = false;
        const send = (bytes: Uint8Array) => {
          if (closed) return;
          try {
            controller.enqueue(bytes);
          } catch {
            close();
          }
        };
        const close = () => {
          if (closed) return;
          closed = true;
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed or errored by the client going away
          }
        };
        const unwatch = deps.heads.watch(t.tenant, t.namespace, (h) => {
          if (h === null || h.environments[env]?.public_evaluate !== true) {
            close(); // the token no longer evaluates here; a reconnect gets the refusal
            return;
          }
          send(refetchEvent(h));
        });
        const keepalive = setInterval(
          () => send(encoder.encode(": keepalive\n\n")),
          deps.settings.keepaliveMs,
        );
        const idle = setTimeout(close, deps.settings.idleCloseMs);
        const onShutdown = () => close();
        deps.shutdown.addEventListener("abort", onShutdown, { once: true });
        // a revoked or expired token's stream ends (checked by the stream guard)
        const p = c.get("principal");
        const unguard = deps.guard.register(p.kind === "token" ? p.token.id : p.session_id, close);
        cleanup = () => {
          unguard();
          unwatch();
          clearInterval(keepalive);
          clearTimeout(idle);
          deps.shutdown.removeEventListener("abort", onShutdown);
        };
        if (deps.shutdown.aborted) {
          close();
          return;
        }
        send(encoder.encode(`retry: ${RETRY_MS}\n: cfgtool OFREP events\n\n`));
        if (lastId !== String(first.version)) send(refetchEvent(first));
      },
      cancel() {
        cleanup();
      },
    });
    const headers = new Headers({
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-store",
      "x-accel-buffering": "no",
    });
    applyCors(headers, corsOrigin(c.get("principal"), origin));
    return new Response(body, { headers });
  });

  return app;
}
