/**
 * `/api/v1/users`: the human users an admin may see. A superadmin sees
 * every user (or, with `?tenant=`, the members of one tenant); a tenant
 * admin (human, or a `tenant-admin` token) sees the members of its tenant:
 * the users on the tenant's admin list or on the admin list of any of its
 * namespaces. A human who administers several tenants sees the members of
 * all of them unless `?tenant=` names one. Everyone else gets 403. Users
 * are created and deleted on the server host (`cfgtool admin user …`).
 * `DELETE /users/{id}/sessions` ends the sessions of one of the caller's
 * people (lib/services/sessions.ts): refused before any lookup for a
 * caller who manages no one, and the same 404 for an unknown user and for
 * someone else's.
 *
 * @module
 */
import { Hono } from "hono";
import { authorize, can } from "../auth/permissions.ts";
import type { Principal } from "../auth/principal.ts";
import { ForbiddenError } from "../errors.ts";
import { tenantMemberIds } from "../store/membership.ts";
import { getTenant, tenantsAdministeredBy } from "../store/tenants.ts";
import { findUser, listUsers, type UserRecord } from "../store/users.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authDeps, requestContext } from "./authn.ts";
import { revokeUserSessions } from "../services/sessions.ts";
import { shapedParam, SHAPES } from "./params.ts";

/**
 * The user routes, mounted under `/users`.
 *
 * @example
 * ```ts ignore
 * api.route("/users", userRoutes(deps));
 * ```
 */
export function userRoutes(deps: AppDeps): Hono<AppEnv> {
  const { kv } = deps;
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => {
    const p = c.get("principal");
    const tenants = await visibleTenants(
      kv,
      p,
      shapedParam(c.req.query("tenant"), "tenant", SHAPES.slug),
    );
    if (tenants === null) return c.json({ users: await listUsers(kv) });
    const ids = new Set<string>();
    for (const t of tenants) for (const id of await tenantMemberIds(kv, t)) ids.add(id);
    const users: UserRecord[] = [];
    for (const id of ids) {
      const u = await findUser(kv, id);
      if (u !== null) users.push(u);
    }
    users.sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0);
    return c.json({ users });
  });

  app.delete("/:uid/sessions", async (c) => {
    const ended = await revokeUserSessions(
      authDeps(deps),
      c.get("principal"),
      c.req.param("uid"),
      requestContext(c),
    );
    return c.json({ revoked_sessions: ended, request_id: c.get("requestId") });
  });

  return app;
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
