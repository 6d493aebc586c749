/**
 * The secrets of a verified-email sign-in: a browser's *flow* (a random
 * secret kept in an HttpOnly cookie, made at every start), and for an
 * admitted address a one-time *link token* and a 6-digit *code*. The store
 * keeps only HMAC digests of them, as single-use records (lib/store/one_time.ts)
 * that live 15 minutes by default:
 *
 * | record | keyed by | holds |
 * |---|---|---|
 * | `email_flow` | digest of the flow secret | tenant, wrong-code attempts |
 * | `email_link` | digest of the link token | tenant, email, next, the code's digest |
 * | `email_code` | digest of flow secret + code | tenant, email, next, the link's digest |
 *
 * A code is keyed together with the flow secret, so it works only in the
 * browser that asked for it and cannot be guessed across flows; a flow
 * allows {@linkcode MAX_CODE_ATTEMPTS} tries. The link works in any browser
 * (its token is long). Redeeming either voids the other.
 *
 * @module
 */
import { base58 } from "base";
import { LoginError } from "../errors.ts";
import { peekOneTime, putOneTime, takeOneTime, updateOneTime } from "../store/one_time.ts";
import type { AuthDeps } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";

/** How long a link and code work by default: 15 minutes. */
export const EMAIL_CODE_TTL_MS = 15 * 60 * 1000;

/** Tries of a code per flow; the next one is refused, even with the right code. */
export const MAX_CODE_ATTEMPTS = 5;

/** What a redeemed link or code signs in: who, where, and where to go next. */
export interface EmailGrant {
  /** The tenant. */
  tenant: string;
  /** The address (lower case) the message went to. */
  email: string;
  /** Where to go after sign-in (a same-origin path). */
  next: string;
}

/** The secrets of one sent message. */
export interface IssuedEmailSignIn {
  /** The link token (`…/auth/email/verify?token=<token>`). */
  token: string;
  /** The 6-digit code. */
  code: string;
}

interface FlowRecord {
  tenant: string;
  attempts: number;
}

interface LinkRecord {
  grant: EmailGrant;
  code_digest: string;
}

interface CodeRecord {
  grant: EmailGrant;
  link_digest: string;
}

const FLOW = "email_flow";
const LINK = "email_link";
const CODE = "email_code";

type Deps = Pick<AuthDeps, "kv" | "key">;

/**
 * Starts a flow for a browser: a random secret (for its cookie) and its
 * record. Every start makes one, whether or not the address gets mail, so
 * the answer to a start says nothing about the address.
 *
 * @param deps store and key
 * @param tenant the tenant signed in to
 * @param ttlMs how long the flow lives
 * @param now the current time, ms
 * @returns the flow secret
 *
 * @example
 * ```ts
 * import { startEmailFlow } from "./email_codes.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const flow = await startEmailFlow({ kv, key: await randomTokenKey() }, "acme", 60_000, Date.now());
 * if (flow.length < 40) throw new Error(flow);
 * kv.close();
 * ```
 */
export async function startEmailFlow(
  deps: Deps,
  tenant: string,
  ttlMs: number,
  now: number,
): Promise<string> {
  while (true) {
    const secret = randomSecret();
    const record: FlowRecord = { tenant, attempts: 0 };
    if (await putOneTime(deps.kv, FLOW, await flowDigest(deps.key, secret), record, ttlMs, now)) {
      return secret;
    }
  }
}

/**
 * Issues the link token and the code of one message to an admitted
 * address, tied to the browser's flow.
 *
 * @param deps store and key
 * @param flow the flow secret of the browser that asked
 * @param grant tenant, address and next path
 * @param ttlMs how long link and code work
 * @param now the current time, ms
 * @returns the token and the code (to send; never stored)
 *
 * @example
 * ```ts
 * import { issueEmailSignIn, redeemEmailLink, startEmailFlow } from "./email_codes.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const now = Date.now();
 * const flow = await startEmailFlow(deps, "acme", 60_000, now);
 * const grant = { tenant: "acme", email: "ana@acme.test", next: "/" };
 * const { token, code } = await issueEmailSignIn(deps, flow, grant, 60_000, now);
 * if (!/^\d{6}$/.test(code)) throw new Error(code);
 * if ((await redeemEmailLink(deps, token, now)).email !== "ana@acme.test") throw new Error();
 * deps.kv.close();
 * ```
 */
