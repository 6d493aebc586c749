/**
 * The namespace operations: create and delete a namespace, add and remove
 * its admins; and the reads: the namespaces of a tenant a principal may
 * read (with their heads for the API, with their last change for the
 * console's tenant page), one namespace, its admins, and the admin lists
 * of the console's people page. Each authorises the caller
 * (lib/auth/permissions.ts), reads and writes through
 * lib/store/namespaces.ts, each write together with its audit entry (the
 * caller as actor, the request's id), and tells the runtime what changed
 * (a deleted namespace's streams are re-checked at once). Each runs in a
 * trace span `cfgtool.service.<operation>`. The HTTP layer and the console
 * only read requests and shape responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize, can, type MemoOptions } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import type { Membership } from "../store/membership.ts";
import {
  addNamespaceAdmin as storeAddAdmin,
  createNamespace as storeCreate,
  deleteNamespace as storeDelete,
  getNamespace as storeGetNamespace,
  listNamespaceAdmins as storeListAdmins,
  listNamespaces as storeListNamespaces,
  type NamespaceRecord,
  removeNamespaceAdmin as storeRemoveAdmin,
} from "../store/namespaces.ts";
import { getTenant } from "../store/tenants.ts";
import { getHead, getVersion, type Head } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import { personOfTenant } from "./tenants.ts";

/** A namespace's record, its head and an admin membership, as the namespace reads return them. */
export type { Head, Membership, NamespaceRecord };

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
    await authorize(deps.kv, principal, "namespace.create", { tenant }, { memo: memoOf(deps) });
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
    await authorize(deps.kv, principal, "namespace.delete", { tenant, namespace }, {
      memo: memoOf(deps),
    });
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
    await authorize(deps.kv, principal, "namespace.admins", { tenant, namespace }, {
      memo: memoOf(deps),
    });
    await storeGetNamespace(deps.kv, tenant, namespace);
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
    await authorize(deps.kv, principal, "namespace.admins", { tenant, namespace }, {
      memo: memoOf(deps),
    });
    await storeRemoveAdmin(deps.kv, tenant, namespace, userId, {
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps)(),
    });
  });
}

/** A namespace with its current version (null if it has none), as the API shows it. */
export type NamespaceWithHead = NamespaceRecord & { head: Head | null };

/**
 * The namespaces of a tenant the caller may read, with their heads, in slug
 * order (`GET /api/v1/tenants/{t}/namespaces`): needs `namespace.list`
 * (403), then the tenant (404 `tenant_not_found`), then keeps the
 * namespaces the caller may read (`namespace.read`).
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns the namespaces with their heads
 *
 * @example
 * ```ts
 * import { listNamespaces } from "./namespaces.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const root = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * const [web] = await listNamespaces({ kv }, root, "acme");
 * if (web?.slug !== "web" || web.head?.version !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function listNamespaces(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<NamespaceWithHead[]> {
  return withSpan("cfgtool.service.list_namespaces", { "cfgtool.tenant": tenant }, async () => {
    const out: NamespaceWithHead[] = [];
    for (const ns of await readableNamespaces(deps.kv, principal, tenant, { memo: memoOf(deps) })) {
      out.push({ ...ns, head: await getHead(deps.kv, tenant, ns.slug) });
    }
    return out;
  });
}

/**
 * The namespaces of a tenant `p` may read: needs `namespace.list` (403),
 * then the tenant (404), then keeps those with `namespace.read`.
 */
async function readableNamespaces(
  kv: Deno.Kv,
  p: Principal,
  tenant: string,
  options: MemoOptions = {},
): Promise<NamespaceRecord[]> {
  await authorize(kv, p, "namespace.list", { tenant }, options);
  await getTenant(kv, tenant);
  const out: NamespaceRecord[] = [];
  for (const ns of await storeListNamespaces(kv, tenant)) {
    if (await can(kv, p, "namespace.read", { tenant, namespace: ns.slug }, options)) out.push(ns);
  }
  return out;
}

/** A namespace as the console's tenant page lists it: its head, and when that version was made. */
export interface NamespaceSummary {
  namespace: NamespaceRecord;
  head: Head;
  /** When the head version was made (RFC 3339). */
  lastChange: string;
}

