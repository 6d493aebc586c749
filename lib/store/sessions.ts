/**
 * Human session records: `["session", id]` (`ssn_<ulid>`, user id, HMAC
 * digest, expiry) and the index `["session_by_digest", hmac]` holding the
 * id. Both expire from the KV a little after the session ends. Issuing,
 * checking and revoking session tokens is lib/auth/sessions.ts; this module
 * only reads and writes the records.
 *
 * @module
 */
import { bumpCredentialEpoch } from "./credential_epoch.ts";
import {
  sessionByDigestKey,
  sessionByDigestPrefix,
  sessionKey,
  sessionPrefix,
  userKey,
} from "./keys.ts";

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
 * What {@linkcode insertSession} did: `created`; `no_user` when the
 * session's user does not exist; `conflict` when the user record changed
 * between the read and the commit (ask again).
 */
export type InsertSessionResult = "created" | "no_user" | "conflict";

/**
 * Stores a new session and its digest index in one commit, checked against
 * the user record so that a session is never created for a user deleted
 * meanwhile. Both records expire from the KV after `expireIn` ms.
 *
 * @param kv the store
 * @param session the new record
 * @param expireIn milliseconds after which the KV drops both records
 * @returns `created`, `no_user` or `conflict`
 *
 * @example
 * ```ts
 * import { findSessionByDigest, insertSession, type SessionRecord } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * const s: SessionRecord = {
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * };
 * if (await insertSession(kv, s, 60_000) !== "created") throw new Error();
 * if ((await findSessionByDigest(kv, "d1"))?.id !== "ssn_1") throw new Error();
 * if (await insertSession(kv, { ...s, user_id: "usr_gone" }, 60_000) !== "no_user") throw new Error();
 * kv.close();
 * ```
 */
export async function insertSession(
  kv: Deno.Kv,
  session: SessionRecord,
  expireIn: number,
): Promise<InsertSessionResult> {
  const userEntry = await kv.get(userKey(session.user_id));
  if (userEntry.value === null) return "no_user";
  const res = await kv.atomic()
    .check(userEntry)
    .set(sessionKey(session.id), session, { expireIn })
    .set(sessionByDigestKey(session.digest), session.id, { expireIn })
    .commit();
  return res.ok ? "created" : "conflict";
}

/**
 * Finds a session record through its digest index: null when no session
 * has that digest. The caller still compares digests and checks expiry.
 *
 * @param kv the store
 * @param digest hex HMAC of the presented session token
 * @returns the record or null
 *
 * @example
 * ```ts
 * import { findSessionByDigest } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findSessionByDigest(kv, "00") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findSessionByDigest(
  kv: Deno.Kv,
  digest: string,
): Promise<SessionRecord | null> {
  const idx = await kv.get<string>(sessionByDigestKey(digest));
  if (idx.value === null) return null;
  return (await kv.get<SessionRecord>(sessionKey(idx.value))).value;
}

/**
 * Deletes a session and its digest index in one commit.
 *
 * @param kv the store
 * @param id the session id
 * @returns the deleted record, or null when there was none
 *
 * @example
 * ```ts
 * import { deleteSessionRecord, insertSession } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * await insertSession(kv, {
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * }, 60_000);
 * if ((await deleteSessionRecord(kv, "ssn_1"))?.digest !== "d1") throw new Error();
 * if (await deleteSessionRecord(kv, "ssn_1") !== null) throw new Error("deleted twice");
 * kv.close();
 * ```
 */
export async function deleteSessionRecord(
  kv: Deno.Kv,
  id: string,
): Promise<SessionRecord | null> {
  const s = await kv.get<SessionRecord>(sessionKey(id));
  if (s.value === null) return null;
  await bumpCredentialEpoch(
    kv.atomic().delete(sessionKey(id)).delete(sessionByDigestKey(s.value.digest)),
  ).commit();
  return s.value;
}

/**
 * Every stored session record (expired ones the KV has not dropped yet
 * included), in id order, which is creation order.
 *
 * @param kv the store
 * @returns the records
 *
 * @example
 * ```ts
 * import { listSessionRecords } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listSessionRecords(kv)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listSessionRecords(kv: Deno.Kv): Promise<SessionRecord[]> {
  const out: SessionRecord[] = [];
  for await (const e of kv.list<SessionRecord>({ prefix: sessionPrefix() })) out.push(e.value);
  return out;
}

/**
 * Deletes every session record and every digest index entry (used when the
 * token key is replaced: no digest made with the old key is usable).
 *
 * @param kv the store
 * @returns the number of session records deleted
 *
 * @example
 * ```ts
 * import { deleteAllSessions, insertSession, listSessionRecords } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * await insertSession(kv, {
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * }, 60_000);
 * if (await deleteAllSessions(kv) !== 1) throw new Error();
 * if ((await listSessionRecords(kv)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteAllSessions(kv: Deno.Kv): Promise<number> {
  let sessions = 0;
  for (const prefix of [sessionPrefix(), sessionByDigestPrefix()]) {
    for await (const e of kv.list({ prefix })) {
      await kv.delete(e.key);
      if (prefix[0] === "session") sessions++;
    }
  }
  await bumpCredentialEpoch(kv.atomic()).commit();
  return sessions;
}
