/**
 * `/api/v1/tenants`: create, list, read and delete tenants, and manage the
 * tenant-admin list.
 *
 * @module
 */
import { Hono } from "hono";
import { authorize, can } from "../auth/permissions.ts";
import {
  addTenantAdmin,
  createTenant,
  deleteTenant,
  removeTenantAdmin,
} from "../services/tenants.ts";
import { getTenant, listTenantAdmins, listTenants } from "../store/tenants.ts";
import { getLoginPolicy, setLoginPolicy } from "../services/login_policies.ts";
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
  const { kv } = deps;
  const app = new Hono<AppEnv>();

  app.post("/", async (c) => {
    const tenant = await createTenant(deps, c.get("principal"), async () => {
      const body = await readJsonObject(c.req.raw);
      return { slug: requiredString(body, "slug"), description: stringField(body, "description") };
    }, { requestId: c.get("requestId") });
    return c.json({ tenant, request_id: c.get("requestId") }, 201);
  });

  app.get("/", async (c) => {
    const p = c.get("principal");
    await authorize(kv, p, "tenant.list", {});
    const all = await listTenants(kv);
    const visible = [];
    for (const t of all) if (await can(kv, p, "tenant.read", { tenant: t.slug })) visible.push(t);
    return c.json({ tenants: visible });
  });

  app.get("/:tenant", async (c) => {
    const tenant = c.req.param("tenant");
    await authorize(kv, c.get("principal"), "tenant.read", { tenant });
    return c.json({ tenant: await getTenant(kv, tenant) });
  });

  app.delete("/:tenant", async (c) => {
    const tenant = c.req.param("tenant");
    const { revoked } = await deleteTenant(deps, c.get("principal"), tenant, {
      requestId: c.get("requestId"),
    });
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
      { requestId: c.get("requestId") },
    );
    return c.json({ ...record, request_id: c.get("requestId") });
  });

  app.get("/:tenant/admins", async (c) => {
    const tenant = c.req.param("tenant");
    await authorize(kv, c.get("principal"), "tenant.read", { tenant });
    await getTenant(kv, tenant);
    return c.json({ admins: await listTenantAdmins(kv, tenant) });
  });

  app.post("/:tenant/admins", async (c) => {
    const tenant = c.req.param("tenant");
    const admin = await addTenantAdmin(
      deps,
      c.get("principal"),
      tenant,
      async () => userRefField(await readJsonObject(c.req.raw)),
      { requestId: c.get("requestId") },
    );
    return c.json({ admin, request_id: c.get("requestId") }, 201);
  });

  app.delete("/:tenant/admins/:user", async (c) => {
    const tenant = c.req.param("tenant");
    await removeTenantAdmin(deps, c.get("principal"), tenant, c.req.param("user"), {
      requestId: c.get("requestId"),
    });
    return c.json({ removed: c.req.param("user"), request_id: c.get("requestId") });
  });

  return app;
}
