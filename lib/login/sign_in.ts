/**
 * The end of every sign-in method: a person whose email the identity
 * provider (or an emailed code) verified, admitted by the tenant's login
 * policy, gets a user record (made on first sign-in, keyed by the email)
 * and a session; `login.succeeded` is audited in the tenant's log. A
 * refused sign-in is audited as `login.failed` with its reason (no secret,
 * no full address: only the email's domain).
 *
 * @module
 */
import { ConflictError, LoginError } from "../errors.ts";
import { emailDomain } from "../protocol/login_policy.ts";
import { eventAuditEntry, writeAudit } from "../store/audit.ts";
import { findTenant } from "../store/tenants.ts";
import { countAttempt } from "../store/login_rate.ts";
import { sha256 } from "@noble/hashes/sha2";
import { toHex } from "../bytes.ts";
import { createUser, findUser, type UserRecord } from "../store/users.ts";
import { type AuthDeps, clock, type RequestContext } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";
import {
  createSession,
  DEFAULT_SESSION_TTL_MS,
  type SessionClient,
  type SessionLoginMethod,
  type SessionRecord,
} from "../auth/sessions.ts";

/** What a sign-in method proved about a person. */
export interface VerifiedIdentity {
  /** The tenant the person signs in to (its policy admitted them). */
  tenant: string;
  /** The verified email. */
  email: string;
  /** Which method proved it. */
  method: Exclude<SessionLoginMethod, "admin">;
  /** The IdP's `amr`/`acr` values, or `email-link` / `email-code`. */
  assurance: string[];
  /** IdP groups (empty for email). */
  groups: string[];
}

/** Session lifetimes of a sign-in. */
export interface SessionTimes {
  /** Absolute lifetime, ms (default 12 h). */
  ttlMs?: number;
  /** Idle limit, ms; null for none. */
  idleMs?: number | null;
}

/** Browser sessions end after 2 hours without a request. */
export const BROWSER_IDLE_MS = 2 * 60 * 60 * 1000;

/**
 * Finishes a sign-in: finds or creates the user, makes the session and
 * audits `login.succeeded` in the tenant's log. 403 `login_failed`
 * (`tenant`) when the tenant is gone.
 *
 * @param deps store, key, clock
 * @param identity what the method verified
 * @param client who will hold the session (`browser` or `cli`)
 * @param ctx request id and client IP
 * @param times session lifetimes (browser default: 12 h absolute, 2 h idle; CLI: 12 h, no idle)
 * @returns the session record, its secret (given once) and the user
 *
 * @example
 * ```ts
 * import { signIn } from "./sign_in.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const { session, secret, user } = await signIn({ kv, key: await randomTokenKey() }, {
 *   tenant: "acme", email: "Ana@acme.com", method: "email", assurance: ["email-link"], groups: [],
 * }, "browser", { requestId: "r1" });
 * if (!secret.startsWith("ses_") || session.tenants[0] !== "acme" || user.email !== "ana@acme.com") {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export async function signIn(
  deps: AuthDeps,
  identity: VerifiedIdentity,
  client: Exclude<SessionClient, "admin">,
  ctx: RequestContext,
  times: SessionTimes = {},
): Promise<{ session: SessionRecord; secret: string; user: UserRecord }> {
  const now = clock(deps);
  if (await findTenant(deps.kv, identity.tenant) === null) {
    throw new LoginError("tenant", `There is no tenant ${identity.tenant}`);
  }
  let user = await findUser(deps.kv, identity.email);
  const created = user === null;
  if (user === null) {
    try {
      user = await createUser(deps.kv, { email: identity.email, now: () => now });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      user = await findUser(deps.kv, identity.email); // made by a sign-in racing this one
      if (user === null) throw err;
    }
  }
  const { session, secret } = await createSession(deps.kv, deps.key, {
    user: user.id,
    ttl: times.ttlMs ?? DEFAULT_SESSION_TTL_MS,
    idle: times.idleMs !== undefined ? times.idleMs : client === "browser" ? BROWSER_IDLE_MS : null,
    tenants: [identity.tenant],
    login_method: identity.method,
    assurance: identity.assurance,
    groups: identity.groups,
    client,
    ip_hash: ctx.ip === undefined ? null : await hmacHex(deps.key, `ip:${ctx.ip}`),
    now: () => now,
  });
  await auditLoginSucceeded(deps.kv, user.id, now, ctx, identity.tenant, {
    method: identity.method,
    client,
    session_id: session.id,
    assurance: identity.assurance,
    new_user: created,
  });
  return { session, secret, user };
}

/**
 * Writes the `login.succeeded` audit entry of a sign-in: the person as the
 * actor, in the tenant's log (or the installation's, for an operator).
 *
 * @param kv the store
 * @param userId who signed in
 * @param now when
 * @param ctx the request
 * @param tenant the tenant signed in to, or null
 * @param details method, client, session id and what else the method tells
 * @returns nothing
 *
 * @example
 * ```ts
 * import { auditLoginSucceeded } from "./sign_in.ts";
 * import { listAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await auditLoginSucceeded(kv, "usr_1", new Date(), { requestId: "r1" }, "acme", { method: "email" });
 * if ((await listAudit(kv, { tenant: "acme" })).items[0]?.type !== "login.succeeded") throw new Error();
 * kv.close();
 * ```
 */
