/**
 * `GET /api/v1/audit`: audit entries, newest first, for superadmins and for
 * tenant admins on their tenant. Entries never hold a secret.
 *
 * @module
 */
import { Hono } from "hono";
import { readAudit } from "../auth/audit_access.ts";
import type { AuditQuery } from "../store/audit.ts";
import type { AppDeps, AppEnv } from "./app.ts";
import { authDeps } from "./authn.ts";
import { intParam } from "./params.ts";

/**
 * The audit route.
 *
 * @example
 * ```ts ignore
 * api.route("/audit", auditRoutes(deps));
 * ```
 */
export function auditRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/", async (c) => {
    const q = c.req.query();
    const query: AuditQuery = {};
    if (q.tenant) query.tenant = q.tenant;
    if (q.namespace) query.namespace = q.namespace;
    if (q.token_id) query.token_id = q.token_id;
    if (q.type) query.type = q.type;
    const limit = intParam(q.limit, "limit");
    if (limit !== undefined) query.limit = limit;
    if (q.after) query.after = q.after;
    const page = await readAudit(authDeps(deps), c.get("principal"), query);
    return c.json({ entries: page.items, next: page.next });
  });
  return app;
}
