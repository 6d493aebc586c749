/**
 * The server side of signing in from the command line. A person signed in
 * in a browser hands a CLI session to the `cfgtool` on their computer in
 * one of two ways:
 *
 * - loopback (browser) flow: the confirm page stores a one-time code grant
 *   (2 minutes, under the HMAC digest of a random code) with the person's
 *   identity and the CLI's PKCE S256 challenge; the CLI redeems the code
 *   once with the verifier ({@linkcode issueCodeGrant}, {@linkcode redeemCodeGrant});
 * - device flow (RFC 8628 shape): the CLI asks for a device code and a user
 *   code (10 minutes, both stored by digest only), the person confirms or
 *   denies the user code in the browser, the CLI polls with the device code
 *   ({@linkcode startDeviceGrant}, {@linkcode decideDeviceGrant}, {@linkcode pollDeviceGrant}).
 *
 * Either ends in {@linkcode signIn} with client `cli` (bearer session, no
 * idle limit). Refusals are {@linkcode LoginError}s whose `details.error`
 * is the OAuth error word the CLI acts on (lib/protocol/cli_sign_in.ts).
 *
 * @module
 */
import { LoginError } from "../errors.ts";
import {
  type CliSessionGrant,
  type CliTokenError,
  formatUserCode,
  normalizeUserCode,
  pkceChallenge,
  randomUserCode,
} from "../protocol/cli_sign_in.ts";
import { countAttempt } from "../store/login_rate.ts";
import { peekOneTime, putOneTime, takeOneTime, updateOneTime } from "../store/one_time.ts";
import { findSessionRecord } from "../store/sessions.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import { emailInDomains } from "../protocol/login_policy.ts";
import { admittedTo } from "../auth/admission.ts";
import { DEFAULT_SESSION_TTL_MS } from "../auth/sessions.ts";
import { findUser } from "../store/users.ts";
import { type AuthDeps, clock, type RequestContext } from "../auth/deps.ts";
import { digestsEqual, hmacHex } from "../auth/digest.ts";
import type { SessionPrincipal } from "../auth/principal.ts";
import { randomPayload } from "../auth/token_format.ts";
import { recordLoginFailure, type SessionTimes, signIn } from "./sign_in.ts";

/** How long a loopback code may wait to be redeemed: 2 minutes. */
export const CODE_GRANT_TTL_MS = 2 * 60 * 1000;

/** How long a device code and its user code live: 10 minutes. */
export const DEVICE_GRANT_TTL_MS = 10 * 60 * 1000;

/** Seconds a device-flow client waits between polls at first. */
export const DEVICE_POLL_INTERVAL_S = 2;

/** Who a CLI session will be for: what the browser session proved. */
export interface GrantIdentity {
  user_id: string;
  tenant: string;
  method: "oidc" | "email" | "saml";
  assurance: string[];
  groups: string[];
  /**
   * The browser session's end (RFC 3339): a CLI session made from it ends
   * no later, so sessions cannot be renewed forever without signing in.
   */
  not_after?: string;
}

/** A stored loopback code grant. */
interface CodeGrant {
  identity: GrantIdentity;
  code_challenge: string;
}

/** A stored device grant. */
interface DeviceGrant {
  /** The tenant the CLI asked for, or null to take the person's. */
  tenant: string | null;
  status: "pending" | "approved" | "denied";
  identity: GrantIdentity | null;
  /** Current poll interval, seconds (grows by 5 on each `slow_down`). */
  interval_s: number;
  /** Epoch ms of the last poll, 0 before the first. */
  last_poll_ms: number;
}

/** A stored user code: which device grant it confirms. */
interface UserCodeRecord {
  device_digest: string;
  tenant: string | null;
}

const CODE_KIND = "cli_code";
const DEVICE_KIND = "cli_device";
const USER_CODE_KIND = "cli_user_code";

/** Attempts allowed per 10 minutes: device codes per client IP, user-code lookups per person or IP. */
export const CLI_RATE_LIMITS: Readonly<Record<"cli_device" | "cli_user_code", number>> = {
  cli_device: 30,
  cli_user_code: 20,
};

const RATE_WINDOW_MS = 10 * 60 * 1000;