/**
 * The namespaces of a tenant the caller may read (as
 * {@linkcode listNamespaces}: 403, 404 `tenant_not_found`), each with its
 * head and the time of its last change; a namespace without a head is
 * left out. What the console's tenant page lists.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns the summaries, in slug order
 *
 * @example
 * ```ts
 * import { namespaceSummaries } from "./namespaces.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const web = await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const root = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * const [row] = await namespaceSummaries({ kv }, root, "acme");
 * if (row?.namespace.slug !== "web" || row.head.version !== 0 || row.lastChange !== web.created_at) {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export function namespaceSummaries(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<NamespaceSummary[]> {
  const attributes = { "cfgtool.tenant": tenant };
  return withSpan("cfgtool.service.namespace_summaries", attributes, async () => {
    const out: NamespaceSummary[] = [];
    for (
      const namespace of await readableNamespaces(deps.kv, principal, tenant, {
        memo: memoOf(deps),
      })
    ) {
      const head = await getHead(deps.kv, tenant, namespace.slug);
      if (head === null) continue;
      const meta = await getVersion(deps.kv, tenant, namespace.slug, head.version);
      out.push({ namespace, head, lastChange: meta.created_at });
    }
    return out;
  });
}

/**
 * Whether `principal` may create and delete the namespaces of `tenant`
 * (`namespace.create`: tenant admins, people or tokens, and superadmins),
 * so a page offers the buttons only to those who may press them.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns true when they may
 *
 * @example
 * ```ts
 * import { mayManageNamespaces } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const root = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * if (!await mayManageNamespaces({ kv }, root, "acme")) throw new Error();
 * kv.close();
 * ```
 */
export function mayManageNamespaces(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<boolean> {
  return can(deps.kv, principal, "namespace.create", { tenant }, { memo: memoOf(deps) });
}

/**
 * One namespace with its head (`GET /api/v1/tenants/{t}/namespaces/{ns}`):
 * needs `namespace.read` (403), then the namespace (404
 * `namespace_not_found`).
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the record with its head
 *
 * @example
 * ```ts
 * import { getNamespace } from "./namespaces.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const root = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * if ((await getNamespace({ kv }, root, "acme", "web")).head?.version !== 0) throw new Error();
 * let code = "";
 * try { await getNamespace({ kv }, root, "acme", "api"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "namespace_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function getNamespace(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
  namespace: string,
): Promise<NamespaceWithHead> {
  const attributes = { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.get_namespace", attributes, async () => {
    await authorize(deps.kv, principal, "namespace.read", { tenant, namespace }, {
      memo: memoOf(deps),
    });
    const record = await storeGetNamespace(deps.kv, tenant, namespace);
    const head = await getHead(deps.kv, tenant, namespace);
    return { ...record, head };
  });
}

/**
 * A namespace's admins (`GET /api/v1/tenants/{t}/namespaces/{ns}/admins`):
 * needs `namespace.read` (403), then the namespace (404
 * `namespace_not_found`).
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the admin memberships
 *
 * @example
 * ```ts
 * import { listNamespaceAdmins } from "./namespaces.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { addNamespaceAdmin, createNamespace } from "../store/namespaces.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addNamespaceAdmin(kv, { tenant: "acme", namespace: "web", user_id: ana.id, added_by: "tok_1" });
 * const root = { kind: "session" as const, user_id: "usr_2", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * if ((await listNamespaceAdmins({ kv }, root, "acme", "web"))[0]?.user_id !== ana.id) throw new Error();
 * kv.close();
 * ```
 */
export function listNamespaceAdmins(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
  namespace: string,
): Promise<Membership[]> {
  const attributes = { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.list_namespace_admins", attributes, async () => {
    await authorize(deps.kv, principal, "namespace.read", { tenant, namespace }, {
      memo: memoOf(deps),
    });
    await storeGetNamespace(deps.kv, tenant, namespace);
    return await storeListAdmins(deps.kv, tenant, namespace);
  });
}

/** One namespace's admin list, as the console's people page shows it. */
export interface NamespaceAdminList {
  /** The namespace's slug. */
  slug: string;
  admins: Membership[];
  /** The caller may add and remove them (`namespace.admins`). */
  mayChange: boolean;
}

/**
 * The admin lists of the namespaces of a tenant the caller may read (as
 * {@linkcode listNamespaces}: 403, 404 `tenant_not_found`), each with
 * whether the caller may change it. What the console's people page shows.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns one list per readable namespace, in slug order
 *
 * @example
 * ```ts
 * import { namespaceAdminLists } from "./namespaces.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { addNamespaceAdmin, createNamespace } from "../store/namespaces.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addNamespaceAdmin(kv, { tenant: "acme", namespace: "web", user_id: ana.id, added_by: "tok_1" });
 * const admin = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * const [web] = await namespaceAdminLists({ kv }, admin, "acme");
 * if (web?.slug !== "web" || web.admins.length !== 1 || web.mayChange) throw new Error();
 * kv.close();
 * ```
 */
export function namespaceAdminLists(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<NamespaceAdminList[]> {
  const attributes = { "cfgtool.tenant": tenant };
  return withSpan("cfgtool.service.namespace_admin_lists", attributes, async () => {
    const out: NamespaceAdminList[] = [];
    for (const ns of await readableNamespaces(deps.kv, principal, tenant, { memo: memoOf(deps) })) {
      const target = { tenant, namespace: ns.slug };
      out.push({
        slug: ns.slug,
        admins: await storeListAdmins(deps.kv, tenant, ns.slug),
        mayChange: await can(deps.kv, principal, "namespace.admins", target, {
          memo: memoOf(deps),
        }),
      });
    }
    return out;
  });
}
