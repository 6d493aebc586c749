/**
 * Human session records: `["session", id]` (`ssn_<ulid>`, user id, HMAC
 * digest, expiry) and the index `["session_by_digest", hmac]` holding the
 * id. Both expire from the KV a little after the session ends. A session
 * admitted to a tenant also records its sign-in in the tenant's people
 * index (lib/store/people.ts), in the same commit. Issuing, checking and
 * revoking session tokens is lib/auth/sessions.ts; this module only reads
 * and writes the records.
 *
 * @module
 */
import { bumpCredentialEpoch } from "./credential_epoch.ts";
import {
  allSessionsByUserPrefix,
  sessionByDigestKey,
  sessionByDigestPrefix,
  sessionByUserKey,
  sessionByUserPrefix,
  sessionKey,
  sessionPrefix,
  userKey,
} from "./keys.ts";
import { addSignIn, readSignInSlots, type SignInFact } from "./people.ts";
import type { UserRecord } from "./users.ts";

/**
 * How a session was made: a sign-in method, `admin` (`cfgtool admin session
 * create`), or `operator` (a one-time console link made on the server host
 * with `cfgtool admin console-link`).
 */
export type SessionLoginMethod = "oidc" | "email" | "saml" | "admin" | "operator";

/** Who holds a session: a browser (cookie), the CLI (bearer), or a host-made one. */
export type SessionClient = "browser" | "cli" | "admin";

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
  /** Absolute end. */
  expires_at: string;
  /** Tenants the sign-in admitted the user to ([] for sessions made on the server host). */
  tenants: string[];
  /** How the user signed in. */
  login_method: SessionLoginMethod;
  /** Login assurance: the IdP's `amr`/`acr` values, or `email-link` / `email-code`. */
  assurance: string[];
  /** IdP groups at sign-in (matched against the policy's `admin_groups` per request). */
  groups: string[];
  /** Who holds it. */
  client: SessionClient;
  /** Last authenticated request (written at most once a minute). */
  last_seen_at: string;
  /** The session ends after this long without a request, ms; null: no idle limit. */
  idle_timeout_ms: number | null;
  /** HMAC of the client IP at sign-in (raw IPs are never stored), or null. */
  ip_hash: string | null;
  /**
   * Set only on an operator's console session (`login_method: "operator"`):
   * it acts as the installation's superadmin, except that it cannot issue
   * superadmin tokens.
   */
  superadmin?: true;
}

/**
 * A session record as stored by any version: records written before
 * sign-in existed lack the sign-in fields and read as host-made sessions.
 *
 * @param raw the stored value
 * @returns the record with every field
 *
 * @example
 * ```ts
 * import { normalizeSession } from "./sessions.ts";
 * const s = normalizeSession({
 *   id: "ssn_1", user_id: "usr_1", prefix: "ses_abc", digest: "d",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * });
 * if (s.login_method !== "admin" || s.tenants.length !== 0) throw new Error();
 * ```
 */
