/**
 * Tenants: `["tenant", t]` records, their admin lists, who their people
 * are ({@linkcode isPersonOfTenant}), and their lifecycle. Deleting a
 * tenant deletes its namespaces, revokes every token bound to it and
 * deletes its people index (lib/store/people.ts). Each change commits with
 * its audit entry (`tenant.created`, `tenant.deleted`, `admin.added`,
 * `admin.removed`);
 * outside a request the actor is the creator's id (lib/store/audit.ts,
 * `actorFromId`).
 *
 * @module
 */
import { ConflictError, NotFoundError } from "../errors.ts";
import { actorFromId, addAudit, type AuditActor, eventAuditEntry } from "./audit.ts";
import { bumpCredentialEpoch, credentialsChanged } from "./credential_epoch.ts";
import {
  tenantAdminByUserKey,
  tenantAdminByUserPrefix,
  tenantAdminKey,
  tenantAdminPrefix,
  tenantKey,
  tenantPrefix,
} from "./keys.ts";
import { deleteLoginPolicy } from "./login_policies.ts";
import { checkLength, MAX_DESCRIPTION_LENGTH } from "../protocol/limits.ts";
import {
  addMember,
  listMembers,
  type Membership,
  membershipsOfUser,
  type RemovalAudit,
  removeMember,
} from "./membership.ts";
import { deleteNamespace, listNamespaces } from "./namespaces.ts";
import { deleteTenantPeople, hasSignedIn } from "./people.ts";
import { type SessionRecord, sessionsOfUser } from "./sessions.ts";
import { assertSlug } from "../protocol/slug.ts";
import { revokeBoundTokens } from "./tokens.ts";

/** A tenant record. */
export interface TenantRecord {
  slug: string;
  description: string | null;
  created_at: string;
  /** User id or token id of the creator. */
  created_by: string;
}

const notFound = (t: string) => new NotFoundError("tenant_not_found", `No tenant ${t}`);

/**
 * Creates a tenant with its `tenant.created` audit entry and a bump of the
 * credential epoch in the same commit; 409 `conflict` when the slug is
 * taken (nothing written), 400 for a bad slug.
 *
 * @param kv the store
 * @param input slug, description, creator, the acting principal (default:
 *   the creator, outside a request), clock
 * @returns the new record
 *
 * @example
 * ```ts
 * import { createTenant } from "./tenants.ts";
 * import { listAudit } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * if (t.description !== null) throw new Error();
 * const [entry] = (await listAudit(kv, { tenant: "acme" })).items;
 * if (entry?.type !== "tenant.created" || entry.actor_id !== "tok_1") throw new Error();
 * kv.close();
 * ```
 */
export async function createTenant(
  kv: Deno.Kv,
  input: {
    slug: string;
    description?: string | null;
    created_by: string;
    actor?: AuditActor;
    now?: () => Date;
  },
): Promise<TenantRecord> {
  assertSlug("tenant", input.slug);
  checkLength("description", input.description, MAX_DESCRIPTION_LENGTH);
  const now = input.now?.() ?? new Date();
  const record: TenantRecord = {
    slug: input.slug,
    description: input.description ?? null,
    created_at: now.toISOString(),
    created_by: input.created_by,
  };
  const entry = eventAuditEntry(
    "tenant.created",
    input.actor ?? actorFromId(input.created_by),
    now,
    { tenant_slug: input.slug, details: { description: record.description } },
  );
  // A tenant's record (its created_at) decides whom its sign-ins admit
  // (lib/auth/admission.ts): what server processes remember is dropped.
  const res = await addAudit(
    bumpCredentialEpoch(
      kv.atomic()
        .check({ key: tenantKey(input.slug), versionstamp: null })
        .set(tenantKey(input.slug), record),
    ),
    entry,
  ).commit();
  if (!res.ok) throw new ConflictError(`Tenant ${input.slug} exists`);
  credentialsChanged(kv);
  return record;
}

/**
 * Reads a tenant, or null.
 *
 * @param kv the store
 * @param slug tenant slug
 * @returns the record or null
 *
 * @example
 * ```ts
 * import { findTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findTenant(kv, "acme") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findTenant(
  kv: Deno.Kv,
  slug: string,
): Promise<TenantRecord | null> {
  return (await kv.get<TenantRecord>(tenantKey(slug))).value;
}

/**
 * Reads a tenant's entry, with the versionstamp a commit can check so that
 * it fails if the tenant is deleted (or changed) meanwhile.
 *
 * @param kv the store
 * @param slug tenant slug
 * @returns the entry (value null when there is no such tenant)
 *
 * @example
 * ```ts
 * import { createTenant, getTenantEntry } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await getTenantEntry(kv, "acme")).versionstamp !== null) throw new Error();
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * if ((await getTenantEntry(kv, "acme")).value?.slug !== "acme") throw new Error();
 * kv.close();
 * ```
 */
