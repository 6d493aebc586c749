/**
 * `/api/v1/users`: the human users an admin may see (`listUsers`,
 * lib/services/users.ts). A superadmin sees every user (or, with
 * `?tenant=`, the members of one tenant); a tenant admin (human, or a
 * `tenant-admin` token) sees the members of its tenant: the users on the
 * tenant's admin list or on the admin list of any of its namespaces. A
 * human who administers several tenants sees the members of all of them
 * unless `?tenant=` names one. Everyone else gets 403. Users are created
 * and deleted on the server host (`cfgtool admin user …`).
 * `DELETE /users/{id}/sessions` ends the sessions of one of the caller's
 * people (lib/services/sessions.ts): refused before any lookup for a
 * caller who manages no one, and the same 404 for an unknown user and for
 * someone else's.
 *
 * @module
 */
import { Hono } from "hono";
import { revokeUserSessions } from "../services/sessions.ts";
import { listUsers } from "../services/users.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authDeps, requestContext } from "./authn.ts";
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
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => {
    const tenant = shapedParam(c.req.query("tenant"), "tenant", SHAPES.slug);
    return c.json({ users: await listUsers(deps, c.get("principal"), tenant) });
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
