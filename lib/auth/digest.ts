/**
 * Keyed digests of credentials: HMAC-SHA-256 under the server's token key,
 * as lower-case hex. The store keeps digests, never tokens; client IPs are
 * kept only as their digest. Comparisons of digests run in constant time.
 *
 * @module
 */
import { createHmac } from "node:crypto";
import { toHex } from "../bytes.ts";

const encoder = new TextEncoder();

/**
 * HMAC-SHA-256 of a string under the key, as 64 hex digits.
 *
 * @param key an HMAC key with the `sign` usage
 * @param value the string (a full token, a session token, an IP)
 * @returns the digest in hex
 *
 * @example
 * ```ts
 * import { hmacHex } from "./digest.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const key = await randomTokenKey();
 * if ((await hmacHex(key, "x")).length !== 64) throw new Error();
 * ```
 */
export async function hmacHex(key: CryptoKey, value: string): Promise<string> {
  const raw = KEY_BYTES.get(key);
  // Same HMAC-SHA-256; node:crypto computes it synchronously, about 5x
  // faster than a WebCrypto round trip on the authentication hot path.
  if (raw !== undefined) return createHmac("sha256", raw).update(value).digest("hex");
  const sig = await crypto.subtle.sign("HMAC", key, encoder.encode(value));
  return toHex(new Uint8Array(sig));
}

/** Raw bytes of keys imported by lib/auth/hmac_key.ts, never exported elsewhere. */
const KEY_BYTES = new WeakMap<CryptoKey, Uint8Array>();

/**
 * Records the raw bytes of a non-extractable HMAC key so {@linkcode hmacHex}
 * can compute with node:crypto. Only the key loader calls it.
 *
 * @example
 * ```ts
 * import { hmacHex, rememberKeyBytes } from "./digest.ts";
 * const bytes = new Uint8Array(32);
 * const key = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
 * const before = await hmacHex(key, "x");
 * rememberKeyBytes(key, bytes);
 * if ((await hmacHex(key, "x")) !== before) throw new Error("same HMAC either way");
 * ```
 */
export function rememberKeyBytes(key: CryptoKey, bytes: Uint8Array): void {
  KEY_BYTES.set(key, bytes.slice());
}

/**
 * Compares two hex digests in constant time (over their UTF-16 code units;
 * the length of a digest is public).
 *
 * @param a first digest
 * @param b second digest
 * @returns true when equal
 *
 * @example
 * ```ts
 * import { digestsEqual } from "./digest.ts";
 * if (!digestsEqual("ab12", "ab12") || digestsEqual("ab12", "ab13")) throw new Error();
 * ```
 */
export function digestsEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  // every character is looked at, whatever the first difference
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
