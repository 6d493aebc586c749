/**
 * What a console route's path names: the namespace of
 * `/t/:tenant/ns/:ns/…`, with `/env/:env` the environment too, and a
 * version number; and the request itself (its id and client IP), as the
 * services take them.
 *
 * @module
 */
import type { Context } from "hono";
import type { RequestContext } from "../auth/deps.ts";
import { InvalidRequestError } from "../errors.ts";
import type { NamespaceRef } from "../services/versions.ts";
import { requestContext } from "../http/authn.ts";
import type { AppEnv } from "../http/deps.ts";
import type { Triple } from "../services/evaluation.ts";
import { intParam } from "../http/params.ts";

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

/**
 * The request of a console route as a service takes it: its id (which
 * goes into audit entries) and the client's IP.
 *
 * @param c the route's context
 * @returns the request context
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { consoleRequest } from "./route_refs.ts";
 * const app = new Hono<{ Variables: { requestId: string; clientIp: string | undefined } }>();
 * app.use("*", async (c, next) => {
 *   c.set("requestId", "req-1");
 *   c.set("clientIp", undefined);
 *   await next();
 * });
 * app.get("/", (c) => c.json(consoleRequest(c as never)));
 * const ctx = await (await app.request("/")).json();
 * if (ctx.requestId !== "req-1" || "ip" in ctx) throw new Error(JSON.stringify(ctx));
 * ```
 */
export function consoleRequest(c: Context): RequestContext {
  return requestContext(c as unknown as Context<AppEnv>);
}

/**
 * A version number from the path (`/versions/:v`): 400 when it is not one.
 *
 * @param raw the path parameter
 * @returns the version
 *
 * @example
 * ```ts
 * import { versionParam } from "./route_refs.ts";
 * if (versionParam("12") !== 12) throw new Error();
 * let status = 0;
 * try { versionParam("one"); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 400) throw new Error();
 * ```
 */
export function versionParam(raw: string | undefined): number {
  const v = intParam(raw, "version");
  if (v === undefined) throw new InvalidRequestError("version must be a non-negative integer");
  return v;
}
