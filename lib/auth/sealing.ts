/**
 * Secrets the server must read back (the SAML signing key, webhook signing
 * secrets) are stored sealed: AES-256-GCM under a key derived from the
 * token HMAC key with a label of their own (HMAC-SHA-256 of the label), so
 * every process of the installation (they share the store and the key
 * file) opens them, and a copy of the store alone gives none away. Each
 * kind of secret has its own label, so one sealing key opens one kind.
 *
 * A sealed text is `base64(iv ‖ ciphertext ‖ tag)` with a random 96-bit
 * IV. Replacing the token key (`cfgtool admin rekey`) makes every sealed
 * text unreadable unless it is sealed again under the new key
 * ({@linkcode reseal}).
 *
 * @module
 */
import { base64 } from "base";
import { hmacHex } from "./digest.ts";

/** A sealed text that does not open: sealed under another key or label, or damaged. */
export class SealError extends Error {
  /**
   * @param message what could not be opened
   * @param options the cause
   */
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "SealError";
  }
}

/** The label of the key that seals webhook signing secrets (lib/services/webhooks.ts). */
export const WEBHOOK_SECRET_SEAL = "cfgtool webhook secret seal v1";

const IV_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The AES-256-GCM key that seals one kind of secret: derived from the
 * token key and the kind's label.
 *
 * @param tokenKey the installation's token HMAC key
 * @param label what the key seals (`cfgtool webhook secret seal v1`)
 * @returns the sealing key (not extractable)
 *
 * @example
 * ```ts
 * import { sealingKey } from "./sealing.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const key = await sealingKey(await randomTokenKey(), "cfgtool example seal v1");
 * if (key.algorithm.name !== "AES-GCM" || key.extractable) throw new Error();
 * ```
 */
export async function sealingKey(tokenKey: CryptoKey, label: string): Promise<CryptoKey> {
  const hex = await hmacHex(tokenKey, label);
  const bytes = new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
  return await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/**
 * Seals a text: `base64(iv ‖ AES-GCM(text))`, a new random IV each time.
 *
 * @param key a key from {@linkcode sealingKey}
 * @param text the secret
 * @returns the sealed text
 *
 * @example
 * ```ts
 * import { seal, sealingKey, unseal } from "./sealing.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const key = await sealingKey(await randomTokenKey(), "cfgtool example seal v1");
 * const sealed = await seal(key, "whsec_abc");
 * if (sealed.includes("whsec_abc") || await unseal(key, sealed) !== "whsec_abc") throw new Error();
 * if (await seal(key, "whsec_abc") === sealed) throw new Error("a new IV each time");
 * ```
 */
export async function seal(key: CryptoKey, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(text)),
  );
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return base64.encode(out);
}

/**
 * Opens a sealed text; a {@linkcode SealError} when it was sealed under
 * another token key or label, or is damaged.
 *
 * @param key a key from {@linkcode sealingKey}
 * @param sealed what {@linkcode seal} returned
 * @returns the secret
 *
 * @example
 * ```ts
 * import { seal, SealError, sealingKey, unseal } from "./sealing.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const sealed = await seal(await sealingKey(await randomTokenKey(), "a"), "secret");
 * const other = await sealingKey(await randomTokenKey(), "a");
 * const refused = await unseal(other, sealed).catch((e) => e);
 * if (!(refused instanceof SealError)) throw new Error();
 * ```
 */
export async function unseal(key: CryptoKey, sealed: string): Promise<string> {
  try {
    const all = base64.decode(sealed);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: all.slice(0, IV_BYTES) },
      key,
      all.slice(IV_BYTES),
    );
    return decoder.decode(plain);
  } catch (err) {
    throw new SealError("The sealed secret does not open with this key", { cause: err });
  }
}

/**
 * Seals again under `to` a text sealed under `from` (the token key
 * replaced by `cfgtool admin rekey` while the old key file is at hand).
 *
 * @param from the sealing key the text was sealed with
 * @param to the sealing key to seal it with
 * @param sealed the sealed text
 * @returns the text sealed under `to`; a {@linkcode SealError} when `from` does not open it
 *
 * @example
 * ```ts
 * import { reseal, seal, sealingKey, unseal } from "./sealing.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const before = await sealingKey(await randomTokenKey(), "a");
 * const after = await sealingKey(await randomTokenKey(), "a");
 * const moved = await reseal(before, after, await seal(before, "secret"));
 * if (await unseal(after, moved) !== "secret") throw new Error();
 * ```
 */
export async function reseal(from: CryptoKey, to: CryptoKey, sealed: string): Promise<string> {
  return await seal(to, await unseal(from, sealed));
}