export function getTenantEntry(
  kv: Deno.Kv,
  slug: string,
): Promise<Deno.KvEntryMaybe<TenantRecord>> {
  return kv.get<TenantRecord>(tenantKey(slug));
}

/**
 * Reads a tenant, or throws 404 `tenant_not_found`.
 *
 * @param kv the store
 * @param slug tenant slug
 * @returns the record
 *
 * @example
 * ```ts
 * import { getTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getTenant(kv, "acme"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "tenant_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getTenant(
  kv: Deno.Kv,
  slug: string,
): Promise<TenantRecord> {
  const t = await findTenant(kv, slug);
  if (t === null) throw notFound(slug);
  return t;
}

/**
 * Lists every tenant in slug order.
 *
 * @param kv the store
 * @returns the records
 *
 * @example
 * ```ts
 * import { listTenants } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listTenants(kv)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listTenants(kv: Deno.Kv): Promise<TenantRecord[]> {
  const out: TenantRecord[] = [];
  for await (const e of kv.list<TenantRecord>({ prefix: tenantPrefix() })) {
    out.push(e.value);
  }
  return out;
}

/**
 * Deletes a tenant: revokes every token bound to it, removes the tenant
 * record with its `tenant.deleted` audit entry and a bump of the
 * credential epoch in one commit (so no
 * namespace or token can be created in it any more, and a concurrent
 * deletion gets 404), deletes each namespace (revoking again; each
 * `namespace.deleted` with `reason: "tenant deleted"`), removes the admin
 * list (each `admin.removed`, same reason), the login policy and the
 * people index (everyone who signed in), and bumps the epoch once more.
 * 404 when absent.
 *
 * @param kv the store
 * @param slug tenant slug
 * @param actor who deletes, in which request
 * @param now clock
 * @returns the ids of every revoked token
 *
 * @example
 * ```ts
 * import { createTenant, deleteTenant, findTenant } from "./tenants.ts";
 * import { createNamespace, findNamespace } from "./namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
 * const system = { id: "system", principal_type: "system" as const, request_id: null };
 * const { revoked } = await deleteTenant(kv, "acme", system);
 * if (revoked.length !== 0) throw new Error("no token was bound to acme");
 * if (await findTenant(kv, "acme") !== null || await findNamespace(kv, "acme", "web") !== null) {
 *   throw new Error("acme and its namespaces are gone");
 * }
 * kv.close();
 * ```
 */
export async function deleteTenant(
  kv: Deno.Kv,
  slug: string,
  actor: AuditActor,
  now: Date = new Date(),
): Promise<{ revoked: string[] }> {
  await getTenant(kv, slug);
  const revoked = await revokeBoundTokens(kv, { tenant: slug }, actor, now);
  while (true) {
    const entry = await getTenantEntry(kv, slug);
    if (entry.value === null) throw notFound(slug);
    const { description, created_at, created_by } = entry.value;
    const audit = eventAuditEntry("tenant.deleted", actor, now, {
      tenant_slug: slug,
      details: { description, created_at, created_by },
    });
    const op = bumpCredentialEpoch(kv.atomic().check(entry).delete(tenantKey(slug)));
    if ((await addAudit(op, audit).commit()).ok) break;
  }
  credentialsChanged(kv); // no sign-in admits to it from now on
  const cascade = { reason: "tenant deleted" };
  for (const ns of await listNamespaces(kv, slug)) {
    const r = await deleteNamespace(kv, slug, ns.slug, actor, now, cascade);
    revoked.push(...r.revoked);
  }
  revoked.push(...await revokeBoundTokens(kv, { tenant: slug }, actor, now));
  for (const m of await listTenantAdmins(kv, slug)) {
    await removeTenantAdmin(kv, slug, m.user_id, { actor, now, ...cascade });
  }
  await deleteLoginPolicy(kv, slug);
  await deleteTenantPeople(kv, slug);
  // The policy's removal decides admin groups too (it does not bump by
  // itself), should the slug have been made again meanwhile.
  await bumpCredentialEpoch(kv.atomic()).commit();
  credentialsChanged(kv);
  return { revoked };
}

