/**
 * The per-process cache of service-token records, so that authenticating
 * a known token costs no KV read.
 *
 * ## Consistency
 *
 * Every write that changes what a credential may do bumps the credential
 * epoch (lib/store/credential_epoch.ts) in its own atomic commit. A record
 * is read together with the epoch of the same snapshot and is used from
 * the cache only while both still hold:
 *
 * - **the epoch it was read at is the newest this process knows.** One
 *   timer per process reads the epoch key every `pollMs` (default 25 ms);
 *   when it moved, every cached record is stale at once. A change made
 *   through another process therefore takes effect here within about one
 *   poll interval.
 * - **no change was made through this process since it was read.** The
 *   writer calls {@linkcode CredentialCache.changed} before it answers
 *   (store writers that bump the epoch through the same store handle tell
 *   the cache themselves: `credentialsChanged` in
 *   lib/store/credential_epoch.ts), so the revoking process refuses the
 *   very next request.
 * - **the poll is alive.** If the epoch could not be read for
 *   `staleAfterMs` (a stuck store, a blocked loop), records are read from
 *   the KV again until a poll succeeds.
 *
 * Expiry needs no write at all: callers check the cached record's
 * `expires_at` against the clock on every request. Unknown digests are
 * never cached, so a token created anywhere works at once.
 *
 * Human sessions are kept the same way ({@linkcode CredentialCache.findSession}):
 * the session record and its user's existence are read with the epoch of
 * the same snapshot, and ending a session or deleting a user bumps the
 * epoch. Absolute expiry is checked against the clock on every request;
 * the idle limit too, and a session that looks idle from the cache is read
 * again before it is refused (another process may have recorded a later
 * use).
 *
 * The same knowledge serves other per-process verdicts about credentials:
 * {@linkcode CredentialCache.generation} changes whenever cached records
 * are dropped, so a verdict computed under one generation (what an open
 * event stream may still read, lib/auth/stream_guard.ts) stands while the
 * generation is the same, and {@linkcode CredentialCache.sync} reads the
 * epoch at once when a caller must count every change committed so far.
 * A person's role level on a tenant or namespace is remembered the same
 * way (lib/auth/level_memo.ts).
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  onCredentialsChanged,
  readCredentialEpoch,
  readTokenAtEpoch,
} from "../store/credential_epoch.ts";
import { findTokenIdByDigest, type TokenRecord } from "../store/tokens.ts";
import { readSessionAtEpoch } from "../store/credential_epoch.ts";
import { findSessionByDigest, normalizeSession, type SessionRecord } from "../store/sessions.ts";

/**
 * The memo key of a presented credential: its SHA-256, base64 (node:crypto
 * hashes natively, about twice as fast here as a hash written in JS).
 */
function memoKey(credential: string): string {
  return createHash("sha256").update(credential).digest("base64");
}

/** Options of {@linkcode CredentialCache}. */
export interface CredentialCacheOptions {
  /** Interval of the epoch poll, ms (default 25). */
  pollMs?: number;
  /** Records kept at most; when full the cache starts over (default 10,000). */
  maxEntries?: number;
  /** Cached records are not trusted when no poll succeeded for this long, ms (default max(1000, 20 × pollMs)). */
  staleAfterMs?: number;
  /** Clock in ms, for tests (default `performance.now`). */
  now?: () => number;
}

interface Cached {
  entry: Deno.KvEntry<TokenRecord>;
  epoch: bigint;
  local: number;
}

interface CachedSession {
  session: SessionRecord;
  epoch: bigint;
  local: number;
}

/** What never changes about a session: its id and its user. */
interface SessionIds {
  id: string;
  user: string;
}

/**
 * Token records by digest, invalidated through the credential epoch.
 *
 * @example
 * ```ts
 * import { CredentialCache } from "./credential_cache.ts";
 * import { bootstrapSuperadmin } from "./bootstrap.ts";
 * import { hmacHex } from "./digest.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const { secret, token } = await bootstrapSuperadmin(kv, key);
 * const cache = new CredentialCache(kv);
 * await cache.start();
 * const digest = await hmacHex(key, secret);
 * if ((await cache.find(digest))?.value.id !== token.id) throw new Error();
 * if ((await cache.find(digest))?.value.id !== token.id || cache.hits !== 1) throw new Error();
 * cache.close();
 * kv.close();
 * ```
 */
