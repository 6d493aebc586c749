/**
 * `GET /api/v1/events` (docs/events.md): validates the subscription before
 * the stream starts (400 / 403 / 414 / 429 with the spec's codes), then
 * hands the connection to the process's event hub (lib/events/hub.ts), which sends
 * Server-Sent Events until the client leaves, the connection idles out,
 * the credential ends or may no longer read a subscribed namespace (checked
 * before each delivery by lib/auth/stream_guard.ts), or the server shuts
 * down.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { Principal } from "../auth/principal.ts";
import {
  MAX_FLAGS_PER_NAMESPACE,
  MAX_NAMESPACES,
  type NamespaceSubscription,
  parseNamespaceParam,
  parseResumeHints,
  type ResumeHint,
} from "../protocol/subscription.ts";
import { CfgtoolError, InvalidRequestError } from "../errors.ts";
import { SSE_HEADERS } from "../events/sse.ts";
import { admitEventStream } from "../services/streams.ts";
import type { AppDeps, AppEnv } from "./deps.ts";

/** Longest accepted query string, bytes. */
export const MAX_QUERY_BYTES = 8 * 1024;

/**
 * The events route (mounted at `/events` under the authenticated API) and
 * its hub.
 *
 * @param deps the app's dependencies
 * @returns the route
 *
 * @example
 * ```ts ignore
 * api.route("/events", eventRoutes(deps));
 * ```
 */
export function eventRoutes(deps: AppDeps): Hono<AppEnv> {
  const hub = deps.runtime.hub;
  const app = new Hono<AppEnv>();
  app.get("/", async (c) => {
    const url = c.req.url; // absolute, as the runtime gives it (no fragment)
    const q = url.indexOf("?");
    if (q >= 0 && queryBytes(url.slice(q)) > MAX_QUERY_BYTES) return c.body(null, 414);
    const principal = c.get("principal");
    const subs = parseSubscriptions(c.req.queries("ns") ?? []);
    const tenant = connectionTenant(principal, subs);
    const slugs = subs.map((s) => s.slug);
    await admitEventStream(deps, principal, tenant, slugs);
    const hints = resumeHints(c, tenant);
    const credentialId = principal.kind === "token" ? principal.token.id : principal.session_id;
    const body = await hub.open({
      principalId: principal.kind === "token" ? principal.token.id : principal.user_id,
      credentialId,
      // the guard ends the stream when the credential ends, and before each
      // delivery checks that it may still read the namespace
      watch: (close) =>
        deps.runtime.guard.watch(
          credentialId,
          close,
          slugs.map((namespace) => ({ action: "manifest.read", target: { tenant, namespace } })),
        ),
      tenant,
      origin: deps.publicUrl ?? originOf(url),
      namespaces: subs.map((s) => ({
        slug: s.slug,
        flags: s.flags,
        hint: hints.get(s.slug) ?? null,
      })),
    });
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  });
  return app;
}

/**
 * Scheme and host of an absolute request URL as the runtime gives it
 * (already normalised: what `new URL(url).origin` answers, without
 * parsing the URL once more per stream).
 *
 * @param url the request's URL
 * @returns `scheme://host[:port]`
 *
 * @example
 * ```ts
 * import { originOf } from "./events.ts";
 * const url = "http://127.0.0.1:8080/api/v1/events?ns=web:*";
 * if (originOf(url) !== new URL(url).origin) throw new Error(originOf(url));
 * if (originOf("https://[::1]:8443/x") !== "https://[::1]:8443") throw new Error();
 * ```
 */
export function originOf(url: string): string {
  const host = url.indexOf("//") + 2;
  const path = url.indexOf("/", host);
  return path < 0 ? url : url.slice(0, path);
}

const encoder = new TextEncoder();

/**
 * Length of a query string without its `?`: in UTF-8 bytes when it could be
 * over the limit, else in UTF-16 units (at most a third of the bytes, so
 * under the limit either way), which saves encoding every query. Shared
 * with the relay's event stream (lib/relay/).
 *
 * @param search the URL's `search`
 * @returns its length, as compared with {@linkcode MAX_QUERY_BYTES}
 *
 * @example
 * ```ts
 * import { queryBytes } from "./events.ts";
 * if (queryBytes("?ns=web:*") !== 8) throw new Error();
 * ```
 */
