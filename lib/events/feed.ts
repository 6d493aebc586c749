/**
 * The stream hub's work for one namespace in this process: ONE head-watcher
 * subscription, and per distinct subscription (canonical flag list) one
 * group that holds the closure its members hold and computes each delta
 * once for all of them. Head changes and joins run one at a time in a
 * queue, so every member sees the namespace's versions in order. The
 * connections that join while the queue is busy are taken together by its
 * next turn: their rights are checked in one pass, and their first events
 * are written without a promise each when the snapshot event is built
 * already (a reconnect storm costs one turn per burst, not one per stream).
 *
 * Per head change and group: the new closure is selected once; an
 * unchanged closure sends nothing; otherwise the delta is serialized once
 * and each member gets the inline frame for its `prev_version` (frames are
 * shared between members with the same one), a snapshot when a snapshot
 * rule holds, or a `resync` when its base can no longer be rebuilt after it
 * had been following inline events.
 *
 * The hot path is the members that hold the previous head, nearly all of
 * them: they are sorted out without a promise each and get the one shared
 * frame in slices of {@linkcode FANOUT_SLICE}, with a turn of the event
 * loop between slices (lib/events/next_turn.ts), so the runtime sends the
 * first slices while the later ones are queued. A version is parsed only
 * for subscriptions that need its model (not `*`), and a snapshot event is
 * built once for every member of one principal that joins within the same
 * second (its signed URL is the same). The "event fan-out" log line gives
 * the time to the frame (`delta_ms`) and to the last write (`ms`).
 *
 * Before anything is sent (a first snapshot, a version, a resync) the
 * receiving members are re-authorised through the hub's
 * {@linkcode StreamAccess} (lib/events/access.ts): once per head change
 * the process reads the credential epoch, then each member's verdict,
 * shared by the streams of its credential, is one comparison unless a
 * change made it stale. A member that may no longer read the namespace is
 * closed and gets nothing about the version.
 *
 * @module
 */
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import type { ClosureMemo } from "../closure/memo.ts";
import { chooseDelivery, computeDelta, countDelta, type DeliveryLimits } from "../closure/delta.ts";
import { signClosureToken, SIGNED_TOKEN_TTL_MS } from "../closure/signed_token.ts";
import {
  canonicalFlagList,
  encodeSubscription,
  type FlagSelection,
} from "../protocol/subscription.ts";
import type { Logger } from "../log.ts";
import type { HeadWatcher } from "../store/head_watcher.ts";
import { versionStatus } from "../store/retention.ts";
import { getHead, type Head } from "../store/versions.ts";
import {
  type Closure,
  closureArchive,
  closureOf,
  type LoadedVersion,
  loadVersion,
} from "./closures.ts";
import type { NamespaceState, StreamConnection } from "./connection.ts";
import { closureUrl } from "../protocol/closure_url.ts";
import {
  inlineData,
  inlineParts,
  resyncData,
  type ResyncReason,
  snapshotData,
} from "../protocol/events.ts";
import { sseFrame } from "./sse.ts";
import { nextTurn } from "./next_turn.ts";
import { tarSize } from "./closures.ts";
import { admitted, type StreamAccess } from "./access.ts";

/** What a feed needs from the hub. */
export interface FeedDeps {
  kv: Deno.Kv;
  key: CryptoKey;
  heads: HeadWatcher;
  limits: DeliveryLimits;
  log: Logger;
  /** The process's manifest workers (large versions load and archive there). */
  workers?: ManifestWorkers;
  /** The process's closure memo. */
  closures: ClosureMemo;
  /** Re-authorises members before each delivery (absent: authorised at open only). */
  access?: StreamAccess;
  now: () => Date;
}

/** A group's current closure: what every member holds (or will after its first event). */
interface Base {
  loaded: LoadedVersion;
  closure: Closure;
  /** Size of the closure's tar archive (computed once, for every snapshot event). */
  tarSize?: number;
}

/** Members sharing one subscription of the namespace. */
interface Group {
  flags: FlagSelection;
  /** Encoded subscription (snapshot URLs). */
  subscription: string;
  base: Base | null;
  /** The base whose archive was last put in the memo (once per base, not per member). */
  warmed: Base | null;
  /**
   * The last snapshot event built (or being built), reused while its signed
   * URL is the same (see #snapshotFrame).
   */
  snapshot: { key: string; base: Base; frame: Uint8Array | Promise<Uint8Array> } | null;
  members: Set<StreamConnection>;
}

