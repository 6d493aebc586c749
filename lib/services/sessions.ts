/**
 * Who the caller is (`GET /api/v1/me`), and people's sessions: a
 * signed-in person lists and ends their own (a session signed in to some
 * tenants sees only the person's sessions of those tenants); an admin
 * ends another user's sessions of the tenants the admin administers (a
 * superadmin: every session). A session or user the caller may not act
 * on answers exactly as one that does not exist. Every end is audited as
 * `session.revoked` and takes effect at once.
 *
 * @module
 */
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import { can } from "../auth/permissions.ts";
import { actorOf, type Principal, type SessionPrincipal } from "../auth/principal.ts";
import {
  endSession,
  type PublicSession,
  publicSession,
  sessionLive,
  type SessionRecord,
} from "../auth/sessions.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { AuditActor } from "../store/audit.ts";
import { membershipsOfUser } from "../store/membership.ts";
import { findSessionRecord, sessionsOfUser } from "../store/sessions.ts";
import { tenantsAdministeredBy } from "../store/tenants.ts";
import {
  effectiveStatus,
  type PublicToken,
  publicToken,
  type TokenStatus,
} from "../store/tokens.ts";
import { findUser } from "../store/users.ts";
import { normalEmail } from "../protocol/login_policy.ts";
import { withSpan } from "../telemetry/spans.ts";
import type { ServiceDeps } from "./deps.ts";
import { isSuperadmin, NO_USER_ID, type TenantRole, tenantRoles } from "./tenants.ts";
import { type SignedInUser, signedInUser } from "./users.ts";

/**
 * Who the caller is, as `GET /api/v1/me` shows it: a service token
 * (`client` for a `namespace-client` token, else `service`) without its
 * digest, with its type, binding, current status and expiry also at the
 * top (what a relay's verdict reads, lib/relay/verdicts.ts); or a person (`user`) with their account, the session (its id
 * alone when it is gone) and the tenants they may read with their role in
 * each.
 */
export type Caller =
  | {
    type: "client" | "service";
    token: PublicToken;
    /** The token's type (as `token.type`), for clients that read no record (a relay). */
    token_type: PublicToken["type"];
    /** What it is bound to (null where unbound). */
    binding: { tenant: string | null; namespace: string | null; environment: string | null };
    /** Its status now (an active token past `expires_at` is `expired`). */
    status: TokenStatus;
    /** RFC 3339 expiry, or null. */
    expires_at: string | null;
  }
  | {
    type: "user";
    user: SignedInUser;
    session: PublicSession | { id: string };
    tenants: TenantRole[];
  };

/**
 * Who the caller is ({@linkcode Caller}); every principal may ask.
 *
 * @param deps the store
 * @param principal the caller
 * @returns the description
 *
 * @example
 * ```ts
 * import { whoAmI } from "./sessions.ts";
 * import { createSession } from "../auth/sessions.ts";
 * import { sessionPrincipal } from "../auth/principal.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "a@b.c" });
 * const { session } = await createSession(kv, await randomTokenKey(), { user: user.id });
 * const me = await whoAmI({ kv }, sessionPrincipal(session));
 * if (me.type !== "user" || me.user.email !== "a@b.c" || me.session.id !== session.id) throw new Error();
 * kv.close();
 * ```
 */
