/**
 * The tenant operations: create and delete a tenant, add and remove its
 * admins. Each authorises the caller (lib/auth/permissions.ts), writes
 * through lib/store/tenants.ts together with its audit entry (the caller
 * as actor, the request's id), and tells the runtime what changed (a
 * deleted tenant's streams are re-checked at once). Each runs in a trace
 * span `cfgtool.service.<operation>`. The HTTP layer only reads requests
 * and shapes responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize } from "../auth/permissions.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import type { Membership } from "../store/membership.ts";
import {
  addTenantAdmin as storeAddAdmin,
  createTenant as storeCreate,
  deleteTenant as storeDelete,
  getTenant,
  removeTenantAdmin as storeRemoveAdmin,
  type TenantRecord,
} from "../store/tenants.ts";
import { getUser } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** What {@linkcode createTenant} creates. */
export interface TenantInput {
  slug: string;
  description?: string | null | undefined;
}

/**
 * Creates a tenant: needs `tenant.create` (403), then reads the input (400
 * for a bad slug, 409 when taken), stores the tenant with its
 * `tenant.created` audit entry and tells the runtime.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param input slug and description, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the new record
 *
 * @example
 * ```ts
 * import { createTenant } from "./tenants.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { listAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * const tenant = await createTenant({ kv, runtime }, admin, { slug: "acme" }, { requestId: "r2" });
 * if (tenant.slug !== "acme" || tenant.created_by !== boot.token.id) throw new Error();
 * // audited in the same commit, as the caller, with the request's id
 * const [entry] = (await listAudit(kv, { tenant: "acme", type: "tenant.created" })).items;
 * if (entry?.actor_id !== boot.token.id || entry.request_id !== "r2") throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function createTenant(
  deps: ServiceDeps,
  principal: Principal,
  input: Deferred<TenantInput>,
  ctx: RequestContext,
): Promise<TenantRecord> {
  return withSpan("cfgtool.service.create_tenant", {}, async (span) => {
    await authorize(deps.kv, principal, "tenant.create", {});
    const { slug, description } = await resolveInput(input);
    span.setAttribute("cfgtool.tenant", slug);
    const tenant = await storeCreate(deps.kv, {
      slug,
      description: description ?? null,
      created_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps),
    });
    deps.runtime.tenantChanged(tenant.slug);
    return tenant;
  });
}

/**
 * Deletes a tenant with its namespaces: needs `tenant.delete` (403; 404
 * `tenant_not_found`), revokes every token bound to it, deletes it (each
 * change audited as the caller: `token.revoked`, `tenant.deleted`,
 * `namespace.deleted`, `admin.removed`), tells the runtime, and re-checks
 * the open streams at once so none outlives its credential.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param ctx the request (its id goes into the audit entries)
 * @returns the ids of the tokens revoked
 *
 * @example
 * ```ts
 * import { createTenant, deleteTenant } from "./tenants.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { findTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant({ kv, runtime }, admin, { slug: "acme" }, { requestId: "r1" });
 * const { revoked } = await deleteTenant({ kv, runtime }, admin, "acme", { requestId: "r2" });
 * if (revoked.length !== 0 || await findTenant(kv, "acme") !== null) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function deleteTenant(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  ctx: RequestContext,
): Promise<{ revoked: string[] }> {
  return withSpan("cfgtool.service.delete_tenant", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.delete", { tenant });
    const result = await storeDelete(
      deps.kv,
      tenant,
      actorOf(principal, ctx.requestId),
      clockOf(deps)(),
    );
    deps.runtime.tenantChanged(tenant);
    deps.runtime.credentials.changed(); // tokens bound to it were revoked
    await deps.runtime.guard.recheck();
    return result;
  });
}

/**
 * Makes a user an admin of a tenant: needs `tenant.admins` (403), the
 * tenant (404 `tenant_not_found`) and, once the input is read, the user (a
 * user id or an email; 404 `user_not_found`); audited as `admin.added`.
 * Adding an admin again changes nothing and returns the first membership.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param user the user's id or email, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the membership
 *
 * @example
 * ```ts
 * import { addTenantAdmin, createTenant } from "./tenants.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * const ctx = { requestId: "r2" };
 * await createTenant({ kv, runtime }, admin, { slug: "acme" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * const member = await addTenantAdmin({ kv, runtime }, admin, "acme", "ana@example.com", ctx);
 * if (member.user_id !== ana.id || member.added_by !== boot.token.id) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function addTenantAdmin(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  user: Deferred<string>,
  ctx: RequestContext,
): Promise<Membership> {
  return withSpan("cfgtool.service.add_tenant_admin", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.admins", { tenant });
    await getTenant(deps.kv, tenant);
    const record = await getUser(deps.kv, await resolveInput(user));
    return await storeAddAdmin(deps.kv, {
      tenant,
      user_id: record.id,
      added_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps),
    });
  });
}

/**
 * Removes a tenant admin: needs `tenant.admins` (403); 404
 * `admin_not_found` when the user is not one; audited as `admin.removed`.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param userId the admin's user id
 * @param ctx the request (its id goes into the audit entry)
 * @returns nothing
 *
 * @example
 * ```ts
 * import { addTenantAdmin, createTenant, removeTenantAdmin } from "./tenants.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { isTenantAdmin } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * const ctx = { requestId: "r2" };
 * await createTenant({ kv, runtime }, admin, { slug: "acme" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * await addTenantAdmin({ kv, runtime }, admin, "acme", ana.id, ctx);
 * await removeTenantAdmin({ kv, runtime }, admin, "acme", ana.id, ctx);
 * if (await isTenantAdmin(kv, "acme", ana.id)) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function removeTenantAdmin(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  userId: string,
  ctx: RequestContext,
): Promise<void> {
  return withSpan("cfgtool.service.remove_tenant_admin", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.admins", { tenant });
    await storeRemoveAdmin(deps.kv, tenant, userId, {
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps)(),
    });
  });
}
