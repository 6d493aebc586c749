/**
 * Single-use records of sign-ins in progress: `["one_time", kind, digest]`
 * holds what a later step needs (the PKCE verifier and nonce of an OIDC
 * login under its `state`, an emailed code, a CLI grant). Records are keyed
 * by a digest of their secret (never the secret), expire from the KV, and
 * {@linkcode takeOneTime} reads and deletes one in a single commit, so two
 * requests presenting the same secret cannot both use it.
 *
 * @module
 */
import { oneTimeKey } from "./keys.ts";

/** A stored single-use record with its absolute expiry. */
interface Stored<T> {
  value: T;
  /** Epoch ms after which the record is refused even if the KV still holds it. */
  until: number;
}

/**
 * Stores a single-use record for `ttlMs` milliseconds. Returns false when a
 * record with the same kind and digest exists (a collision of random
 * secrets: the caller draws again).
 *
 * @param kv the store
 * @param kind what the record is (`oidc_state`, `email_code`, …)
 * @param digest digest of the secret that will redeem it
 * @param value what to keep
 * @param ttlMs lifetime in milliseconds
 * @param now the current time, ms
 * @returns whether it was stored
 *
 * @example
 * ```ts
 * import { putOneTime, takeOneTime } from "./one_time.ts";
 * const kv = await Deno.openKv(":memory:");
 * await putOneTime(kv, "demo", "d1", { n: 1 }, 60_000, Date.now());
 * if ((await takeOneTime<{ n: number }>(kv, "demo", "d1", Date.now()))?.n !== 1) throw new Error();
 * if (await takeOneTime(kv, "demo", "d1", Date.now()) !== null) throw new Error("used twice");
 * kv.close();
 * ```
 */
export async function putOneTime<T>(
  kv: Deno.Kv,
  kind: string,
  digest: string,
  value: T,
  ttlMs: number,
  now: number,
): Promise<boolean> {
  const key = oneTimeKey(kind, digest);
  const stored: Stored<T> = { value, until: now + ttlMs };
  const res = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(key, stored, { expireIn: ttlMs + 60_000 })
    .commit();
  return res.ok;
}

/**
 * Redeems a single-use record: reads and deletes it in one commit. Null
 * when there is none, it expired, or another request took it first.
 *
 * @param kv the store
 * @param kind what the record is
 * @param digest digest of the presented secret
 * @param now the current time, ms
 * @returns the value, or null
 *
 * @example
 * ```ts
 * import { putOneTime, takeOneTime } from "./one_time.ts";
 * const kv = await Deno.openKv(":memory:");
 * await putOneTime(kv, "demo", "d1", "x", 1_000, 0);
 * if (await takeOneTime(kv, "demo", "d1", 5_000) !== null) throw new Error("expired");
 * kv.close();
 * ```
 */
export async function takeOneTime<T>(
  kv: Deno.Kv,
  kind: string,
  digest: string,
  now: number,
): Promise<T | null> {
  const key = oneTimeKey(kind, digest);
  const entry = await kv.get<Stored<T>>(key);
  if (entry.value === null) return null;
  const res = await kv.atomic().check(entry).delete(key).commit();
  if (!res.ok) return null; // someone else redeemed it first
  return entry.value.until > now ? entry.value.value : null;
}

/**
 * Reads a single-use record without redeeming it (null when absent or
 * expired), for a step that must look before it commits (a page that
 * shows what a confirmation will grant).
 *
 * @param kv the store
 * @param kind what the record is
 * @param digest digest of the presented secret
 * @param now the current time, ms
 * @returns the value, or null
 *
 * @example
 * ```ts
 * import { peekOneTime, putOneTime } from "./one_time.ts";
 * const kv = await Deno.openKv(":memory:");
 * await putOneTime(kv, "demo", "d1", 7, 60_000, 0);
 * if (await peekOneTime(kv, "demo", "d1", 1) !== 7) throw new Error();
 * if (await peekOneTime(kv, "demo", "d1", 1) !== 7) throw new Error("peek does not redeem");
 * kv.close();
 * ```
 */
export async function peekOneTime<T>(
  kv: Deno.Kv,
  kind: string,
  digest: string,
  now: number,
): Promise<T | null> {
  const entry = await kv.get<Stored<T>>(oneTimeKey(kind, digest));
  if (entry.value === null || entry.value.until <= now) return null;
  return entry.value.value;
}

/**
 * Replaces the value of a live single-use record, keeping its expiry (a
 * device grant that a person just approved). False when it is gone.
 *
 * @param kv the store
 * @param kind what the record is
 * @param digest its digest
 * @param update the new value from the old one
 * @param now the current time, ms
 * @returns whether the record was updated
 *
 * @example
 * ```ts
 * import { peekOneTime, putOneTime, updateOneTime } from "./one_time.ts";
 * const kv = await Deno.openKv(":memory:");
 * await putOneTime(kv, "demo", "d1", { ok: false }, 60_000, 0);
 * await updateOneTime<{ ok: boolean }>(kv, "demo", "d1", () => ({ ok: true }), 1);
 * if ((await peekOneTime<{ ok: boolean }>(kv, "demo", "d1", 1))?.ok !== true) throw new Error();
 * kv.close();
 * ```
 */
export async function updateOneTime<T>(
  kv: Deno.Kv,
  kind: string,
  digest: string,
  update: (old: T) => T,
  now: number,
): Promise<boolean> {
  const key = oneTimeKey(kind, digest);
  while (true) {
    const entry = await kv.get<Stored<T>>(key);
    if (entry.value === null || entry.value.until <= now) return false;
    const next: Stored<T> = { value: update(entry.value.value), until: entry.value.until };
    const res = await kv.atomic().check(entry)
      .set(key, next, { expireIn: entry.value.until - now + 60_000 })
      .commit();
    if (res.ok) return true;
  }
}
