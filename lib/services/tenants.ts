/**
 * The tenant operations: create and delete a tenant, add and remove its
 * admins; and the reads: the tenants a principal sees (the API's list, a
 * person's roles for `/me`, the console's home), one tenant, its admins.
 * Each authorises the caller (lib/auth/permissions.ts), reads and writes
 * through lib/store/tenants.ts, each write together with its audit entry
 * (the caller as actor, the request's id), and tells the runtime what
 * changed (a deleted tenant's streams are re-checked at once). Each runs
 * in a trace span `cfgtool.service.<operation>`. The HTTP layer and the
 * console only read requests and shape responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize, can, type MemoOptions } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId, type SessionPrincipal } from "../auth/principal.ts";
import { sessionLive } from "../auth/sessions.ts";
import { NotFoundError } from "../errors.ts";
import type { Membership } from "../store/membership.ts";
import {
  addTenantAdmin as storeAddAdmin,
  createTenant as storeCreate,
  deleteTenant as storeDelete,
  getTenant as storeGetTenant,
  isPersonOfTenant,
  isTenantAdmin,
  listTenantAdmins as storeListAdmins,
  listTenants as storeListTenants,
  removeTenantAdmin as storeRemoveAdmin,
  type TenantRecord,
} from "../store/tenants.ts";
import { findUser, type UserRecord } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** A tenant's record and an admin membership, as the tenant reads return them. */
export type { Membership, TenantRecord };

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
 * const tenant = await createTenant({ kv, key, runtime }, admin, { slug: "acme" }, { requestId: "r2" });
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
 * await createTenant({ kv, key, runtime }, admin, { slug: "acme" }, { requestId: "r1" });
 * const { revoked } = await deleteTenant({ kv, key, runtime }, admin, "acme", { requestId: "r2" });
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
    await authorize(deps.kv, principal, "tenant.delete", { tenant }, { memo: memoOf(deps) });
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
 * user id or an email) as {@linkcode personOfTenant} finds them (404
 * `user_not_found`, the same for an address with no account and for one
 * whose account is another tenant's); audited as `admin.added`. Adding an
 * admin again changes nothing and returns the first membership.
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
 * await createTenant({ kv, key, runtime }, admin, { slug: "acme" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * const member = await addTenantAdmin({ kv, key, runtime }, admin, "acme", "ana@example.com", ctx);
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
    await authorize(deps.kv, principal, "tenant.admins", { tenant }, { memo: memoOf(deps) });
    const owner = await storeGetTenant(deps.kv, tenant);
    const record = await personOfTenant(deps, principal, owner, await resolveInput(user));
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
 * await createTenant({ kv, key, runtime }, admin, { slug: "acme" }, ctx);
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * await addTenantAdmin({ kv, key, runtime }, admin, "acme", ana.id, ctx);
 * await removeTenantAdmin({ kv, key, runtime }, admin, "acme", ana.id, ctx);
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
    await authorize(deps.kv, principal, "tenant.admins", { tenant }, { memo: memoOf(deps) });
    await storeRemoveAdmin(deps.kv, tenant, userId, {
      actor: actorOf(principal, ctx.requestId),
      now: clockOf(deps)(),
    });
  });
}

/**
 * The tenants a principal may read, in slug order (`GET /api/v1/tenants`):
 * needs `tenant.list` (403 for a `namespace-client` token), then keeps the
 * tenants the caller may read (`tenant.read`): every one for a superadmin,
 * its own for a bound token, for a person those their sign-in admitted
 * them to or where they are an admin.
 *
 * @param deps the store
 * @param principal the caller
 * @returns the tenants' records
 *
 * @example
 * ```ts
 * import { listTenants } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * for (const slug of ["acme", "other"]) await createTenant(kv, { slug, created_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: ["acme"], groups: [], since: "2999-01-01T00:00:00.000Z" };
 * if ((await listTenants({ kv }, person)).map((t) => t.slug).join() !== "acme") throw new Error();
 * if ((await listTenants({ kv }, { ...person, superadmin: true })).length !== 2) throw new Error();
 * kv.close();
 * ```
 */
export function listTenants(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
): Promise<TenantRecord[]> {
  return withSpan("cfgtool.service.list_tenants", {}, async () => {
    await authorize(deps.kv, principal, "tenant.list", {});
    return await readableTenants(deps.kv, principal, { memo: memoOf(deps) });
  });
}

/** Every tenant `p` may read (`tenant.read`), in slug order. */
async function readableTenants(
  kv: Deno.Kv,
  p: Principal,
  options: MemoOptions = {},
): Promise<TenantRecord[]> {
  const out: TenantRecord[] = [];
  for (const t of await storeListTenants(kv)) {
    if (await can(kv, p, "tenant.read", { tenant: t.slug }, options)) out.push(t);
  }
  return out;
}

/** A person's role in a tenant they may read ({@linkcode tenantRoles}). */
export interface TenantRole {
  slug: string;
  role: "admin" | "member";
}

