/**
 * `GET /api/v1/audit`: audit entries, newest first, for superadmins and for
 * tenant admins on their tenant, filtered by tenant, namespace, token and
 * type; `after` pages back to older entries, `since` keeps only entries
 * newer than a given one (what `cfgtool audit list --follow` polls with).
 * Entries never hold a secret.
 *
 * @module
 */
import { Hono } from "hono";
import type { AuditQuery } from "../protocol/requests.ts";
import { readAudit } from "../services/audit.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { intParam, shapedParam, SHAPES } from "./params.ts";

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
    const tenant = shapedParam(q.tenant, "tenant", SHAPES.slug);
    if (tenant !== undefined) query.tenant = tenant;
    const namespace = shapedParam(q.namespace, "namespace", SHAPES.slug);
    if (namespace !== undefined) query.namespace = namespace;
    const tokenId = shapedParam(q.token_id, "token_id", SHAPES.tokenId);
    if (tokenId !== undefined) query.token_id = tokenId;
    const type = shapedParam(q.type, "type", SHAPES.eventType);
    if (type !== undefined) query.type = type;
    const limit = intParam(q.limit, "limit");
    if (limit !== undefined) query.limit = limit;
    const after = shapedParam(q.after, "after", SHAPES.auditId);
    if (after !== undefined) query.after = after;
    const since = shapedParam(q.since, "since", SHAPES.auditId);
    if (since !== undefined) query.since = since;
    const page = await readAudit(deps, c.get("principal"), query);
    return c.json({ entries: page.items, next: page.next });
  });
  return app;
}