export async function auditLoginSucceeded(
  kv: Deno.Kv,
  userId: string,
  now: Date,
  ctx: RequestContext,
  tenant: string | null,
  details: Record<string, unknown>,
): Promise<void> {
  await writeAudit(
    kv,
    eventAuditEntry(
      "login.succeeded",
      { id: userId, principal_type: "user", request_id: ctx.requestId },
      now,
      tenant === null ? { details } : { tenant_slug: tenant, details },
    ),
  );
}

/** Refused sign-ins audited per client address and 10 minutes; more are only counted. */
export const AUDITED_FAILURES_PER_ADDRESS = 50;

/**
 * Audits a refused sign-in as `login.failed` in the tenant's log (the
 * installation's when the tenant is unknown): the reason, the method, and
 * at most the email's domain. Anyone can cause refusals without signing
 * in, so at most {@linkcode AUDITED_FAILURES_PER_ADDRESS} are written per
 * client address (by its SHA-256) and 10 minutes; the rest would only
 * grow the store and bury other entries.
 *
 * @param deps store and clock
 * @param failure the tenant (if known), method, reason and email (if any)
 * @param ctx request id
 * @returns nothing
 *
 * @example
 * ```ts
 * import { recordLoginFailure } from "./sign_in.ts";
 * import { listAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await recordLoginFailure({ kv }, { tenant: "acme", method: "oidc", reason: "state" }, { requestId: "r1" });
 * const [e] = (await listAudit(kv, { tenant: "acme" })).items;
 * if (e?.type !== "login.failed" || e.details.reason !== "state") throw new Error();
 * kv.close();
 * ```
 */
export async function recordLoginFailure(
  deps: Pick<AuthDeps, "kv" | "now">,
  failure: { tenant?: string | null; method?: string; reason: string; email?: string },
  ctx: RequestContext,
): Promise<void> {
  if (ctx.ip !== undefined) {
    const id = toHex(sha256(new TextEncoder().encode(`ip:${ctx.ip}`)));
    const now = clock(deps).getTime();
    if (
      !await countAttempt(deps.kv, "login_failed", id, AUDITED_FAILURES_PER_ADDRESS, 600_000, now)
    ) {
      return;
    }
  }
  const details: Record<string, unknown> = { reason: failure.reason };
  if (failure.method !== undefined) details.method = failure.method;
  if (failure.email !== undefined) details.email_domain = emailDomain(failure.email);
  await writeAudit(
    deps.kv,
    eventAuditEntry(
      "login.failed",
      { id: "anonymous", principal_type: "user", request_id: ctx.requestId },
      clock(deps),
      { tenant_slug: failure.tenant ?? null, result: "failure", details },
    ),
  );
}
