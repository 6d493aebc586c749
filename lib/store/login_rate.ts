/**
 * Fixed-window attempt counters for sign-in rate limits:
 * `["login_rate", scope, id, window]` counts attempts of one scope (`email`
 * per address digest, `ip` per client-address digest) in one window, and
 * expires with it. Shared by every server process on the store.
 *
 * @module
 */
import { loginRateKey } from "./keys.ts";

/**
 * Counts one attempt and says whether it is within the limit: true for
 * the first `limit` attempts of a window, false after. Ids are digests,
 * never raw addresses.
 *
 * @param kv the store
 * @param scope what is limited (`email`, `ip`, …)
 * @param id whose attempts (a digest)
 * @param limit attempts allowed per window
 * @param windowMs window length
 * @param now the current time, ms
 * @returns whether this attempt is allowed
 *
 * @example
 * ```ts
 * import { countAttempt } from "./login_rate.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = 1_000_000;
 * if (!await countAttempt(kv, "demo", "a", 2, 60_000, t)) throw new Error();
 * if (!await countAttempt(kv, "demo", "a", 2, 60_000, t)) throw new Error();
 * if (await countAttempt(kv, "demo", "a", 2, 60_000, t)) throw new Error("third refused");
 * if (!await countAttempt(kv, "demo", "a", 2, 60_000, t + 60_000)) throw new Error("next window");
 * kv.close();
 * ```
 */
export async function countAttempt(
  kv: Deno.Kv,
  scope: string,
  id: string,
  limit: number,
  windowMs: number,
  now: number,
): Promise<boolean> {
  const window = Math.floor(now / windowMs);
  const key = loginRateKey(scope, id, window);
  // Read, then write the next count checked against the read: each attempt
  // gets its own number, even when many arrive at once.
  while (true) {
    const entry = await kv.get<number>(key);
    const count = (entry.value ?? 0) + 1;
    if (count > limit) return false; // no write once over: the window ends the refusal
    const res = await kv.atomic().check(entry).set(key, count, { expireIn: windowMs * 2 })
      .commit();
    if (res.ok) return true;
  }
}
