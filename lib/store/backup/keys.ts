/**
 * Which KV entries a backup holds and a restore accepts, by the first part
 * of their key (the record kinds of lib/store/keys.ts).
 *
 * - Sign-ins in progress (`one_time`: operator console links, email
 *   sign-in codes, CLI sign-in grants, OIDC states) and sign-in rate
 *   counters (`login_rate`) are left out of every backup: they are
 *   single-use or short-lived, and a restore must not bring back a sign-in
 *   code that was used or ended after the backup.
 * - A restore writes only keys under the prefixes cfgtool stores and a
 *   backup holds; any other key is refused, so a file that is not what
 *   `cfgtool admin backup` wrote cannot put foreign records into a store.
 *
 * @module
 */

/** Every first key part cfgtool writes (the table of lib/store/keys.ts). */
export const STORE_PREFIXES: readonly string[] = [
  "audit",
  "audit_by_time",
  "audit_retention_lease",
  "blob",
  "blob_gc",
  "blob_meta",
  "bootstrap_count",
  "change_comment",
  "change_request",
  "conn_lease",
  "credential_epoch",
  "lease_holder",
  "login_policy",
  "login_rate",
  "meta",
  "ns",
  "ns_admin",
  "ns_admin_by_user",
  "ns_head",
  "ns_protection",
  "ns_retention",
  "one_time",
  "people_backfill",
  "people_backfill_lease",
  "rate_bucket",
  "retention_lease",
  "saml_sp",
  "schedule_sweep_lease",
  "session",
  "session_by_digest",
  "session_by_user",
  "tenant",
  "tenant_admin",
  "tenant_admin_by_user",
  "tenant_person",
  "tenant_person_by_user",
  "token",
  "token_by_digest",
  "token_by_name",
  "token_by_namespace",
  "token_by_tenant",
  "token_key_check",
  "user",
  "user_by_email",
  "version",
  "webhook",
  "webhook_delivery",
  "webhook_delivery_seq",
  "webhook_entry",
  "webhook_lock",
];

/** First key parts left out of every backup: sign-ins in progress and sign-in rate counters. */
export const LEFT_OUT_PREFIXES: readonly string[] = ["one_time", "login_rate"];

const restorable = new Set(STORE_PREFIXES.filter((p) => !LEFT_OUT_PREFIXES.includes(p)));

/**
 * Whether a backup leaves the entry at `key` out: a single-use sign-in
 * record or a sign-in rate counter ({@linkcode LEFT_OUT_PREFIXES}).
 *
 * @param key a KV key
 * @returns true when the backup skips it
 *
 * @example
 * ```ts
 * import { leftOutOfBackup } from "./keys.ts";
 * if (!leftOutOfBackup(["one_time", "email", "d1"])) throw new Error();
 * if (leftOutOfBackup(["session", "ssn_1"])) throw new Error();
 * ```
 */
export function leftOutOfBackup(key: Deno.KvKey): boolean {
  return typeof key[0] === "string" && LEFT_OUT_PREFIXES.includes(key[0]);
}

/**
 * Whether a restore writes the entry at `key`: its first part is one of
 * the {@linkcode STORE_PREFIXES} that a backup holds (not one of the
 * {@linkcode LEFT_OUT_PREFIXES}).
 *
 * @param key a KV key read from a backup file
 * @returns true when the key is a record a backup holds
 *
 * @example
 * ```ts
 * import { restorableKey } from "./keys.ts";
 * if (!restorableKey(["token", "tok_1"])) throw new Error();
 * if (restorableKey(["one_time", "email", "d1"]) || restorableKey(["evil"])) throw new Error();
 * ```
 */
export function restorableKey(key: Deno.KvKey): boolean {
  return typeof key[0] === "string" && restorable.has(key[0]);
}