/**
 * Counts one attempt of a CLI sign-in step and says whether it is within
 * its limit ({@linkcode CLI_RATE_LIMITS}, per 10 minutes): starting a
 * device sign-in (per client IP), looking up a typed user code (per
 * person, or per IP before sign-in). Only a digest of `who` is stored.
 *
 * @param deps store, key, clock
 * @param scope which step
 * @param who the client IP (`ip:…`) or user id (`user:…`)
 * @returns whether this attempt may go on
 *
 * @example
 * ```ts
 * import { CLI_RATE_LIMITS, withinCliRate } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: await randomTokenKey(), now: () => new Date(1_000_000) };
 * for (let i = 0; i < CLI_RATE_LIMITS.cli_user_code; i++) {
 *   if (!await withinCliRate(deps, "cli_user_code", "ip:192.0.2.1")) throw new Error(String(i));
 * }
 * if (await withinCliRate(deps, "cli_user_code", "ip:192.0.2.1")) throw new Error("over the limit");
 * kv.close();
 * ```
 */
export async function withinCliRate(
  deps: Pick<AuthDeps, "kv" | "key" | "now">,
  scope: "cli_device" | "cli_user_code",
  who: string,
): Promise<boolean> {
  return await countAttempt(
    deps.kv,
    scope,
    await hmacHex(deps.key, `${scope}:${who}`),
    CLI_RATE_LIMITS[scope],
    RATE_WINDOW_MS,
    clock(deps).getTime(),
  );
}

/**
 * A refusal of the token endpoint: 400 (or 403) `login_failed` with the
 * OAuth error word in `details.error` and the audit reason in
 * `details.reason`.
 *
 * @param error the OAuth error word
 * @param message what went wrong, in words
 * @param reason the stable reason (default: the OAuth word)
 * @param status 400 (default) or 403
 * @returns the error
 *
 * @example
 * ```ts
 * import { tokenError } from "./cli_grants.ts";
 * const err = tokenError("unsupported_grant_type", "Unknown grant_type");
 * if (err.status !== 400 || err.details?.error !== "unsupported_grant_type") throw new Error();
 * ```
 */
export function tokenError(
  error: CliTokenError,
  message: string,
  reason: string = error,
  status: 400 | 403 = 400,
): LoginError {
  return new LoginError(reason, message, { status, details: { error } });
}

/**
 * What a browser session proves, as the identity of a CLI grant for
 * `tenant`: null when the session was made on the server host (it proves
 * no sign-in) or does not admit the person to that tenant.
 *
 * @param deps store
 * @param person the browser session's principal
 * @param tenant the tenant the CLI session is for
 * @returns the identity, or null
 *
 * @example
 * ```ts
 * import { grantIdentityOf } from "./cli_grants.ts";
 * import { signIn } from "./sign_in.ts";
 * import { sessionPrincipal } from "../auth/principal.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { putLoginPolicy } from "../store/login_policies.ts";
 * import { eventAuditEntry } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const at = new Date();
 * await putLoginPolicy(kv, { tenant_slug: "acme", policy: { method: "email", domains: ["acme.test"] },
 *   updated_at: at.toISOString(), updated_by: "tok_1" },
 *   eventAuditEntry("tenant.login_policy_changed", { id: "tok_1", principal_type: "service", request_id: null }, at));
 * const { session } = await signIn({ kv, key: await randomTokenKey() }, {
 *   tenant: "acme", email: "ana@acme.test", method: "email", assurance: ["email-link"], groups: [],
 * }, "browser", { requestId: "r1" });
 * const id = await grantIdentityOf({ kv }, sessionPrincipal(session), "acme");
 * if (id?.method !== "email" || id.tenant !== "acme") throw new Error();
 * if (await grantIdentityOf({ kv }, sessionPrincipal(session), "other") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function grantIdentityOf(
  deps: Pick<AuthDeps, "kv">,
  person: SessionPrincipal,
  tenant: string,
): Promise<GrantIdentity | null> {
  if (!person.tenants.includes(tenant)) return null;
  const session = await findSessionRecord(deps.kv, person.session_id);
  if (session === null || session.login_method === "admin" || session.client !== "browser") {
    return null; // only a person's own browser sign-in grants a CLI session
  }
  const admitted = await admittedTo(deps.kv, person, tenant);
  if (admitted !== "member" && admitted !== "admin") return null; // tenant made again since
  // The tenant's policy must still admit this sign-in: same method, same domains.
  const policy = (await findLoginPolicy(deps.kv, tenant))?.policy;
  const user = await findUser(deps.kv, person.user_id);
  if (policy === undefined || policy.method !== session.login_method || user === null) return null;
  const domains = policy.method === "email" ? policy.domains : policy.allowed_email_domains;
  if (!emailInDomains(user.email, domains)) return null;
  return {
    user_id: person.user_id,
    tenant,
    method: session.login_method,
    assurance: [...session.assurance],
    groups: [...session.groups],
    not_after: session.expires_at,
  };
}

/**
 * Stores a loopback code grant for 2 minutes and returns its code (given
 * once; only its digest is kept).
 *
 * @param deps store, key, clock
 * @param identity who the CLI session will be for
 * @param codeChallenge the CLI's PKCE S256 challenge
 * @returns the code to send to the CLI's redirect URI
 *
 * @example
 * ```ts
 * import { issueCodeGrant } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const code = await issueCodeGrant({ kv, key: await randomTokenKey() }, {
 *   user_id: "usr_1", tenant: "acme", method: "email", assurance: [], groups: [],
 * }, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
 * if (code.length < 40) throw new Error(code);
 * kv.close();
 * ```
 */
