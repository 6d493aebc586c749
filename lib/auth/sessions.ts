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
import { sessionByDigestKey, sessionKey, userKey } from "../store/keys.ts";
import { ulid } from "../store/ulid.ts";
import { getUser } from "../store/users.ts";
import { UsageError } from "../errors.ts";

/** Session lifetime when none is given: 12 hours. */
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** A stored human session. */
export interface SessionRecord {
  /** `ssn_<ulid>`. */
  id: string;
  user_id: string;
  /** First 14 characters of the session token. */
  prefix: string;
  /** HMAC of the session token. */
  digest: string;
  created_at: string;
  expires_at: string;
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
  await kv.atomic()
    .set(sessionKey(session.id), session, { expireIn })
    .set(sessionByDigestKey(session.digest), session.id, { expireIn })
    .commit();
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
  const idx = await kv.get<string>(sessionByDigestKey(digest));
  if (idx.value === null) return null;
  const session = (await kv.get<SessionRecord>(sessionKey(idx.value))).value;
  if (session === null || !digestsEqual(session.digest, digest)) return null;
  if (Date.parse(session.expires_at) <= now.getTime()) return null;
  const user = await kv.get(userKey(session.user_id));
  return user.value === null ? null : session;
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
 * import { deleteSession } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * await deleteSession(kv, "ssn_x");
 * kv.close();
 * ```
 */
export async function deleteSession(kv: Deno.Kv, id: string): Promise<void> {
  const s = await kv.get<SessionRecord>(sessionKey(id));
  if (s.value === null) return;
  await kv.atomic()
    .delete(sessionKey(id))
    .delete(sessionByDigestKey(s.value.digest))
    .commit();
}
