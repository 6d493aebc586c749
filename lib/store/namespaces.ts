/**
 * Namespaces of a tenant: `["ns", t, ns]` records, their admin lists, and
 * their lifecycle. Creating a namespace writes version 0 (the empty
 * manifest) in the same commit and issues no tokens; deleting one revokes
 * every token bound to it. Each change commits with its audit entry
 * (`namespace.created`, `namespace.deleted`, `admin.added`,
 * `admin.removed`); outside a request the actor is the creator's id
 * (lib/store/audit.ts, `actorFromId`).
 *
 * @module
 */
import { ConflictError, NotFoundError } from "../errors.ts";
import { actorFromId, addAudit, type AuditActor, eventAuditEntry } from "./audit.ts";
import { bumpCredentialEpoch, credentialsChanged } from "./credential_epoch.ts";
import {
  changeRequestPrefix,
  headKey,
  namespaceAdminByUserKey,
  namespaceAdminByUserPrefix,
  namespaceAdminKey,
  namespaceAdminPrefix,
  namespaceKey,
  namespacePrefix,
  protectionKey,
  tenantKey,
  versionPrefix,
} from "./keys.ts";
import { deleteInBatches } from "./kv_batch.ts";
import { checkLength, MAX_DESCRIPTION_LENGTH } from "../protocol/limits.ts";
import {
  addMember,
  listMembers,
  type Membership,
  type RemovalAudit,
  removeMember,
} from "./membership.ts";
import { assertSlug } from "../protocol/slug.ts";
import { revokeBoundTokens } from "./tokens.ts";
import { type Head, initialVersionOps } from "./versions.ts";

/** A namespace record. */
export interface NamespaceRecord {
  tenant_slug: string;
  slug: string;
  description: string | null;
  created_at: string;
  /** User id or token id of the creator. */
  created_by: string;
}

const notFound = (t: string, ns: string) =>
  new NotFoundError("namespace_not_found", `No namespace ${ns} in tenant ${t}`);

/**
 * Creates a namespace with version 0 (empty manifest) and its
 * `namespace.created` audit entry in one commit. 404 `tenant_not_found`
 * when the tenant does not exist, 409 `conflict` when the slug is taken
 * (nothing written), 400 for a bad slug.
 *
 * @param kv the store
 * @param input tenant, slug, description, creator, the acting principal
 *   (default: the creator, outside a request), clock
 * @returns the new record
 *
 * @example
 * ```ts
 * import { createNamespace } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ns = await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * if (ns.slug !== "web") throw new Error();
 * kv.close();
 * ```
 */
export async function createNamespace(
  kv: Deno.Kv,
  input: {
    tenant: string;
    slug: string;
    description?: string | null;
    created_by: string;
    actor?: AuditActor;
    now?: () => Date;
  },
): Promise<NamespaceRecord> {
  assertSlug("namespace", input.slug);
  checkLength("description", input.description, MAX_DESCRIPTION_LENGTH);
  const now = input.now?.() ?? new Date();
  const record: NamespaceRecord = {
    tenant_slug: input.tenant,
    slug: input.slug,
    description: input.description ?? null,
    created_at: now.toISOString(),
    created_by: input.created_by,
  };
  const addVersion0 = await initialVersionOps(
    kv,
    input.tenant,
    input.slug,
    input.created_by,
    now,
  );
  while (true) {
    const tenant = await kv.get(tenantKey(input.tenant));
    if (tenant.value === null) {
      throw new NotFoundError("tenant_not_found", `No tenant ${input.tenant}`);
    }
    const key = namespaceKey(input.tenant, input.slug);
    const op = kv.atomic()
      .check(tenant)
      .check({ key, versionstamp: null })
      .set(key, record);
    const entry = eventAuditEntry(
      "namespace.created",
      input.actor ?? actorFromId(input.created_by),
      now,
      {
        tenant_slug: input.tenant,
        namespace_slug: input.slug,
        details: { description: record.description },
      },
    );
    if ((await addAudit(addVersion0(op), entry).commit()).ok) return record;
    if ((await kv.get(key)).value !== null) {
      throw new ConflictError(
        `Namespace ${input.slug} exists in tenant ${input.tenant}`,
      );
    }
  }
}

/**
 * Reads a namespace, or null.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param slug namespace slug
 * @returns the record or null
 *
 * @example
 * ```ts
 * import { findNamespace } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findNamespace(kv, "acme", "web") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findNamespace(
  kv: Deno.Kv,
  tenant: string,
  slug: string,
): Promise<NamespaceRecord | null> {
  return (await kv.get<NamespaceRecord>(namespaceKey(tenant, slug))).value;
}

/**
 * Reads a namespace's entry, with the versionstamp a commit can check so
 * that it fails if the namespace is deleted (or changed) meanwhile.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param slug namespace slug
 * @returns the entry (value null when there is no such namespace)
 *
 * @example
 * ```ts
 * import { createNamespace, getNamespaceEntry } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await getNamespaceEntry(kv, "acme", "web")).versionstamp !== null) throw new Error();
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * if ((await getNamespaceEntry(kv, "acme", "web")).value?.slug !== "web") throw new Error();
 * kv.close();
 * ```
 */
