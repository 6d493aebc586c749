/**
 * People's sessions: a signed-in person lists and ends their own (a
 * session signed in to some tenants sees only the person's sessions of
 * those tenants); an admin ends another user's sessions of the tenants
 * the admin administers (a superadmin: every session). Every end is
 * audited as `session.revoked` and takes effect at once.
 *
 * @module
 */
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import { can } from "../auth/permissions.ts";
import { actorOf, type Principal } from "../auth/principal.ts";
import {
  endSession,
  type PublicSession,
  publicSession,
  sessionLive,
  type SessionRecord,
} from "../auth/sessions.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import { membershipsOfUser } from "../store/membership.ts";
import { findSessionRecord, sessionsOfUser } from "../store/sessions.ts";
import { getUser } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";

/** A session as its owner sees it: `current` marks the one making the request. */
export type ListedSession = PublicSession & { current: boolean };

/**
 * The caller's own live sessions, oldest first. 403 for a service token
 * (tokens have no sessions).
 *
 * @param deps store and clock
 * @param principal the caller
 * @returns the sessions, without digests
 *
 * @example
 * ```ts
 * import { ownSessions } from "./sessions.ts";
 * import { createSession } from "../auth/sessions.ts";
 * import { sessionPrincipal } from "../auth/principal.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session } = await createSession(kv, key, { user: user.id });
 * const list = await ownSessions({ kv, key }, sessionPrincipal(session));
 * if (list.length !== 1 || !list[0]!.current) throw new Error();
 * kv.close();
 * ```
 */
export function ownSessions(
  deps: AuthDeps,
  principal: Principal,
): Promise<ListedSession[]> {
  return withSpan("cfgtool.service.own_sessions", {}, async () => {
    if (principal.kind !== "session") {
      throw new ForbiddenError(
        "Service tokens have no sessions; sign in as a person to list yours",
      );
    }
    const now = (deps.now?.() ?? new Date()).getTime();
    return (await sessionsOfUser(deps.kv, principal.user_id))
      .filter((s) => sessionLive(s, now) && sameSource(principal, s))
      .map((s) => ({ ...publicSession(s), current: s.id === principal.session_id }));
  });
}

/**
 * Ends one session: the caller's own, or another user's when the caller may
 * manage that user (else 403). 404 `session_not_found` for an unknown or
 * ended session the caller could manage, and for any session of someone
 * else the caller may not see (no probing of ids).
 *
 * @param deps store, key, clock, credential cache
 * @param principal the caller
 * @param id the session id
 * @param ctx request id
 * @returns the ended session
 *
 * @example
 * ```ts
 * import { revokeSessionAs } from "./sessions.ts";
 * import { createSession, findSession } from "../auth/sessions.ts";
 * import { sessionPrincipal } from "../auth/principal.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session, secret } = await createSession(kv, key, { user: user.id });
 * await revokeSessionAs({ kv, key }, sessionPrincipal(session), session.id, { requestId: "r1" });
 * if (await findSession(kv, key, secret, new Date()) !== null) throw new Error();
 * kv.close();
 * ```
 */
export function revokeSessionAs(
  deps: AuthDeps,
  principal: Principal,
  id: string,
  ctx: RequestContext,
): Promise<PublicSession> {
  return withSpan("cfgtool.service.revoke_session_as", {}, async () => {
    const record = await findSessionRecord(deps.kv, id);
    const own = record !== null && principal.kind === "session" &&
      record.user_id === principal.user_id && sameSource(principal, record);
    if (record === null || (!own && !await mayEnd(deps.kv, principal, record))) {
      throw new NotFoundError("session_not_found", `No session ${id} that you can end`);
    }
    return await endSession(
      deps,
      id,
      actorOf(principal, ctx.requestId),
      own ? "logout" : "revoked",
    );
  });
}

/**
 * Ends every session of a user (by id or email): 403 unless the caller may
 * manage the user, 404 `user_not_found` for an unknown user.
 *
 * @param deps store, key, clock, credential cache
 * @param principal the caller
 * @param user the user id or email
 * @param ctx request id
 * @returns the ended sessions' ids
 *
 * @example
 * ```ts
 * import { revokeUserSessions } from "./sessions.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createSession } from "../auth/sessions.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * const user = await createUser(kv, { email: "a@b.c" });
 * await createSession(kv, key, { user: user.id });
 * const ended = await revokeUserSessions({ kv, key }, admin, "a@b.c", { requestId: "r1" });
 * if (ended.length !== 1) throw new Error();
 * kv.close();
 * ```
 */
export function revokeUserSessions(
  deps: AuthDeps,
  principal: Principal,
  user: string,
  ctx: RequestContext,
): Promise<string[]> {
  return withSpan("cfgtool.service.revoke_user_sessions", {}, async () => {
    const target = await getUser(deps.kv, user);
    const self = principal.kind === "session" && principal.user_id === target.id;
    const sessions: SessionRecord[] = [];
    for (const s of await sessionsOfUser(deps.kv, target.id)) {
      if (self ? sameSource(principal, s) : await mayEnd(deps.kv, principal, s)) sessions.push(s);
    }
    if (!self && sessions.length === 0 && !await mayManageUser(deps.kv, principal, target.id)) {
      throw new ForbiddenError(`Not allowed to end the sessions of ${target.email}`);
    }
    const ended: string[] = [];
    const actor = actorOf(principal, ctx.requestId);
    for (const s of sessions) {
      try {
        await endSession(deps, s.id, actor, "user_revoked");
        ended.push(s.id);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err; // ended meanwhile
      }
    }
    return ended;
  });
}

/**
 * Whether a session of the caller's own person is one the caller may see:
 * every one for a host-made session, else those sharing a tenant with it.
 */
function sameSource(p: Principal & { kind: "session" }, s: SessionRecord): boolean {
  return p.tenants.length === 0 || s.tenants.some((t) => p.tenants.includes(t));
}

/**
 * Whether a principal may end another person's session: a superadmin
 * token always; else an admin of a tenant the session was admitted to
 * (host-made sessions, admitted nowhere, only a superadmin ends).
 */
async function mayEnd(kv: Deno.Kv, p: Principal, s: SessionRecord): Promise<boolean> {
  if (p.kind === "token" && p.token.type === "superadmin") return true;
  for (const tenant of s.tenants) {
    if (await can(kv, p, "user.list", { tenant })) return true;
  }
  return false;
}

/** Whether a principal administers a tenant the user is an admin in (ending nothing is then allowed). */
async function mayManageUser(kv: Deno.Kv, p: Principal, userId: string): Promise<boolean> {
  if (p.kind === "token" && p.token.type === "superadmin") return true;
  for (const m of await membershipsOfUser(kv, userId)) {
    if (await can(kv, p, "user.list", { tenant: m.tenant })) return true;
  }
  return false;
}
