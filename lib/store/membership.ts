/**
 * Admin membership lists shared by tenants and namespaces: one entry per
 * member at `[list…, user_id]` plus a by-user index entry, written and
 * removed together, with the `admin.added` / `admin.removed` audit entry
 * in the same commit when the caller names the list's scope. Every change
 * bumps the credential epoch in its commit (lib/store/credential_epoch.ts),
 * so roles remembered by a server process are dropped with it.
 *
 * @module
 */
import { bumpCredentialEpoch, credentialsChanged } from "./credential_epoch.ts";
import { NotFoundError } from "../errors.ts";
import { addAudit, type AuditActor, eventAuditEntry } from "./audit.ts";
import {
  namespaceAdminByUserKey,
  namespaceAdminByUserPrefix,
  namespaceAdminKey,
  namespaceAdminPrefix,
  tenantAdminByUserKey,
  tenantAdminByUserPrefix,
  tenantAdminKey,
  tenantAdminPrefix,
  userKey,
} from "./keys.ts";

/** One admin membership. */
export interface Membership {
  user_id: string;
  added_at: string;
  /** User id or token id that added the member. */
  added_by: string;
}

/** The list a membership belongs to: a tenant's (namespace null) or a namespace's. */
export interface MemberScope {
  tenant: string;
  namespace: string | null;
}

/** What the audit entry of an added member says: the list and who adds. */
export interface AdditionAudit {
  scope: MemberScope;
  actor: AuditActor;
}

/**
 * What the audit entry of a removed member says: who removes, in which
 * request (default: the system), when, and why when the removal is part
 * of deleting the tenant or namespace (`reason`).
 */
export interface RemovalAudit {
  actor?: AuditActor;
  now?: Date;
  reason?: string;
}

const SYSTEM: AuditActor = { id: "system", principal_type: "system", request_id: null };

/**
 * The `admin.added` / `admin.removed` entry of one membership change: the
 * list's tenant and namespace, and in `details` the user's id and email
 * (null when the user no longer exists), the scope (`tenant` or
 * `namespace`) and, when given, why (`user_deleted`, …).
 *
 * @param type `admin.added` or `admin.removed`
 * @param actor who made the change
 * @param now when
 * @param scope the list: a tenant, or a tenant's namespace
 * @param userId the member
 * @param user the member's record (or null), for its email
 * @param reason why, when it is not a direct request
 * @returns the entry
 *
 * @example
 * ```ts
 * import { memberEntry } from "./membership.ts";
 * const e = memberEntry("admin.removed", { id: "system", principal_type: "system", request_id: null },
 *   new Date(), { tenant: "acme", namespace: null }, "usr_1", { email: "a@b.c" }, "user_deleted");
 * if (e.details.scope !== "tenant" || e.details.email !== "a@b.c") throw new Error();
 * ```
 */
export function memberEntry(
  type: "admin.added" | "admin.removed",
  actor: AuditActor,
  now: Date,
  scope: MemberScope,
  userId: string,
  user: unknown,
  reason?: string,
) {
  const email = (user as { email?: unknown } | null)?.email;
  return eventAuditEntry(type, actor, now, {
    tenant_slug: scope.tenant,
    namespace_slug: scope.namespace,
    details: {
      user_id: userId,
      email: typeof email === "string" ? email : null,
      scope: scope.namespace === null ? "tenant" : "namespace",
      ...(reason === undefined ? {} : { reason }),
    },
  });
}