export class CredentialCache {
  readonly #kv: Deno.Kv;
  readonly #pollMs: number;
  readonly #max: number;
  readonly #staleAfter: number;
  readonly #now: () => number;
  readonly #ids = new Map<string, string>();
  readonly #records = new Map<string, Cached>();
  readonly #listeners = new Set<() => void>();
  readonly #touches = new Map<string, number>();
  readonly #digests = new Map<string, string>();
  readonly #sessionIds = new Map<string, SessionIds>();
  readonly #sessions = new Map<string, CachedSession>();
  /** The newest epoch this process knows; null before the first read. */
  #epoch: bigint | null = null;
  /** Bumped by every change made through this process. */
  #local = 0;
  /** Bumped whenever the cached records are dropped (the epoch moved, or a local change). */
  #generation = 0;
  #lastPoll = -Infinity;
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  #closed = false;
  /** Stops listening to changes committed through this process's store handle. */
  readonly #stopLocal: () => void;
  /** Lookups answered from the cache (for tests and metrics). */
  hits = 0;
  /** Lookups that read the KV (for tests and metrics). */
  misses = 0;
  /** Session lookups answered from the cache (for tests; not in the `credentials` metric). */
  sessionHits = 0;
  /** Session lookups that read the KV (for tests; not in the `credentials` metric). */
  sessionMisses = 0;

  /**
   * @param kv the store
   * @param options poll interval, size, clock
   */
  constructor(kv: Deno.Kv, options: CredentialCacheOptions = {}) {
    this.#kv = kv;
    this.#pollMs = options.pollMs ?? 25;
    this.#max = options.maxEntries ?? 10_000;
    this.#staleAfter = options.staleAfterMs ?? Math.max(1000, 20 * this.#pollMs);
    this.#now = options.now ?? (() => performance.now());
    // store writers that bump the epoch through `kv` tell this process at once
    this.#stopLocal = onCredentialsChanged(kv, () => this.changed());
  }

  /**
   * Reads the epoch once and starts the poll. Until it is started, every
   * lookup reads the KV.
   *
   * @returns when the first poll is done
   */
  async start(): Promise<void> {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => void this.#poll(), this.#pollMs);
    await this.#poll();
  }

