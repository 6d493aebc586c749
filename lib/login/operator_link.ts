/**
 * Operator console links: how the installation's operator opens the web
 * console as superadmin. Superadmins are service tokens, made on the
 * server host; people sign in to tenants. An operator who needs the
 * console (to see every tenant, create one) runs
 * `cfgtool admin console-link --user EMAIL` on the server host, which
 * needs the same access as `admin bootstrap` (the KV and the key file),
 * and opens the one-time link it prints. Redeeming it makes a browser
 * session marked `superadmin`, audited as `login.succeeded` with method
 * `operator`.
 *
 * | record | keyed by | holds | lives |
 * |---|---|---|---|
 * | `operator_link` | HMAC digest of the link's code | the user id | 10 minutes (`--ttl`) |
 *
 * The code is 32 random bytes (base58), single use, stored only as a
 * digest. The session lasts at most 8 hours and ends after 30 minutes
 * without a request; `cfgtool admin session revoke` ends it at once.
 *
 * @module
 */
import { base58 } from "base";
import { LoginError } from "../errors.ts";
import { peekOneTime, putOneTime, takeOneTime } from "../store/one_time.ts";
import { createUser, findUser, type UserRecord } from "../store/users.ts";
import type { SessionRecord } from "../store/sessions.ts";
import type { AuthDeps, RequestContext } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";
import { createSession } from "../auth/sessions.ts";
import { auditLoginSucceeded } from "./sign_in.ts";

/** How long a console link works by default: 10 minutes. */
export const OPERATOR_LINK_TTL_MS = 10 * 60 * 1000;
/** An operator's console session ends after 8 hours. */
export const OPERATOR_SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** An operator's console session ends after 30 minutes without a request. */
export const OPERATOR_SESSION_IDLE_MS = 30 * 60 * 1000;

const KIND = "operator_link";

interface LinkRecord {
  user_id: string;
}

function digestOf(key: CryptoKey, code: string): Promise<string> {
  return hmacHex(key, `${KIND}:${code}`);
}

function clock(deps: AuthDeps): Date {
  return deps.now?.() ?? new Date();
}

/**
 * Makes a one-time console link's code for a person (made a user when
 * the email is new).
 *
 * @param deps store, key, clock
 * @param email the operator's email
 * @param ttlMs how long the link works
 * @returns the code (given once) and the user
 *
 * @example
 * ```ts
 * import { createOperatorLink, peekOperatorLink } from "./operator_link.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const { code, user } = await createOperatorLink(deps, "ops@example.com");
 * if ((await peekOperatorLink(deps, code))?.id !== user.id) throw new Error();
 * deps.kv.close();
 * ```
 */
export async function createOperatorLink(
  deps: AuthDeps,
  email: string,
  ttlMs: number = OPERATOR_LINK_TTL_MS,
): Promise<{ code: string; user: UserRecord; expiresAt: Date }> {
  const now = clock(deps);
  const user = await findUser(deps.kv, email) ??
    await createUser(deps.kv, { email, now: () => now });
  while (true) {
    const code = base58.encode(crypto.getRandomValues(new Uint8Array(32)));
    const record: LinkRecord = { user_id: user.id };
    if (await putOneTime(deps.kv, KIND, await digestOf(deps.key, code), record, ttlMs, +now)) {
      return { code, user, expiresAt: new Date(+now + ttlMs) };
    }
  }
}

/**
 * Whose console link a code is, without redeeming it (for the confirm
 * page); null when used, expired or unknown.
 *
 * @param deps store, key, clock
 * @param code the link's code
 * @returns the user, or null
 *
 * @example
 * ```ts
 * import { peekOperatorLink } from "./operator_link.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * if (await peekOperatorLink(deps, "nope") !== null) throw new Error();
 * deps.kv.close();
 * ```
 */
export async function peekOperatorLink(
  deps: AuthDeps,
  code: string,
): Promise<UserRecord | null> {
  const record = await peekOneTime<LinkRecord>(
    deps.kv,
    KIND,
    await digestOf(deps.key, code),
    +clock(deps),
  );
  return record === null ? null : await findUser(deps.kv, record.user_id);
}

/**
 * Redeems a console link: makes the operator's browser session (marked
 * superadmin) and audits `login.succeeded`. 403 `login_failed` (`state`)
 * when the code is used, expired or unknown.
 *
 * @param deps store, key, clock
 * @param code the link's code
 * @param ctx request id and client IP
 * @returns the session and its secret (given once)
 *
 * @example
 * ```ts
 * import { createOperatorLink, redeemOperatorLink } from "./operator_link.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const { code } = await createOperatorLink(deps, "ops@example.com");
 * const { session } = await redeemOperatorLink(deps, code, { requestId: "r1" });
 * if (session.superadmin !== true || session.client !== "browser") throw new Error();
 * let reason = "";
 * try { await redeemOperatorLink(deps, code, { requestId: "r2" }); }
 * catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "state") throw new Error("a link works once");
 * deps.kv.close();
 * ```
 */
export async function redeemOperatorLink(
  deps: AuthDeps,
  code: string,
  ctx: RequestContext,
): Promise<{ session: SessionRecord; secret: string }> {
  const now = clock(deps);
  const record = await takeOneTime<LinkRecord>(
    deps.kv,
    KIND,
    await digestOf(deps.key, code),
    +now,
  );
  if (record === null) {
    throw new LoginError(
      "state",
      "This console link was used already, has expired or is unknown: make a new one on the " +
        "server host (cfgtool admin console-link)",
    );
  }
  const { session, secret } = await createSession(deps.kv, deps.key, {
    user: record.user_id,
    ttl: OPERATOR_SESSION_TTL_MS,
    idle: OPERATOR_SESSION_IDLE_MS,
    login_method: "operator",
    client: "browser",
    superadmin: true,
    ip_hash: ctx.ip === undefined ? null : await hmacHex(deps.key, `ip:${ctx.ip}`),
    now: () => now,
  });
  await auditLoginSucceeded(deps.kv, record.user_id, now, ctx, null, {
    method: "operator",
    client: "browser",
    session_id: session.id,
    superadmin: true,
  });
  return { session, secret };
}
