/**
 * Operator console links: how the installation's operator opens the web
 * console as superadmin. Superadmins are service tokens, made on the
 * server host; people sign in to tenants. An operator who needs the
 * console (to see every tenant, create one) runs
 * `cfgtool admin console-link --user EMAIL` on the server host, which
 * needs the same access as `admin bootstrap` (the KV and the key file),
 * and opens the one-time link it prints. On a new installation's store
 * (no tenant, no user) `serve` prints such a link itself at start, one
 * that names no one: its opener gives their email on the confirm page.
 * Redeeming a link makes a browser session marked `superadmin`, audited
 * as `login.succeeded` with method `operator`.
 *
 * | record | keyed by | holds | lives |
 * |---|---|---|---|
 * | `operator_link` | HMAC digest of the link's code | the user id (null: first run) | 10 minutes (`--ttl`) |
 * | `operator_link_made` | the same digest | when it stops working, whether it was used | 7 days |
 *
 * The second record lets a refusal say why: used, expired, or unknown to
 * this store (made against another store, most likely).
 *
 * The code is 32 random bytes (base58), single use, stored only as a
 * digest. The session lasts at most 8 hours and ends after 30 minutes
 * without a request; `cfgtool admin session revoke` ends it at once.
 *
 * @module
 */
import { base58 } from "base";
import { InvalidRequestError, LoginError } from "../errors.ts";
import { isPlainEmail, normalEmail } from "../protocol/login_policy.ts";
import { MAX_EMAIL_LENGTH } from "../protocol/limits.ts";
import { peekOneTime, putOneTime, takeOneTime, updateOneTime } from "../store/one_time.ts";
import { isFreshStore } from "../store/fresh_store.ts";
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
/** How long the store remembers a link it made (to tell used or expired from unknown). */
export const OPERATOR_LINK_MEMORY_MS = 7 * 24 * 60 * 60 * 1000;

const KIND = "operator_link";
const MADE = "operator_link_made";

interface LinkRecord {
  /** The operator; null for the first-run link, whose opener names themselves. */
  user_id: string | null;
}

/** What the store remembers of a link it made, live or not. */
interface MadeRecord {
  /** When the link stops working, epoch ms. */
  until: number;
  used: boolean;
}

/** Why a link does not open the console. */
export type DeadLink = "used" | "expired" | "unknown";

/** What a link's code opens: its operator (null: the first-run link, which asks), or why not. */
export type OperatorLinkLook =
  | { state: "live"; user: UserRecord | null }
  | { state: DeadLink };

function digestOf(key: CryptoKey, code: string): Promise<string> {
  return hmacHex(key, `${KIND}:${code}`);
}

function clock(deps: AuthDeps): Date {
  return deps.now?.() ?? new Date();
}