export function getNamespaceEntry(
  kv: Deno.Kv,
  tenant: string,
  slug: string,
): Promise<Deno.KvEntryMaybe<NamespaceRecord>> {
  return kv.get<NamespaceRecord>(namespaceKey(tenant, slug));
}

/**
 * Reads a namespace, or throws 404 `namespace_not_found`.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param slug namespace slug
 * @returns the record
 *
 * @example
 * ```ts
 * import { getNamespace } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getNamespace(kv, "acme", "web"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "namespace_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getNamespace(
  kv: Deno.Kv,
  tenant: string,
  slug: string,
): Promise<NamespaceRecord> {
  const ns = await findNamespace(kv, tenant, slug);
  if (ns === null) throw notFound(tenant, slug);
  return ns;
}

/**
 * Lists the namespaces of a tenant in slug order.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @returns the records
 *
 * @example
 * ```ts
 * import { listNamespaces } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listNamespaces(kv, "acme")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listNamespaces(
  kv: Deno.Kv,
  tenant: string,
): Promise<NamespaceRecord[]> {
  const out: NamespaceRecord[] = [];
  for await (
    const e of kv.list<NamespaceRecord>({ prefix: namespacePrefix(tenant) })
  ) {
    out.push(e.value);
  }
  return out;
}

/**
 * Deletes a namespace: revokes every token bound to it (audit
 * `token.revoked` each), removes the record and its head with the
 * `namespace.deleted` audit entry and a bump of the credential epoch in
 * one commit (details: the last
 * version and its closure hash; a concurrent deletion gets 404), then
 * revokes again to catch a token issued concurrently, and removes the
 * version metadata and the admin list (each `admin.removed`, with
 * `reason: "namespace deleted"`). Blobs are kept (content-addressed,
 * possibly shared). 404 when absent.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param slug namespace slug
 * @param actor who deletes, in which request
 * @param now clock
 * @param cascade `{reason}` when the deletion is part of deleting the tenant
 * @returns the ids of the revoked tokens
 *
 * @example
 * ```ts
 * import { createNamespace, deleteNamespace, findNamespace } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * import { getHead } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const system = { id: "system", principal_type: "system" as const, request_id: null };
 * const { revoked } = await deleteNamespace(kv, "acme", "web", system);
 * if (revoked.length !== 0) throw new Error("no token was bound to acme/web");
 * if (await findNamespace(kv, "acme", "web") !== null || await getHead(kv, "acme", "web") !== null) {
 *   throw new Error("the record and its head are gone");
 * }
 * kv.close();
 * ```
 */
export async function deleteNamespace(
  kv: Deno.Kv,
  tenant: string,
  slug: string,
  actor: AuditActor,
  now: Date = new Date(),
  cascade: { reason?: string } = {},
): Promise<{ revoked: string[] }> {
  await getNamespace(kv, tenant, slug);
  const scope = { tenant, namespace: slug };
  const revoked = await revokeBoundTokens(kv, scope, actor, now);
  while (true) {
    const [record, head] = await kv.getMany<[NamespaceRecord, Head]>([
      namespaceKey(tenant, slug),
      headKey(tenant, slug),
    ]);
    if (record.value === null) throw notFound(tenant, slug);
    const entry = eventAuditEntry("namespace.deleted", actor, now, {
      tenant_slug: tenant,
      namespace_slug: slug,
      details: {
        version: head.value?.version ?? null,
        closure_hash: head.value?.closure_hash ?? null,
        created_at: record.value.created_at,
        created_by: record.value.created_by,
        ...(cascade.reason === undefined ? {} : { reason: cascade.reason }),
      },
    });
    const op = bumpCredentialEpoch(
      kv.atomic()
        .check(record)
        .check(head)
        .delete(namespaceKey(tenant, slug))
        .delete(headKey(tenant, slug)),
    );
    if ((await addAudit(op, entry).commit()).ok) break;
  }
  credentialsChanged(kv);
  revoked.push(...await revokeBoundTokens(kv, scope, actor, now));
  await deleteInBatches(kv, kv.list({ prefix: versionPrefix(tenant, slug) }));
  // what belonged to the namespace goes with it: protection, change requests, their comments
  await deleteInBatches(kv, [protectionKey(tenant, slug)]);
  await deleteInBatches(kv, kv.list({ prefix: changeRequestPrefix(tenant, slug) }));
  await deleteInBatches(kv, kv.list({ prefix: ["change_comment", tenant, slug] }));
  const reason = cascade.reason ?? "namespace deleted";
  for (const m of await listNamespaceAdmins(kv, tenant, slug)) {
    await removeNamespaceAdmin(kv, tenant, slug, m.user_id, { actor, now, reason });
  }
  return { revoked };
}

