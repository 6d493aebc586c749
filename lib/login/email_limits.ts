/**
 * Rate limits of verified-email sign-in starts, shared by every server
 * process on the store (lib/store/login_rate.ts): per address (5 starts in
 * 15 minutes; starts beyond send no mail) and per client IP (30 starts in
 * 15 minutes; starts beyond are refused with 429). Counters are keyed by
 * HMAC digests, never by the address or the IP.
 *
 * @module
 */
import { countAttempt } from "../store/login_rate.ts";
import type { AuthDeps } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";

/** One limit: attempts per fixed window. */
export interface StartLimit {
  /** Starts allowed in a window. */
  limit: number;
  /** Window length, ms. */
  windowMs: number;
}

/** The limits of email sign-in starts. */
export const EMAIL_START_LIMITS: Readonly<Record<"address" | "ip", StartLimit>> = Object.freeze({
  address: { limit: 5, windowMs: 15 * 60 * 1000 },
  ip: { limit: 30, windowMs: 15 * 60 * 1000 },
});

/**
 * Counts one start by an address (lower-cased) or a client IP and says
 * whether it is within the limit.
 *
 * @param deps store and key
 * @param scope `address` or `ip`
 * @param value the address or the IP
 * @param now the current time, ms
 * @returns whether this start is allowed
 *
 * @example
 * ```ts
 * import { countEmailStart } from "./email_limits.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const now = Date.now();
 * const tries = [];
 * for (let i = 0; i < 6; i++) tries.push(await countEmailStart(deps, "address", "ana@acme.test", now));
 * if (tries.join() !== "true,true,true,true,true,false") throw new Error(tries.join());
 * deps.kv.close();
 * ```
 */
export async function countEmailStart(
  deps: Pick<AuthDeps, "kv" | "key">,
  scope: "address" | "ip",
  value: string,
  now: number,
): Promise<boolean> {
  const { limit, windowMs } = EMAIL_START_LIMITS[scope];
  const id = await hmacHex(deps.key, `email_start_${scope}:${value.toLowerCase()}`);
  return await countAttempt(deps.kv, `email_start_${scope}`, id, limit, windowMs, now);
}

/**
 * Seconds until the current window of a limit ends (a `Retry-After`).
 *
 * @param scope `address` or `ip`
 * @param now the current time, ms
 * @returns whole seconds, at least 1
 *
 * @example
 * ```ts
 * import { retryAfterSeconds } from "./email_limits.ts";
 * if (retryAfterSeconds("ip", 15 * 60 * 1000 - 1500) !== 2) throw new Error();
 * ```
 */
export function retryAfterSeconds(scope: "address" | "ip", now: number): number {
  const { windowMs } = EMAIL_START_LIMITS[scope];
  return Math.max(1, Math.ceil((windowMs - (now % windowMs)) / 1000));
}
