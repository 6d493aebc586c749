/**
 * `/api/v1/tenants/{t}/namespaces`: create, list, read and delete namespaces,
 * and manage the namespace-admin list.
 *
 * @module
 */
import { Hono } from "hono";
import { actorOf, principalId } from "../auth/principal.ts";
import { authorize, can } from "../auth/permissions.ts";
import {
  addNamespaceAdmin,
  createNamespace,
  deleteNamespace,
  getNamespace,
  listNamespaceAdmins,
  listNamespaces,
  removeNamespaceAdmin,
} from "../store/namespaces.ts";
import { getTenant } from "../store/tenants.ts";
import { getHead } from "../store/versions.ts";
import { getUser } from "../store/users.ts";
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
  const now = () => deps.now?.() ?? new Date();

  app.post("/", async (c) => {
    const tenant = c.req.param("tenant")!;
    const p = c.get("principal");
    await authorize(kv, p, "namespace.create", { tenant });
    await getTenant(kv, tenant);
    const body = await readJsonObject(c.req.raw);
    const namespace = await createNamespace(kv, {
      tenant,
      slug: requiredString(body, "slug"),
      description: stringField(body, "description") ?? null,
      created_by: principalId(p),
      now,
    });
    deps.runtime.namespaceChanged(tenant, namespace.slug);
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
    const p = c.get("principal");
    await authorize(kv, p, "namespace.delete", { tenant, namespace });
    const { revoked } = await deleteNamespace(
      kv,
      tenant,
      namespace,
      actorOf(p, c.get("requestId")),
      now(),
    );
    deps.runtime.namespaceChanged(tenant, namespace);
    await deps.runtime.guard.recheck();
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
    const p = c.get("principal");
    await authorize(kv, p, "namespace.admins", { tenant, namespace });
    await getNamespace(kv, tenant, namespace);
    const body = await readJsonObject(c.req.raw);
    const user = await getUser(kv, userRefField(body));
    const admin = await addNamespaceAdmin(kv, {
      tenant,
      namespace,
      user_id: user.id,
      added_by: principalId(p),
      now,
    });
    return c.json({ admin, request_id: c.get("requestId") }, 201);
  });

  app.delete("/:ns/admins/:user", async (c) => {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns");
    await authorize(kv, c.get("principal"), "namespace.admins", { tenant, namespace });
    await removeNamespaceAdmin(kv, tenant, namespace, c.req.param("user"));
    return c.json({ removed: c.req.param("user"), request_id: c.get("requestId") });
  });

  return app;
}