async function putLink(
  deps: AuthDeps,
  record: LinkRecord,
  ttlMs: number,
  now: Date,
): Promise<{ code: string; expiresAt: Date }> {
  while (true) {
    const code = base58.encode(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await digestOf(deps.key, code);
    if (await putOneTime(deps.kv, KIND, digest, record, ttlMs, +now)) {
      const made: MadeRecord = { until: +now + ttlMs, used: false };
      await putOneTime(deps.kv, MADE, digest, made, Math.max(ttlMs, OPERATOR_LINK_MEMORY_MS), +now);
      return { code, expiresAt: new Date(+now + ttlMs) };
    }
  }
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
 * const look = await peekOperatorLink(deps, code);
 * if (look.state !== "live" || look.user?.id !== user.id) throw new Error();
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
  return { ...await putLink(deps, { user_id: user.id }, ttlMs, now), user };
}

/**
 * The first-run console link of a new installation: on a store with no
 * tenant and no user, a link like {@linkcode createOperatorLink}'s (one
 * use, 10 minutes) that names no one yet: whoever opens it gives their
 * email on the confirm page, and becomes the installation's first user.
 * Null (and nothing written) on any other store. Making no user keeps the
 * store new, so a server started again before the link is used offers a
 * new one; once it is used, never again.
 *
 * @param deps store, key, clock
 * @returns the code (given once) and its expiry, or null
 *
 * @example
 * ```ts
 * import { createFirstRunLink, peekOperatorLink } from "./operator_link.ts";
 * import { createUser } from "../store/users.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const link = await createFirstRunLink(deps);
 * const look = link === null ? null : await peekOperatorLink(deps, link.code);
 * if (look?.state !== "live" || look.user !== null) throw new Error("it names no one yet");
 * await createUser(deps.kv, { email: "ops@example.com" });
 * if (await createFirstRunLink(deps) !== null) throw new Error("only on a new store");
 * deps.kv.close();
 * ```
 */
export async function createFirstRunLink(
  deps: AuthDeps,
): Promise<{ code: string; expiresAt: Date } | null> {
  if (!await isFreshStore(deps.kv)) return null;
  return await putLink(deps, { user_id: null }, OPERATOR_LINK_TTL_MS, clock(deps));
}

/**
 * Whose console link a code is, without redeeming it (for the confirm
 * page), or why it opens nothing: `used`, `expired`, or `unknown` (this
 * store never made it: most likely it was made against another store, or
 * more than 7 days ago).
 *
 * @param deps store, key, clock
 * @param code the link's code
 * @returns the link's operator, or its state
 *
 * @example
 * ```ts
 * import { peekOperatorLink } from "./operator_link.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * if ((await peekOperatorLink(deps, "nope")).state !== "unknown") throw new Error();
 * deps.kv.close();
 * ```
 */
export async function peekOperatorLink(
  deps: AuthDeps,
  code: string,
): Promise<OperatorLinkLook> {
  const digest = await digestOf(deps.key, code);
  const now = +clock(deps);
  const record = await peekOneTime<LinkRecord>(deps.kv, KIND, digest, now);
  if (record === null) return { state: await deadState(deps, digest, now) };
  if (record.user_id === null) return { state: "live", user: null };
  const user = await findUser(deps.kv, record.user_id);
  return user === null ? { state: "unknown" } : { state: "live", user };
}

async function deadState(deps: AuthDeps, digest: string, now: number): Promise<DeadLink> {
  const made = await peekOneTime<MadeRecord>(deps.kv, MADE, digest, now);
  if (made === null) return "unknown";
  return made.used || made.until > now ? "used" : "expired";
}

/**
 * The refusal of a link that opens nothing, in words the person can act on.
 *
 * @param state why it opens nothing
 * @returns 403 `login_failed`, reason `state`
 *
 * @example
 * ```ts
 * import { deadLinkError } from "./operator_link.ts";
 * if (!deadLinkError("unknown").message.includes("another store")) throw new Error();
 * ```
 */
export function deadLinkError(state: DeadLink): LoginError {
  const again = "Make a new one on the server host: cfgtool admin console-link --user EMAIL";
  switch (state) {
    case "used":
      return new LoginError(
        "state",
        `This console link was used already: a link opens the console once. ${again}`,
      );
    case "expired":
      return new LoginError(
        "state",
        `This console link has expired: a link works for 10 minutes, or its --ttl. ${again}`,
      );
    default:
      return new LoginError(
        "state",
        "This server's store does not know this console link. It may have been made against " +
          "another store: cfgtool admin console-link opens the store of CFGTOOL_KV (or --kv), " +
          "which must be the one this server uses. A link is also forgotten 7 days after it is " +
          `made. ${again}, with the server's store.`,
      );
  }
}

/**
 * The email the opener of a first-run link gives, checked before the link
 * is spent (a typo must not burn it). 400 `invalid_request` naming the
 * field `email`.
 */
function firstRunEmail(email: string | undefined): string {
  const normal = normalEmail(email ?? "");
  if (normal === "" || normal.length > MAX_EMAIL_LENGTH || !isPlainEmail(normal)) {
    throw new InvalidRequestError(
      normal === ""
        ? "Give your email: it names you, the operator, in the audit log"
        : `Cannot use ${JSON.stringify(email)} as email: cfgtool takes plain ASCII addresses ` +
          "only (one @, no spaces)",
      { details: { field: "email" } },
    );
  }
  return normal;
}

/**
 * Redeems a console link: makes the operator's browser session (marked
 * superadmin) and audits `login.succeeded`. The first-run link needs the
 * opener's `email` (400 `invalid_request`, field `email`, when it is not a
 * plain address; the link stays usable) and makes that user when new.
 * 403 `login_failed` (`state`) when the code is used, expired or unknown,
 * its message saying which ({@linkcode deadLinkError}).
 *
 * @param deps store, key, clock
 * @param code the link's code
 * @param ctx request id and client IP
 * @param email the opener's email, for the first-run link
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
 * let message = "";
 * try { await redeemOperatorLink(deps, code, { requestId: "r2" }); }
 * catch (e) { message = (e as Error).message; }
 * if (!message.includes("used already")) throw new Error("a link works once");
 * deps.kv.close();
 * ```
 */
export async function redeemOperatorLink(
  deps: AuthDeps,
  code: string,
  ctx: RequestContext,
  email?: string,
): Promise<{ session: SessionRecord; secret: string }> {
  const now = clock(deps);
  const digest = await digestOf(deps.key, code);
  const look = await peekOneTime<LinkRecord>(deps.kv, KIND, digest, +now);
  if (look === null) throw deadLinkError(await deadState(deps, digest, +now));
  const given = look.user_id === null ? firstRunEmail(email) : null;
  const record = await takeOneTime<LinkRecord>(deps.kv, KIND, digest, +now);
  if (record === null) throw deadLinkError(await deadState(deps, digest, +now));
  await updateOneTime<MadeRecord>(deps.kv, MADE, digest, (m) => ({ ...m, used: true }), +now);
  let userId = record.user_id;
  let newUser = false;
  if (userId === null) {
    const known = await findUser(deps.kv, given!);
    newUser = known === null;
    userId = (known ?? await createUser(deps.kv, { email: given!, now: () => now })).id;
  }
  const { session, secret } = await createSession(deps.kv, deps.key, {
    user: userId,
    ttl: OPERATOR_SESSION_TTL_MS,
    idle: OPERATOR_SESSION_IDLE_MS,
    login_method: "operator",
    client: "browser",
    superadmin: true,
    ip_hash: ctx.ip === undefined ? null : await hmacHex(deps.key, `ip:${ctx.ip}`),
    now: () => now,
  });
  await auditLoginSucceeded(deps.kv, userId, now, ctx, null, {
    method: "operator",
    client: "browser",
    session_id: session.id,
    superadmin: true,
    ...(record.user_id === null ? { first_run: true, new_user: newUser } : {}),
  });
  return { session, secret };
}
