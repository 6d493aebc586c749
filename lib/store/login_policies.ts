/**
 * Tenant login policies: `["login_policy", t]` holds how a tenant's people
 * sign in (lib/protocol/login_policy.ts). Setting one writes its
 * `tenant.login_policy_changed` audit entry in the same commit, checked
 * against the tenant record, so a policy never outlives its tenant and no
 * change goes unrecorded, and bumps the credential epoch in that commit (the
 * policy's admin groups make people tenant admins).
 *
 * @module
 */
import type { LoginPolicyRecord } from "../protocol/login_policy.ts";
import { NotFoundError } from "../errors.ts";
import { addAudit, type AuditEntry } from "./audit.ts";
import { bumpCredentialEpoch } from "./credential_epoch.ts";
import { loginPolicyKey, tenantKey } from "./keys.ts";

export type { LoginPolicyRecord };

/**
 * Reads a tenant's login policy, or null when it has none.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns the record, or null
 *
 * @example
 * ```ts
 * import { findLoginPolicy } from "./login_policies.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findLoginPolicy(kv, "acme") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findLoginPolicy(
  kv: Deno.Kv,
  tenant: string,
): Promise<LoginPolicyRecord | null> {
  return (await kv.get<LoginPolicyRecord>(loginPolicyKey(tenant))).value;
}

/**
 * Stores a tenant's login policy (replacing any) with its audit entry, in
 * one commit checked against the tenant record. 404 `tenant_not_found`
 * when the tenant does not exist (or is deleted meanwhile).
 *
 * @param kv the store
 * @param record the policy record
 * @param audit the `tenant.login_policy_changed` entry
 * @returns nothing
 *
 * @example
 * ```ts
 * import { findLoginPolicy, putLoginPolicy } from "./login_policies.ts";
 * import { createTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const record = {
 *   tenant_slug: "acme", policy: { method: "email" as const, domains: ["acme.com"] },
 *   updated_at: "2030-01-01T00:00:00.000Z", updated_by: "tok_1",
 * };
 * const audit = {
 *   id: "01", type: "tenant.login_policy_changed", timestamp: record.updated_at,
 *   request_id: null, result: "success" as const, principal_type: "service" as const,
 *   actor_id: "tok_1", token_id: null, token_prefix: null, token_type: null,
 *   tenant_slug: "acme", namespace_slug: null, environment_slug: null, details: {},
 * };
 * await putLoginPolicy(kv, record, audit);
 * if ((await findLoginPolicy(kv, "acme"))?.policy.method !== "email") throw new Error();
 * kv.close();
 * ```
 */
export async function putLoginPolicy(
  kv: Deno.Kv,
  record: LoginPolicyRecord,
  audit: AuditEntry,
): Promise<void> {
  while (true) {
    const tenant = await kv.get(tenantKey(record.tenant_slug));
    if (tenant.value === null) {
      throw new NotFoundError("tenant_not_found", `No tenant ${record.tenant_slug}`);
    }
    // The policy's admin groups decide who is a tenant admin: credential
    // caches (and open streams' verdicts) are dropped, as for an admin list.
    const op = bumpCredentialEpoch(
      kv.atomic().check(tenant).set(loginPolicyKey(record.tenant_slug), record),
    );
    if ((await addAudit(op, audit).commit()).ok) return;
  }
}

/**
 * Removes a tenant's login policy (when the tenant is deleted).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns nothing
 *
 * @example
 * ```ts
 * import { deleteLoginPolicy, findLoginPolicy } from "./login_policies.ts";
 * const kv = await Deno.openKv(":memory:");
 * await deleteLoginPolicy(kv, "acme");
 * if (await findLoginPolicy(kv, "acme") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteLoginPolicy(kv: Deno.Kv, tenant: string): Promise<void> {
  // who is admitted, and as what, may change: cached rights start over
  await bumpCredentialEpoch(kv.atomic().delete(loginPolicyKey(tenant))).commit();
}