export async function issueCodeGrant(
  deps: Pick<AuthDeps, "kv" | "key" | "now">,
  identity: GrantIdentity,
  codeChallenge: string,
): Promise<string> {
  const now = clock(deps).getTime();
  while (true) {
    const code = randomPayload();
    const digest = await hmacHex(deps.key, `${CODE_KIND}:${code}`);
    const grant: CodeGrant = { identity, code_challenge: codeChallenge };
    if (await putOneTime(deps.kv, CODE_KIND, digest, grant, CODE_GRANT_TTL_MS, now)) return code;
  }
}

/**
 * Redeems a loopback code grant, once: the code must be live and unused,
 * and the S256 of the verifier must equal the stored challenge (a wrong
 * verifier uses the code up too). Makes the CLI session.
 *
 * @param deps store, key, clock
 * @param code the code the CLI received
 * @param verifier the CLI's PKCE verifier
 * @param ctx request id and client IP
 * @param times the session's lifetimes
 * @returns the CLI session
 *
 * @example
 * ```ts
 * import { issueCodeGrant, redeemCodeGrant } from "./cli_grants.ts";
 * import { signIn } from "./sign_in.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { pkceChallenge } from "../protocol/cli_sign_in.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: await randomTokenKey() };
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const { user } = await signIn(deps, { tenant: "acme", email: "ana@acme.test", method: "email",
 *   assurance: [], groups: [] }, "browser", { requestId: "r0" });
 * const verifier = "v".repeat(43);
 * const code = await issueCodeGrant(deps, { user_id: user.id, tenant: "acme", method: "email",
 *   assurance: [], groups: [] }, await pkceChallenge(verifier));
 * const grant = await redeemCodeGrant(deps, code, verifier, { requestId: "r1" });
 * if (!grant.session_token.startsWith("ses_") || grant.tenant !== "acme") throw new Error();
 * let replay = "";
 * try { await redeemCodeGrant(deps, code, verifier, { requestId: "r2" }); } catch (e) { replay = String((e as { reason: string }).reason); }
 * if (replay !== "code") throw new Error(replay);
 * kv.close();
 * ```
 */
export async function redeemCodeGrant(
  deps: AuthDeps,
  code: string,
  verifier: string,
  ctx: RequestContext,
  times: SessionTimes = {},
): Promise<CliSessionGrant> {
  const now = clock(deps).getTime();
  const digest = await hmacHex(deps.key, `${CODE_KIND}:${code}`);
  const grant = await takeOneTime<CodeGrant>(deps.kv, CODE_KIND, digest, now);
  if (grant === null) {
    await recordLoginFailure(deps, { method: "cli", reason: "code" }, ctx);
    throw tokenError(
      "invalid_grant",
      "This sign-in code is unknown, expired or already used; run `cfgtool login` again",
      "code",
    );
  }
  if (!digestsEqual(await pkceChallenge(verifier), grant.code_challenge)) {
    await recordLoginFailure(
      deps,
      { tenant: grant.identity.tenant, method: "cli", reason: "code_verifier" },
      ctx,
    );
    throw tokenError(
      "invalid_grant",
      "The code verifier does not match this sign-in; run `cfgtool login` again",
      "code_verifier",
    );
  }
  return await cliSession(deps, grant.identity, ctx, times);
}