  /**
   * The HMAC digest of a presented credential, computed with `hmac` once
   * per credential and process. The memo is keyed by the credential's
   * SHA-256 (several times cheaper than an HMAC), never by the credential
   * itself: a credential carries 256 random bits, so its hash reveals
   * nothing usable, and no secret is kept in memory between requests.
   *
   * @param credential the presented token
   * @param hmac computes the keyed digest
   * @returns the digest
   */
  async digest(credential: string, hmac: (credential: string) => Promise<string>): Promise<string> {
    const id = memoKey(credential);
    const known = this.#digests.get(id);
    if (known !== undefined) return known;
    const digest = await hmac(credential);
    if (this.#digests.size >= this.#max) this.#digests.clear();
    this.#digests.set(id, digest);
    return digest;
  }

  /**
   * The record of the token whose digest is `digest`, or null when no token
   * has it. Answered from the cache when the record is still current (see
   * the module documentation), else read from the KV.
   *
   * @param digest hex HMAC of the presented token
   * @returns the record's entry, or null
   */
  async find(digest: string): Promise<Deno.KvEntry<TokenRecord> | null> {
    let id = this.#ids.get(digest);
    if (id === undefined) {
      const found = await findTokenIdByDigest(this.#kv, digest);
      if (found === null) return null; // never remembered: the token may be created later
      id = found;
      if (this.#ids.size >= this.#max) this.#ids.clear();
      this.#ids.set(digest, id); // a digest never changes and never names another token
    }
    const cached = this.#records.get(id);
    if (cached !== undefined && this.#current(cached.epoch, cached.local)) {
      this.hits++;
      return cached.entry;
    }
    this.misses++;
    const local = this.#local;
    const { entry, epoch } = await readTokenAtEpoch(this.#kv, id);
    // the epoch only grows: a snapshot older than what the poll saw is not kept
    if (this.#epoch === null || epoch > this.#epoch) this.#see(epoch);
    if (entry.value === null) {
      this.#records.delete(id);
      return null;
    }
    const found = entry as Deno.KvEntry<TokenRecord>;
    this.#keep(id, { entry: found, epoch, local });
    return found;
  }

  /**
   * The session whose digest is `digest`, or null when there is none or
   * its user no longer exists. Answered from the cache while the record is
   * current (see the module documentation), else read from the KV with the
   * epoch; `fresh` reads the KV in any case. The caller still checks the
   * digest, expiry and idle limit.
   *
   * @param digest hex HMAC of the presented `ses_…` secret
   * @param fresh read the KV even when a current record is cached
   * @returns the session, or null
   *
   * @example
   * ```ts
   * import { CredentialCache } from "./credential_cache.ts";
   * import { createSession } from "./sessions.ts";
   * import { hmacHex } from "./digest.ts";
   * import { randomTokenKey } from "./hmac_key.ts";
   * import { createUser } from "../store/users.ts";
   * const kv = await Deno.openKv(":memory:");
   * const key = await randomTokenKey();
   * const user = await createUser(kv, { email: "a@b.c" });
   * const { session, secret } = await createSession(kv, key, { user: user.id });
   * const cache = new CredentialCache(kv);
   * await cache.start();
   * const digest = await hmacHex(key, secret);
   * if ((await cache.findSession(digest))?.id !== session.id) throw new Error();
   * if ((await cache.findSession(digest))?.id !== session.id || cache.sessionHits !== 1) throw new Error();
   * cache.close();
   * kv.close();
   * ```
   */
  async findSession(digest: string, fresh = false): Promise<SessionRecord | null> {
    let ids = this.#sessionIds.get(digest);
    if (ids === undefined) {
      const found = await findSessionByDigest(this.#kv, digest);
      if (found === null) return null; // never remembered: the session may be made later
      ids = { id: found.id, user: found.user_id };
      if (this.#sessionIds.size >= this.#max) this.#sessionIds.clear();
      this.#sessionIds.set(digest, ids); // a digest names one session, of one user, forever
    }
    const cached = this.#sessions.get(ids.id);
    if (!fresh && cached !== undefined && this.#current(cached.epoch, cached.local)) {
      this.sessionHits++;
      return cached.session;
    }
    this.sessionMisses++;
    const local = this.#local;
    const read = await readSessionAtEpoch(this.#kv, ids.id, ids.user);
    if (this.#epoch === null || read.epoch > this.#epoch) this.#see(read.epoch);
    if (read.session === null || !read.userExists) {
      this.#sessions.delete(ids.id);
      return null;
    }
    const session = normalizeSession(read.session);
    if (this.#current(read.epoch, local)) {
      if (this.#sessions.size >= this.#max) this.#sessions.clear();
      this.#sessions.set(ids.id, { session, epoch: read.epoch, local });
    }
    return session;
  }

  /**
   * Notes a recorded use of a session (`last_seen_at`, which changes
   * nothing it may do) in its cached record.
   *
   * @param id the session id
   * @param lastSeenAt the time written (RFC 3339)
   */
  sessionSeen(id: string, lastSeenAt: string): void {
    const cached = this.#sessions.get(id);
    if (cached === undefined || cached.session.last_seen_at >= lastSeenAt) return;
    this.#sessions.set(id, { ...cached, session: { ...cached.session, last_seen_at: lastSeenAt } });
  }

  /**
   * Replaces a cached record after a write that does not change what the
   * token may do (`last_used_at`), so the next lookup sees the write.
   *
   * @param entry the record as written, with its new versionstamp
   */
  updated(entry: Deno.KvEntry<TokenRecord>): void {
    const cached = this.#records.get(entry.value.id);
    if (cached === undefined) return;
    this.#records.set(entry.value.id, { ...cached, entry });
  }

  /**
   * Claims the `last_used_at` write of a token (or the `last_seen_at`
   * write of a session): true when this process made no claim for it
   * within `intervalMs`, so that a record whose write lost a race (or is
   * still in flight) is not written on every request.
   *
   * @param id the token or session id
   * @param nowMs the request time, ms since the epoch
   * @param intervalMs the throttle interval
   * @returns whether the caller should write
   */
  claimTouch(id: string, nowMs: number, intervalMs: number): boolean {
    const last = this.#touches.get(id);
    if (last !== undefined && nowMs - last < intervalMs && nowMs >= last) return false;
    if (this.#touches.size >= this.#max) this.#touches.clear();
    this.#touches.set(id, nowMs);
    return true;
  }

  /**
   * A write through this process changed what some credential may do:
   * every cached record is read again. Call it after the commit, before
   * answering. (The write's epoch bump reaches the listeners through the
   * next poll; a caller that must end streams at once rechecks them
   * itself.)
   */
  changed(): void {
    this.#local++;
    this.#generation++;
    this.#records.clear();
    this.#sessions.clear();
  }

  /**
   * A number that changes whenever what some credential may do may have
   * changed: the credential epoch moved (seen by the poll or by
   * {@linkcode CredentialCache.sync}) or {@linkcode CredentialCache.changed}
   * was called. A verdict about a credential computed from the store while
   * the generation was `g` still holds while it is `g`. Null while the
   * cache cannot tell (not started, closed, or no poll succeeded for
   * `staleAfterMs`): then nothing computed earlier may be trusted.
   *
   * @returns the generation, or null
   *
   * @example
   * ```ts
   * import { CredentialCache } from "./credential_cache.ts";
   * import { bumpCredentialEpoch } from "../store/credential_epoch.ts";
   * const kv = await Deno.openKv(":memory:");
   * const cache = new CredentialCache(kv, { pollMs: 60_000 });
   * if (cache.generation !== null) throw new Error("not started: unknown");
   * await cache.start();
   * const before = cache.generation;
   * await bumpCredentialEpoch(kv.atomic()).commit(); // a revocation, anywhere
   * if (cache.generation !== before) throw new Error("the poll has not seen it yet");
   * if (await cache.sync() === before) throw new Error("a read of the epoch sees it");
   * cache.close();
   * kv.close();
   * ```
   */
  get generation(): number | null {
    if (this.#timer === undefined || this.#epoch === null) return null;
    if (this.#now() - this.#lastPoll > this.#staleAfter) return null;
    return this.#generation;
  }

  /**
   * Reads the credential epoch now (one KV read), as a poll would, so that
   * every change committed before the call counts: the event feeds call it
   * once per new version, before re-authorising the streams they deliver
   * it to. A moved epoch drops the cached records and tells the listeners.
   *
   * @returns the generation afterwards (null when the cache cannot tell)
   */
  async sync(): Promise<number | null> {
    if (this.#closed || this.#timer === undefined) return null;
    const epoch = await readCredentialEpoch(this.#kv);
    if (this.#closed) return null;
    this.#see(epoch);
    this.#lastPoll = this.#now();
    return this.generation;
  }

  /**
   * Runs `listener` whenever the poll sees the credential epoch move (a
   * change made through any process, this one included).
   *
   * @param listener the function to run
   * @returns the function that removes it
   */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops the poll and drops every record. */
  close(): void {
    this.#closed = true;
    this.#stopLocal();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#records.clear();
    this.#sessions.clear();
    this.#sessionIds.clear();
    this.#ids.clear();
    this.#touches.clear();
    this.#digests.clear();
    this.#listeners.clear();
  }

  #current(epoch: bigint, local: number): boolean {
    return this.#timer !== undefined && epoch === this.#epoch && local === this.#local &&
      this.#now() - this.#lastPoll <= this.#staleAfter;
  }

  #keep(id: string, cached: Cached): void {
    if (!this.#current(cached.epoch, cached.local)) return;
    if (this.#records.size >= this.#max) this.#records.clear();
    this.#records.set(id, cached);
  }

  /** Takes note of a new epoch (a restored backup may even move it back). */
  #see(epoch: bigint): void {
    if (this.#epoch === epoch) return;
    const first = this.#epoch === null;
    this.#epoch = epoch;
    this.#generation++;
    this.#records.clear();
    this.#sessions.clear();
    if (!first) this.#notify();
  }

  #notify(): void {
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // a listener's failure is its own
      }
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed) return;
    this.#polling = true;
    try {
      const epoch = await readCredentialEpoch(this.#kv);
      if (this.#closed) return;
      this.#see(epoch);
      this.#lastPoll = this.#now();
    } catch {
      // a closed or failing store: records stop being trusted after staleAfterMs
    } finally {
      this.#polling = false;
    }
  }
}