export async function issueEmailSignIn(
  deps: Deps,
  flow: string,
  grant: EmailGrant,
  ttlMs: number,
  now: number,
): Promise<IssuedEmailSignIn> {
  while (true) {
    const token = randomSecret();
    const code = randomCode();
    const linkDigest = await hmacHex(deps.key, `${LINK}:${token}`);
    const codeDigest = await codeDigestOf(deps.key, flow, code);
    const link: LinkRecord = { grant, code_digest: codeDigest };
    const coded: CodeRecord = { grant, link_digest: linkDigest };
    // A code already live in this flow (a second message to the same browser) is drawn again.
    if (!await putOneTime(deps.kv, CODE, codeDigest, coded, ttlMs, now)) continue;
    if (!await putOneTime(deps.kv, LINK, linkDigest, link, ttlMs, now)) {
      await takeOneTime(deps.kv, CODE, codeDigest, now);
      continue;
    }
    return { token, code };
  }
}

/**
 * What a link would sign in to, without redeeming it (for the confirm page
 * that a mail scanner's prefetch may see); null when it is used, expired or
 * unknown.
 *
 * @param deps store and key
 * @param token the link token
 * @param now the current time, ms
 * @returns the grant, or null
 *
 * @example
 * ```ts
 * import { peekEmailLink } from "./email_codes.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await peekEmailLink({ kv, key: await randomTokenKey() }, "nope", Date.now()) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function peekEmailLink(
  deps: Deps,
  token: string,
  now: number,
): Promise<EmailGrant | null> {
  if (!plausibleSecret(token)) return null;
  const record = await peekOneTime<LinkRecord>(
    deps.kv,
    LINK,
    await hmacHex(deps.key, `${LINK}:${token}`),
    now,
  );
  return record?.grant ?? null;
}

/**
 * Redeems a link token once: the grant, and the message's code is void.
 * A used, expired or unknown token is a {@linkcode LoginError} with reason
 * `code`.
 *
 * @param deps store and key
 * @param token the link token
 * @param now the current time, ms
 * @returns the grant
 *
 * @example
 * ```ts
 * import { issueEmailSignIn, redeemEmailLink, startEmailFlow } from "./email_codes.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const flow = await startEmailFlow(deps, "acme", 60_000, 0);
 * const { token } = await issueEmailSignIn(deps, flow, { tenant: "acme", email: "a@acme.test", next: "/" }, 60_000, 0);
 * await redeemEmailLink(deps, token, 1);
 * const again = await redeemEmailLink(deps, token, 2).catch((e) => e);
 * if (again.reason !== "code") throw new Error("a link works once");
 * deps.kv.close();
 * ```
 */
export async function redeemEmailLink(
  deps: Deps,
  token: string,
  now: number,
): Promise<EmailGrant> {
  const record = plausibleSecret(token)
    ? await takeOneTime<LinkRecord>(deps.kv, LINK, await hmacHex(deps.key, `${LINK}:${token}`), now)
    : null;
  if (record === null) {
    throw new LoginError(
      "code",
      "This sign-in link was already used or has expired. Start again to get a new one.",
    );
  }
  await takeOneTime(deps.kv, CODE, record.code_digest, now);
  return record.grant;
}

