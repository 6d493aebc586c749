/**
 * Who may read which part of the audit log: a superadmin reads
 * everything; a tenant admin (human or token) reads its tenant's entries,
 * and is given its tenant when it names none. The read itself is
 * `readAudit` of lib/services/audit.ts.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import type { AuditQuery } from "../store/audit.ts";
import { tenantsAdministeredBy } from "../store/tenants.ts";
import { authorize } from "./permissions.ts";
import type { Principal } from "./principal.ts";

/**
 * The query an audit read runs for `principal`, once `audit.read` is
 * checked on it (403): a tenant-admin token reads its own tenant when the
 * query names none; a human reads the one tenant they administer (400
 * when they administer several and name none).
 *
 * @param kv the store
 * @param principal the caller
 * @param query filters and pagination as asked
 * @returns the query to list, with the tenant filled in
 *
 * @example
 * ```ts
 * import { auditReadScope } from "./audit_access.ts";
 * const kv = await Deno.openKv(":memory:");
 * const admin = { kind: "token", token: { id: "tok_1", type: "tenant-admin", tenant_slug: "acme" } } as never;
 * const scoped = await auditReadScope(kv, admin, { type: "token.created" });
 * if (scoped.tenant !== "acme" || scoped.type !== "token.created") throw new Error();
 * const refused = await auditReadScope(kv, admin, { tenant: "other" }).catch((e) => e.status);
 * if (refused !== 403) throw new Error(String(refused));
 * kv.close();
 * ```
 */
export async function auditReadScope(
  kv: Deno.Kv,
  principal: Principal,
  query: AuditQuery = {},
): Promise<AuditQuery> {
  const q = { ...query };
  if (q.tenant === undefined) {
    if (principal.kind === "token" && principal.token.tenant_slug !== null) {
      q.tenant = principal.token.tenant_slug;
    } else if (principal.kind === "session") {
      const tenants = await tenantsAdministeredBy(kv, principal.user_id);
      if (tenants.length > 1) {
        throw new InvalidRequestError("Name the tenant: you administer several", {
          details: { field: "tenant" },
        });
      }
      if (tenants.length === 1) q.tenant = tenants[0]!;
    }
  }
  await authorize(kv, principal, "audit.read", q.tenant === undefined ? {} : { tenant: q.tenant });
  return q;
}
