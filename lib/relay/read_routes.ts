/**
 * The reads a relay serves besides evaluation, on the wire of `serve`
 * (docs/events.md, docs/api.md):
 *
 * - `GET /api/v1/events`: the event stream, from the relay's holdings. The
 *   first event per namespace is a snapshot (with `prev_version` when the
 *   resume hint names a version the relay still holds); later versions are
 *   inline deltas the relay computes from the last version it sent on the
 *   connection (or snapshots, by the service's own limits); a version below
 *   the one sent (the upstream's store was restored) is a `resync`
 *   (`unknown_since`). Snapshot URLs point at the relay itself, signed with
 *   its own key. Before each event the client's token is checked again
 *   (its verdict, lib/relay/verdicts.ts); a refused one ends the stream.
 * - `GET /api/v1/tenants/{t}/namespaces/{ns}/closure`: a held version's
 *   closure archive, by bearer (`manifest.read`) or signed token.
 * - `GET /api/v1/tenants/{t}/namespaces/{ns}/manifest`: a held version,
 *   tar.gz or JSON, with its ETag.
 * - `GET /api/v1/me`: the upstream's description of the caller's token
 *   (a relay that follows this relay checks tokens with it).
 * - `GET /api/v1/tenants`, `GET /api/v1/tenants/{t}/namespaces`: the
 *   tenants and namespaces the relay holds that the token may read (a
 *   relay that follows this one finds its namespaces with them).
 *
 * @module
 */
import { Hono } from "hono";
import { CfgtoolError, InvalidRequestError, NotFoundError, UnauthorizedError } from "../errors.ts";
import type { AppEnv } from "../http/deps.ts";
import { closureRequest } from "../http/closure.ts";
import {
  connectionTenant,
  MAX_QUERY_BYTES,
  parseSubscriptions,
  queryBytes,
  resumeHints,
} from "../http/events.ts";
import { sseFrame, sseHeaders } from "../events/sse.ts";
import { routeStreams } from "../events/route_streams.ts";
import { chooseDelivery, computeDelta } from "../closure/delta.ts";
import { signClosureToken, verifyClosureToken } from "../closure/signed_token.ts";
import { packArchive } from "../closure/archive.ts";
import type { ClosureState } from "../client/closure_state.ts";
import { closureUrl } from "../protocol/closure_url.ts";
import { etagMatches, versionEtag } from "../protocol/etag.ts";
import { inlineData, inlineParts, resyncData, snapshotData } from "../protocol/events.ts";
import { encodeSubscription, type FlagSelection } from "../protocol/subscription.ts";
import { assertMayRead, mayRead } from "./access.ts";
import { presentedCredential, relayAuthn, verdictOf } from "./authn.ts";
import type { RelayDeps } from "./deps.ts";
import { type Held, subscriptionArchive, subscriptionClosure } from "./holdings.ts";
import type { Verdict } from "./verdicts.ts";

const encoder = new TextEncoder();

/** What one connection last sent about one namespace. */
interface Sent {
  slug: string;
  flags: FlagSelection;
  subscription: string;
  /** The full state of the last event (null before the first). */
  state: ClosureState | null;
  /** The subscription's closure hash in that event. */
  hash: string | null;
  /** Events of this namespace run one at a time, in order. */
  queue: Promise<void>;
}

interface Connection {
  tenant: string;
  token: string;
  verdict: Verdict;
  origin: string;
  namespaces: Map<string, Sent>;
  write(frame: Uint8Array): boolean;
  close(): void;
}

/**
 * The read routes: the event stream, the closure and manifest downloads,
 * `me` and the listings.
 *
 * @param deps the relay's dependencies
 * @returns the routes (mounted at `/api/v1`) and the number of open event streams
 *
 * @example
 * ```ts ignore
 * const reads = relayReadRoutes(deps);
 * app.route("/api/v1", reads.app);
 * ```
 */
