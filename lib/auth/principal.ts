/**
 * Authentication: turns an `Authorization: Bearer <credential>` header into
 * a {@linkcode Principal}, checking on every request token expiry,
 * revocation and the `namespace-client` environment gate. Also records
 * `last_used_at` (at most once a minute per token) together with a
 * `token.authenticated` audit entry.
 *
 * @module
 */
import { UnauthorizedError } from "../errors.ts";
import { addAudit, type AuditActor, type PrincipalType, tokenAuditEntry } from "../store/audit.ts";
import {
  effectiveStatus,
  findTokenByDigest,
  type TokenRecord,
  transitionToken,
  updateTokenIfUnchanged,
} from "../store/tokens.ts";
import { bearerCredential } from "./bearer.ts";
import { type AuthDeps, clock, type RequestContext } from "./deps.ts";
import { digestsEqual, hmacHex } from "./digest.ts";
import { assertPublicEvaluate } from "./public_gate.ts";
import { findLiveSession, type SessionRecord } from "./sessions.ts";
import { parseToken } from "./token_format.ts";

/** How often `last_used_at` (and `token.authenticated`) is written per token. */
export const LAST_USED_INTERVAL_MS = 60_000;

/** An authenticated caller: a service token, or a human session. */
export type Principal =
  | { kind: "token"; token: TokenRecord }
  | SessionPrincipal;

/**
 * A signed-in person: the user, the session, the tenants the sign-in
 * admitted them to (read access; admin rights come from the admin lists
 * and the tenant policy's `admin_groups`, read on every request), the IdP
 * groups at sign-in, and when the session began (an admission does not
 * carry over to a tenant deleted and created again after it).
 */
export interface SessionPrincipal {
  kind: "session";
  user_id: string;
  session_id: string;
  /** Tenants the sign-in admitted the user to. */
  tenants: readonly string[];
  /** IdP groups at sign-in. */
  groups: readonly string[];
  /** When the session was created (RFC 3339). */
  since: string;
  /** Who holds it: `browser` (the cookie), `cli` or `admin` (made on the server host). */
  client?: SessionRecord["client"];
  /** The session's absolute end (RFC 3339). */
  expires_at?: string;
  /** An operator's console session: acts as superadmin (never issues superadmin tokens). */
  superadmin?: true;
}

/**
 * The principal of a session record.
 *
 * @param s the live session
 * @returns the principal
 *
 * @example
 * ```ts
 * import { sessionPrincipal } from "./principal.ts";
 * import { normalizeSession } from "../store/sessions.ts";
 * const p = sessionPrincipal(normalizeSession({ id: "ssn_1", user_id: "usr_1",
 *   created_at: "2030-01-01T00:00:00.000Z", tenants: ["acme"] }));
 * if (p.user_id !== "usr_1" || p.tenants[0] !== "acme") throw new Error();
 * ```
 */
export function sessionPrincipal(s: SessionRecord): SessionPrincipal {
  return {
    kind: "session",
    user_id: s.user_id,
    session_id: s.id,
    tenants: s.tenants,
    groups: s.groups,
    since: s.created_at,
    client: s.client,
    expires_at: s.expires_at,
    ...(s.superadmin === true ? { superadmin: true as const } : {}),
  };
}

/**
 * The id recorded as actor / creator for a principal: the token id or the
 * user id.
 *
 * @param p the principal
 * @returns its id
 *
 * @example
 * ```ts
 * import { principalId } from "./principal.ts";
 * if (principalId({ kind: "session", user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" }) !== "usr_1") throw new Error();
 * ```
 */
export function principalId(p: Principal): string {
  return p.kind === "token" ? p.token.id : p.user_id;
}

/**
 * The audit `principal_type` of a principal: `client` for
 * `namespace-client` tokens, `service` for other tokens, `user` for humans.
 *
 * @param p the principal
 * @returns the principal type
 *
 * @example
 * ```ts
 * import { principalType } from "./principal.ts";
 * if (principalType({ kind: "session", user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" }) !== "user") throw new Error();
 * ```
 */
export function principalType(p: Principal): PrincipalType {
  if (p.kind === "session") return "user";
  return p.token.type === "namespace-client" ? "client" : "service";
}

/**
 * The audit actor for a principal in a request.
 *
 * @param p the principal
 * @param requestId the request id
 * @returns the actor
 *
 * @example
 * ```ts
 * import { actorOf } from "./principal.ts";
 * const a = actorOf({ kind: "session", user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" }, "r1");
 * if (a.id !== "usr_1" || a.request_id !== "r1") throw new Error();
 * ```
 */
export function actorOf(p: Principal, requestId: string | null): AuditActor {
  return { id: principalId(p), principal_type: principalType(p), request_id: requestId };
}

/**
 * Authenticates the value of an `Authorization` header (`Bearer
 * <credential>`): {@linkcode authenticateCredential} of its credential;
 * 401 {@linkcode UnauthorizedError} when it is missing or malformed. For
 * the library and tests; the server reads headers and cookies in one place
 * (lib/http/authn.ts) and calls {@linkcode authenticateCredential}.
 *
 * @param deps store, key and clock
 * @param authorization the header value (or null when absent)
 * @param ctx request id and client IP
 * @returns the principal
 *
 * @example
 * ```ts
 * import { authenticate } from "./principal.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * let status = 0;
 * try {
 *   await authenticate({ kv, key: await randomTokenKey() }, null, { requestId: "r1" });
 * } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 401) throw new Error();
 * kv.close();
 * ```
 */
