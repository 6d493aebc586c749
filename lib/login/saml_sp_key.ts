/**
 * The key pair cfgtool signs SAML authentication requests with, as a
 * service provider: one RSA-2048 key and a self-signed certificate (ten
 * years; identity providers trust the certificate in the metadata, not a
 * CA) per installation, made on first use. The private key is stored only
 * sealed (lib/auth/sealing.ts: AES-256-GCM under a key derived from the
 * token HMAC key), so
 * every process of the installation (they share the store and the key
 * file) signs with the same key, and a copy of the store alone does not
 * give the key away. Replacing the token key (`cfgtool admin rekey`) drops
 * the pair; the next SAML sign-in makes a new one.
 *
 * @module
 */
import { UnavailableError } from "../errors.ts";
import { makeSelfSignedPair } from "./self_signed.ts";
import { createSamlSp, findSamlSp, type SamlSpRecord } from "../store/saml_sp.ts";
import { seal, sealingKey, unseal } from "../auth/sealing.ts";

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
  const sealer = await sealingKey(key, SEAL_LABEL);
  let record = await findSamlSp(kv);
  if (record === null) {
    const made = await makeSelfSignedPair("cfgtool SAML service provider", CERT_LIFETIME_MS);
    record = await createSamlSp(kv, {
      certificate: made.certificate,
      sealed_key: await seal(sealer, made.privateKey),
      created_at: new Date().toISOString(),
    });
  }
  return { certificate: record.certificate, privateKey: await openKey(sealer, record) };
}

/** Opens a sealed private key; 503 when it was sealed under another token key. */
async function openKey(sealer: CryptoKey, record: SamlSpRecord): Promise<string> {
  try {
    return await unseal(sealer, record.sealed_key);
  } catch (err) {
    throw new UnavailableError(
      "login_unavailable",
      "The SAML signing key in the store was sealed with another token key file; " +
        "start the server with the installation's key file",
      { cause: err },
    );
  }
}