/**
 * Adds a user to a namespace's admin list (idempotent), with its
 * `admin.added` audit entry in the same commit (none when the user
 * already was an admin). 404 for an unknown namespace or user.
 *
 * @param kv the store
 * @param input tenant, namespace, user id, who adds, the acting principal
 *   (default: `added_by`, outside a request), clock
 * @returns the membership
 *
 * @example
 * ```ts
 * import { addNamespaceAdmin, createNamespace, isNamespaceAdmin } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * const input = { tenant: "acme", namespace: "web", user_id: user.id, added_by: "tok_1" };
 * const m = await addNamespaceAdmin(kv, input);
 * if (m.user_id !== user.id || !(await isNamespaceAdmin(kv, "acme", "web", user.id))) {
 *   throw new Error();
 * }
 * let code = "";
 * try { await addNamespaceAdmin(kv, { ...input, namespace: "api" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "namespace_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function addNamespaceAdmin(
  kv: Deno.Kv,
  input: {
    tenant: string;
    namespace: string;
    user_id: string;
    added_by: string;
    actor?: AuditActor;
    now?: () => Date;
  },
): Promise<Membership> {
  const { tenant, namespace, user_id } = input;
  return addMember(
    kv,
    {
      owner: namespaceKey(tenant, namespace),
      member: namespaceAdminKey(tenant, namespace, user_id),
      byUser: namespaceAdminByUserKey(user_id, tenant, namespace),
    },
    {
      user_id,
      added_at: (input.now?.() ?? new Date()).toISOString(),
      added_by: input.added_by,
    },
    () => notFound(tenant, namespace),
    { scope: { tenant, namespace }, actor: input.actor ?? actorFromId(input.added_by) },
  );
}

/**
 * Removes a user from a namespace's admin list, with its `admin.removed`
 * audit entry in the same commit; takes effect on the next request. 404
 * `admin_not_found` when not a member.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param userId the user
 * @param audit who removes, in which request (default: the system), when,
 *   and why when it is part of a deletion
 * @returns nothing
 *
 * @example
 * ```ts
 * import {
 *   addNamespaceAdmin,
 *   createNamespace,
 *   isNamespaceAdmin,
 *   removeNamespaceAdmin,
 * } from "./namespaces.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * await addNamespaceAdmin(kv, { tenant: "acme", namespace: "web", user_id: user.id, added_by: "tok_1" });
 * await removeNamespaceAdmin(kv, "acme", "web", user.id);
 * if (await isNamespaceAdmin(kv, "acme", "web", user.id)) throw new Error();
 * let code = "";
 * try { await removeNamespaceAdmin(kv, "acme", "web", user.id); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "admin_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function removeNamespaceAdmin(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  userId: string,
  audit: RemovalAudit = {},
): Promise<void> {
  return removeMember(
    kv,
    {
      member: namespaceAdminKey(tenant, namespace, userId),
      byUser: namespaceAdminByUserKey(userId, tenant, namespace),
    },
    { ...audit, scope: { tenant, namespace } },
  );
}

/**
 * Lists a namespace's admins.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the memberships
 *
 * @example
 * ```ts
 * import { listNamespaceAdmins } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listNamespaceAdmins(kv, "acme", "web")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function listNamespaceAdmins(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
): Promise<Membership[]> {
  return listMembers(kv, namespaceAdminPrefix(tenant, namespace));
}

/**
 * Whether a user is currently an admin of a namespace.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param userId the user
 * @returns true for a member
 *
 * @example
 * ```ts
 * import { isNamespaceAdmin } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await isNamespaceAdmin(kv, "acme", "web", "usr_1")) throw new Error();
 * kv.close();
 * ```
 */
export async function isNamespaceAdmin(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  userId: string,
): Promise<boolean> {
  const e = await kv.get(namespaceAdminKey(tenant, namespace, userId));
  return e.value !== null;
}

/**
 * The namespaces of a tenant a user administers.
 *
 * @param kv the store
 * @param userId the user
 * @param tenant tenant slug
 * @returns namespace slugs
 *
 * @example
 * ```ts
 * import { namespacesAdministeredBy } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await namespacesAdministeredBy(kv, "usr_1", "acme")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function namespacesAdministeredBy(
  kv: Deno.Kv,
  userId: string,
  tenant: string,
): Promise<string[]> {
  const out: string[] = [];
  for await (
    const e of kv.list({ prefix: namespaceAdminByUserPrefix(userId, tenant) })
  ) {
    out.push(e.key[e.key.length - 1] as string);
  }
  return out;
}
