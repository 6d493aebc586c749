/**
 * Replacing the token HMAC key of an installation (lost, leaked or rotated
 * key file). Every digest made with the old key becomes useless, so the
 * store is brought to a state the new key can serve: every active service
 * token is revoked (audited `token.revoked` with reason
 * `token_key_replaced`), every human session ends, the SAML signing key
 * (sealed under the old key) is dropped so the next SAML sign-in makes a
 * new one, and the key fingerprint is replaced. Webhook signing secrets
 * (sealed under the old key, lib/auth/sealing.ts) are sealed again under
 * the new key when the old key file is there (renamed aside), so webhooks
 * keep delivering with the secrets their receivers know; without it (a
 * lost key file) they cannot be opened, and each delivery of such a
 * webhook fails saying so: delete and create those webhooks again.
 * Afterwards `cfgtool admin bootstrap` mints a superadmin.
 *
 * @module
 */
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import type { AuditActor } from "../store/audit.ts";
import { kvLocation } from "../store/kv.ts";
import { setKeyFingerprint } from "../store/key_check.ts";
import { deleteAllSessions } from "../store/sessions.ts";
import { deleteSamlSp } from "../store/saml_sp.ts";
import { eachTokenRecord, revokeTokenRecord } from "../store/tokens.ts";
import { resealWebhookSecrets } from "../store/webhooks.ts";
import { hmacHex } from "./digest.ts";
import { importTokenKey, KEY_BYTES, KEY_CHECK_INPUT, KEY_FILE_NAME } from "./hmac_key.ts";
import { reseal, SealError, sealingKey, WEBHOOK_SECRET_SEAL } from "./sealing.ts";

/** What {@linkcode rekeyStore} did. */
export interface RekeyResult {
  /** The new key file. */
  path: string;
  /** The previous key file, renamed aside, or null when there was none. */
  previous: string | null;
  /** Ids of the tokens revoked. */
  revoked: string[];
  /** Number of human sessions ended. */
  sessions: number;
  /**
   * Webhook signing secrets sealed again under the new key, and those that
   * could not be (no old key file, or one that does not open them): those
   * webhooks must be deleted and created again.
   */
  webhooks: { resealed: number; unreadable: number };
}

/**
 * Writes a new random key file (renaming an existing one to
 * `<file>.replaced-<time>`), revokes every active token, ends every session,
 * seals the webhook secrets again under the new key (with the old key file,
 * when there is one) and records the new key's fingerprint.
 *
 * @param kv the opened store
 * @param options `kv`: the `--kv` value; `keyFile`: the `--token-key-file` value
 * @returns the new key file, the old one, and what was revoked
 *
 * @example
 * ```ts
 * import { rekeyStore } from "./rekey.ts";
 * const dir = await Deno.makeTempDir();
 * const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
 * const r = await rekeyStore(kv, { kv: `${dir}/kv.sqlite3` });
 * if (r.revoked.length !== 0 || r.previous !== null || r.webhooks.unreadable !== 0) throw new Error();
 * kv.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function rekeyStore(
  kv: Deno.Kv,
  options: { kv: string; keyFile?: string; now?: Date },
): Promise<RekeyResult> {
  const loc = kvLocation(options.kv);
  let path: string;
  if (options.keyFile !== undefined) path = options.keyFile;
  else if (loc.kind === "file") path = join(loc.dir, KEY_FILE_NAME);
  else throw new UsageError("Name the key file to write with --token-key-file");
  const now = options.now ?? new Date();
  let previous: string | null = `${path}.replaced-${now.toISOString().replace(/[:.]/g, "-")}`;
  try {
    await Deno.rename(path, previous);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    previous = null;
  }
  const bytes = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  await Deno.writeFile(path, bytes, { mode: 0o600, createNew: true });
  await Deno.chmod(path, 0o600).catch(() => {});
  const key = await importTokenKey(bytes);

  const actor: AuditActor = { id: "rekey", principal_type: "system", request_id: null };
  const revoked: string[] = [];
  for await (const token of eachTokenRecord(kv)) {
    if (token.status !== "active") continue;
    await revokeTokenRecord(kv, token.id, actor, now, { reason: "token_key_replaced" });
    revoked.push(token.id);
  }
  const sessions = await deleteAllSessions(kv);
  await deleteSamlSp(kv);
  const webhooks = await resealWebhooks(kv, previous, key);
  await setKeyFingerprint(kv, await hmacHex(key, KEY_CHECK_INPUT));
  return { path, previous, revoked, sessions, webhooks };
}

/**
 * Seals every webhook secret again from the old key (read from its file,
 * renamed aside) to the new one; with no old key file, or one that does
 * not open a secret, that secret is left unreadable and counted.
 */
async function resealWebhooks(
  kv: Deno.Kv,
  previousFile: string | null,
  key: CryptoKey,
): Promise<{ resealed: number; unreadable: number }> {
  let oldKey: CryptoKey | null = null;
  if (previousFile !== null) {
    try {
      oldKey = await importTokenKey(await Deno.readFile(previousFile));
    } catch {
      oldKey = null; // unreadable or too short: the secrets cannot be opened
    }
  }
  const to = await sealingKey(key, WEBHOOK_SECRET_SEAL);
  const from = oldKey === null ? null : await sealingKey(oldKey, WEBHOOK_SECRET_SEAL);
  return await resealWebhookSecrets(kv, async (sealed) => {
    if (from === null) return null;
    try {
      return await reseal(from, to, sealed);
    } catch (err) {
      if (err instanceof SealError) return null;
      throw err;
    }
  });
}
