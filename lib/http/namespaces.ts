/**
 * `/api/v1/tenants/{t}/namespaces`: create, list, read and delete namespaces,
 * and manage the namespace-admin list.
 *
 * @module
 */
import { Hono } from "hono";
import { authorize, can } from "../auth/permissions.ts";
import {
  addNamespaceAdmin,
  createNamespace,
  deleteNamespace,
  removeNamespaceAdmin,
} from "../services/namespaces.ts";
import { getNamespace, listNamespaceAdmins, listNamespaces } from "../store/namespaces.ts";
import { getTenant } from "../store/tenants.ts";
import { getHead } from "../store/versions.ts";
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
  const { kv } = deps;
  const app = new Hono<AppEnv>();

  app.post("/", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = await createNamespace(deps, c.get("principal"), tenant, async () => {
      const body = await readJsonObject(c.req.raw);
      return { slug: requiredString(body, "slug"), description: stringField(body, "description") };
    }, { requestId: c.get("requestId") });
    return c.json({ namespace, request_id: c.get("requestId") }, 201);
  });

  app.get("/", async (c) => {
    const tenant = c.req.param("tenant")!;
    const p = c.get("principal");
    await authorize(kv, p, "namespace.list", { tenant });
    await getTenant(kv, tenant);
    const visible = [];
    for (const ns of await listNamespaces(kv, tenant)) {
      if (await can(kv, p, "namespace.read", { tenant, namespace: ns.slug })) {
        visible.push({ ...ns, head: await getHead(kv, tenant, ns.slug) });
      }
    }
    return c.json({ namespaces: visible });
  });

  app.get("/:ns", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    await authorize(kv, c.get("principal"), "namespace.read", { tenant, namespace });
    const record = await getNamespace(kv, tenant, namespace);
    const head = await getHead(kv, tenant, namespace);
    return c.json({ namespace: { ...record, head } });
  });

  app.delete("/:ns", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    const { revoked } = await deleteNamespace(deps, c.get("principal"), tenant, namespace, {
      requestId: c.get("requestId"),
    });
    return c.json({ deleted: namespace, revoked_tokens: revoked, request_id: c.get("requestId") });
  });

  app.get("/:ns/admins", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    await authorize(kv, c.get("principal"), "namespace.read", { tenant, namespace });
    await getNamespace(kv, tenant, namespace);
    return c.json({ admins: await listNamespaceAdmins(kv, tenant, namespace) });
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
      { requestId: c.get("requestId") },
    );
    return c.json({ admin, request_id: c.get("requestId") }, 201);
  });

  app.delete("/:ns/admins/:user", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    await removeNamespaceAdmin(deps, c.get("principal"), tenant, namespace, c.req.param("user"), {
      requestId: c.get("requestId"),
    });
    return c.json({ removed: c.req.param("user"), request_id: c.get("requestId") });
  });

  return app;
}