export async function authenticate(
  deps: AuthDeps,
  authorization: string | null | undefined,
  ctx: RequestContext,
): Promise<Principal> {
  return await authenticateCredential(deps, bearerCredential(authorization), ctx);
}

/**
 * Authenticates a credential (a session secret `ses_…` or a service
 * token). Throws 401 {@linkcode UnauthorizedError} for a malformed,
 * unknown, expired or revoked credential (an active token found past
 * `expires_at` becomes `expired`, with one `token.expired` audit entry),
 * and 403 `ForbiddenError` for a `namespace-client` token whose
 * environment is not public (read through `deps.headOf`: the server's
 * model cache, so an evaluation that authorizes the same gate again reads
 * no store).
 *
 * @param deps store, key, clock, credential cache and head reader
 * @param credential the credential as presented
 * @param ctx request id and client IP
 * @returns the principal
 *
 * @example
 * ```ts
 * import { authenticateCredential } from "./principal.ts";
 * import { bootstrapSuperadmin } from "./bootstrap.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const { secret } = await bootstrapSuperadmin(kv, key);
 * const p = await authenticateCredential({ kv, key }, secret, { requestId: "r1" });
 * if (p.kind !== "token" || p.token.type !== "superadmin") throw new Error();
 * kv.close();
 * ```
 */
export async function authenticateCredential(
  deps: AuthDeps,
  credential: string,
  ctx: RequestContext,
): Promise<Principal> {
  if (credential.startsWith("ses_")) {
    const session = await findLiveSession(deps, credential, clock(deps));
    if (session === null) throw new UnauthorizedError("Unknown or expired session");
    return sessionPrincipal(session);
  }
  if (parseToken(credential) === null) {
    throw new UnauthorizedError("Malformed credential");
  }
  const cache = deps.credentials;
  const digest = cache
    ? await cache.digest(credential, (c) => hmacHex(deps.key, c))
    : await hmacHex(deps.key, credential);
  const entry = cache ? await cache.find(digest) : await findTokenByDigest(deps.kv, digest);
  // The lookup is by digest; compare once more in constant time anyway.
  if (entry === null || !digestsEqual(entry.value.digest, digest)) {
    throw new UnauthorizedError("Unknown credential");
  }
  const token = entry.value;
  const now = clock(deps);
  if (token.status === "revoked") throw new UnauthorizedError("Token is revoked");
  if (effectiveStatus(token, now) === "expired") {
    if (token.status === "active") await expire(deps, token.id, now, ctx);
    throw new UnauthorizedError("Token has expired");
  }
  if (token.type === "namespace-client") await assertPublicEvaluate(deps.kv, token, deps.headOf);
  await touch(deps, entry, now, ctx);
  return { kind: "token", token };
}

/** Persists `expired` and audits it, once, whoever observes it first. */
async function expire(
  deps: AuthDeps,
  id: string,
  now: Date,
  ctx: RequestContext,
): Promise<void> {
  const actor: AuditActor = { id: "system", principal_type: "system", request_id: ctx.requestId };
  await transitionToken(
    deps.kv,
    id,
    (t) =>
      t.status === "active" && effectiveStatus(t, now) === "expired"
        ? { ...t, status: "expired" }
        : null,
    (op, next) => {
      addAudit(
        op,
        tokenAuditEntry("token.expired", next, actor, now, {
          details: { expires_at: next.expires_at, observed: "authentication" },
        }),
      );
    },
  );
}

/**
 * Writes `last_used_at`, the IP digest and a `token.authenticated` audit
 * entry, at most once per minute per token. With the server's credential
 * cache the write happens after the response (a failure is only lost
 * bookkeeping); without it, before. Losing a race to another request is
 * fine: it just wrote the same facts.
 */
function touch(
  deps: AuthDeps,
  entry: Deno.KvEntry<TokenRecord>,
  now: Date,
  ctx: RequestContext,
): Promise<void> {
  const token = entry.value;
  const cache = deps.credentials;
  if (
    (token.last_used_at !== null &&
      now.getTime() - Date.parse(token.last_used_at) < LAST_USED_INTERVAL_MS) ||
    (cache !== undefined && !cache.claimTouch(token.id, now.getTime(), LAST_USED_INTERVAL_MS))
  ) {
    return Promise.resolve();
  }
  const write = async () => {
    const next: TokenRecord = {
      ...token,
      last_used_at: now.toISOString(),
      last_used_ip_hash: ctx.ip === undefined
        ? token.last_used_ip_hash
        : await hmacHex(deps.key, `ip:${ctx.ip}`),
    };
    const principal: Principal = { kind: "token", token: next };
    const versionstamp = await updateTokenIfUnchanged(
      deps.kv,
      entry,
      next,
      tokenAuditEntry("token.authenticated", next, actorOf(principal, ctx.requestId), now),
    );
    if (versionstamp !== null) cache?.updated({ ...entry, value: next, versionstamp });
  };
  if (cache === undefined) return write();
  write().catch(() => {}); // off the response path: bookkeeping only
  return Promise.resolve();
}
