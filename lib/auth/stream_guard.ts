/**
 * Keeps long-lived streams honest about their credential. A stream (the
 * event stream, the OFREP event stream, the console's live stream) is
 * authenticated and authorised once, when it opens; afterwards
 *
 * - a token revoked or expired, a session that ended, must not keep
 *   receiving: the guard holds one entry per credential with open streams
 *   and, at a fixed interval, reads every distinct credential with batched
 *   `getMany` calls (one KV key per credential, not per stream), closing
 *   the streams whose credential is no longer valid. `recheck()` runs a
 *   check at once: the token endpoints call it after a revocation, and the
 *   runtime whenever the credential epoch moves;
 * - a principal that may no longer read a namespace (an admin removed, a
 *   namespace deleted) must not receive its next version: a stream watched
 *   with {@linkcode StreamGuard.watch} gets one {@linkcode StreamGrant} per
 *   read, and the feeds call {@linkcode StreamGuard.check} before each
 *   delivery. Authorisation is computed from the current roles
 *   (lib/auth/permissions.ts) and the credential's current record.
 *
 * ## Cost of the check before a delivery
 *
 * A grant belongs to one (credential, action, target) and is shared by
 * every stream of that credential making that read. Its verdict is tagged
 * with the credential cache's generation (lib/auth/credential_cache.ts),
 * which changes whenever a write that changes what any credential may do
 * bumps the credential epoch, and with the instant the credential ends on
 * its own (token expiry, session end or idle limit). While neither moved,
 * the verdict stands: checking a subscriber is one comparison. Otherwise
 * the verdict is computed again once per grant, from one batched read of
 * the credentials' records. The feeds call {@linkcode StreamGuard.sync}
 * once per new version (one read of the epoch for the whole process), so
 * a change committed before the version is counted even where the
 * cache's poll has not seen it yet.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import { effectiveStatus, readCredentialRecords, type TokenRecord } from "../store/tokens.ts";
import { normalizeSession } from "../store/sessions.ts";
import { type Action, can, type Target } from "./permissions.ts";
import { type Principal, sessionPrincipal } from "./principal.ts";
import { sessionLive, type SessionRecord } from "./sessions.ts";

/** What the guard needs of the process's credential cache (lib/auth/credential_cache.ts). */
export interface CredentialGeneration {
  /** Changes whenever what a credential may do may have changed; null when unknown. */
  readonly generation: number | null;
  /** Reads the credential epoch now; resolves to the generation afterwards. */
  sync(): Promise<number | null>;
}

/** Options of {@linkcode StreamGuard}. */
export interface StreamGuardOptions {
  /** Check interval of credential validity, ms (default 5000). */
  intervalMs?: number;
  /** Clock, for tests. */
  now?: () => Date;
  /**
   * The process's credential cache: its generation says when verdicts may
   * have changed. Without it every check computes the verdicts again.
   */
  credentials?: CredentialGeneration;
  /** Where closes for lost rights are logged. */
  log?: Logger;
}

/** What a stream receives: an action on a target (`manifest.read` on a namespace). */
export interface StreamRead {
  action: Action;
  target: Target;
}

/** Counters of a guard, for tests and metrics. */
export interface StreamGuardStats {
  /** Open streams watched. */
  streams: number;
  /** Distinct credentials holding them. */
  credentials: number;
  /** Verdicts computed from the store since the guard started. */
  verdicts: number;
}

/** A credential that is still valid: whom to authorise, and until when it stays valid by itself. */
export interface LiveCredential {
  /** The principal as its current record makes it. */
  principal: Principal;
  /** When it ends without any write (expiry, session end, idle limit), ms since the epoch. */
  until: number;
}

/**
 * Whether the stored record of a credential (`tok_…` token or `ssn_…`
 * session) is still valid at `now`, and if so the principal it makes and
 * until when it stays valid by itself. A stream is no request: it does not
 * keep a session alive, so a session's idle limit counts from its last
 * request.
 *
 * @param id the credential id
 * @param record the stored record (null or undefined when there is none)
 * @param now the time
 * @returns the live credential, or null when it is unknown, revoked or ended
 *
 * @example
 * ```ts
 * import { liveCredential } from "./stream_guard.ts";
 * const token = {
 *   id: "tok_1", type: "namespace-read", tenant_slug: "acme", namespace_slug: "web",
 *   status: "active", expires_at: "2030-01-02T00:00:00.000Z",
 * };
 * const now = new Date("2030-01-01T00:00:00Z");
 * const live = liveCredential("tok_1", token, now);
 * if (live?.until !== Date.parse("2030-01-02T00:00:00Z")) throw new Error();
 * if (liveCredential("tok_1", { ...token, status: "revoked" }, now) !== null) throw new Error();
 * if (liveCredential("ssn_1", null, now) !== null) throw new Error("no record, no stream");
 * ```
 */
