/**
 * Human session tokens `ses_<base58 of 32 random bytes>`. The store keeps
 * `["session", id]` (`ssn_<ulid>`, user id, HMAC digest, expiry) and the
 * index `["session_by_digest", hmac]`; both expire from the KV with the
 * session. Roles are not in the session: they are read per request.
 *
 * @module
 */
import { digestsEqual, hmacHex } from "./digest.ts";
import { randomPayload } from "./token_format.ts";
import {
  deleteSessionRecord,
  findSessionByDigest,
  insertSession,
  listSessionRecords,
  type SessionClient,
  type SessionLoginMethod,
  type SessionRecord,
  sessionsOfUser,
  touchSession,
} from "../store/sessions.ts";
import { ulid } from "../store/ulid.ts";
import { getUser, userExists } from "../store/users.ts";
import { NotFoundError, UsageError } from "../errors.ts";
import { type AuditActor, eventAuditEntry, writeAudit } from "../store/audit.ts";
import { type AuthDeps, clock } from "./deps.ts";

export type { SessionClient, SessionLoginMethod, SessionRecord } from "../store/sessions.ts";

/** Session lifetime when none is given: 12 hours. */
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** `last_seen_at` is written at most this often per session. */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;

/** What a sign-in knows about the session it makes. */
export interface NewSessionInput {
  /** User id or email. */
  user: string;
  /** Absolute lifetime, ms (default 12 h). */
  ttl?: number;
  /** Idle limit, ms; absent or null: none. */
  idle?: number | null;
  /** Tenants the sign-in admitted the user to. */
  tenants?: string[];
  /** How the user signed in (default `admin`: made on the server host). */
  login_method?: SessionLoginMethod;
  /** `amr`/`acr` values, or `email-link` / `email-code`. */
  assurance?: string[];
  /** IdP groups at sign-in. */
  groups?: string[];
  /** Who holds the session (default `admin`). */
  client?: SessionClient;
  /** HMAC of the client IP at sign-in. */
  ip_hash?: string | null;
  /** An operator's console session: acts as superadmin (see `SessionRecord.superadmin`). */
  superadmin?: true;
  /** Clock, for tests. */
  now?: () => Date;
}

/**
 * Creates a session for a user (by id or email) and returns the plaintext
 * session token once. 404 `user_not_found` for an unknown user.
 *
 * @param kv the store
 * @param key the token HMAC key
 * @param input user id or email, lifetime in milliseconds (default 12 h), clock
 * @returns the record and the secret
 *
 * @example
 * ```ts
 * import { createSession } from "./sessions.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { secret } = await createSession(kv, await randomTokenKey(), { user: user.id });
 * if (!secret.startsWith("ses_")) throw new Error();
 * kv.close();
 * ```
 */
export async function createSession(
  kv: Deno.Kv,
  key: CryptoKey,
  input: NewSessionInput,
): Promise<{ session: SessionRecord; secret: string }> {
  const ttl = input.ttl ?? DEFAULT_SESSION_TTL_MS;
  if (!Number.isFinite(ttl) || ttl <= 0) {
    throw new UsageError(`Cannot use session lifetime ${ttl}: it must be positive`);
  }
  const user = await getUser(kv, input.user);
  const now = input.now?.() ?? new Date();
  const secret = `ses_${randomPayload()}`;
  const session: SessionRecord = {
    id: `ssn_${ulid(now.getTime())}`,
    user_id: user.id,
    prefix: secret.slice(0, 14),
    digest: await hmacHex(key, secret),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + ttl).toISOString(),
    tenants: input.tenants ?? [],
    login_method: input.login_method ?? "admin",
    assurance: input.assurance ?? [],
    groups: input.groups ?? [],
    client: input.client ?? "admin",
    last_seen_at: now.toISOString(),
    idle_timeout_ms: input.idle ?? null,
    ip_hash: input.ip_hash ?? null,
    ...(input.superadmin ? { superadmin: true as const } : {}),
  };
  // Let the KV drop the records a little after the session ends.
  const expireIn = ttl + 60_000;
  const res = await insertSession(kv, session, expireIn);
  if (res === "no_user") throw new NotFoundError("user_not_found", `No user ${input.user}`);
  // The user was deleted (or changed) meanwhile: ask again, which says 404 when gone.
  if (res === "conflict") return await createSession(kv, key, input);
  return { session, secret };
}