/** Counters, for tests and metrics. */
export interface FeedStats {
  groups: number;
  members: number;
  /** Deltas computed (one per group and head change with a changed closure). */
  deltas: number;
}

/**
 * One namespace's feed.
 *
 * @example
 * ```ts ignore
 * const feed = new NamespaceFeed(deps, "acme", "web", () => feeds.delete(id));
 * await feed.join(conn, state, null);
 * ```
 */
export class NamespaceFeed {
  readonly tenant: string;
  readonly slug: string;
  readonly #deps: FeedDeps;
  readonly #groups = new Map<string, Group>();
  readonly #onEmpty: () => void;
  readonly #unwatch: () => void;
  readonly #loaded = new Map<number, LoadedVersion>();
  #queue: Promise<void> = Promise.resolve();
  #deltas = 0;
  #pendingJoins = 0;
  /** Connections that joined since the queue last took the joins. */
  #joining: { conn: StreamConnection; hint: number | null }[] = [];
  /** The queued turn that will take them, or null. */
  #joinTurn: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: FeedDeps, tenant: string, slug: string, onEmpty: () => void) {
    this.#deps = deps;
    this.tenant = tenant;
    this.slug = slug;
    this.#onEmpty = onEmpty;
    this.#unwatch = deps.heads.watch(tenant, slug, () => this.#enqueue(() => this.#process()));
  }

  /** Counters. */
  get stats(): FeedStats {
    let members = 0;
    for (const g of this.#groups.values()) members += g.members.size;
    return { groups: this.#groups.size, members, deltas: this.#deltas };
  }

  /**
   * Adds a connection (its state for this namespace is already in
   * `conn.states`) and sends its first event, a snapshot. `hint` is the
   * resume version the client sent, if any.
   */
  join(conn: StreamConnection, hint: number | null): Promise<void> {
    this.#pendingJoins++;
    this.#joining.push({ conn, hint });
    // Every connection that joins before the queue gets to the joins is
    // handled by the same turn: one check of their rights, one snapshot
    // event per principal, no task of their own.
    this.#joinTurn ??= this.#enqueue(() => this.#joinAll());
    return this.#joinTurn;
  }

  /** The joins waiting for the queue, in arrival order. */
  async #joinAll(): Promise<void> {
    const joins = this.#joining;
    this.#joining = [];
    this.#joinTurn = null;
    try {
      const ready: StreamConnection[] = [];
      for (const { conn, hint } of joins) {
        try {
          const entered = this.#enter(conn, hint);
          if (entered === true || (entered !== false && await entered)) ready.push(conn);
        } catch (err) {
          this.#joinFailed(conn, err);
        }
      }
      if (ready.length === 0) return;
      let allowed: StreamConnection[];
      try {
        allowed = await this.#admitted(ready);
      } catch (err) {
        for (const conn of ready) this.#joinFailed(conn, err);
        return;
      }
      const sending: Promise<void>[] = [];
      for (const conn of allowed) {
        const state = conn.states.get(this.slug);
        const group = state && this.#groups.get(canonicalFlagList(state.flags));
        if (state === undefined || group?.base == null || !group.members.has(conn)) continue;
        try {
          const sent = this.#sendFirst(conn, state, group);
          if (sent !== undefined) sending.push(sent.catch((err) => this.#joinFailed(conn, err)));
        } catch (err) {
          this.#joinFailed(conn, err);
        }
      }
      await Promise.all(sending);
    } finally {
      this.#pendingJoins -= joins.length;
      if (this.#groups.size === 0 && this.#pendingJoins === 0) this.stop();
    }
  }

  /** A join that failed: the connection is closed (the client reconnects) and the failure logged. */
  #joinFailed(conn: StreamConnection, err: unknown): void {
    conn.close();
    this.#logFailure(err);
  }

  /**
   * Puts a connection in its group, the group's base read first when it
   * has none, and its resume hint resolved. True when its first event is
   * due (false: closed, stopped, or nothing committed yet); synchronous
   * unless something must be read.
   */
  #enter(conn: StreamConnection, hint: number | null): boolean | Promise<boolean> {
    const state = conn.states.get(this.slug);
    if (conn.closed || state === undefined || this.#stopped) return false;
    const group = this.#groupOf(state.flags);
    group.members.add(conn);
    const base = group.base;
    if (base === null || (hint !== null && hint < base.loaded.meta.version)) {
      return this.#enterSlowly(conn, state, group, hint);
    }
    const version = base.loaded.meta.version;
    state.hint = hint === version ? { version, hash: base.closure.hash } : null;
    return version !== 0;
  }

  async #enterSlowly(
    conn: StreamConnection,
    state: NamespaceState,
    group: Group,
    hint: number | null,
  ): Promise<boolean> {
    if (group.base === null) {
      const head = await getHead(this.#deps.kv, this.tenant, this.slug);
      if (head === null) {
        this.#closeAll("namespace deleted");
        return false;
      }
      const loaded = await this.#load(head.version);
      if (loaded === null) throw new Error(`Cannot read head version ${head.version}`);
      group.base ??= { loaded, closure: await closureOf(loaded, group.flags) };
    }
    state.hint = await this.#resolveHint(hint, group);
    return !conn.closed && group.base.loaded.meta.version !== 0;
  }

  /** The group of a subscription, made when it is the first. */
  #groupOf(flags: FlagSelection): Group {
    const canonical = canonicalFlagList(flags);
    let group = this.#groups.get(canonical);
    if (group === undefined) {
      group = {
        flags,
        subscription: encodeSubscription(flags),
        base: null,
        warmed: null,
        snapshot: null,
        members: new Set(),
      };
      this.#groups.set(canonical, group);
    }
    return group;
  }

  /** Removes a connection; the last one stops the feed. */
  leave(conn: StreamConnection): void {
    for (const [k, g] of this.#groups) {
      if (g.members.delete(conn) && g.members.size === 0) this.#groups.delete(k);
    }
    if (this.#groups.size === 0 && this.#pendingJoins === 0) this.stop();
  }

  /** Stops watching (idempotent). */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unwatch();
    this.#onEmpty();
  }

  /** Waits for queued work (tests). */
  async idle(): Promise<void> {
    let q: Promise<void>;
    do {
      q = this.#queue;
      await q;
    } while (q !== this.#queue);
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task).catch((err) => this.#logFailure(err));
    this.#queue = run;
    return run;
  }

  #logFailure(err: unknown): void {
    this.#deps.log("error", "event feed failed", {
      tenant: this.tenant,
      namespace: this.slug,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  }

  /** Reads a version, keeping the last few in memory (they are shared by every group). */
  async #load(version: number): Promise<LoadedVersion | null> {
    const hit = this.#loaded.get(version);
    if (hit !== undefined) return hit;
    const loaded = await loadVersion(
      this.#deps.kv,
      this.tenant,
      this.slug,
      version,
      this.#deps.workers,
    );
    if (loaded !== null) {
      this.#loaded.set(version, loaded);
      for (const v of this.#loaded.keys()) {
        if (this.#loaded.size <= 2) break;
        this.#loaded.delete(v);
      }
    }
    return loaded;
  }

  async #resolveHint(
    hint: number | null,
    group: Group,
  ): Promise<{ version: number; hash: string } | null> {
    const base = group.base!;
    if (hint === null || hint > base.loaded.meta.version) return null;
    if (hint === base.loaded.meta.version) return { version: hint, hash: base.closure.hash };
    const loaded = await loadVersion(
      this.#deps.kv,
      this.tenant,
      this.slug,
      hint,
      this.#deps.workers,
    );
    if (loaded === null) return null; // pruned or unrecorded: the first snapshot starts afresh
    return { version: hint, hash: (await closureOf(loaded, group.flags)).hash };
  }

  async #process(): Promise<void> {
    if (this.#stopped) return;
    const head = await getHead(this.#deps.kv, this.tenant, this.slug);
    if (head === null) return this.#closeAll("namespace deleted");
    // Every role change committed before this version counts for its delivery.
    await this.#deps.access?.sync();
    for (const group of [...this.#groups.values()]) await this.#advance(group, head);
  }

  /**
   * The members that may still read the namespace, their verdicts brought
   * up to date first (one comparison each while nothing changed); the
   * others are closed, and get nothing about what was about to be sent.
   */
  async #admitted(members: StreamConnection[]): Promise<StreamConnection[]> {
    const access = this.#deps.access;
    if (access === undefined) return members;
    const grantOf = (m: StreamConnection) => m.states.get(this.slug)?.grant;
    await access.check(members.map(grantOf));
    return admitted(members, grantOf, (m) => m.closed, (m) => m.close());
  }

  #closeAll(reason: string): void {
    this.#deps.log("info", "closing event streams", {
      tenant: this.tenant,
      namespace: this.slug,
      reason,
    });
    for (const g of this.#groups.values()) for (const c of g.members) c.close();
  }

  async #advance(group: Group, head: Head): Promise<void> {
    const base = group.base;
    if (base === null || head.version === base.loaded.meta.version) return;
    const started = performance.now();
    const loaded = await this.#load(head.version);
    if (loaded === null) return; // pruned already: a later head will come
    const next: Base = { loaded, closure: await closureOf(loaded, group.flags) };
    group.base = next;
    const members = await this.#admitted([...group.members]);
    const version = head.version;
    if (version < base.loaded.meta.version) {
      // The head went back (a restore): clients hold versions the server no longer has.
      await Promise.all(members.map((m) => this.#resync(m, group, "unknown_since")));
      return;
    }
    const unchanged = next.closure.hash === base.closure.hash;
    // A change of more files than a delta may carry goes out as a snapshot:
    // its delta (a digest and base64 of every file) is never built.
    const count = unchanged ? 0 : countDelta(base.closure.files, next.closure.files);
    const entries = unchanged || count > this.#deps.limits.deltaFileLimit
      ? []
      : await computeDelta({
        prev: base.closure.files,
        next: next.closure.files,
        prevPaths: base.loaded.files,
        nextPaths: loaded.files,
      });
    if (!unchanged) this.#deltas++;
    const parts = inlineParts(this.slug, version, base.closure.hash, next.closure.hash, entries);
    const prepared = performance.now();
    // Sort the members once, without a promise each: those holding the old
    // head (nearly all of them) take the one shared inline frame; the rest
    // (first events, snapshots, older bases) are per member and rarer.
    const work: (Promise<unknown> | undefined)[] = [];
    const byVersion = new Map<number, StreamConnection[]>();
    for (const m of members) {
      const state = m.states.get(this.slug);
      if (state === undefined || m.closed) continue;
      if (state.version === null) {
        work.push(this.#sendFirst(m, state, group));
        continue;
      }
      if (unchanged) continue; // byte-identical closure: no event
      if (state.hash !== base.closure.hash) {
        // never inline onto a state we did not send
        work.push(this.#sendSnapshot(m, group, { version: state.version, hash: state.hash! }));
        continue;
      }
      let held = byVersion.get(state.version);
      if (held === undefined) byVersion.set(state.version, held = []);
      held.push(m);
    }
    for (const [held, holders] of byVersion) {
      const status = held === base.loaded.meta.version
        ? "available"
        : await versionStatus(this.#deps.kv, this.tenant, this.slug, held);
      if (status !== "available") {
        for (const m of holders) {
          const state = m.states.get(this.slug)!;
          work.push(
            state.inlineSent
              ? this.#resync(m, group, status === "pruned" ? "version_too_old" : "pre_git_era")
              : this.#sendSnapshot(m, group, { version: held, hash: state.hash! }),
          );
        }
        continue;
      }
      const data = inlineData(parts, held);
      const delivery = chooseDelivery(
        { first: false, baseUnavailable: false, entries: count, dataBytes: byteLength(data) },
        this.#deps.limits,
      );
      if (delivery !== "inline") {
        for (const m of holders) {
          work.push(this.#sendSnapshot(m, group, { version: held, hash: base.closure.hash }));
        }
        continue;
      }
      await writeToAll(
        holders,
        this.slug,
        sseFrame("version", `${this.slug}:${version}`, data),
        version,
        next.closure.hash,
      );
    }
    await Promise.all(work);
    this.#deps.log("info", "event fan-out", {
      tenant: this.tenant,
      namespace: this.slug,
      version,
      subscription: group.subscription,
      members: members.length,
      entries: count,
      ms: Math.round((performance.now() - started) * 10) / 10,
      delta_ms: Math.round((prepared - started) * 10) / 10,
    });
  }

  #sendFirst(
    m: StreamConnection,
    state: NamespaceState,
    group: Group,
  ): Promise<void> | undefined {
    return this.#sendSnapshot(m, group, state.hint);
  }

  async #signedUrl(m: StreamConnection, group: Group, version: number): Promise<string> {
    const token = await signClosureToken(this.#deps.key, m.principalId, {
      tenant: this.tenant,
      namespace: this.slug,
      version,
      subscription: group.subscription,
    }, this.#deps.now());
    return closureUrl(m.origin, this.tenant, this.slug, version, group.subscription, token);
  }

  /** Warms the archive memo so the members' downloads are served from memory. */
  #warm(group: Group, base: Base): void {
    if (group.warmed === base) return;
    group.warmed = base;
    closureArchive(
      this.#deps.closures,
      this.tenant,
      this.slug,
      base.loaded.meta,
      group.flags,
      base.closure,
      () => Promise.resolve(base.loaded),
      this.#deps.workers,
    ).catch(() => {});
  }

  /** Sends a snapshot event; at once (no promise) when the event is built already. */
  #sendSnapshot(
    m: StreamConnection,
    group: Group,
    prev: { version: number; hash: string } | null,
  ): Promise<void> | undefined {
    const base = group.base!;
    this.#warm(group, base);
    const frame = this.#snapshotFrame(m, group, base, prev);
    const send = (f: Uint8Array) => {
      m.sendEvent(this.slug, f, base.loaded.meta.version, base.closure.hash, "snapshot");
    };
    if (!(frame instanceof Uint8Array)) return frame.then(send);
    send(frame);
  }

  /**
   * The snapshot event of `base` for a member. Signed URLs carry their
   * expiry in whole seconds, so every member of the same principal and
   * origin that joins within one second gets the same URL: the event is
   * built (signed, serialized, encoded) once for them, not once each, which
   * is what a reconnect storm of one service's instances costs. Members
   * that need the same event while it is being built wait for it.
   */
  #snapshotFrame(
    m: StreamConnection,
    group: Group,
    base: Base,
    prev: { version: number; hash: string } | null,
  ): Uint8Array | Promise<Uint8Array> {
    const now = this.#deps.now();
    const key = [
      m.principalId,
      m.origin,
      prev?.version ?? "",
      prev?.hash ?? "",
      Math.floor((now.getTime() + SIGNED_TOKEN_TTL_MS) / 1000),
    ].join("\n");
    const last = group.snapshot;
    if (last !== null && last.base === base && last.key === key) return last.frame;
    const building = this.#buildSnapshot(m, group, base, prev, now);
    const entry: Group["snapshot"] = { key, base, frame: building };
    group.snapshot = entry;
    building.then((frame) => {
      if (group.snapshot === entry) entry.frame = frame;
    }, () => {
      if (group.snapshot === entry) group.snapshot = null;
    });
    return building;
  }

  async #buildSnapshot(
    m: StreamConnection,
    group: Group,
    base: Base,
    prev: { version: number; hash: string } | null,
    now: Date,
  ): Promise<Uint8Array> {
    const version = base.loaded.meta.version;
    const token = await signClosureToken(this.#deps.key, m.principalId, {
      tenant: this.tenant,
      namespace: this.slug,
      version,
      subscription: group.subscription,
    }, now);
    const data = snapshotData({
      namespace: this.slug,
      version,
      prev_version: prev?.version ?? null,
      prev_closure_hash: prev?.hash ?? null,
      closure_hash: base.closure.hash,
      snapshot_url: closureUrl(
        m.origin,
        this.tenant,
        this.slug,
        version,
        group.subscription,
        token,
      ),
      snapshot_size_bytes: base.tarSize ??= tarSize(base.closure.files),
    });
    return sseFrame("version", `${this.slug}:${version}`, data);
  }

  async #resync(m: StreamConnection, group: Group, reason: ResyncReason): Promise<void> {
    const base = group.base!;
    const version = base.loaded.meta.version;
    this.#warm(group, base);
    const data = resyncData(this.slug, version, reason, await this.#signedUrl(m, group, version));
    m.sendEvent(
      this.slug,
      sseFrame("resync", `${this.slug}:${version}`, data),
      version,
      base.closure.hash,
      "resync",
    );
  }
}

/**
 * Subscribers one slice of a fan-out writes before the event loop gets a
 * turn: the runtime starts sending the first slices while later ones are
 * queued, instead of after the last of ten thousand.
 */
const FANOUT_SLICE = 512;

/**
 * Writes one shared frame to every holder, {@linkcode FANOUT_SLICE} at a
 * time with a turn of the event loop between slices.
 */
async function writeToAll(
  holders: StreamConnection[],
  slug: string,
  frame: Uint8Array,
  version: number,
  hash: string,
): Promise<void> {
  for (let i = 0; i < holders.length; i++) {
    if (i > 0 && i % FANOUT_SLICE === 0) await nextTurn();
    holders[i]!.sendEvent(slug, frame, version, hash, "inline");
  }
}

const encoder = new TextEncoder();

/** UTF-8 byte length of event data (mostly ASCII: only non-ASCII text pays for encoding). */
function byteLength(text: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) return encoder.encode(text).length;
  }
  return text.length;
}