export function liveCredential(id: string, record: unknown, now: Date): LiveCredential | null {
  if (record === null || record === undefined) return null;
  if (id.startsWith("ssn_")) {
    const session = normalizeSession(record as SessionRecord);
    if (!sessionLive(session, now.getTime())) return null;
    const idleEnd = session.idle_timeout_ms === null
      ? Infinity
      : Date.parse(session.last_seen_at) + session.idle_timeout_ms;
    return {
      principal: sessionPrincipal(session),
      until: Math.min(Date.parse(session.expires_at), idleEnd),
    };
  }
  const token = record as TokenRecord;
  if (token.status !== "active" || effectiveStatus(token, now) !== "active") return null;
  return {
    principal: { kind: "token", token },
    until: token.expires_at === null ? Infinity : Date.parse(token.expires_at),
  };
}

/**
 * One credential's right to one read, shared by every stream of that
 * credential making it. Made by {@linkcode StreamGuard.watch}.
 */
export class StreamGrant {
  /** The credential (`tok_…` or `ssn_…`). */
  readonly credentialId: string;
  /** What it reads. */
  readonly read: StreamRead;
  /** Close functions of the streams that make this read. */
  readonly streams: Set<() => void> = new Set();
  #allowed = true;
  /** The generation the verdict was computed under (null: none yet, or not trusted). */
  #generation: number | null = null;
  /** The verdict holds until then at the latest, ms since the epoch. */
  #until = -Infinity;

  /**
   * @param credentialId the credential
   * @param read what it reads
   */
  constructor(credentialId: string, read: StreamRead) {
    this.credentialId = credentialId;
    this.read = read;
  }

  /** Whether the last verdict allows the read (true before the first, as the open was just authorised). */
  get allowed(): boolean {
    return this.#allowed;
  }

  /** Whether the verdict still stands under `generation` at `nowMs`. */
  current(generation: number | null, nowMs: number): boolean {
    return generation !== null && this.#generation === generation && nowMs < this.#until;
  }

  /** Records a verdict computed under `generation`, valid until `until` at the latest. */
  decide(allowed: boolean, generation: number | null, until: number): void {
    this.#allowed = allowed;
    this.#generation = generation;
    this.#until = until;
  }
}

/** The streams of one credential, and its grants by read. */
interface Holder {
  closes: Set<() => void>;
  grants: Map<string, StreamGrant>;
}

/** Grants whose verdicts one round computes concurrently (each may read a few KV keys). */
const VERDICT_BATCH = 64;

/**
 * Closes streams whose credential (`tok_…` token id or `ssn_…` session id)
 * stops being valid, or that may no longer make the read they were opened
 * for.
 *
 * @example
 * ```ts
 * import { StreamGuard } from "./stream_guard.ts";
 * const kv = await Deno.openKv(":memory:");
 * const guard = new StreamGuard(kv, { intervalMs: 10 });
 * let closed = false;
 * guard.register("tok_gone", () => (closed = true));
 * await guard.recheck();
 * guard.close();
 * kv.close();
 * if (!closed) throw new Error("an unknown token's stream is closed");
 * ```
 */
export class StreamGuard {
  readonly #kv: Deno.Kv;
  readonly #interval: number;
  readonly #now: () => Date;
  readonly #credentials: CredentialGeneration | undefined;
  readonly #log: Logger;
  readonly #holders = new Map<string, Holder>();
  /** Verdicts being computed, shared by concurrent checks of the same grant. */
  readonly #pending = new Map<StreamGrant, Promise<void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;
  #verdicts = 0;

  /**
   * @param kv the store
   * @param options interval, clock, credential cache, logger
   */
  constructor(kv: Deno.Kv, options: StreamGuardOptions = {}) {
    this.#kv = kv;
    this.#interval = options.intervalMs ?? 5000;
    this.#now = options.now ?? (() => new Date());
    this.#credentials = options.credentials;
    this.#log = options.log ?? (() => {});
  }