/**
 * Finds the live session of a session token: null when unknown, past its
 * absolute expiry or its idle limit, or its user no longer exists. A found
 * session's `last_seen_at` is written at most once a minute, after the
 * answer (a failed write only loses bookkeeping).
 *
 * @param kv the store
 * @param key the token HMAC key
 * @param secret the presented `ses_…` token
 * @param now the current time
 * @returns the session or null
 *
 * @example
 * ```ts
 * import { findSession } from "./sessions.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findSession(kv, await randomTokenKey(), "ses_x", new Date()) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findSession(
  kv: Deno.Kv,
  key: CryptoKey,
  secret: string,
  now: Date,
): Promise<SessionRecord | null> {
  const digest = await hmacHex(key, secret);
  const session = await findSessionByDigest(kv, digest);
  if (session === null || !digestsEqual(session.digest, digest)) return null;
  const t = now.getTime();
  if (Date.parse(session.expires_at) <= t) return null;
  const seen = Date.parse(session.last_seen_at);
  if (session.idle_timeout_ms !== null && seen + session.idle_timeout_ms <= t) return null;
  if (!await userExists(kv, session.user_id)) return null;
  if (t - seen >= SESSION_TOUCH_INTERVAL_MS) touchSession(kv, session, now).catch(() => {});
  return session;
}

/**
 * {@linkcode findSession} through the server's credential cache
 * (`deps.credentials`; without one, exactly {@linkcode findSession}): a
 * session this process already checked costs no KV read and no HMAC, and
 * stops authenticating as soon as the cache learns of its end or of its
 * user's deletion (at once in the process that ended it, within the
 * credential poll elsewhere). A session that looks idle from the cache is
 * read again before it is refused, since another process may have
 * recorded a later use; `last_seen_at` is written at most once a minute
 * per session and process.
 *
 * @param deps store, key, credential cache
 * @param secret the presented `ses_…` token
 * @param now the current time
 * @returns the session or null
 *
 * @example
 * ```ts
 * import { createSession, findLiveSession } from "./sessions.ts";
 * import { CredentialCache } from "./credential_cache.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const credentials = new CredentialCache(kv);
 * await credentials.start();
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session, secret } = await createSession(kv, key, { user: user.id });
 * for (let i = 0; i < 2; i++) {
 *   if ((await findLiveSession({ kv, key, credentials }, secret, new Date()))?.id !== session.id) throw new Error();
 * }
 * if (credentials.sessionHits !== 1) throw new Error("the second one came from the cache");
 * credentials.close();
 * kv.close();
 * ```
 */
export async function findLiveSession(
  deps: AuthDeps,
  secret: string,
  now: Date,
): Promise<SessionRecord | null> {
  const cache = deps.credentials;
  if (cache === undefined) return await findSession(deps.kv, deps.key, secret, now);
  const digest = await cache.digest(secret, (c) => hmacHex(deps.key, c));
  const t = now.getTime();
  let session = await cache.findSession(digest);
  if (session !== null && !sessionLive(session, t) && Date.parse(session.expires_at) > t) {
    session = await cache.findSession(digest, true); // idle by the cache: maybe not by the store
  }
  if (session === null || !digestsEqual(session.digest, digest) || !sessionLive(session, t)) {
    return null;
  }
  const seen = session;
  if (
    t - Date.parse(seen.last_seen_at) >= SESSION_TOUCH_INTERVAL_MS &&
    cache.claimTouch(seen.id, t, SESSION_TOUCH_INTERVAL_MS)
  ) {
    touchSession(deps.kv, seen, now)
      .then((written) => written && cache.sessionSeen(seen.id, now.toISOString()))
      .catch(() => {});
  }
  return session;
}

/**
 * Ends a session at once (logout).
 *
 * @param kv the store
 * @param id the session id
 * @returns nothing
 *
 * @example
 * ```ts
 * import { createSession, deleteSession, findSession } from "./sessions.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session, secret } = await createSession(kv, key, { user: user.id });
 * if ((await findSession(kv, key, secret, new Date()))?.id !== session.id) throw new Error();
 * await deleteSession(kv, session.id);
 * if (await findSession(kv, key, secret, new Date()) !== null) throw new Error("still live");
 * await deleteSession(kv, session.id); // ending it again changes nothing
 * kv.close();
 * ```
 */
export async function deleteSession(kv: Deno.Kv, id: string): Promise<void> {
  await deleteSessionRecord(kv, id);
}

/**
 * A session as listings show it: the record without its digest and
 * without the keyed hash of the sign-in IP (which would let a reader tell
 * which people share an address).
 */
export type PublicSession = Omit<SessionRecord, "digest" | "ip_hash">;

/**
 * A session record without its digest, for output.
 *
 * @param s the stored session
 * @returns the record without `digest`
 *
 * @example
 * ```ts
 * import { publicSession } from "./sessions.ts";
 * import { normalizeSession } from "../store/sessions.ts";
 * const s = publicSession(normalizeSession({
 *   id: "ssn_1", user_id: "usr_1", prefix: "ses_abc", digest: "d",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * }));
 * if ("digest" in s) throw new Error();
 * ```
 */
