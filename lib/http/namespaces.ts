/**
 * `/api/v1/tenants/{t}/namespaces`: create, list, read and delete namespaces,
 * and manage the namespace-admin list.
 *
 * @module
 */
import { Hono } from "hono";
import {
  addNamespaceAdmin,
  createNamespace,
  deleteNamespace,
  getNamespace,
  listNamespaceAdmins,
  listNamespaces,
  removeNamespaceAdmin,
} from "../services/namespaces.ts";
import { requestContext } from "./authn.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { readJsonObject } from "./body.ts";
import { requiredString, stringField, userRefField } from "./params.ts";

/**
 * The namespace routes, mounted under `/tenants/:tenant/namespaces`.
 *
 * @example
 * ```ts ignore
 * api.route("/tenants/:tenant/namespaces", namespaceRoutes(deps));
 * ```
 */
export function namespaceRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = await createNamespace(deps, c.get("principal"), tenant, async () => {
      const body = await readJsonObject(c.req.raw);
      return { slug: requiredString(body, "slug"), description: stringField(body, "description") };
    }, requestContext(c));
    return c.json({ namespace, request_id: c.get("requestId") }, 201);
  });

  app.get("/", async (c) => {
    const tenant = c.req.param("tenant")!;
    return c.json({ namespaces: await listNamespaces(deps, c.get("principal"), tenant) });
  });

  app.get("/:ns", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    return c.json({ namespace: await getNamespace(deps, c.get("principal"), tenant, namespace) });
  });

  app.delete("/:ns", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    const { revoked } = await deleteNamespace(
      deps,
      c.get("principal"),
      tenant,
      namespace,
      requestContext(c),
    );
    return c.json({ deleted: namespace, revoked_tokens: revoked, request_id: c.get("requestId") });
  });

  app.get("/:ns/admins", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    const admins = await listNamespaceAdmins(deps, c.get("principal"), tenant, namespace);
    return c.json({ admins });
  });

  app.post("/:ns/admins", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    const admin = await addNamespaceAdmin(
      deps,
      c.get("principal"),
      tenant,
      namespace,
      async () => userRefField(await readJsonObject(c.req.raw)),
      requestContext(c),
    );
    return c.json({ admin, request_id: c.get("requestId") }, 201);
  });

  app.delete("/:ns/admins/:user", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    await removeNamespaceAdmin(
      deps,
      c.get("principal"),
      tenant,
      namespace,
      c.req.param("user"),
      requestContext(c),
    );
    return c.json({ removed: c.req.param("user"), request_id: c.get("requestId") });
  });

  return app;
}