  /** Number of streams watched. */
  get size(): number {
    let n = 0;
    for (const h of this.#holders.values()) n += h.closes.size;
    return n;
  }

  /** Counters. */
  get stats(): StreamGuardStats {
    return { streams: this.size, credentials: this.#holders.size, verdicts: this.#verdicts };
  }

  /**
   * Watches a stream held by `credentialId`; `close` ends it. Returns the
   * function that stops watching (call it when the stream ends).
   *
   * @param credentialId token id or session id
   * @param close ends the stream
   * @returns stops watching
   */
  register(credentialId: string, close: () => void): () => void {
    return this.watch(credentialId, close, []).release;
  }

  /**
   * Watches a stream held by `credentialId` that makes `reads` (for the
   * event stream, `manifest.read` on each subscribed namespace). Returns
   * one grant per read, shared with the credential's other streams making
   * the same read, to pass to {@linkcode StreamGuard.check} before each
   * delivery, and the function that stops watching.
   *
   * @param credentialId token id or session id
   * @param close ends the stream
   * @param reads what the stream receives
   * @returns the grants, in the order of `reads`, and the release
   *
   * @example
   * ```ts
   * import { StreamGuard } from "./stream_guard.ts";
   * const kv = await Deno.openKv(":memory:");
   * const guard = new StreamGuard(kv, { intervalMs: 60_000 });
   * const read = { action: "manifest.read" as const, target: { tenant: "acme", namespace: "web" } };
   * const one = guard.watch("tok_1", () => {}, [read]);
   * const two = guard.watch("tok_1", () => {}, [read]);
   * if (one.grants[0] !== two.grants[0]) throw new Error("one credential, one verdict");
   * one.release();
   * two.release();
   * if (guard.size !== 0) throw new Error();
   * guard.close();
   * kv.close();
   * ```
   */
  watch(
    credentialId: string,
    close: () => void,
    reads: readonly StreamRead[],
  ): { grants: StreamGrant[]; release: () => void } {
    let holder = this.#holders.get(credentialId);
    if (holder === undefined) {
      this.#holders.set(credentialId, holder = { closes: new Set(), grants: new Map() });
    }
    holder.closes.add(close);
    const grants = reads.map((read) => this.#grant(holder, credentialId, read));
    for (const g of grants) g.streams.add(close);
    this.#ensureTimer();
    const release = () => this.#release(credentialId, close, grants);
    return { grants, release };
  }

  /**
   * Reads the credential epoch now, so that the next checks count every
   * change committed before this call (one KV read for the process).
   * Failures are ignored: the cache's poll still stands.
   *
   * @returns when done
   */
  async sync(): Promise<void> {
    try {
      await this.#credentials?.sync();
    } catch {
      // the store is failing: the verdicts fall back on the poll's knowledge
    }
  }

  /**
   * Brings the verdicts of `grants` up to date before a delivery: one
   * comparison per grant while nothing changed, else the verdict is
   * computed again from the current roles, once per grant. The streams of
   * a grant that is no longer allowed, and of a credential no longer
   * valid, are closed. Entries that are not grants of this guard are
   * skipped.
   *
   * @param grants the grants of the streams about to receive an event
   * @returns when every verdict is up to date
   */
  async check(grants: readonly ({ readonly allowed: boolean } | undefined)[]): Promise<void> {
    const generation = this.#credentials?.generation ?? null;
    const now = this.#now().getTime();
    let stale: Set<StreamGrant> | undefined;
    for (const g of grants) {
      if (!(g instanceof StreamGrant) || g.current(generation, now)) continue;
      (stale ??= new Set()).add(g);
    }
    if (stale !== undefined) await this.#settle([...stale], generation);
  }

  /** Checks every credential now (concurrent calls share one check). */
  recheck(): Promise<void> {
    this.#running ??= this.#check().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stops the timer; registered streams stay open. */
  close(): void {
    this.#stopTimer();
  }

  #grant(holder: Holder, credentialId: string, read: StreamRead): StreamGrant {
    const key = readKey(read);
    let grant = holder.grants.get(key);
    if (grant === undefined) holder.grants.set(key, grant = new StreamGrant(credentialId, read));
    return grant;
  }

  #release(credentialId: string, close: () => void, grants: StreamGrant[]): void {
    const holder = this.#holders.get(credentialId);
    if (holder === undefined) return;
    holder.closes.delete(close);
    for (const g of grants) {
      g.streams.delete(close);
      if (g.streams.size === 0 && holder.grants.get(readKey(g.read)) === g) {
        holder.grants.delete(readKey(g.read));
      }
    }
    if (holder.closes.size === 0) this.#holders.delete(credentialId);
    if (this.#holders.size === 0) this.#stopTimer();
  }

  /** Computes the verdicts of stale grants, sharing a computation already under way. */
  async #settle(grants: StreamGrant[], generation: number | null): Promise<void> {
    const waiting: Promise<void>[] = [];
    const todo: StreamGrant[] = [];
    for (const g of grants) {
      const pending = this.#pending.get(g);
      if (pending === undefined) todo.push(g);
      else waiting.push(pending);
    }
    if (todo.length > 0) {
      const run = this.#decide(todo, generation).finally(() => {
        for (const g of todo) if (this.#pending.get(g) === run) this.#pending.delete(g);
      });
      for (const g of todo) this.#pending.set(g, run);
      waiting.push(run);
    }
    await Promise.all(waiting);
  }

  /** One batched read of the credentials' records, then one authorisation per grant. */
  async #decide(grants: StreamGrant[], generation: number | null): Promise<void> {
    const now = this.#now();
    const ids = [...new Set(grants.map((g) => g.credentialId))];
    let records: unknown[];
    try {
      records = await readCredentialRecords(this.#kv, ids);
    } catch {
      // Nobody can tell whether these streams may still read: nothing is
      // delivered on such a right (a fatal problem; the clients reconnect).
      for (const g of grants) this.#deny(g, null, "the store could not be read");
      return;
    }
    const live = new Map<string, LiveCredential | null>();
    ids.forEach((id, i) => live.set(id, liveCredential(id, records[i], now)));
    for (let i = 0; i < grants.length; i += VERDICT_BATCH) {
      await Promise.all(
        grants.slice(i, i + VERDICT_BATCH).map((g) =>
          this.#verdict(g, live.get(g.credentialId) ?? null, generation)
        ),
      );
    }
  }

  async #verdict(
    grant: StreamGrant,
    credential: LiveCredential | null,
    generation: number | null,
  ): Promise<void> {
    this.#verdicts++;
    if (credential === null) {
      grant.decide(false, generation, Infinity);
      this.#closeHolder(grant.credentialId, "credential no longer valid");
      return;
    }
    let allowed: boolean;
    try {
      allowed = await can(this.#kv, credential.principal, grant.read.action, grant.read.target);
    } catch {
      return this.#deny(grant, null, "the store could not be read");
    }
    if (allowed) grant.decide(true, generation, credential.until);
    else this.#deny(grant, generation, "may no longer read");
  }

  /**
   * Refuses a grant and closes the streams that make its read (under a
   * null generation the refusal is not kept: the next check decides anew).
   */
  #deny(grant: StreamGrant, generation: number | null, reason: string): void {
    grant.decide(false, generation, Infinity);
    const { tenant, namespace, environment } = grant.read.target;
    this.#log("info", "closing streams: access withdrawn", {
      reason,
      credential: grant.credentialId,
      action: grant.read.action,
      tenant: tenant ?? null,
      namespace: namespace ?? null,
      ...(environment === undefined ? {} : { environment }),
      streams: grant.streams.size,
    });
    for (const close of [...grant.streams]) runQuietly(close);
  }

  #closeHolder(id: string, reason: string): void {
    const holder = this.#holders.get(id);
    if (holder === undefined) return;
    this.#log("info", "closing streams of a credential", {
      credential: id,
      reason,
      streams: holder.closes.size,
    });
    for (const close of [...holder.closes]) runQuietly(close);
    this.#holders.delete(id);
    if (this.#holders.size === 0) this.#stopTimer();
  }

  async #check(): Promise<void> {
    const ids = [...this.#holders.keys()];
    const now = this.#now();
    let records: unknown[];
    try {
      records = await readCredentialRecords(this.#kv, ids);
    } catch {
      return; // the KV is closing or unreachable: try again next time
    }
    records.forEach((value, j) => {
      if (liveCredential(ids[j]!, value, now) === null) {
        this.#closeHolder(ids[j]!, "credential no longer valid");
      }
    });
  }

  #ensureTimer(): void {
    if (this.#timer !== undefined) return;
    const timer = setInterval(() => void this.recheck(), this.#interval);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** The map key of a read. */
function readKey(read: StreamRead): string {
  const t = read.target;
  return [read.action, t.tenant ?? "", t.namespace ?? "", t.environment ?? ""].join("\u0000");
}

/** A stream that is already gone must not keep the others open. */
function runQuietly(close: () => void): void {
  try {
    close();
  } catch {
    // a stream that is already gone
  }
}
