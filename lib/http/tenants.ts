/**
 * `/api/v1/tenants`: create, list, read and delete tenants, and manage the
 * tenant-admin list.
 *
 * @module
 */
import { Hono } from "hono";
import {
  addTenantAdmin,
  createTenant,
  deleteTenant,
  getTenant,
  listTenantAdmins,
  listTenants,
  removeTenantAdmin,
} from "../services/tenants.ts";
import { getLoginPolicy, setLoginPolicy } from "../services/login_policies.ts";
import { requestContext } from "./authn.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { readJsonObject } from "./body.ts";
import { requiredString, stringField, userRefField } from "./params.ts";

/**
 * The tenant routes.
 *
 * @example
 * ```ts ignore
 * api.route("/tenants", tenantRoutes(deps));
 * ```
 */
export function tenantRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/", async (c) => {
    const tenant = await createTenant(deps, c.get("principal"), async () => {
      const body = await readJsonObject(c.req.raw);
      return { slug: requiredString(body, "slug"), description: stringField(body, "description") };
    }, requestContext(c));
    return c.json({ tenant, request_id: c.get("requestId") }, 201);
  });

  app.get("/", async (c) => {
    return c.json({ tenants: await listTenants(deps, c.get("principal")) });
  });

  app.get("/:tenant", async (c) => {
    return c.json({ tenant: await getTenant(deps, c.get("principal"), c.req.param("tenant")) });
  });

  app.delete("/:tenant", async (c) => {
    const tenant = c.req.param("tenant");
    const { revoked } = await deleteTenant(deps, c.get("principal"), tenant, requestContext(c));
    return c.json({ deleted: tenant, revoked_tokens: revoked, request_id: c.get("requestId") });
  });

  app.get("/:tenant/login", async (c) => {
    const tenant = c.req.param("tenant");
    return c.json(await getLoginPolicy(deps, c.get("principal"), tenant));
  });

  app.put("/:tenant/login", async (c) => {
    const tenant = c.req.param("tenant");
    const record = await setLoginPolicy(
      deps,
      c.get("principal"),
      tenant,
      () => readJsonObject(c.req.raw),
      requestContext(c),
    );
    return c.json({ ...record, request_id: c.get("requestId") });
  });

  app.get("/:tenant/admins", async (c) => {
    const tenant = c.req.param("tenant");
    return c.json({ admins: await listTenantAdmins(deps, c.get("principal"), tenant) });
  });

  app.post("/:tenant/admins", async (c) => {
    const tenant = c.req.param("tenant");
    const admin = await addTenantAdmin(
      deps,
      c.get("principal"),
      tenant,
      async () => userRefField(await readJsonObject(c.req.raw)),
      requestContext(c),
    );
    return c.json({ admin, request_id: c.get("requestId") }, 201);
  });

  app.delete("/:tenant/admins/:user", async (c) => {
    const tenant = c.req.param("tenant");
    await removeTenantAdmin(
      deps,
      c.get("principal"),
      tenant,
      c.req.param("user"),
      requestContext(c),
    );
    return c.json({ removed: c.req.param("user"), request_id: c.get("requestId") });
  });

  return app;
}
