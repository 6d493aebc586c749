/**
 * Signed closure tokens (docs/events.md): the stream handler issues one per
 * snapshot URL, an HMAC-SHA-256 under the server's key over (principal_id,
 * tenant, namespace, version, subscription, expires_at), valid 60 s. The
 * closure endpoint recomputes the MAC over the requested tuple and compares
 * in constant time, so a token for another tuple (tenant included) fails.
 *
 * Format: `<payload>.<mac>`, both URL-safe base64 without padding; the
 * payload is `<principal_id>\n<expires_at unix seconds>`. The tuple itself
 * travels in the URL's path and query, not in the token.
 *
 * @module
 */
import { base64urlnopad } from "base";
import { timingSafeEqual } from "../bytes.ts";

/** Lifetime of a signed token. */
export const SIGNED_TOKEN_TTL_MS = 60_000;

/** What a signed token covers. */
export interface ClosureTuple {
  tenant: string;
  namespace: string;
  version: number;
  /** The `subscription` parameter exactly as in the URL (base64url of the canonical flag list). */
  subscription: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
/** Domain separation: the token key also digests credentials. */
const CONTEXT = "cfgtool closure token v1";

async function mac(
  key: CryptoKey,
  principalId: string,
  t: ClosureTuple,
  expiresAt: number,
): Promise<Uint8Array> {
  const msg = [CONTEXT, principalId, t.tenant, t.namespace, t.version, t.subscription, expiresAt]
    .join("\n");
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(msg)));
}

/**
 * Signs a closure tuple for a principal.
 *
 * @param key the server's HMAC key (sign usage)
 * @param principalId the token or user id the stream belongs to
 * @param tuple tenant, namespace, version, subscription
 * @param now the time of issue (expiry is 60 s later)
 * @returns the token
 *
 * @example
 * ```ts
 * import { signClosureToken, verifyClosureToken } from "./signed_token.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const key = await randomTokenKey();
 * const tuple = { tenant: "acme", namespace: "web", version: 3, subscription: "Kg" };
 * const token = await signClosureToken(key, "tok_1", tuple);
 * if ((await verifyClosureToken(key, token, tuple)) !== "tok_1") throw new Error();
 * ```
 */
export async function signClosureToken(
  key: CryptoKey,
  principalId: string,
  tuple: ClosureTuple,
  now: Date = new Date(),
): Promise<string> {
  const expiresAt = Math.floor((now.getTime() + SIGNED_TOKEN_TTL_MS) / 1000);
  const payload = base64urlnopad.encode(encoder.encode(`${principalId}\n${expiresAt}`));
  const sig = base64urlnopad.encode(await mac(key, principalId, tuple, expiresAt));
  return `${payload}.${sig}`;
}

/**
 * Verifies a signed token against the requested tuple.
 *
 * @param key the server's HMAC key
 * @param token the `token` query parameter
 * @param tuple the tuple of the request
 * @param now the current time
 * @returns the principal id, or null when the token is malformed, expired or for another tuple
 *
 * @example
 * ```ts
 * import { signClosureToken, verifyClosureToken } from "./signed_token.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const key = await randomTokenKey();
 * const tuple = { tenant: "acme", namespace: "web", version: 3, subscription: "Kg" };
 * const token = await signClosureToken(key, "tok_1", tuple);
 * if (await verifyClosureToken(key, token, { ...tuple, tenant: "other" }) !== null) throw new Error();
 * ```
 */
export async function verifyClosureToken(
  key: CryptoKey,
  token: string,
  tuple: ClosureTuple,
  now: Date = new Date(),
): Promise<string | null> {
  const m = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  let principalId: string;
  let expiresAt: number;
  let given: Uint8Array;
  try {
    const payload = decoder.decode(base64urlnopad.decode(m[1]!));
    const pm = /^([^\n]{1,200})\n(\d{1,12})$/.exec(payload);
    if (!pm) return null;
    principalId = pm[1]!;
    expiresAt = Number(pm[2]);
    given = base64urlnopad.decode(m[2]!);
  } catch {
    return null;
  }
  const expected = await mac(key, principalId, tuple, expiresAt);
  const valid = timingSafeEqual(given, expected);
  if (!valid || expiresAt * 1000 <= now.getTime()) return null;
  return principalId;
}
