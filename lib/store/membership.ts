/**
 * Admin membership lists shared by tenants and namespaces: one entry per
 * member at `[list…, user_id]` plus a by-user index entry, written and
 * removed together. Roles are read from these lists on every request.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import { userKey } from "./keys.ts";

/** One admin membership. */
export interface Membership {
  user_id: string;
  added_at: string;
  /** User id or token id that added the member. */
  added_by: string;
}

/**
 * Adds a member (idempotent) after checking that the user and the owning
 * record exist; both are checked again in the commit.
 *
 * @param kv the store
 * @param keys the owner record key, the membership key and the by-user key
 * @param member the membership
 * @param ownerMissing the error to throw when the owner does not exist
 * @returns the stored membership (the existing one when already a member)
 *
 * @example
 * ```ts
 * import { addMember } from "./membership.ts";
 * if (typeof addMember !== "function") throw new Error();
 * ```
 */
export async function addMember(
  kv: Deno.Kv,
  keys: { owner: Deno.KvKey; member: Deno.KvKey; byUser: Deno.KvKey },
  member: Membership,
  ownerMissing: () => Error,
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
    const res = await kv.atomic()
      .check(owner).check(user).check(existing)
      .set(keys.member, member)
      .set(keys.byUser, true)
      .commit();
    if (res.ok) return member;
  }
}

/**
 * Removes a member; 404 `admin_not_found` when the user is not one.
 *
 * @param kv the store
 * @param keys the membership key and the by-user key
 * @returns nothing
 *
 * @example
 * ```ts
 * import { removeMember } from "./membership.ts";
 * if (typeof removeMember !== "function") throw new Error();
 * ```
 */
export async function removeMember(
  kv: Deno.Kv,
  keys: { member: Deno.KvKey; byUser: Deno.KvKey },
): Promise<void> {
  const existing = await kv.get(keys.member);
  if (existing.value === null) {
    throw new NotFoundError("admin_not_found", "No such admin");
  }
  await kv.atomic().delete(keys.member).delete(keys.byUser).commit();
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
