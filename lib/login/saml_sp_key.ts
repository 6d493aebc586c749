/**
 * The key pair cfgtool signs SAML authentication requests with, as a
 * service provider: one RSA-2048 key and a self-signed certificate (ten
 * years; identity providers trust the certificate in the metadata, not a
 * CA) per installation, made on first use. The private key is stored only
 * sealed with AES-256-GCM under a key derived from the token HMAC key, so
 * every process of the installation (they share the store and the key
 * file) signs with the same key, and a copy of the store alone does not
 * give the key away. Replacing the token key (`cfgtool admin rekey`) drops
 * the pair; the next SAML sign-in makes a new one.
 *
 * @module
 */
import { base64 } from "base";
import { UnavailableError } from "../errors.ts";
import { makeSelfSignedPair } from "./self_signed.ts";
import { createSamlSp, findSamlSp, type SamlSpRecord } from "../store/saml_sp.ts";
import { hmacHex } from "../auth/digest.ts";

/** The signing pair, PEM. */
export interface SamlSigningPair {
  /** The self-signed certificate, published in the SP metadata. */
  certificate: string;
  /** The PKCS#8 private key. */
  privateKey: string;
}

/** What the sealing key is derived from (with the token key). */
const SEAL_LABEL = "cfgtool saml sp key seal v1";
/** Certificate lifetime, ms. */
const CERT_LIFETIME_MS = 10 * 365 * 24 * 60 * 60 * 1000;

const pairs = new WeakMap<Deno.Kv, Map<CryptoKey, Promise<SamlSigningPair>>>();

/**
 * The installation's SAML signing pair: read from the store and unsealed,
 * or made and stored when there is none (two processes racing keep the
 * first). Kept in memory per store and token key. 503
 * `login_unavailable` when the stored key was sealed under another token
 * key (a process started with the wrong key file).
 *
 * @param deps the store and the token key
 * @returns the certificate and private key
 *
 * @example
 * ```ts
 * import { samlSigningPair } from "./saml_sp_key.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const a = await samlSigningPair({ kv, key });
 * if (!a.certificate.startsWith("-----BEGIN CERTIFICATE-----")) throw new Error();
 * if ((await samlSigningPair({ kv, key })).privateKey !== a.privateKey) throw new Error("one pair");
 * kv.close();
 * ```
 */
export function samlSigningPair(deps: { kv: Deno.Kv; key: CryptoKey }): Promise<SamlSigningPair> {
  let byKey = pairs.get(deps.kv);
  if (byKey === undefined) {
    byKey = new Map();
    pairs.set(deps.kv, byKey);
  }
  let pair = byKey.get(deps.key);
  if (pair === undefined) {
    pair = loadOrMake(deps.kv, deps.key);
    byKey.set(deps.key, pair);
    pair.catch(() => byKey.delete(deps.key)); // try again on the next sign-in
  }
  return pair;
}

/** Reads and unseals the stored pair, or makes and stores one. */
async function loadOrMake(kv: Deno.Kv, key: CryptoKey): Promise<SamlSigningPair> {
  const seal = await sealingKey(key);
  let record = await findSamlSp(kv);
  if (record === null) {
    const made = await makeSelfSignedPair("cfgtool SAML service provider", CERT_LIFETIME_MS);
    record = await createSamlSp(kv, {
      certificate: made.certificate,
      sealed_key: await sealText(seal, made.privateKey),
      created_at: new Date().toISOString(),
    });
  }
  return { certificate: record.certificate, privateKey: await unseal(seal, record) };
}

/** The AES-256-GCM key derived from the token key. */
async function sealingKey(key: CryptoKey): Promise<CryptoKey> {
  const hex = await hmacHex(key, SEAL_LABEL);
  const bytes = new Uint8Array(hex.match(/../g)!.map((h) => parseInt(h, 16)));
  return await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** `iv ‖ AES-GCM(text)`, base64. */
async function sealText(seal: CryptoKey, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, seal, new TextEncoder().encode(text)),
  );
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return base64.encode(out);
}

/** Opens a sealed private key; 503 when it was sealed under another token key. */
async function unseal(seal: CryptoKey, record: SamlSpRecord): Promise<string> {
  try {
    const all = base64.decode(record.sealed_key);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: all.slice(0, 12) },
      seal,
      all.slice(12),
    );
    return new TextDecoder().decode(plain);
  } catch (err) {
    throw new UnavailableError(
      "login_unavailable",
      "The SAML signing key in the store was sealed with another token key file; " +
        "start the server with the installation's key file",
      { cause: err },
    );
  }
}
