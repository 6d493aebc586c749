/**
 * `/api/v1/users`: the human users an admin may see (`listUsers`,
 * lib/services/users.ts). A superadmin sees every user; a tenant admin
 * (human, or a `tenant-admin` token) sees the members of its tenant: the
 * users on the tenant's admin list or on the admin list of any of its
 * namespaces. A human who administers several tenants sees the members of
 * all of them. With `?tenant=` (and `limit`, `after`), the people of that
 * tenant a page at a time: everyone who signed in to it too, with their
 * last sign-in and roles (`listTenantPeople`, lib/services/people.ts).
 * Everyone else gets 403. Users are created
 * and deleted on the server host (`cfgtool admin user …`).
 * `DELETE /users/{id}/sessions` ends the sessions of one of the caller's
 * people (lib/services/sessions.ts): refused before any lookup for a
 * caller who manages no one, and the same 404 for an unknown user and for
 * someone else's.
 *
 * @module
 */
import { Hono } from "hono";
import { InvalidRequestError } from "../errors.ts";
import { listTenantPeople, type PeoplePageQuery } from "../services/people.ts";
import { revokeUserSessions } from "../services/sessions.ts";
import { listUsers } from "../services/users.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authDeps, requestContext } from "./authn.ts";
import { intParam, shapedParam, SHAPES } from "./params.ts";

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
    const q = c.req.query();
    const tenant = shapedParam(q.tenant, "tenant", SHAPES.slug);
    const page: PeoplePageQuery = {};
    const limit = intParam(q.limit, "limit");
    if (limit !== undefined) page.limit = limit;
    const after = shapedParam(q.after, "after", SHAPES.email);
    if (after !== undefined) page.after = after;
    if (tenant === undefined) {
      if (limit !== undefined || after !== undefined) {
        throw new InvalidRequestError(
          "limit and after page through the people of one tenant: name it with tenant",
          { details: { field: limit !== undefined ? "limit" : "after" } },
        );
      }
      return c.json({ users: await listUsers(deps, c.get("principal")) });
    }
    const people = await listTenantPeople(deps, c.get("principal"), tenant, page);
    return c.json({ users: people.items, next: people.next });
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