/**
 * Adds a user to a tenant's admin list (idempotent), with its
 * `admin.added` audit entry in the same commit (none when the user already
 * was an admin). 404 for an unknown tenant or user.
 *
 * @param kv the store
 * @param input tenant, user id, who adds, the acting principal (default:
 *   `added_by`, outside a request), clock
 * @returns the membership
 *
 * @example
 * ```ts
 * import { addTenantAdmin, createTenant, isTenantAdmin } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * const m = await addTenantAdmin(kv, { tenant: "acme", user_id: user.id, added_by: "tok_1" });
 * if (m.user_id !== user.id || !(await isTenantAdmin(kv, "acme", user.id))) throw new Error();
 * let code = "";
 * try { await addTenantAdmin(kv, { tenant: "acme", user_id: "usr_x", added_by: "tok_1" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "user_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function addTenantAdmin(
  kv: Deno.Kv,
  input: {
    tenant: string;
    user_id: string;
    added_by: string;
    actor?: AuditActor;
    now?: () => Date;
  },
): Promise<Membership> {
  return addMember(
    kv,
    {
      owner: tenantKey(input.tenant),
      member: tenantAdminKey(input.tenant, input.user_id),
      byUser: tenantAdminByUserKey(input.user_id, input.tenant),
    },
    {
      user_id: input.user_id,
      added_at: (input.now?.() ?? new Date()).toISOString(),
      added_by: input.added_by,
    },
    () => notFound(input.tenant),
    {
      scope: { tenant: input.tenant, namespace: null },
      actor: input.actor ?? actorFromId(input.added_by),
    },
  );
}

/**
 * Removes a user from a tenant's admin list, with its `admin.removed`
 * audit entry in the same commit; takes effect on the next request. 404
 * `admin_not_found` when not a member.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param userId the user
 * @param audit who removes, in which request (default: the system), when,
 *   and why when it is part of a deletion
 * @returns nothing
 *
 * @example
 * ```ts
 * import { addTenantAdmin, createTenant, isTenantAdmin, removeTenantAdmin } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: user.id, added_by: "tok_1" });
 * await removeTenantAdmin(kv, "acme", user.id);
 * if (await isTenantAdmin(kv, "acme", user.id)) throw new Error();
 * let code = "";
 * try { await removeTenantAdmin(kv, "acme", user.id); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "admin_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function removeTenantAdmin(
  kv: Deno.Kv,
  tenant: string,
  userId: string,
  audit: RemovalAudit = {},
): Promise<void> {
  return removeMember(
    kv,
    { member: tenantAdminKey(tenant, userId), byUser: tenantAdminByUserKey(userId, tenant) },
    { ...audit, scope: { tenant, namespace: null } },
  );
}

/**
 * Lists a tenant's admins.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @returns the memberships
 *
 * @example
 * ```ts
 * import { listTenantAdmins } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listTenantAdmins(kv, "acme")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function listTenantAdmins(
  kv: Deno.Kv,
  tenant: string,
): Promise<Membership[]> {
  return listMembers(kv, tenantAdminPrefix(tenant));
}

/**
 * Whether a user is currently an admin of a tenant.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param userId the user
 * @returns true for a member
 *
 * @example
 * ```ts
 * import { isTenantAdmin } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await isTenantAdmin(kv, "acme", "usr_1")) throw new Error();
 * kv.close();
 * ```
 */
export async function isTenantAdmin(
  kv: Deno.Kv,
  tenant: string,
  userId: string,
): Promise<boolean> {
  return (await kv.get(tenantAdminKey(tenant, userId))).value !== null;
}

/**
 * The tenants a user administers, in slug order.
 *
 * @param kv the store
 * @param userId the user
 * @returns tenant slugs
 *
 * @example
 * ```ts
 * import { tenantsAdministeredBy } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await tenantsAdministeredBy(kv, "usr_1")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function tenantsAdministeredBy(
  kv: Deno.Kv,
  userId: string,
): Promise<string[]> {
  const out: string[] = [];
  for await (
    const e of kv.list({ prefix: tenantAdminByUserPrefix(userId) })
  ) {
    out.push(e.key[2] as string);
  }
  return out;
}

/**
 * Whether a user is one of a tenant's people: on the tenant's admin list
 * or on the admin list of one of its namespaces, signed in to the tenant
 * since it was made (its people index, lib/store/people.ts), or holding a
 * session admitted to the tenant that `open` accepts (the caller decides
 * which sessions still count). Nothing outside the tenant counts. The same
 * records are read for an id that names no user, so a caller that asks
 * about a placeholder id for an unknown user takes the same path as for a
 * user of another tenant.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param userId the user (or a placeholder id)
 * @param open which of the user's sessions admitted to the tenant count
 * @returns true for one of the tenant's people
 *
 * @example
 * ```ts
 * import { addTenantAdmin, createTenant, isPersonOfTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createTenant(kv, { slug: "other", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addTenantAdmin(kv, { tenant: "other", user_id: ana.id, added_by: "tok_1" });
 * const any = () => true;
 * if (await isPersonOfTenant(kv, "acme", ana.id, any)) throw new Error("an admin of other only");
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * if (!await isPersonOfTenant(kv, "acme", ana.id, any)) throw new Error();
 * kv.close();
 * ```
 */
export async function isPersonOfTenant(
  kv: Deno.Kv,
  tenant: string,
  userId: string,
  open: (session: SessionRecord) => boolean,
): Promise<boolean> {
  const [memberships, signedIn, sessions] = await Promise.all([
    membershipsOfUser(kv, userId),
    hasSignedIn(kv, tenant, userId),
    sessionsOfUser(kv, userId),
  ]);
  return memberships.some((m) => m.tenant === tenant) || signedIn ||
    sessions.some((s) => s.tenants.includes(tenant) && open(s));
}
