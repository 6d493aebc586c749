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
  type SessionRecord,
} from "../store/sessions.ts";
import { ulid } from "../store/ulid.ts";
import { getUser, userExists } from "../store/users.ts";
import { NotFoundError, UsageError } from "../errors.ts";

export type { SessionRecord } from "../store/sessions.ts";

/** Session lifetime when none is given: 12 hours. */
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

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
  input: { user: string; ttl?: number; now?: () => Date },
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
 * Finds the live session of a session token: null when unknown, expired,
 * or its user no longer exists.
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
  if (Date.parse(session.expires_at) <= now.getTime()) return null;
  return await userExists(kv, session.user_id) ? session : null;
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

/** A session as listings show it: the record without its digest. */
export type PublicSession = Omit<SessionRecord, "digest">;

/**
 * A session record without its digest, for output.
 *
 * @param s the stored session
 * @returns the record without `digest`
 *
 * @example
 * ```ts
 * import { publicSession } from "./sessions.ts";
 * const s = publicSession({
 *   id: "ssn_1", user_id: "usr_1", prefix: "ses_abc", digest: "d",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * });
 * if ("digest" in s) throw new Error();
 * ```
 */
export function publicSession(s: SessionRecord): PublicSession {
  const { digest: _digest, ...shown } = s;
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
  for (const s of await listSessionRecords(kv)) {
    if (userId !== undefined && s.user_id !== userId) continue;
    if (Date.parse(s.expires_at) <= now) continue;
    out.push(publicSession(s));
  }
  return out;
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
