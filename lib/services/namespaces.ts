/**
 * The namespace operations: create and delete a namespace, add and remove
 * its admins. Each authorises the caller (lib/auth/permissions.ts), writes
 * through lib/store/namespaces.ts together with its audit entry (the
 * caller as actor, the request's id), and tells the runtime what changed
 * (a deleted namespace's streams are re-checked at once). Each runs in a
 * trace span `cfgtool.service.<operation>`. The HTTP layer only reads
 * requests and shapes responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize } from "../auth/permissions.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import type { Membership } from "../store/membership.ts";
import {
  addNamespaceAdmin as storeAddAdmin,
  createNamespace as storeCreate,
  deleteNamespace as storeDelete,
  getNamespace,
  type NamespaceRecord,
  removeNamespaceAdmin as storeRemoveAdmin,
} from "../store/namespaces.ts";
import { getTenant } from "../store/tenants.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import { personOfTenant } from "./tenants.ts";

/** What {@linkcode createNamespace} creates. */
export interface NamespaceInput {
  slug: string;
  description?: string | null | undefined;
}

/**
 * Creates a namespace at version 0 (the empty manifest): needs
 * `namespace.create` on the tenant (403) and the tenant (404
 * `tenant_not_found`), then reads the input (400 for a bad slug, 409 when
 * taken), stores the namespace with its `namespace.created` audit entry
 * and tells the runtime.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param input slug and description, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the new record
 *
 * @example
 * ```ts
 * import { createNamespace } from "./namespaces.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { getHead } from "../store/versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const ns = await createNamespace({ kv, key, runtime }, admin, "acme", { slug: "web" }, { requestId: "r2" });
 * if (ns.slug !== "web" || (await getHead(kv, "acme", "web"))?.version !== 0) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function createNamespace(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  input: Deferred<NamespaceInput>,
  ctx: RequestContext,
): Promise<NamespaceRecord> {
  const attributes = { "cfgtool.tenant": tenant };
  return withSpan("cfgtool.service.create_namespace", attributes, async (span) => {
    await authorize(deps.kv, principal, "namespace.create", { tenant });
    await getTenant(deps.kv, tenant);
    const { slug, description } = await resolveInput(input);
    span.setAttribute("cfgtool.namespace", slug);
    const namespace = await storeCreate(deps.kv, {
      tenant,
      slug,
      description: description ?? null,
      created_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps),
    });
    deps.runtime.namespaceChanged(tenant, namespace.slug);
    return namespace;
  });
}

/**
 * Deletes a namespace with its versions: needs `namespace.delete` (403;
 * 404 `namespace_not_found`), revokes every token bound to it, deletes it
 * (each change audited as the caller: `token.revoked`,
 * `namespace.deleted`, `admin.removed`), tells the runtime, and re-checks
 * the open streams at once so none outlives its credential.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param ctx the request (its id goes into the audit entries)
 * @returns the ids of the tokens revoked
 *
 * @example
 * ```ts
 * import { createNamespace, deleteNamespace } from "./namespaces.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { findNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace({ kv, key, runtime }, admin, "acme", { slug: "web" }, { requestId: "r1" });
 * const { revoked } = await deleteNamespace({ kv, key, runtime }, admin, "acme", "web", { requestId: "r2" });
 * if (revoked.length !== 0 || await findNamespace(kv, "acme", "web") !== null) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function deleteNamespace(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  namespace: string,
  ctx: RequestContext,
): Promise<{ revoked: string[] }> {
  const attributes = { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.delete_namespace", attributes, async () => {
    await authorize(deps.kv, principal, "namespace.delete", { tenant, namespace });
    const result = await storeDelete(
      deps.kv,
      tenant,
      namespace,
      actorOf(principal, ctx.requestId),
      clockOf(deps)(),
    );
    deps.runtime.namespaceChanged(tenant, namespace);
    deps.runtime.credentials.changed(); // tokens bound to it were revoked
    await deps.runtime.guard.recheck();
    return result;
  });
}

/**
 * Makes a user an admin of a namespace: needs `namespace.admins` (403),
 * the namespace (404 `namespace_not_found`) and, once the input is read,
 * the user (a user id or an email) as `personOfTenant`
 * (lib/services/tenants.ts) finds them among the tenant's people (404
 * `user_not_found`, the same for an address with no account and for one
 * whose account is another tenant's); audited as `admin.added`. Adding an
 * admin again changes nothing and returns the first membership.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param user the user's id or email, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the membership
 *
 * @example
 * ```ts
 * import { addNamespaceAdmin, createNamespace } from "./namespaces.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const ctx = { requestId: "r2" };
 * await createNamespace({ kv, key, runtime }, admin, "acme", { slug: "web" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * const member = await addNamespaceAdmin({ kv, key, runtime }, admin, "acme", "web", "ana@example.com", ctx);
 * if (member.user_id !== ana.id || member.added_by !== boot.token.id) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function addNamespaceAdmin(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  namespace: string,
  user: Deferred<string>,
  ctx: RequestContext,
): Promise<Membership> {
  const attributes = { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.add_namespace_admin", attributes, async () => {
    await authorize(deps.kv, principal, "namespace.admins", { tenant, namespace });
    await getNamespace(deps.kv, tenant, namespace);
    const owner = await getTenant(deps.kv, tenant);
    const record = await personOfTenant(deps, principal, owner, await resolveInput(user));
    return await storeAddAdmin(deps.kv, {
      tenant,
      namespace,
      user_id: record.id,
      added_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps),
    });
  });
}

/**
 * Removes a namespace admin: needs `namespace.admins` (403); 404
 * `admin_not_found` when the user is not one; audited as `admin.removed`.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param userId the admin's user id
 * @param ctx the request (its id goes into the audit entry)
 * @returns nothing
 *
 * @example
 * ```ts
 * import { addNamespaceAdmin, createNamespace, removeNamespaceAdmin } from "./namespaces.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { isNamespaceAdmin } from "../store/namespaces.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const ctx = { requestId: "r2" };
 * await createNamespace({ kv, key, runtime }, admin, "acme", { slug: "web" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * await addNamespaceAdmin({ kv, key, runtime }, admin, "acme", "web", ana.id, ctx);
 * await removeNamespaceAdmin({ kv, key, runtime }, admin, "acme", "web", ana.id, ctx);
 * if (await isNamespaceAdmin(kv, "acme", "web", ana.id)) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function removeNamespaceAdmin(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  namespace: string,
  userId: string,
  ctx: RequestContext,
): Promise<void> {
  const attributes = { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.remove_namespace_admin", attributes, async () => {
    await authorize(deps.kv, principal, "namespace.admins", { tenant, namespace });
    await storeRemoveAdmin(deps.kv, tenant, namespace, userId, {
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps)(),
    });
  });
}