export function whoAmI(deps: Pick<ServiceDeps, "kv">, principal: Principal): Promise<Caller> {
  return withSpan("cfgtool.service.who_am_i", {}, async () => {
    if (principal.kind === "token") {
      const t = principal.token;
      return {
        type: t.type === "namespace-client" ? "client" : "service",
        token: publicToken(t),
        token_type: t.type,
        binding: {
          tenant: t.tenant_slug,
          namespace: t.namespace_slug,
          environment: t.environment_slug,
        },
        status: effectiveStatus(t, new Date()),
        expires_at: t.expires_at,
      };
    }
    const [user, session] = await Promise.all([
      signedInUser(deps, principal),
      findSessionRecord(deps.kv, principal.session_id),
    ]);
    return {
      type: "user",
      user,
      session: session === null ? { id: principal.session_id } : publicSession(session),
      tenants: await tenantRoles(deps, principal),
    };
  });
}

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
 * Ends every session of a user (by id or email) that the caller may end,
 * and returns their ids. Whoever asks about someone else must manage some
 * tenant's people (a tenant admin, human or token; a superadmin): anyone
 * else gets 403 before the user is looked up, with a message that names
 * no one. A tenant admin ends the user's sessions admitted to the tenants
 * they administer; a superadmin all of them. 404 `user_not_found` for an
 * unknown user and, with the same message, for a user who is none of the
 * caller's people (no session the caller may end, on no admin list of a
 * tenant the caller administers), so the answer tells nothing about
 * accounts of other tenants. People end their own sessions (those sharing
 * a tenant with the calling session) without any role.
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
 * let code = "";
 * try { await revokeUserSessions({ kv, key }, admin, "nobody@b.c", { requestId: "r2" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "user_not_found") throw new Error(code);
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
    const actor = actorOf(principal, ctx.requestId);
    if (principal.kind === "session" && await namesSelf(deps.kv, principal, user)) {
      const own = await sessionsOfUser(deps.kv, principal.user_id);
      return await endAll(deps, own.filter((s) => sameSource(principal, s)), actor);
    }
    const scope = await tenantsManagedBy(deps.kv, principal);
    if (scope !== null && scope.length === 0) {
      throw new ForbiddenError(
        "Only a superadmin or a tenant admin can end another person's sessions",
      );
    }
    const target = await findUser(deps.kv, user);
    // An unknown user is read as a placeholder: both paths read the same records.
    const id = target?.id ?? NO_USER_ID;
    const [sessions, memberships] = await Promise.all([
      sessionsOfUser(deps.kv, id),
      membershipsOfUser(deps.kv, id),
    ]);
    const inScope = (tenant: string) => scope === null || scope.includes(tenant);
    const endable = sessions.filter((s) => scope === null || s.tenants.some(inScope));
    const theirs = scope === null || endable.length > 0 ||
      memberships.some((m) => inScope(m.tenant));
    if (target === null || !theirs) {
      throw new NotFoundError("user_not_found", `No user ${user} among the people you manage`);
    }
    return await endAll(deps, endable, actor);
  });
}

/** Whether `user` (an id or an email) names the calling person. */
async function namesSelf(kv: Deno.Kv, p: SessionPrincipal, user: string): Promise<boolean> {
  if (user === p.user_id) return true;
  if (!user.includes("@")) return false;
  return (await findUser(kv, p.user_id))?.email === normalEmail(user);
}

/**
 * The tenants whose people a principal manages (`user.list`): null for a
 * superadmin (every tenant); a `tenant-admin` token's own; for a person,
 * the tenants of their sign-in where they are an admin, or, for a session
 * made on the server host, the tenants on whose admin list they are.
 */
async function tenantsManagedBy(kv: Deno.Kv, p: Principal): Promise<string[] | null> {
  if (isSuperadmin(p)) return null;
  const candidates = p.kind === "token"
    ? (p.token.tenant_slug === null ? [] : [p.token.tenant_slug])
    : p.tenants.length > 0
    ? p.tenants
    : await tenantsAdministeredBy(kv, p.user_id);
  const out: string[] = [];
  for (const tenant of candidates) {
    if (await can(kv, p, "user.list", { tenant })) out.push(tenant);
  }
  return out;
}

/** Ends sessions as `actor` (reason `user_revoked`); returns the ids ended (not those ended meanwhile). */
async function endAll(
  deps: AuthDeps,
  sessions: SessionRecord[],
  actor: AuditActor,
): Promise<string[]> {
  const ended: string[] = [];
  for (const s of sessions) {
    try {
      await endSession(deps, s.id, actor, "user_revoked");
      ended.push(s.id);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err; // ended meanwhile
    }
  }
  return ended;
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
 * always; else an admin of a tenant the session was admitted to
 * (host-made sessions, admitted nowhere, only a superadmin ends).
 */
async function mayEnd(kv: Deno.Kv, p: Principal, s: SessionRecord): Promise<boolean> {
  if (isSuperadmin(p)) return true;
  for (const tenant of s.tenants) {
    if (await can(kv, p, "user.list", { tenant })) return true;
  }
  return false;
}
