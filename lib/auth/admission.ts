/**
 * A person's admission to a tenant: whether their session's sign-in
 * admitted them to it, and whether their identity provider's groups make
 * them its admin under the tenant's current login policy. Read by the
 * permission checks (lib/auth/permissions.ts) and by the CLI sign-in's
 * grants (lib/login/cli_grants.ts).
 *
 * @module
 */
import { findTenant } from "../store/tenants.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import type { SessionPrincipal } from "./principal.ts";

/**
 * Whether a session's sign-in admitted it to a tenant, and whether its IdP
 * groups make it an admin under the tenant's current policy: `no` for a
 * host-made session (no tenants), `stale` when the tenant was deleted and
 * made again after the sign-in (the admission was for the old one).
 *
 * @param kv the store
 * @param p the session
 * @param tenant the tenant slug
 * @returns `no`, `stale`, `member` or `admin`
 *
 * @example
 * ```ts
 * import { admittedTo } from "./admission.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1", now: () => new Date("2030-01-02T00:00:00Z") });
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: ["acme"], groups: [],
 *   since: "2030-01-01T00:00:00.000Z" };
 * if (await admittedTo(kv, p, "acme") !== "stale") throw new Error("signed in before acme was made");
 * if (await admittedTo(kv, { ...p, since: "2030-01-03T00:00:00.000Z" }, "acme") !== "member") throw new Error();
 * kv.close();
 * ```
 */
export async function admittedTo(
  kv: Deno.Kv,
  p: SessionPrincipal,
  tenant: string,
): Promise<"no" | "stale" | "member" | "admin"> {
  if (!p.tenants.includes(tenant)) return "no";
  const [record, policy] = await Promise.all([
    findTenant(kv, tenant),
    p.groups.length > 0 ? findLoginPolicy(kv, tenant) : Promise.resolve(null),
  ]);
  if (record === null || record.created_at > p.since) return "stale";
  const adminGroups = policy !== null && "admin_groups" in policy.policy
    ? policy.policy.admin_groups ?? []
    : [];
  return p.groups.some((g) => adminGroups.includes(g)) ? "admin" : "member";
}
