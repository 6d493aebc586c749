/**
 * Replay refusal for SAML assertions: the id of every accepted assertion
 * is remembered (as a keyed digest of issuer and id, in the single-use
 * records of lib/store/one_time.ts) until the assertion expires, so the
 * same assertion is accepted once, whatever response or sign-in carries
 * it. The single-use sign-in state already refuses a second post of one
 * response; this is the check on the assertion itself.
 *
 * @module
 */
import { putOneTime } from "../store/one_time.ts";
import type { AuthDeps } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";

/** Record kind of a remembered assertion id. */
const SEEN = "saml_assertion";
/** Shortest time an id is remembered, ms. */
const MIN_MEMORY_MS = 60_000;
/** Longest time an id is remembered (assertions live minutes), ms. */
export const MAX_ASSERTION_MEMORY_MS = 24 * 60 * 60_000;

/**
 * Remembers assertion `id` of `issuer` until `until` (epoch ms; at least a
 * minute, at most {@linkcode MAX_ASSERTION_MEMORY_MS} from `now`). Returns
 * false when it was remembered already: the assertion is a replay.
 *
 * @param deps store and key
 * @param issuer the identity provider's entity id
 * @param id the assertion's `ID`
 * @param until when the assertion stops being valid (with clock skew), epoch ms
 * @param now the current time, epoch ms
 * @returns true the first time, false for a replay
 *
 * @example
 * ```ts
 * import { rememberAssertion } from "./saml_replay.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const now = Date.now();
 * if (!await rememberAssertion(deps, "https://idp.example.com", "_a1", now + 300_000, now)) throw new Error();
 * if (await rememberAssertion(deps, "https://idp.example.com", "_a1", now + 300_000, now)) throw new Error("replay");
 * deps.kv.close();
 * ```
 */
export async function rememberAssertion(
  deps: Pick<AuthDeps, "kv" | "key">,
  issuer: string,
  id: string,
  until: number,
  now: number,
): Promise<boolean> {
  const ttl = Math.min(Math.max(until - now, MIN_MEMORY_MS), MAX_ASSERTION_MEMORY_MS);
  const digest = await hmacHex(deps.key, `${SEEN}:${issuer}\u0000${id}`);
  return await putOneTime(deps.kv, SEEN, digest, { at: now }, ttl, now);
}