/**
 * The tenants a person may read (those {@linkcode listTenants} lists), with
 * their role in each: `admin` on the tenant's admin list or when they may
 * read its login policy (an admin group of the policy), else `member`.
 * What `GET /api/v1/me` says of a person.
 *
 * @param deps the store
 * @param principal the person
 * @returns slug and role of each tenant, in slug order
 *
 * @example
 * ```ts
 * import { tenantRoles } from "./tenants.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * for (const slug of ["acme", "other"]) await createTenant(kv, { slug, created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@other.test" });
 * await addTenantAdmin(kv, { tenant: "other", user_id: ana.id, added_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * const roles = await tenantRoles({ kv }, person);
 * if (JSON.stringify(roles) !== '[{"slug":"other","role":"admin"}]') throw new Error(JSON.stringify(roles));
 * kv.close();
 * ```
 */
export function tenantRoles(
  deps: Pick<ServiceDeps, "kv">,
  principal: SessionPrincipal,
): Promise<TenantRole[]> {
  return withSpan("cfgtool.service.tenant_roles", {}, async () => {
    const { kv } = deps;
    const out: TenantRole[] = [];
    for (const t of await readableTenants(kv, principal, { memo: memoOf(deps) })) {
      const admin = await isTenantAdmin(kv, t.slug, principal.user_id) ||
        await can(kv, principal, "tenant.login", { tenant: t.slug }, { memo: memoOf(deps) });
      out.push({ slug: t.slug, role: admin ? "admin" : "member" });
    }
    return out;
  });
}

/**
 * The tenants of a person's console home: for whoever may create tenants
 * (an operator: superadmin rights) `all`, every tenant's record; for
 * anyone else `signed-in`, the tenants their sign-in admitted them to.
 */
export type HomeTenants =
  | { kind: "all"; tenants: TenantRecord[] }
  | { kind: "signed-in"; slugs: readonly string[] };

/**
 * What the console's home (`/ui`) lists for a person
 * ({@linkcode HomeTenants}).
 *
 * @param deps the store
 * @param principal the person
 * @returns every tenant, or the slugs of the sign-in's tenants
 *
 * @example
 * ```ts
 * import { homeTenants } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: ["web"], groups: [], since: "" };
 * const mine = await homeTenants({ kv }, person);
 * if (mine.kind !== "signed-in" || mine.slugs.join() !== "web") throw new Error();
 * const all = await homeTenants({ kv }, { ...person, superadmin: true });
 * if (all.kind !== "all" || all.tenants[0]?.slug !== "acme") throw new Error();
 * kv.close();
 * ```
 */
export function homeTenants(
  deps: Pick<ServiceDeps, "kv">,
  principal: SessionPrincipal,
): Promise<HomeTenants> {
  return withSpan("cfgtool.service.home_tenants", {}, async () => {
    if (!await can(deps.kv, principal, "tenant.create")) {
      return { kind: "signed-in", slugs: principal.tenants };
    }
    return {
      kind: "all",
      tenants: await readableTenants(deps.kv, principal, { memo: memoOf(deps) }),
    };
  });
}

/**
 * Every tenant, in slug order, for whoever may create tenants (a
 * superadmin; else 403): the console's tenants page.
 *
 * @param deps the store
 * @param principal the caller
 * @returns the tenants' records
 *
 * @example
 * ```ts
 * import { listAllTenants } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: ["acme"], groups: [], since: "" };
 * let code = "";
 * try { await listAllTenants({ kv }, person); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * if ((await listAllTenants({ kv }, { ...person, superadmin: true })).length !== 1) throw new Error();
 * kv.close();
 * ```
 */
export function listAllTenants(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
): Promise<TenantRecord[]> {
  return withSpan("cfgtool.service.list_all_tenants", {}, async () => {
    await authorize(deps.kv, principal, "tenant.create");
    return await storeListTenants(deps.kv);
  });
}

/**
 * One tenant (`GET /api/v1/tenants/{t}`): needs `tenant.read` (403), then
 * the tenant (404 `tenant_not_found`).
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns the record
 *
 * @example
 * ```ts
 * import { getTenant } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1", description: "A" });
 * const root = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * if ((await getTenant({ kv }, root, "acme")).description !== "A") throw new Error();
 * let code = "";
 * try { await getTenant({ kv }, root, "beta"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "tenant_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function getTenant(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<TenantRecord> {
  return withSpan("cfgtool.service.get_tenant", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.read", { tenant }, { memo: memoOf(deps) });
    return await storeGetTenant(deps.kv, tenant);
  });
}

/**
 * A tenant's admins (`GET /api/v1/tenants/{t}/admins`, and the console's
 * people page): needs `tenant.read` (403), then the tenant (404
 * `tenant_not_found`).
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @returns the admin memberships, in user-id order
 *
 * @example
 * ```ts
 * import { listTenantAdmins } from "./tenants.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * const root = { kind: "session" as const, user_id: "usr_2", session_id: "ssn_1", tenants: [], groups: [], since: "", superadmin: true as const };
 * if ((await listTenantAdmins({ kv }, root, "acme"))[0]?.user_id !== ana.id) throw new Error();
 * kv.close();
 * ```
 */
