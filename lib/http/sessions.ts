/**
 * `/api/v1/me` (who the caller is: person or token, tenants and roles) and
 * `/api/v1/sessions` (a person's own sessions: list, end one). Ending
 * another user's sessions is `DELETE /api/v1/users/{id}/sessions`
 * (lib/http/users.ts).
 *
 * @module
 */
import { Hono } from "hono";
import { can } from "../auth/permissions.ts";
import type { Principal } from "../auth/principal.ts";
import { ownSessions, revokeSessionAs } from "../services/sessions.ts";
import { findSessionRecord } from "../store/sessions.ts";
import { isTenantAdmin, listTenants } from "../store/tenants.ts";
import { findUser } from "../store/users.ts";
import { publicSession } from "../auth/sessions.ts";
import { publicToken } from "../store/tokens.ts";
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
    if (p.kind === "token") {
      return c.json({
        principal: {
          type: p.token.type === "namespace-client" ? "client" : "service",
          token: publicToken(p.token),
        },
      });
    }
    const [user, session] = await Promise.all([
      findUser(deps.kv, p.user_id),
      findSessionRecord(deps.kv, p.session_id),
    ]);
    const body: Record<string, unknown> = {
      principal: {
        type: "user",
        user: user === null ? { id: p.user_id } : { id: user.id, email: user.email },
        session: session === null ? { id: p.session_id } : publicSession(session),
        tenants: await tenantRoles(deps.kv, p),
      },
    };
    if (c.get("viaCookie")) body.csrf_token = await csrfToken(deps.key, p.session_id);
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

/** The tenants a person may read, with their role in each (`admin` or `member`). */
async function tenantRoles(
  kv: Deno.Kv,
  p: Principal & { kind: "session" },
): Promise<{ slug: string; role: "admin" | "member" }[]> {
  const out: { slug: string; role: "admin" | "member" }[] = [];
  for (const t of await listTenants(kv)) {
    if (!await can(kv, p, "tenant.read", { tenant: t.slug })) continue;
    const admin = await isTenantAdmin(kv, t.slug, p.user_id) ||
      await can(kv, p, "tenant.login", { tenant: t.slug });
    out.push({ slug: t.slug, role: admin ? "admin" : "member" });
  }
  return out;
}