/**
 * Starts a device grant: a device code for the CLI to poll with and a user
 * code for the person to confirm, both live 10 minutes and stored by
 * digest only.
 *
 * @param deps store, key, clock
 * @param tenant the tenant the CLI asked for, or null
 * @returns the codes, lifetime and poll interval (without URLs)
 *
 * @example
 * ```ts
 * import { startDeviceGrant } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const d = await startDeviceGrant({ kv, key: await randomTokenKey() }, "acme");
 * if (!/^[A-Z]{4}-[A-Z]{4}$/.test(d.user_code) || d.expires_in !== 600 || d.interval !== 2) throw new Error();
 * kv.close();
 * ```
 */
export async function startDeviceGrant(
  deps: Pick<AuthDeps, "kv" | "key" | "now">,
  tenant: string | null,
): Promise<{ device_code: string; user_code: string; expires_in: number; interval: number }> {
  const now = clock(deps).getTime();
  let deviceCode: string;
  let deviceDigest: string;
  while (true) {
    deviceCode = randomPayload();
    deviceDigest = await hmacHex(deps.key, `${DEVICE_KIND}:${deviceCode}`);
    const grant: DeviceGrant = {
      tenant,
      status: "pending",
      identity: null,
      interval_s: DEVICE_POLL_INTERVAL_S,
      last_poll_ms: 0,
    };
    if (await putOneTime(deps.kv, DEVICE_KIND, deviceDigest, grant, DEVICE_GRANT_TTL_MS, now)) {
      break;
    }
  }
  while (true) {
    const userCode = randomUserCode();
    const record: UserCodeRecord = { device_digest: deviceDigest, tenant };
    const digest = await userCodeDigest(deps.key, userCode);
    if (await putOneTime(deps.kv, USER_CODE_KIND, digest, record, DEVICE_GRANT_TTL_MS, now)) {
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        expires_in: DEVICE_GRANT_TTL_MS / 1000,
        interval: DEVICE_POLL_INTERVAL_S,
      };
    }
  }
}

/**
 * Looks up a user code the person typed (without using it): the tenant the
 * CLI asked for (null: any), or null when the code is malformed, unknown,
 * expired or already confirmed.
 *
 * @param deps store, key, clock
 * @param typed the user code as typed
 * @returns `{tenant}`, or null
 *
 * @example
 * ```ts
 * import { findUserCode, startDeviceGrant } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: await randomTokenKey() };
 * const d = await startDeviceGrant(deps, "acme");
 * if ((await findUserCode(deps, d.user_code.toLowerCase()))?.tenant !== "acme") throw new Error();
 * if (await findUserCode(deps, "BBBB-BBBB") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findUserCode(
  deps: Pick<AuthDeps, "kv" | "key" | "now">,
  typed: string,
): Promise<{ tenant: string | null } | null> {
  const code = normalizeUserCode(typed);
  if (code === null) return null;
  const record = await peekOneTime<UserCodeRecord>(
    deps.kv,
    USER_CODE_KIND,
    await userCodeDigest(deps.key, code),
    clock(deps).getTime(),
  );
  return record === null ? null : { tenant: record.tenant };
}

/**
 * Records the person's answer to a user code: approved for `identity`, or
 * denied. The user code is used up either way. False when the code is
 * unknown, expired or already answered.
 *
 * @param deps store, key, clock
 * @param typed the user code
 * @param decision `allow` with the identity, or `deny`
 * @returns whether the answer was recorded
 *
 * @example
 * ```ts
 * import { decideDeviceGrant, startDeviceGrant } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: await randomTokenKey() };
 * const d = await startDeviceGrant(deps, null);
 * if (!await decideDeviceGrant(deps, d.user_code, { decision: "deny" })) throw new Error();
 * if (await decideDeviceGrant(deps, d.user_code, { decision: "deny" })) throw new Error("twice");
 * kv.close();
 * ```
 */
export async function decideDeviceGrant(
  deps: Pick<AuthDeps, "kv" | "key" | "now">,
  typed: string,
  decision: { decision: "allow"; identity: GrantIdentity } | { decision: "deny" },
): Promise<boolean> {
  const code = normalizeUserCode(typed);
  if (code === null) return false;
  const now = clock(deps).getTime();
  const record = await takeOneTime<UserCodeRecord>(
    deps.kv,
    USER_CODE_KIND,
    await userCodeDigest(deps.key, code),
    now,
  );
  if (record === null) return false;
  return await updateOneTime<DeviceGrant>(
    deps.kv,
    DEVICE_KIND,
    record.device_digest,
    (old) =>
      old.status !== "pending"
        ? old
        : decision.decision === "allow"
        ? { ...old, status: "approved", identity: decision.identity }
        : { ...old, status: "denied", identity: null },
    now,
  );
}