export function listTenantAdmins(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
): Promise<Membership[]> {
  const attributes = { "cfgtool.tenant": tenant };
  return withSpan("cfgtool.service.list_tenant_admins", attributes, async () => {
    await authorize(deps.kv, principal, "tenant.read", { tenant }, { memo: memoOf(deps) });
    await storeGetTenant(deps.kv, tenant);
    return await storeListAdmins(deps.kv, tenant);
  });
}

/**
 * A user id that names no user (no ULID is all zeros): what a lookup reads
 * in place of an unknown user ({@linkcode personOfTenant}, and ending a
 * user's sessions in lib/services/sessions.ts), so that an unknown
 * reference and another tenant's user take the same path.
 */
export const NO_USER_ID = "usr_00000000000000000000000000";

/**
 * Whether a principal is the installation's superadmin: a `superadmin`
 * token, or an operator's console session.
 *
 * @param principal the caller
 * @returns true for a superadmin
 *
 * @example
 * ```ts
 * import { isSuperadmin } from "./tenants.ts";
 * const person = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if (isSuperadmin(person) || !isSuperadmin({ ...person, superadmin: true })) throw new Error();
 * ```
 */
export function isSuperadmin(principal: Principal): boolean {
  return principal.kind === "token"
    ? principal.token.type === "superadmin"
    : principal.superadmin === true;
}

/**
 * Whether a user is one of a tenant's people: on one of its admin lists
 * (the tenant's or a namespace's), or signed in to it since it was made
 * (its people index, lib/store/people.ts, or a live session admitted to
 * the tenant and made after the tenant was: a tenant deleted and made
 * again does not count the old sign-ins). An account that only other
 * tenants know is not.
 *
 * @param deps store and clock
 * @param tenant the tenant's record
 * @param userId the user
 * @returns true for one of the tenant's people
 *
 * @example
 * ```ts
 * import { isTenantPerson } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createSession } from "../auth/sessions.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const acme = await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * if (await isTenantPerson({ kv }, acme, ana.id)) throw new Error("not signed in yet");
 * await createSession(kv, await randomTokenKey(), { user: ana.id, tenants: ["acme"] });
 * if (!await isTenantPerson({ kv }, acme, ana.id)) throw new Error();
 * kv.close();
 * ```
 */
export function isTenantPerson(
  deps: Pick<ServiceDeps, "kv" | "now">,
  tenant: TenantRecord,
  userId: string,
): Promise<boolean> {
  const now = (deps.now?.() ?? new Date()).getTime();
  return isPersonOfTenant(
    deps.kv,
    tenant.slug,
    userId,
    (s) => sessionLive(s, now) && s.created_at >= tenant.created_at,
  );
}

/**
 * The user a tenant's admin names by user id or email, when the caller
 * may name them there: a superadmin (who sees every user) any user of the
 * installation; anyone else one of the tenant's people
 * ({@linkcode isTenantPerson}). Otherwise 404 `user_not_found`, with the
 * same message for an address that has no account and for one whose
 * account only other tenants know, after the same reads, so the answer
 * says nothing about the rest of the installation.
 *
 * @param deps store and clock
 * @param principal the caller (already authorised on the tenant)
 * @param tenant the tenant's record
 * @param ref a user id or an email
 * @returns the user
 *
 * @example
 * ```ts
 * import { personOfTenant } from "./tenants.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const acme = await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * await createUser(kv, { email: "eve@other.test" });
 * const admin = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: ["acme"], groups: [], since: "" };
 * const codes: string[] = [];
 * for (const ref of ["eve@other.test", "nobody@other.test"]) {
 *   try { await personOfTenant({ kv }, admin, acme, ref); } catch (e) { codes.push((e as { code: string }).code); }
 * }
 * if (codes.join() !== "user_not_found,user_not_found") throw new Error(codes.join());
 * const root = { ...admin, superadmin: true as const };
 * if ((await personOfTenant({ kv }, root, acme, "eve@other.test")).email !== "eve@other.test") throw new Error();
 * kv.close();
 * ```
 */
export async function personOfTenant(
  deps: Pick<ServiceDeps, "kv" | "now">,
  principal: Principal,
  tenant: TenantRecord,
  ref: string,
): Promise<UserRecord> {
  const user = await findUser(deps.kv, ref);
  if (isSuperadmin(principal)) {
    if (user === null) throw new NotFoundError("user_not_found", `No user ${ref}`);
    return user;
  }
  const known = await isTenantPerson(deps, tenant, user?.id ?? NO_USER_ID);
  if (user === null || !known) {
    throw new NotFoundError(
      "user_not_found",
      `No user ${ref} among the people of ${tenant.slug}: ask them to sign in to ${tenant.slug}, then add them`,
    );
  }
  return user;
}
