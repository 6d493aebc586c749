/**
 * `/api/v1/tokens`: service-token management (docs/api.md)
 * (create, list, read, rotate, revoke). Permission rules, audit and storage
 * live in lib/auth/token_service.ts; this module only reads requests and
 * shapes responses.
 *
 * @module
 */
import { Hono } from "hono";
import type { CreateTokenInput } from "../auth/issuance.ts";
import {
  createToken,
  getToken,
  listTokens,
  revokeToken,
  rotateToken,
} from "../auth/token_service.ts";
import type { ListTokensQuery } from "../auth/token_service.ts";
import { InvalidRequestError } from "../errors.ts";
import { TOKEN_TYPES, type TokenStatus, type TokenType } from "../store/tokens.ts";
import type { AppDeps, AppEnv } from "./app.ts";
import { authDeps, requestContext } from "./authn.ts";
import { JSON_BODY_LIMIT, parseJsonObject, readBodyBytes, readJsonObject } from "./body.ts";
import { intParam, shapedParam, SHAPES, stringField } from "./params.ts";

const STATUSES: readonly TokenStatus[] = ["active", "revoked", "expired"];

/**
 * The token routes.
 *
 * @example
 * ```ts ignore
 * api.route("/tokens", tokenRoutes(deps));
 * ```
 */
export function tokenRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const auth = authDeps(deps);

  app.post("/", async (c) => {
    const body = await readJsonObject(c.req.raw);
    const issued = await createToken(
      auth,
      c.get("principal"),
      body as unknown as CreateTokenInput,
      requestContext(c),
    );
    return c.json(
      { token: issued.token, secret: issued.secret, request_id: c.get("requestId") },
      201,
      { "cache-control": "no-store" },
    );
  });

  app.get("/", async (c) => {
    const q = c.req.query();
    const query: ListTokensQuery = {};
    const tenant = shapedParam(q.tenant, "tenant", SHAPES.slug);
    if (tenant !== undefined) query.tenant = tenant;
    const namespace = shapedParam(q.namespace, "namespace", SHAPES.slug);
    if (namespace !== undefined) query.namespace = namespace;
    if (q.type) {
      if (!(TOKEN_TYPES as readonly string[]).includes(q.type)) {
        throw new InvalidRequestError(`type must be one of ${TOKEN_TYPES.join(", ")}`, {
          details: { field: "type" },
        });
      }
      query.type = q.type as TokenType;
    }
    if (q.status) {
      if (!(STATUSES as readonly string[]).includes(q.status)) {
        throw new InvalidRequestError(`status must be one of ${STATUSES.join(", ")}`, {
          details: { field: "status" },
        });
      }
      query.status = q.status as TokenStatus;
    }
    const limit = intParam(q.limit, "limit");
    if (limit !== undefined) query.limit = limit;
    const after = shapedParam(q.after, "after", SHAPES.tokenId);
    if (after !== undefined) query.after = after;
    const page = await listTokens(auth, c.get("principal"), query);
    return c.json({ tokens: page.items, next: page.next });
  });

  app.get("/:id", async (c) => {
    return c.json({ token: await getToken(auth, c.get("principal"), c.req.param("id")) });
  });

  app.post("/:id/rotate", async (c) => {
    // an empty body means "inherit everything"
    const bytes = await readBodyBytes(c.req.raw, JSON_BODY_LIMIT);
    const raw = bytes.length === 0 ? {} : parseJsonObject(bytes);
    const input: { name?: string; expires_at?: string | null } = {};
    const name = stringField(raw, "name");
    if (name !== undefined) input.name = name;
    if (raw.expires_at !== undefined) {
      if (raw.expires_at !== null && typeof raw.expires_at !== "string") {
        throw new InvalidRequestError("expires_at must be an RFC 3339 string or null");
      }
      input.expires_at = raw.expires_at as string | null;
    }
    const issued = await rotateToken(
      auth,
      c.get("principal"),
      c.req.param("id"),
      input,
      requestContext(c),
    );
    return c.json(
      { token: issued.token, secret: issued.secret, request_id: c.get("requestId") },
      201,
      { "cache-control": "no-store" },
    );
  });

  app.delete("/:id", async (c) => {
    const token = await revokeToken(auth, c.get("principal"), c.req.param("id"), requestContext(c));
    await deps.guard.recheck(); // this process's streams of the token end now
    return c.json({
      token: { id: token.id, status: token.status, revoked_at: token.revoked_at },
      request_id: c.get("requestId"),
    });
  });

  return app;
}