/**
 * Answers one poll of a device code: the CLI session once the person
 * approved (once: the grant is used up), else a refusal whose
 * `details.error` says what to do: `authorization_pending` (poll again),
 * `slow_down` (polled sooner than the interval: wait 5 s more from now
 * on), `access_denied` (the person denied), `expired_token` (unknown,
 * expired or already used device code).
 *
 * @param deps store, key, clock
 * @param deviceCode the device code
 * @param ctx request id and client IP
 * @param times the session's lifetimes
 * @returns the CLI session
 *
 * @example
 * ```ts
 * import { pollDeviceGrant, startDeviceGrant } from "./cli_grants.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: await randomTokenKey() };
 * const d = await startDeviceGrant(deps, "acme");
 * let error = "";
 * try { await pollDeviceGrant(deps, d.device_code, { requestId: "r1" }); } catch (e) {
 *   error = String((e as { details: { error: string } }).details.error);
 * }
 * if (error !== "authorization_pending") throw new Error(error);
 * kv.close();
 * ```
 */
export async function pollDeviceGrant(
  deps: AuthDeps,
  deviceCode: string,
  ctx: RequestContext,
  times: SessionTimes = {},
): Promise<CliSessionGrant> {
  const now = clock(deps).getTime();
  const digest = await hmacHex(deps.key, `${DEVICE_KIND}:${deviceCode}`);
  const grant = await peekOneTime<DeviceGrant>(deps.kv, DEVICE_KIND, digest, now);
  const expired = () =>
    tokenError(
      "expired_token",
      "This sign-in expired or was already used; run `cfgtool login` again",
    );
  if (grant === null) throw expired();
  if (grant.status === "pending") {
    // Polls must be `interval` apart (a quarter second of slack for the network).
    const early = grant.last_poll_ms > 0 &&
      now - grant.last_poll_ms < grant.interval_s * 1000 - 250;
    await updateOneTime<DeviceGrant>(
      deps.kv,
      DEVICE_KIND,
      digest,
      (old) => ({
        ...old,
        last_poll_ms: now,
        interval_s: early ? old.interval_s + 5 : old.interval_s,
      }),
      now,
    );
    if (early) {
      throw new LoginError("slow_down", "Polling too fast: wait 5 seconds longer between polls", {
        status: 400,
        details: { error: "slow_down", interval: grant.interval_s + 5 },
      });
    }
    throw tokenError(
      "authorization_pending",
      "Waiting for the person to confirm the code in the browser",
    );
  }
  const taken = await takeOneTime<DeviceGrant>(deps.kv, DEVICE_KIND, digest, now);
  if (taken === null) throw expired(); // another poll took it first
  if (taken.status === "denied" || taken.identity === null) {
    await recordLoginFailure(
      deps,
      { tenant: taken.tenant, method: "cli", reason: "access_denied" },
      ctx,
    );
    throw tokenError("access_denied", "The sign-in was denied in the browser");
  }
  return await cliSession(deps, taken.identity, ctx, times);
}

/** Makes the CLI session of a redeemed grant. */
async function cliSession(
  deps: AuthDeps,
  identity: GrantIdentity,
  ctx: RequestContext,
  times: SessionTimes,
): Promise<CliSessionGrant> {
  const user = await findUser(deps.kv, identity.user_id);
  if (user === null) {
    throw tokenError("invalid_grant", "The user of this sign-in no longer exists", "user");
  }
  let ttlMs = times.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  if (identity.not_after !== undefined) {
    ttlMs = Math.min(ttlMs, Date.parse(identity.not_after) - clock(deps).getTime());
  }
  if (!(ttlMs > 0)) {
    throw tokenError("invalid_grant", "The browser sign-in behind this grant has ended", "session");
  }
  const { session, secret } = await signIn(
    deps,
    {
      tenant: identity.tenant,
      email: user.email,
      method: identity.method,
      assurance: identity.assurance,
      groups: identity.groups,
    },
    "cli",
    ctx,
    { ttlMs, idleMs: null },
  );
  return {
    session_token: secret,
    session: { id: session.id, expires_at: session.expires_at },
    user: { id: user.id, email: user.email },
    tenant: identity.tenant,
  };
}

function userCodeDigest(key: CryptoKey, code: string): Promise<string> {
  return hmacHex(key, `${USER_CODE_KIND}:${code}`);
}