export function queryBytes(search: string): number {
  const chars = search.length - (search.startsWith("?") ? 1 : 0);
  if (chars * 3 <= MAX_QUERY_BYTES) return chars; // at most 3 bytes per UTF-16 unit
  return encoder.encode(search.replace(/^\?/, "")).length;
}

function invalidSubscription(message: string, reason: string, namespace?: string): CfgtoolError {
  return new CfgtoolError("invalid_subscription", message, {
    status: 400,
    details: namespace === undefined ? { reason } : { reason, namespace },
  });
}

/**
 * Parses and checks the `ns` values: count, syntax, per-namespace flag cap,
 * repeats (400 `invalid_request` / `invalid_subscription`). Shared with the
 * relay's event stream (lib/relay/).
 *
 * @param values the `ns` query values
 * @returns the subscriptions
 *
 * @example
 * ```ts
 * import { parseSubscriptions } from "./events.ts";
 * const [s] = parseSubscriptions(["web:b,a"]);
 * if (s?.slug !== "web" || s.flags === "*" || s.flags.join() !== "a,b") throw new Error();
 * ```
 */
export function parseSubscriptions(values: string[]): NamespaceSubscription[] {
  if (values.length === 0) {
    throw new InvalidRequestError(
      "ns is required: repeat ns=<slug>:<flag-list> for each namespace",
    );
  }
  if (values.length > MAX_NAMESPACES) {
    throw invalidSubscription(
      `A connection covers at most ${MAX_NAMESPACES} namespaces, not ${values.length}`,
      "too_many_namespaces",
    );
  }
  const subs = values.map(parseNamespaceParam);
  const seen = new Set<string>();
  for (const s of subs) {
    const n = s.flags === "*" ? 1 : s.flags.length;
    if (n > MAX_FLAGS_PER_NAMESPACE) {
      throw invalidSubscription(
        `At most ${MAX_FLAGS_PER_NAMESPACE} flags per namespace, not ${n} in ${s.slug}`,
        "too_many_flags",
        s.slug,
      );
    }
    if (seen.has(s.slug)) {
      throw new InvalidRequestError(`ns lists namespace ${s.slug} more than once`);
    }
    seen.add(s.slug);
  }
  return subs;
}

/**
 * The one tenant of the connection: a tenant-bound token's own tenant (a
 * `<tenant>/` prefix, if written, must name it); principals bound to no
 * tenant (superadmin tokens, human sessions) write `<tenant>/<slug>`, the
 * same tenant in every value. Shared with the relay's event stream.
 *
 * @param p the caller
 * @param subs its subscriptions
 * @returns the tenant
 *
 * @example
 * ```ts ignore
 * const tenant = connectionTenant(principal, parseSubscriptions(["acme/web:*"]));
 * ```
 */
export function connectionTenant(p: Principal, subs: NamespaceSubscription[]): string {
  const bound = p.kind === "token" && p.token.type !== "superadmin" ? p.token.tenant_slug : null;
  const tenants = new Set(subs.map((s) => s.tenant ?? bound));
  if (tenants.has(null)) {
    throw new InvalidRequestError(
      "This credential is bound to no tenant: write ns=<tenant>/<slug>:<flag-list>",
    );
  }
  if (tenants.size > 1) {
    throw new InvalidRequestError("A connection covers namespaces of one tenant only");
  }
  return [...tenants][0]!;
}

/**
 * `since` hints, overridden per slug by `Last-Event-ID`; hints of other
 * tenants are ignored. Shared with the relay's event stream.
 *
 * @param c the request
 * @param tenant the connection's tenant
 * @returns slug → the version the client holds
 *
 * @example
 * ```ts ignore
 * const hints = resumeHints(c, tenant);
 * ```
 */
export function resumeHints(c: Context<AppEnv>, tenant: string): Map<string, number> {
  const out = new Map<string, number>();
  const add = (h: ResumeHint) => {
    if (h.tenant === null || h.tenant === tenant) out.set(h.slug, h.version);
  };
  const since = c.req.query("since");
  if (since !== undefined) parseResumeHints(since, "since").forEach(add);
  const last = c.req.header("last-event-id");
  if (last !== undefined && last.trim() !== "") {
    try {
      parseResumeHints(last, "Last-Event-ID").slice(0, 1).forEach(add);
    } catch {
      // advisory: a malformed id is ignored, the first event is a snapshot anyway
    }
  }
  return out;
}
