/**
 * What a console route's path names: the namespace of
 * `/t/:tenant/ns/:ns/…`, and with `/env/:env` the environment too, as the
 * services take them.
 *
 * @module
 */
import type { Context } from "hono";
import type { NamespaceRef } from "../services/manifests.ts";
import type { Triple } from "../http/evaluate.ts";

/**
 * The namespace a route under `/t/:tenant/ns/:ns` names.
 *
 * @param c the route's context
 * @returns tenant and namespace
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { namespaceRef } from "./route_refs.ts";
 * const app = new Hono().get("/t/:tenant/ns/:ns", (c) => c.json(namespaceRef(c)));
 * const ref = await (await app.request("/t/acme/ns/web")).json();
 * if (ref.tenant !== "acme" || ref.namespace !== "web") throw new Error(JSON.stringify(ref));
 * ```
 */
export function namespaceRef(c: Context): NamespaceRef {
  return { tenant: c.req.param("tenant")!, namespace: c.req.param("ns")! };
}

/**
 * The environment a route under `/t/:tenant/ns/:ns/env/:env` names.
 *
 * @param c the route's context
 * @returns tenant, namespace and environment
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { environmentRef } from "./route_refs.ts";
 * const app = new Hono().get("/t/:tenant/ns/:ns/env/:env", (c) => c.json(environmentRef(c)));
 * const t = await (await app.request("/t/acme/ns/web/env/production")).json();
 * if (t.environment !== "production" || t.namespace !== "web") throw new Error(JSON.stringify(t));
 * ```
 */
export function environmentRef(c: Context): Triple {
  return { ...namespaceRef(c), environment: c.req.param("env")! };
}