export function normalizeSession(
  raw: Partial<SessionRecord> & Pick<SessionRecord, "id" | "user_id" | "created_at">,
): SessionRecord {
  return {
    prefix: "",
    digest: "",
    expires_at: raw.created_at,
    tenants: [],
    login_method: "admin",
    assurance: [],
    groups: [],
    client: "admin",
    last_seen_at: raw.created_at,
    idle_timeout_ms: null,
    ip_hash: null,
    ...raw,
  };
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
 * meanwhile. Both records expire from the KV after `expireIn` ms. For each
 * tenant the session was admitted to, the same commit records the sign-in
 * in the tenant's people index (lib/store/people.ts, `addSignIn`), checked
 * against the tenant and the person's record (`conflict` when one changed).
 *
 * @param kv the store
 * @param session the new record
 * @param expireIn milliseconds after which the KV drops both records
 * @returns `created`, `no_user` or `conflict`
 *
 * @example
 * ```ts
 * import { findSessionByDigest, insertSession, normalizeSession } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * const s = normalizeSession({
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * });
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
  const userEntry = await kv.get<UserRecord>(userKey(session.user_id));
  if (userEntry.value === null) return "no_user";
  const email = userEntry.value.email;
  const slots = await readSignInSlots(kv, session.tenants, email);
  const op = kv.atomic()
    .check(userEntry)
    .set(sessionKey(session.id), session, { expireIn })
    .set(sessionByDigestKey(session.digest), session.id, { expireIn })
    .set(sessionByUserKey(session.user_id, session.id), session.id, { expireIn });
  const res = await addSignIn(op, slots, email, signInOf(session)).commit();
  return res.ok ? "created" : "conflict";
}

/**
 * The sign-in a session records in its tenants' people index.
 *
 * @param s the session
 * @returns when, how and by which client the person signed in, with their groups
 *
 * @example
 * ```ts
 * import { normalizeSession, signInOf } from "./sessions.ts";
 * const s = normalizeSession({ id: "ssn_1", user_id: "usr_1", created_at: "2030-01-01T00:00:00.000Z",
 *   login_method: "oidc", client: "cli", tenants: ["acme"] });
 * if (signInOf(s).method !== "oidc" || signInOf(s).at !== s.created_at) throw new Error();
 * ```
 */
export function signInOf(s: SessionRecord): SignInFact {
  return {
    user_id: s.user_id,
    at: s.created_at,
    method: s.login_method,
    client: s.client,
    groups: s.groups,
  };
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
  const s = (await kv.get<SessionRecord>(sessionKey(idx.value))).value;
  return s === null ? null : normalizeSession(s);
}

/**
 * Records that a session was used: sets `last_seen_at` unless the record
 * changed since it was read (a revocation wins; a lost race only loses
 * bookkeeping). Nothing else changes, so no credential epoch moves.
 *
 * @param kv the store
 * @param session the record as read
 * @param at the time of use
 * @returns whether it was written
 *
 * @example
 * ```ts
 * import { findSessionByDigest, insertSession, touchSession, normalizeSession } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * const s = normalizeSession({ id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z" });
 * await insertSession(kv, s, 60_000);
 * await touchSession(kv, s, new Date("2030-01-01T01:00:00.000Z"));
 * if ((await findSessionByDigest(kv, "d1"))?.last_seen_at !== "2030-01-01T01:00:00.000Z") throw new Error();
 * kv.close();
 * ```
 */
export async function touchSession(
  kv: Deno.Kv,
  session: SessionRecord,
  at: Date,
): Promise<boolean> {
  const entry = await kv.get<SessionRecord>(sessionKey(session.id));
  if (entry.value === null) return false;
  const expireIn = Math.max(Date.parse(entry.value.expires_at) - at.getTime(), 0) + 60_000;
  const res = await kv.atomic().check(entry)
    .set(sessionKey(session.id), { ...entry.value, last_seen_at: at.toISOString() }, { expireIn })
    .commit();
  return res.ok;
}

/**
 * Reads a session record by id (null when there is none).
 *
 * @param kv the store
 * @param id the session id
 * @returns the record, or null
 *
 * @example
 * ```ts
 * import { findSessionRecord } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findSessionRecord(kv, "ssn_x") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findSessionRecord(kv: Deno.Kv, id: string): Promise<SessionRecord | null> {
  const s = (await kv.get<SessionRecord>(sessionKey(id))).value;
  return s === null ? null : normalizeSession(s);
}

/**
 * The session records of one user, in creation order (expired ones the KV
 * has not dropped yet included).
 *
 * @param kv the store
 * @param userId the user id
 * @returns the records
 *
 * @example
 * ```ts
 * import { sessionsOfUser } from "./sessions.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await sessionsOfUser(kv, "usr_1")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function sessionsOfUser(kv: Deno.Kv, userId: string): Promise<SessionRecord[]> {
  const out: SessionRecord[] = [];
  for await (const e of kv.list<string>({ prefix: sessionByUserPrefix(userId) })) {
    const s = (await kv.get<SessionRecord>(sessionKey(e.value))).value;
    if (s !== null) out.push(normalizeSession(s));
  }
  return out;
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
 * import { deleteSessionRecord, insertSession, normalizeSession } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * await insertSession(kv, normalizeSession({
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * }), 60_000);
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
    kv.atomic().delete(sessionKey(id)).delete(sessionByDigestKey(s.value.digest))
      .delete(sessionByUserKey(s.value.user_id, id)),
  ).commit();
  return normalizeSession(s.value);
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
  for await (const e of kv.list<SessionRecord>({ prefix: sessionPrefix() })) {
    out.push(normalizeSession(e.value));
  }
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
 * import { deleteAllSessions, insertSession, listSessionRecords, normalizeSession } from "./sessions.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * await insertSession(kv, normalizeSession({
 *   id: "ssn_1", user_id: user.id, prefix: "ses_abc", digest: "d1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: "2030-01-02T00:00:00.000Z",
 * }), 60_000);
 * if (await deleteAllSessions(kv) !== 1) throw new Error();
 * if ((await listSessionRecords(kv)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteAllSessions(kv: Deno.Kv): Promise<number> {
  let sessions = 0;
  for (const prefix of [sessionPrefix(), sessionByDigestPrefix(), allSessionsByUserPrefix()]) {
    for await (const e of kv.list({ prefix })) {
      await kv.delete(e.key);
      if (prefix[0] === "session") sessions++;
    }
  }
  await bumpCredentialEpoch(kv.atomic()).commit();
  return sessions;
}
