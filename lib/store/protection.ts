/**
 * Protected environments of a namespace: `["ns_protection", t, ns]` holds,
 * per environment, how many approvals a change that affects it needs
 * before it lands (1–5). Kept outside the manifest, since the manifest is
 * what gets reviewed. Setting it writes its `namespace.protection_changed`
 * audit entry in the same commit, checked against the namespace record.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import { addAudit, type AuditEntry } from "./audit.ts";
import { namespaceKey, protectionKey } from "./keys.ts";

/** One protected environment. */
export interface EnvironmentProtection {
  /** Approvals a change affecting the environment needs (1–5). */
  required_approvals: number;
}

/** The protection record of a namespace. */
export interface ProtectionRecord {
  /** Protected environments; an environment not listed is unprotected. */
  environments: Record<string, EnvironmentProtection>;
  /** When it was last set (RFC 3339), or null when never. */
  updated_at: string | null;
  /** The user or token that set it, or null. */
  updated_by: string | null;
}

/** The record of a namespace nobody protected. */
export const UNPROTECTED: ProtectionRecord = Object.freeze({
  environments: {},
  updated_at: null,
  updated_by: null,
});

/**
 * Reads a namespace's protection (the unprotected record when none is
 * set) with its entry, for a commit to check.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the record and the entry it was read from
 *
 * @example
 * ```ts
 * import { readProtection } from "./protection.ts";
 * const kv = await Deno.openKv(":memory:");
 * const { record } = await readProtection(kv, "acme", "web");
 * if (Object.keys(record.environments).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function readProtection(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
): Promise<{ record: ProtectionRecord; entry: Deno.KvEntryMaybe<ProtectionRecord> }> {
  const entry = await kv.get<ProtectionRecord>(protectionKey(tenant, namespace));
  return { record: entry.value ?? UNPROTECTED, entry };
}

/**
 * Stores a namespace's protection with its audit entry, in one commit
 * checked against the namespace record (404 `namespace_not_found` when it
 * does not exist, or is deleted meanwhile).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param record the new protection
 * @param audit the `namespace.protection_changed` entry
 * @returns nothing
 *
 * @example
 * ```ts
 * import { putProtection, readProtection } from "./protection.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createNamespace } from "./namespaces.ts";
 * import { eventAuditEntry } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const record = { environments: { production: { required_approvals: 1 } }, updated_at: null, updated_by: "usr_1" };
 * const audit = eventAuditEntry("namespace.protection_changed", { id: "usr_1", principal_type: "user", request_id: null }, new Date());
 * await putProtection(kv, "acme", "web", record, audit);
 * if ((await readProtection(kv, "acme", "web")).record.environments.production?.required_approvals !== 1) throw new Error();
 * kv.close();
 * ```
 */
export async function putProtection(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  record: ProtectionRecord,
  audit: AuditEntry,
): Promise<void> {
  while (true) {
    const ns = await kv.get(namespaceKey(tenant, namespace));
    if (ns.value === null) {
      throw new NotFoundError("namespace_not_found", `No namespace ${tenant}/${namespace}`);
    }
    const op = kv.atomic().check(ns).set(protectionKey(tenant, namespace), record);
    if ((await addAudit(op, audit).commit()).ok) return;
  }
}

/**
 * Removes a namespace's protection (when the namespace is deleted).
 *
 * @param op the atomic operation deleting the namespace
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { deleteProtection } from "./protection.ts";
 * const kv = await Deno.openKv(":memory:");
 * await deleteProtection(kv.atomic(), "acme", "web").commit();
 * kv.close();
 * ```
 */
export function deleteProtection(
  op: Deno.AtomicOperation,
  tenant: string,
  namespace: string,
): Deno.AtomicOperation {
  return op.delete(protectionKey(tenant, namespace));
}