export function relayReadRoutes(deps: RelayDeps): { app: Hono<AppEnv>; streams: () => number } {
  const app = new Hono<AppEnv>();
  const streams = routeStreams(deps.settings, deps.shutdown);
  const connections = new Set<Connection>();
  const bearer = relayAuthn(deps, { from: "bearer" });

  async function snapshotUrl(conn: Connection, sent: Sent, version: number): Promise<string> {
    const tuple = {
      tenant: conn.tenant,
      namespace: sent.slug,
      version,
      subscription: sent.subscription,
    };
    const token = await signClosureToken(deps.key, conn.verdict.id, tuple);
    return closureUrl(conn.origin, conn.tenant, sent.slug, version, sent.subscription, token);
  }

  async function snapshotFrame(
    conn: Connection,
    sent: Sent,
    state: ClosureState,
    prev: { version: number; hash: string } | null,
  ): Promise<{ frame: Uint8Array; hash: string }> {
    const closure = await subscriptionClosure(state, sent.flags);
    const archive = await subscriptionArchive(state, sent.flags);
    const data = snapshotData({
      namespace: sent.slug,
      version: state.version,
      prev_version: prev?.version ?? null,
      prev_closure_hash: prev?.hash ?? null,
      closure_hash: closure.hash,
      snapshot_url: await snapshotUrl(conn, sent, state.version),
      snapshot_size_bytes: archive.length,
    });
    return {
      frame: sseFrame("version", `${sent.slug}:${state.version}`, data),
      hash: closure.hash,
    };
  }

  /** The first event of a namespace on a connection. */
  async function first(conn: Connection, sent: Sent, held: Held, hint: number | null) {
    const base = hint === null ? undefined : deps.holdings.at(conn.tenant, sent.slug, hint);
    const prev = base !== undefined && base.version <= held.state.version
      ? { version: base.version, hash: (await subscriptionClosure(base, sent.flags)).hash }
      : null;
    const { frame, hash } = await snapshotFrame(conn, sent, held.state, prev);
    sent.state = held.state;
    sent.hash = hash;
    conn.write(frame);
  }

  /** Checks the connection's token again for `slug`; a refused one closes the connection. */
  async function stillMayRead(conn: Connection, slug: string): Promise<boolean> {
    try {
      conn.verdict = await deps.verdicts.check(conn.token);
      assertMayRead(conn.verdict, { tenant: conn.tenant, namespace: slug });
      return true;
    } catch {
      conn.close();
      return false;
    }
  }

  /** The first event of a namespace subscribed before it had a version. */
  async function firstLater(conn: Connection, sent: Sent, held: Held) {
    if (!await stillMayRead(conn, sent.slug)) return;
    await first(conn, sent, held, null);
  }

  /** A later version of a namespace on a connection. */
  async function next(conn: Connection, sent: Sent, state: ClosureState) {
    const before = sent.state;
    if (before === null || sent.hash === null) return;
    if (state.version <= before.version && state.hash === before.hash) return;
    // each event goes out only while the token may still read there
    if (!await stillMayRead(conn, sent.slug)) return;
    if (state.version < before.version) {
      const data = resyncData(
        sent.slug,
        state.version,
        "unknown_since",
        await snapshotUrl(conn, sent, state.version),
      );
      sent.state = state;
      sent.hash = (await subscriptionClosure(state, sent.flags)).hash;
      conn.write(sseFrame("resync", `${sent.slug}:${state.version}`, data));
      return;
    }
    const prevClosure = await subscriptionClosure(before, sent.flags);
    const nextClosure = await subscriptionClosure(state, sent.flags);
    if (nextClosure.hash === sent.hash) return; // byte-identical closure: no event
    const entries = await computeDelta({
      prev: prevClosure.files,
      next: nextClosure.files,
      prevPaths: before.files,
      nextPaths: state.files,
    });
    const data = inlineData(
      inlineParts(sent.slug, state.version, sent.hash, nextClosure.hash, entries),
      before.version,
    );
    const delivery = chooseDelivery(
      {
        first: false,
        baseUnavailable: false,
        entries: entries.length,
        dataBytes: encoder.encode(data).length,
      },
      deps.settings,
    );
    if (delivery === "inline") {
      sent.state = state;
      sent.hash = nextClosure.hash;
      conn.write(sseFrame("version", `${sent.slug}:${state.version}`, data));
      return;
    }
    const snap = await snapshotFrame(conn, sent, state, {
      version: before.version,
      hash: sent.hash,
    });
    sent.state = state;
    sent.hash = snap.hash;
    conn.write(snap.frame);
  }

  deps.holdings.onChange(({ held }) => {
    for (const conn of connections) {
      if (conn.tenant !== held.tenant) continue;
      const sent = conn.namespaces.get(held.namespace);
      if (sent === undefined) continue;
      sent.queue = sent.queue.then(() =>
        sent.state === null ? firstLater(conn, sent, held) : next(conn, sent, held.state)
      ).catch((err) => {
        deps.log("error", "relay: event not sent", { error: (err as Error).message });
        conn.close();
      });
    }
  });

  app.get("/events", bearer, (c) => {
    const url = new URL(c.req.url);
    if (queryBytes(url.search) > MAX_QUERY_BYTES) return c.body(null, 414);
    const principal = c.get("principal");
    const verdict = verdictOf(c);
    const subs = parseSubscriptions(c.req.queries("ns") ?? []);
    const tenant = connectionTenant(principal, subs);
    const helds: (Held | undefined)[] = [];
    for (const s of subs) {
      assertMayRead(verdict, { tenant, namespace: s.slug });
      const held = deps.holdings.get(tenant, s.slug);
      // known upstream without a version yet: accepted, its first event comes with its first version
      if (held === undefined && !deps.holdings.knows(tenant, s.slug)) {
        throw new CfgtoolError(
          "invalid_subscription",
          `No namespace ${s.slug} in tenant ${tenant}`,
          { status: 400, details: { reason: "unknown_namespace", namespace: s.slug } },
        );
      }
      helds.push(held);
    }
    const hints = resumeHints(c, tenant);
    const stream = streams.open();
    if (!stream.closed) {
      const conn: Connection = {
        tenant,
        token: presentedCredential(c, "bearer")!,
        verdict,
        origin: deps.publicUrl ?? url.origin,
        namespaces: new Map(),
        write: (f) => stream.write(f),
        close: () => stream.close(),
      };
      subs.forEach((s, i) => {
        const sent: Sent = {
          slug: s.slug,
          flags: s.flags,
          subscription: encodeSubscription(s.flags),
          state: null,
          hash: null,
          queue: Promise.resolve(),
        };
        const held = helds[i];
        if (held !== undefined) sent.queue = first(conn, sent, held, hints.get(s.slug) ?? null);
        conn.namespaces.set(s.slug, sent);
      });
      connections.add(conn);
      stream.onClose(() => connections.delete(conn));
    }
    return new Response(stream.body, { status: 200, headers: sseHeaders() });
  });

  app.get(
    "/tenants/:tenant/namespaces/:ns/closure",
    relayAuthn(deps, { from: "bearer", required: false }),
    async (c) => {
      const { tenant, namespace, version, subscription, flags } = closureRequest(c);
      const principal = c.get("principal");
      const token = c.req.query("token");
      if (principal !== undefined) {
        assertMayRead(verdictOf(c), { tenant, namespace });
      } else if (token === undefined) {
        throw new UnauthorizedError(
          "Missing credential: send Authorization: Bearer <token> or a signed token parameter",
        );
      } else if (
        await verifyClosureToken(deps.key, token, { tenant, namespace, version, subscription }) ===
          null
      ) {
        throw new CfgtoolError(
          "closure_token_invalid",
          "Signed closure token is invalid, expired or for another closure",
          { status: 401 },
        );
      }
      const state = heldVersion(deps, tenant, namespace, version);
      const closure = await subscriptionClosure(state, flags);
      const etag = versionEtag(version, closure.hash);
      const headers: Record<string, string> = { etag, "cache-control": "private, max-age=60" };
      if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
      const archive = await subscriptionArchive(state, flags);
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "content-type": "application/x-tar",
        "content-length": String(archive.length),
      });
    },
  );

  app.get("/tenants/:tenant/namespaces/:ns/manifest", bearer, async (c) => {
    const tenant = c.req.param("tenant");
    const namespace = c.req.param("ns");
    assertMayRead(verdictOf(c), { tenant, namespace });
    const v = c.req.query("version");
    let state: ClosureState;
    if (v === undefined || v === "") {
      const held = deps.holdings.get(tenant, namespace);
      if (held === undefined) {
        throw new NotFoundError("namespace_not_found", `No namespace ${tenant}/${namespace}`);
      }
      state = held.state;
    } else {
      if (!/^[1-9]\d{0,14}$/.test(v)) {
        throw new InvalidRequestError("version must be a positive integer", {
          details: { field: "version" },
        });
      }
      state = heldVersion(deps, tenant, namespace, Number(v));
    }
    const etag = versionEtag(state.version, state.hash);
    const headers = { etag, "cache-control": "private, no-cache", vary: "Accept" };
    if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
    if (!(c.req.header("accept") ?? "").includes("application/json")) {
      const archive = await packArchive(state.files);
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "content-type": "application/gzip",
        "content-disposition": `attachment; filename="${namespace}-v${state.version}.tar.gz"`,
      });
    }
    const files: Record<string, string> = {};
    for (const [path, bytes] of state.files) files[path] = new TextDecoder().decode(bytes);
    return c.json({ version: state.version, closure_hash: state.hash, files }, 200, headers);
  });

  app.get("/me", bearer, (c) => c.json({ principal: verdictOf(c).principal }));

  app.get("/tenants", bearer, (c) => {
    const v = verdictOf(c);
    const slugs = [
      ...new Set([...deps.holdings.list(), ...deps.holdings.awaiting()].map((h) => h.tenant)),
    ]
      .filter((t) => v.type === "superadmin" || t === v.tenant);
    return c.json({ tenants: slugs.map((slug) => ({ slug })) });
  });

  app.get("/tenants/:tenant/namespaces", bearer, (c) => {
    const v = verdictOf(c);
    const tenant = c.req.param("tenant");
    const namespaces: { slug: string; tenant_slug: string; head: Record<string, unknown> }[] = deps
      .holdings.list()
      .filter((h) => h.tenant === tenant && mayRead(v, { tenant, namespace: h.namespace }))
      .map((h) => ({
        slug: h.namespace,
        tenant_slug: tenant,
        head: { version: h.state.version, closure_hash: h.state.hash },
      }));
    // known upstream without a version: listed at version 0, as the upstream lists them
    for (const a of deps.holdings.awaiting()) {
      if (a.tenant !== tenant || !mayRead(v, a)) continue;
      namespaces.push({ slug: a.namespace, tenant_slug: tenant, head: { version: 0 } });
    }
    namespaces.sort((a, b) => a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
    return c.json({ namespaces });
  });

  return { app, streams: () => streams.size };
}

/** A held version: 404 above the current one, 410 for one the relay no longer holds. */
function heldVersion(
  deps: RelayDeps,
  tenant: string,
  namespace: string,
  version: number,
): ClosureState {
  const held = deps.holdings.get(tenant, namespace);
  if (held === undefined || version > held.state.version) {
    throw new NotFoundError(
      "namespace_not_found",
      `No version ${version} of ${tenant}/${namespace}: the current version is ${
        held?.state.version ?? 0
      }`,
    );
  }
  const state = deps.holdings.at(tenant, namespace, version);
  if (state === undefined) {
    throw new CfgtoolError(
      "closure_unavailable",
      `This relay no longer holds version ${version}; fetch a newer version`,
      { status: 410, details: { current_version: held.state.version } },
    );
  }
  return state;
}
