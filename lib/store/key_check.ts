/**
 * The token-key fingerprint of an installation, at `["token_key_check"]`:
 * an HMAC of a fixed string made with the token key, so that opening the
 * store with another key (or without the key file) is refused. Computing
 * and comparing the fingerprint is lib/auth/hmac_key.ts; this module only
 * reads and writes it.
 *
 * @module
 */
import { tokenKeyCheckKey } from "./keys.ts";

/**
 * The recorded key fingerprint, or null when none was recorded yet.
 *
 * @param kv the store
 * @returns the hex fingerprint or null
 *
 * @example
 * ```ts
 * import { getKeyFingerprint, setKeyFingerprint } from "./key_check.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await getKeyFingerprint(kv) !== null) throw new Error();
 * await setKeyFingerprint(kv, "9f2c");
 * if (await getKeyFingerprint(kv) !== "9f2c") throw new Error();
 * kv.close();
 * ```
 */
export async function getKeyFingerprint(kv: Deno.Kv): Promise<string | null> {
  return (await kv.get<string>(tokenKeyCheckKey())).value;
}

/**
 * Records a key fingerprint only when none is recorded (a check-and-set
 * against an absent record), so that two processes opening a new store at
 * once cannot overwrite each other's.
 *
 * @param kv the store
 * @param fingerprint the hex fingerprint
 * @returns whether this call recorded it
 *
 * @example
 * ```ts
 * import { getKeyFingerprint, recordKeyFingerprint } from "./key_check.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (!await recordKeyFingerprint(kv, "9f2c")) throw new Error();
 * if (await recordKeyFingerprint(kv, "77ab")) throw new Error("overwrote");
 * if (await getKeyFingerprint(kv) !== "9f2c") throw new Error();
 * kv.close();
 * ```
 */
export async function recordKeyFingerprint(kv: Deno.Kv, fingerprint: string): Promise<boolean> {
  const res = await kv.atomic()
    .check({ key: tokenKeyCheckKey(), versionstamp: null })
    .set(tokenKeyCheckKey(), fingerprint)
    .commit();
  return res.ok;
}

/**
 * Replaces the key fingerprint, whatever was recorded (a new key).
 *
 * @param kv the store
 * @param fingerprint the hex fingerprint of the new key
 * @returns nothing
 *
 * @example
 * ```ts
 * import { getKeyFingerprint, recordKeyFingerprint, setKeyFingerprint } from "./key_check.ts";
 * const kv = await Deno.openKv(":memory:");
 * await recordKeyFingerprint(kv, "9f2c");
 * await setKeyFingerprint(kv, "77ab");
 * if (await getKeyFingerprint(kv) !== "77ab") throw new Error();
 * kv.close();
 * ```
 */
export async function setKeyFingerprint(kv: Deno.Kv, fingerprint: string): Promise<void> {
  await kv.set(tokenKeyCheckKey(), fingerprint);
}