/**
 * Redeems a code typed in the browser whose flow asked for it. Each try
 * counts against the flow; after {@linkcode MAX_CODE_ATTEMPTS} tries the
 * flow is locked (reason `rate`), even for the right code. A wrong, used
 * or expired code is reason `code`. Both carry `details.tenant` and
 * `details.attempts_left`.
 *
 * @param deps store and key
 * @param flow the flow secret from the browser's cookie (undefined: none)
 * @param code what the person typed
 * @param now the current time, ms
 * @returns the grant
 *
 * @example
 * ```ts
 * import { issueEmailSignIn, redeemEmailCode, startEmailFlow } from "./email_codes.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const flow = await startEmailFlow(deps, "acme", 60_000, 0);
 * const { code } = await issueEmailSignIn(deps, flow, { tenant: "acme", email: "a@acme.test", next: "/" }, 60_000, 0);
 * if ((await redeemEmailCode(deps, flow, code, 1)).email !== "a@acme.test") throw new Error();
 * deps.kv.close();
 * ```
 */
export async function redeemEmailCode(
  deps: Deps,
  flow: string | undefined,
  code: string,
  now: number,
): Promise<EmailGrant> {
  const expired = () =>
    new LoginError(
      "code",
      "This browser has no sign-in waiting for a code: it was used, it expired, or it was " +
        "started in another browser. Use the link in the mail, or start again.",
    );
  if (flow === undefined || !plausibleSecret(flow)) throw expired();
  const flowKey = await flowDigest(deps.key, flow);
  let attempts = 0;
  let tenant = "";
  const counted = await updateOneTime<FlowRecord>(deps.kv, FLOW, flowKey, (old) => {
    attempts = old.attempts + 1;
    tenant = old.tenant;
    return { ...old, attempts };
  }, now);
  if (!counted) throw expired();
  if (attempts > MAX_CODE_ATTEMPTS) {
    throw new LoginError(
      "rate",
      `Too many wrong codes: after ${MAX_CODE_ATTEMPTS} tries this sign-in is locked. ` +
        "Use the link in the mail, or start again to get a new code.",
      { details: { tenant, attempts_left: 0 } },
    );
  }
  const typed = code.replace(/[\s-]/g, "");
  const record = /^\d{6}$/.test(typed)
    ? await takeOneTime<CodeRecord>(deps.kv, CODE, await codeDigestOf(deps.key, flow, typed), now)
    : null;
  if (record === null) {
    const left = MAX_CODE_ATTEMPTS - attempts;
    throw new LoginError(
      "code",
      left > 0
        ? `That code is wrong, used or expired. ${left} ${left === 1 ? "try" : "tries"} left.`
        : "That code is wrong, used or expired, and that was the last try. Use the link in " +
          "the mail, or start again to get a new code.",
      { details: { tenant, attempts_left: left } },
    );
  }
  await takeOneTime(deps.kv, LINK, record.link_digest, now);
  await takeOneTime(deps.kv, FLOW, flowKey, now);
  return record.grant;
}

/** 32 random bytes in base58: the shape of every flow secret and link token. */
function randomSecret(): string {
  return base58.encode(crypto.getRandomValues(new Uint8Array(32)));
}

/** A presented secret worth a lookup: base58, of the length 32 bytes give. */
function plausibleSecret(value: string): boolean {
  return /^[1-9A-HJ-NP-Za-km-z]{40,50}$/.test(value);
}

/** Six uniformly drawn digits. */
function randomCode(): string {
  const buf = new Uint32Array(1);
  // 4_294_000_000 is a multiple of 10^6: below it, `% 1e6` is uniform.
  do crypto.getRandomValues(buf); while (buf[0]! >= 4_294_000_000);
  return String(buf[0]! % 1_000_000).padStart(6, "0");
}

function flowDigest(key: CryptoKey, flow: string): Promise<string> {
  return hmacHex(key, `${FLOW}:${flow}`);
}

function codeDigestOf(key: CryptoKey, flow: string, code: string): Promise<string> {
  return hmacHex(key, `${CODE}:${flow}:${code}`);
}