/**
 * Adds a member (idempotent) after checking that the user and the owning
 * record exist; both are checked again in the commit. With `audit`, the
 * commit also writes the `admin.added` entry (none when the user already
 * was a member: nothing changed).
 *
 * @param kv the store
 * @param keys the owner record key, the membership key and the by-user key
 * @param member the membership
 * @param ownerMissing the error to throw when the owner does not exist
 * @param audit the list's scope and who adds, for the audit entry
 * @returns the stored membership (the existing one when already a member)
 *
 * @example
 * ```ts
 * import { addMember, listMembers } from "./membership.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * import { tenantAdminByUserKey, tenantAdminKey, tenantAdminPrefix, tenantKey } from "./keys.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * const keys = {
 *   owner: tenantKey("acme"),
 *   member: tenantAdminKey("acme", user.id),
 *   byUser: tenantAdminByUserKey(user.id, "acme"),
 * };
 * const member = { user_id: user.id, added_at: "2030-01-01T00:00:00.000Z", added_by: "tok_1" };
 * const noTenant = () => new Error("no tenant acme");
 * await addMember(kv, keys, member, noTenant);
 * // adding again keeps the first membership
 * const again = await addMember(kv, keys, { ...member, added_by: "tok_2" }, noTenant);
 * if (again.added_by !== "tok_1") throw new Error(again.added_by);
 * const list = await listMembers(kv, tenantAdminPrefix("acme"));
 * if (list.length !== 1 || list[0]!.user_id !== user.id) throw new Error();
 * kv.close();
 * ```
 */
export async function addMember(
  kv: Deno.Kv,
  keys: { owner: Deno.KvKey; member: Deno.KvKey; byUser: Deno.KvKey },
  member: Membership,
  ownerMissing: () => Error,
  audit?: AdditionAudit,
): Promise<Membership> {
  while (true) {
    const [owner, user, existing] = await kv.getMany<[unknown, unknown, Membership]>([
      keys.owner,
      userKey(member.user_id),
      keys.member,
    ]);
    if (owner.value === null) throw ownerMissing();
    if (user.value === null) {
      throw new NotFoundError("user_not_found", `No user ${member.user_id}`);
    }
    if (existing.value !== null) return existing.value;
    const op = bumpCredentialEpoch(
      kv.atomic()
        .check(owner).check(user).check(existing)
        .set(keys.member, member)
        .set(keys.byUser, true),
    );
    if (audit !== undefined) {
      const now = new Date(member.added_at);
      addAudit(
        op,
        memberEntry("admin.added", audit.actor, now, audit.scope, member.user_id, user.value),
      );
    }
    if ((await op.commit()).ok) {
      credentialsChanged(kv); // this process drops remembered roles before answering
      return member;
    }
  }
}

/**
 * Removes a member; 404 `admin_not_found` when the user is not one. With
 * `audit`, the commit also writes the `admin.removed` entry; of two
 * concurrent removals one commits, the other gets 404.
 *
 * @param kv the store
 * @param keys the membership key and the by-user key
 * @param audit the list's scope, who removes, when and why, for the audit entry
 * @returns nothing
 *
 * @example
 * ```ts
 * import { addMember, listMembers, removeMember } from "./membership.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * import { tenantAdminByUserKey, tenantAdminKey, tenantAdminPrefix, tenantKey } from "./keys.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const user = await createUser(kv, { email: "ana@example.com" });
 * const keys = {
 *   owner: tenantKey("acme"),
 *   member: tenantAdminKey("acme", user.id),
 *   byUser: tenantAdminByUserKey(user.id, "acme"),
 * };
 * const member = { user_id: user.id, added_at: "2030-01-01T00:00:00.000Z", added_by: "tok_1" };
 * const noTenant = () => new Error("no tenant acme");
 * await addMember(kv, keys, member, noTenant);
 * await removeMember(kv, keys);
 * if ((await listMembers(kv, tenantAdminPrefix("acme"))).length !== 0) throw new Error();
 * let code = "";
 * try { await removeMember(kv, keys); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "admin_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function removeMember(
  kv: Deno.Kv,
  keys: { member: Deno.KvKey; byUser: Deno.KvKey },
  audit?: RemovalAudit & { scope: MemberScope },
): Promise<void> {
  while (true) {
    const existing = await kv.get<Membership>(keys.member);
    if (existing.value === null) {
      throw new NotFoundError("admin_not_found", "No such admin");
    }
    const op = bumpCredentialEpoch(
      kv.atomic().check(existing).delete(keys.member).delete(keys.byUser),
    );
    if (audit !== undefined) {
      const userId = existing.value.user_id;
      const user = (await kv.get(userKey(userId))).value;
      const entry = memberEntry(
        "admin.removed",
        audit.actor ?? SYSTEM,
        audit.now ?? new Date(),
        audit.scope,
        userId,
        user,
        audit.reason,
      );
      addAudit(op, entry);
    }
    if ((await op.commit()).ok) {
      credentialsChanged(kv); // this process drops remembered roles before answering
      return;
    }
  }
}

/**
 * Lists the members under a prefix, in user-id order.
 *
 * @param kv the store
 * @param prefix the membership list prefix
 * @returns the memberships
 *
 * @example
 * ```ts
 * import { listMembers } from "./membership.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listMembers(kv, ["tenant_admin", "acme"])).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listMembers(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
): Promise<Membership[]> {
  const out: Membership[] = [];
  for await (const e of kv.list<Membership>({ prefix })) out.push(e.value);
  return out;
}

/** Where a user is an admin: a tenant, or one namespace of a tenant. */
export interface UserMembership {
  tenant: string;
  /** The namespace, or null for a tenant-admin membership. */
  namespace: string | null;
}