export function publicSession(s: SessionRecord): PublicSession {
  const { digest: _digest, ip_hash: _ip, ...shown } = s;
  return shown;
}

/**
 * The live sessions (not yet expired), oldest first, optionally of one user
 * (by id or email; 404 `user_not_found` for an unknown one). Records carry
 * no digest and the secret is never stored, so nothing here can
 * authenticate.
 *
 * @param kv the store
 * @param options the user to filter on, and a clock for tests
 * @returns the sessions
 *
 * @example
 * ```ts
 * import { createSession, listSessions } from "./sessions.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * await createSession(kv, await randomTokenKey(), { user: user.id });
 * const list = await listSessions(kv, { user: "a@b.c" });
 * if (list.length !== 1 || "digest" in list[0]!) throw new Error();
 * kv.close();
 * ```
 */
export async function listSessions(
  kv: Deno.Kv,
  options: { user?: string; now?: () => Date } = {},
): Promise<PublicSession[]> {
  const userId = options.user === undefined ? undefined : (await getUser(kv, options.user)).id;
  const now = (options.now?.() ?? new Date()).getTime();
  const out: PublicSession[] = [];
  const records = userId === undefined
    ? await listSessionRecords(kv)
    : await sessionsOfUser(kv, userId);
  for (const s of records) {
    if (!sessionLive(s, now)) continue;
    out.push(publicSession(s));
  }
  return out;
}

/**
 * Whether a session is neither past its absolute expiry nor idle too long.
 *
 * @param s the session
 * @param now the current time, ms
 * @returns whether it still authenticates (its user aside)
 *
 * @example
 * ```ts
 * import { sessionLive } from "./sessions.ts";
 * import { normalizeSession } from "../store/sessions.ts";
 * const s = normalizeSession({ id: "ssn_1", user_id: "usr_1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 *   idle_timeout_ms: 60_000 });
 * if (!sessionLive(s, Date.parse("2030-01-01T00:00:30.000Z"))) throw new Error();
 * if (sessionLive(s, Date.parse("2030-01-01T00:02:00.000Z"))) throw new Error("idle");
 * ```
 */
export function sessionLive(s: SessionRecord, now: number): boolean {
  if (Date.parse(s.expires_at) <= now) return false;
  return s.idle_timeout_ms === null || Date.parse(s.last_seen_at) + s.idle_timeout_ms > now;
}

/**
 * Revokes a session by id: its token is refused from the next request on.
 * 404 `session_not_found` when there is no such session (or it already
 * ended).
 *
 * @param kv the store
 * @param id the session id (`ssn_…`)
 * @returns the revoked session, without its digest
 *
 * @example
 * ```ts
 * import { revokeSession } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await revokeSession(kv, "ssn_x"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "session_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function revokeSession(kv: Deno.Kv, id: string): Promise<PublicSession> {
  const s = await deleteSessionRecord(kv, id);
  if (s === null) {
    throw new NotFoundError("session_not_found", `No session ${id} (it may have expired)`);
  }
  return publicSession(s);
}

/**
 * Ends a session at once and audits `session.revoked` in the log of each
 * tenant the session was admitted to (the installation's for a session
 * made on the server host), with who ended it and why (`logout`,
 * `revoked`, `user_revoked`). The server's other caches hear of it
 * through the credential epoch. 404 `session_not_found` when it is gone.
 *
 * @param deps store, key, clock, credential cache
 * @param id the session id
 * @param actor who ended it, in which request
 * @param reason why
 * @returns the ended session, without its digest
 *
 * @example
 * ```ts
 * import { createSession, endSession } from "./sessions.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * import { listAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session } = await createSession(kv, key, { user: user.id, tenants: ["acme"] });
 * await endSession({ kv, key }, session.id, { id: user.id, principal_type: "user", request_id: null }, "logout");
 * const [e] = (await listAudit(kv, { tenant: "acme" })).items;
 * if (e?.type !== "session.revoked" || e.details.reason !== "logout") throw new Error();
 * kv.close();
 * ```
 */
export async function endSession(
  deps: AuthDeps,
  id: string,
  actor: AuditActor,
  reason: "logout" | "revoked" | "user_revoked" | "replaced",
): Promise<PublicSession> {
  const s = await deleteSessionRecord(deps.kv, id);
  if (s === null) {
    throw new NotFoundError("session_not_found", `No session ${id} (it may have expired)`);
  }
  deps.credentials?.changed();
  const now = clock(deps);
  const tenants: (string | null)[] = s.tenants.length > 0 ? s.tenants : [null];
  for (const tenant of tenants) {
    await writeAudit(
      deps.kv,
      eventAuditEntry("session.revoked", actor, now, {
        tenant_slug: tenant,
        details: { session_id: s.id, user_id: s.user_id, reason, client: s.client },
      }),
    );
  }
  return publicSession(s);
}
