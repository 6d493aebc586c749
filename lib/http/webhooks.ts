/**
 * `/api/v1/tenants/{tenant}/webhooks`: a tenant's webhooks (docs/api.md,
 * "Webhooks"; docs/webhooks.md): create (the secret answered once, never
 * cached), list, read, delete, send a test event, and the deliveries.
 * Who may, what is checked and what is sent live in
 * lib/services/webhooks.ts; this module only reads requests and shapes
 * answers.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  testWebhook,
} from "../services/webhooks.ts";
import { requestContext } from "./authn.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { readJsonObject } from "./body.ts";

/**
 * The webhook routes, mounted at `/api/v1/tenants/:tenant/webhooks`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * api.route("/tenants/:tenant/webhooks", webhookRoutes(deps));
 * ```
 */
export function webhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const tenantOf = (c: Context<AppEnv>) => c.req.param("tenant")!;

  app.post("/", async (c) => {
    const made = await createWebhook(
      deps,
      c.get("principal"),
      tenantOf(c),
      () => readJsonObject(c.req.raw),
      requestContext(c),
    );
    return c.json(
      { webhook: made.webhook, secret: made.secret, request_id: c.get("requestId") },
      201,
      { "cache-control": "no-store" },
    );
  });

  app.get("/", async (c) => {
    return c.json({ webhooks: await listWebhooks(deps, c.get("principal"), tenantOf(c)) });
  });

  app.get("/:id", async (c) => {
    const webhook = await getWebhook(deps, c.get("principal"), tenantOf(c), c.req.param("id"));
    return c.json({ webhook });
  });

  app.delete("/:id", async (c) => {
    const webhook = await deleteWebhook(
      deps,
      c.get("principal"),
      tenantOf(c),
      c.req.param("id"),
      requestContext(c),
    );
    return c.json({ deleted: webhook.id, webhook, request_id: c.get("requestId") });
  });

  app.post("/:id/test", async (c) => {
    const delivery = await testWebhook(
      deps,
      c.get("principal"),
      tenantOf(c),
      c.req.param("id"),
      requestContext(c),
    );
    return c.json({ delivery, request_id: c.get("requestId") });
  });

  app.get("/:id/deliveries", async (c) => {
    const deliveries = await listWebhookDeliveries(
      deps,
      c.get("principal"),
      tenantOf(c),
      c.req.param("id"),
    );
    return c.json({ deliveries });
  });

  return app;
}
