/**
 * Reading the audit log (`GET /api/v1/audit`) with its permission rule:
 * superadmin reads everything; a tenant admin (human or token) reads its
 * tenant's entries.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import { type AuditEntry, type AuditQuery, listAudit } from "../store/audit.ts";
import type { Page } from "../store/page.ts";
import { tenantsAdministeredBy } from "../store/tenants.ts";
import type { AuthDeps } from "./deps.ts";
import { authorize } from "./permissions.ts";
import type { Principal } from "./principal.ts";

/**
 * Lists audit entries newest first after checking `audit.read`. A
 * tenant-admin token reads its own tenant when none is named; a human
 * reads the one tenant they administer (400 when they administer several
 * and name none).
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param query filters and pagination
 * @returns a page of entries
 *
 * @example
 * ```ts
 * import { readAudit } from "./audit_access.ts";
 * import { bootstrapSuperadmin } from "./bootstrap.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const page = await readAudit({ kv, key }, admin);
 * if (page.items[0]?.type !== "token.created" || page.items[0].token_id !== boot.token.id) {
 *   throw new Error(JSON.stringify(page.items));
 * }
 * kv.close();
 * ```
 */
export async function readAudit(
  deps: AuthDeps,
  principal: Principal,
  query: AuditQuery = {},
): Promise<Page<AuditEntry>> {
  const q = { ...query };
  if (q.tenant === undefined) {
    if (principal.kind === "token" && principal.token.tenant_slug !== null) {
      q.tenant = principal.token.tenant_slug;
    } else if (principal.kind === "session") {
      const tenants = await tenantsAdministeredBy(deps.kv, principal.user_id);
      if (tenants.length > 1) {
        throw new InvalidRequestError("Name the tenant: you administer several", {
          details: { field: "tenant" },
        });
      }
      if (tenants.length === 1) q.tenant = tenants[0]!;
    }
  }
  await authorize(
    deps.kv,
    principal,
    "audit.read",
    q.tenant === undefined ? {} : { tenant: q.tenant },
  );
  return await listAudit(deps.kv, q);
}
