/**
 * `/api/v1/me` (who the caller is: person or token, tenants and roles) and
 * `/api/v1/sessions` (a person's own sessions: list, end one). Ending
 * another user's sessions is `DELETE /api/v1/users/{id}/sessions`
 * (lib/http/users.ts).
 *
 * @module
 */
import { Hono } from "hono";
import { ownSessions, revokeSessionAs, whoAmI } from "../services/sessions.ts";
import { authDeps, requestContext } from "./authn.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { csrfToken } from "./auth/session_cookie.ts";

/**
 * The `/me` route, mounted under `/api/v1`.
 *
 * @example
 * ```ts ignore
 * api.route("/me", meRoutes(deps));
 * ```
 */
export function meRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/", async (c) => {
    const p = c.get("principal");
    const body: Record<string, unknown> = { principal: await whoAmI(deps, p) };
    if (p.kind === "session" && c.get("viaCookie")) {
      body.csrf_token = await csrfToken(deps.key, p.session_id);
    }
    return c.json(body);
  });
  return app;
}

/**
 * The `/sessions` routes, mounted under `/api/v1`.
 *
 * @example
 * ```ts ignore
 * api.route("/sessions", sessionRoutes(deps));
 * ```
 */
export function sessionRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/", async (c) => {
    return c.json({ sessions: await ownSessions(authDeps(deps), c.get("principal")) });
  });
  app.delete("/:session", async (c) => {
    const ended = await revokeSessionAs(
      authDeps(deps),
      c.get("principal"),
      c.req.param("session"),
      requestContext(c),
    );
    return c.json({
      session: { id: ended.id, status: "revoked" },
      request_id: c.get("requestId"),
    });
  });
  return app;
}
