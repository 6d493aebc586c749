/**
 * The human users an admin may see (`GET /api/v1/users` without
 * `?tenant=`; a tenant's people with their sign-ins, `?tenant=`, are
 * lib/services/people.ts), and the account of a signed-in person (the
 * console's page header, `GET /api/v1/me`). A superadmin sees every user
 * (or, naming a tenant, the admins of that tenant); a tenant admin (human,
 * or a `tenant-admin` token) sees the admins of its tenant: the users on
 * the tenant's admin list or on the admin list of any of its namespaces.
 * A person who administers several tenants sees the admins of all of them
 * unless they name one. Everyone else gets 403. Users are created and
 * deleted on the server host (`cfgtool admin user …`).
 *
 * @module
 */
import { authorize, can } from "../auth/permissions.ts";
import type { Principal, SessionPrincipal } from "../auth/principal.ts";
import { ForbiddenError } from "../errors.ts";
import { tenantMemberIds } from "../store/membership.ts";
import { getTenant, tenantsAdministeredBy } from "../store/tenants.ts";
import { findUser, listUsers as storeListUsers, type UserRecord } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";
import type { ServiceDeps } from "./deps.ts";

/** A user as the user reads return them. */
export type { UserRecord };

/**
 * The users the caller may see, in email order: with `tenant`, the people
 * of that tenant (needs `user.list` there, 403, checked before the tenant
 * is looked up so another tenant's name is 403, never 404; then 404
 * `tenant_not_found`); without, every user for a superadmin token, the
 * people of its tenant for a `tenant-admin` token, the people of every
 * tenant a person administers (those of their sign-in, or, for a session
 * made on the server host, those on whose admin list they are); 403 for
 * anyone else.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant the tenant whose people to list, or undefined for all the caller may see
 * @returns the users
 *
 * @example
 * ```ts
 * import { listUsers } from "./users.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await createUser(kv, { email: "bo@other.test" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if ((await listUsers({ kv }, person)).map((u) => u.email).join() !== "ana@acme.test") throw new Error();
 * let code = "";
 * try { await listUsers({ kv }, person, "other"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export function listUsers(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant?: string,
): Promise<UserRecord[]> {
  const attributes = tenant === undefined ? {} : { "cfgtool.tenant": tenant };
  return withSpan("cfgtool.service.list_users", attributes, async () => {
    const { kv } = deps;
    const tenants = await visibleTenants(kv, principal, tenant);
    if (tenants === null) return await storeListUsers(kv);
    const ids = new Set<string>();
    for (const t of tenants) for (const id of await tenantMemberIds(kv, t)) ids.add(id);
    const users: UserRecord[] = [];
    for (const id of ids) {
      const u = await findUser(kv, id);
      if (u !== null) users.push(u);
    }
    return users.sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0);
  });
}

/**
 * The tenants whose members the caller may list (null: every user), or a
 * 403. A named tenant is authorized before it is looked up, so another
 * tenant's name gives 403, never 404.
 */
async function visibleTenants(
  kv: Deno.Kv,
  p: Principal,
  tenant: string | undefined,
): Promise<string[] | null> {
  const superadmin = p.kind === "token" && p.token.type === "superadmin";
  if (tenant !== undefined) {
    await authorize(kv, p, "user.list", { tenant });
    await getTenant(kv, tenant);
    return [tenant];
  }
  if (superadmin) return null;
  if (p.kind === "token") {
    const own = p.token.tenant_slug;
    if (own === null) {
      throw new ForbiddenError("Only a superadmin or a tenant admin can list users");
    }
    await authorize(kv, p, "user.list", { tenant: own });
    return [own];
  }
  // A sign-in counts in its own tenants only, where the admin list or the
  // policy's admin_groups may make it an admin (lib/auth/permissions.ts).
  const own: string[] = [];
  if (p.tenants.length === 0) own.push(...await tenantsAdministeredBy(kv, p.user_id));
  for (const t of p.tenants) if (await can(kv, p, "user.list", { tenant: t })) own.push(t);
  if (own.length === 0) {
    throw new ForbiddenError("Only a superadmin or a tenant admin can list users");
  }
  return own;
}

/** A signed-in person's account: the user id, and the email when the user still exists. */
export interface SignedInUser {
  id: string;
  email?: string;
}

/**
 * The account of a signed-in person ({@linkcode SignedInUser}): what the
 * console's page header names them by, and `GET /api/v1/me` shows.
 *
 * @param deps the store
 * @param principal the person
 * @returns their user id, and their email unless the user is gone
 *
 * @example
 * ```ts
 * import { signedInUser } from "./users.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const person = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if ((await signedInUser({ kv }, person)).email !== "ana@acme.test") throw new Error();
 * const gone = await signedInUser({ kv }, { ...person, user_id: "usr_1" });
 * if (gone.id !== "usr_1" || "email" in gone) throw new Error();
 * kv.close();
 * ```
 */
export function signedInUser(
  deps: Pick<ServiceDeps, "kv">,
  principal: SessionPrincipal,
): Promise<SignedInUser> {
  return withSpan("cfgtool.service.signed_in_user", {}, async () => {
    const user = await findUser(deps.kv, principal.user_id);
    return user === null ? { id: principal.user_id } : { id: user.id, email: user.email };
  });
}
