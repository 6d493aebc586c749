/**
 * The installation's SAML service-provider signing credentials, one record
 * at `["saml_sp"]`: the self-signed certificate every tenant's SP metadata
 * publishes, and the private key that signs authentication requests,
 * sealed (AES-256-GCM) under a key derived from the token key by
 * lib/login/saml_sp_key.ts. This module only stores the record: it
 * never sees the key in the clear.
 *
 * @module
 */
import { samlSpKey } from "./keys.ts";

/** The stored record. */
export interface SamlSpRecord {
  /** The signing certificate, PEM. */
  certificate: string;
  /** `iv ‖ ciphertext` of the PKCS#8 private key, base64. */
  sealed_key: string;
  /** When the pair was made (RFC 3339). */
  created_at: string;
}

/**
 * Reads the record, or null when none was made yet.
 *
 * @param kv the store
 * @returns the record, or null
 *
 * @example
 * ```ts
 * import { findSamlSp } from "./saml_sp.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findSamlSp(kv) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findSamlSp(kv: Deno.Kv): Promise<SamlSpRecord | null> {
  return (await kv.get<SamlSpRecord>(samlSpKey())).value;
}

/**
 * Stores the record unless one exists; returns the record that is stored
 * afterwards (the caller's, or the one another process stored first).
 *
 * @param kv the store
 * @param record the new record
 * @returns the stored record
 *
 * @example
 * ```ts
 * import { createSamlSp } from "./saml_sp.ts";
 * const kv = await Deno.openKv(":memory:");
 * const a = { certificate: "A", sealed_key: "a", created_at: "2026-01-01T00:00:00Z" };
 * await createSamlSp(kv, a);
 * const kept = await createSamlSp(kv, { ...a, certificate: "B" });
 * if (kept.certificate !== "A") throw new Error("the first record stays");
 * kv.close();
 * ```
 */
export async function createSamlSp(kv: Deno.Kv, record: SamlSpRecord): Promise<SamlSpRecord> {
  const res = await kv.atomic().check({ key: samlSpKey(), versionstamp: null })
    .set(samlSpKey(), record).commit();
  if (res.ok) return record;
  return (await findSamlSp(kv)) ?? record;
}

/**
 * Deletes the record (the token key was replaced: the sealed key can no
 * longer be opened; the next SAML sign-in makes a new pair).
 *
 * @param kv the store
 * @returns nothing
 *
 * @example
 * ```ts
 * import { createSamlSp, deleteSamlSp, findSamlSp } from "./saml_sp.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createSamlSp(kv, { certificate: "A", sealed_key: "a", created_at: "" });
 * await deleteSamlSp(kv);
 * if (await findSamlSp(kv) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteSamlSp(kv: Deno.Kv): Promise<void> {
  await kv.delete(samlSpKey());
}