/**
 * The admin memberships of one user, read from the by-user indexes:
 * tenant memberships first, then namespace memberships, each in slug order.
 *
 * @param kv the store
 * @param userId the user id
 * @returns the memberships
 *
 * @example
 * ```ts
 * import { membershipsOfUser } from "./membership.ts";
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(["tenant_admin_by_user", "usr_1", "acme"], true);
 * await kv.set(["ns_admin_by_user", "usr_1", "acme", "web"], true);
 * const m = await membershipsOfUser(kv, "usr_1");
 * if (m.length !== 2 || m[1]!.namespace !== "web") throw new Error();
 * kv.close();
 * ```
 */
export async function membershipsOfUser(
  kv: Deno.Kv,
  userId: string,
): Promise<UserMembership[]> {
  const out: UserMembership[] = [];
  for await (const e of kv.list({ prefix: tenantAdminByUserPrefix(userId) })) {
    out.push({ tenant: String(e.key[2]), namespace: null });
  }
  for await (const e of kv.list({ prefix: namespaceAdminByUserPrefix(userId) })) {
    out.push({ tenant: String(e.key[2]), namespace: String(e.key[3]) });
  }
  return out;
}

/**
 * The two keys that hold one membership of a user: the list entry and its
 * by-user index entry (both are removed together).
 *
 * @param userId the user id
 * @param m the membership
 * @returns the keys
 *
 * @example
 * ```ts
 * import { membershipKeys } from "./membership.ts";
 * const keys = membershipKeys("usr_1", { tenant: "acme", namespace: null });
 * if (keys[0]![0] !== "tenant_admin" || keys[1]![0] !== "tenant_admin_by_user") throw new Error();
 * ```
 */
export function membershipKeys(userId: string, m: UserMembership): [Deno.KvKey, Deno.KvKey] {
  return m.namespace === null
    ? [tenantAdminKey(m.tenant, userId), tenantAdminByUserKey(userId, m.tenant)]
    : [
      namespaceAdminKey(m.tenant, m.namespace, userId),
      namespaceAdminByUserKey(userId, m.tenant, m.namespace),
    ];
}

/**
 * The ids of the users who are members of a tenant: its tenant admins and
 * the admins of any of its namespaces, each id once, in id order.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns the user ids
 *
 * @example
 * ```ts
 * import { tenantMemberIds } from "./membership.ts";
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(["tenant_admin", "acme", "usr_2"], {});
 * await kv.set(["ns_admin", "acme", "web", "usr_1"], {});
 * await kv.set(["ns_admin", "acme", "api", "usr_2"], {});
 * if ((await tenantMemberIds(kv, "acme")).join() !== "usr_1,usr_2") throw new Error();
 * kv.close();
 * ```
 */
export async function tenantMemberIds(kv: Deno.Kv, tenant: string): Promise<string[]> {
  const ids = new Set<string>();
  for (const prefix of [tenantAdminPrefix(tenant), namespaceAdminPrefix(tenant)]) {
    for await (const e of kv.list({ prefix })) ids.add(String(e.key.at(-1)));
  }
  return [...ids].sort();
}
