/**
 * `/api/v1/tokens`: service-token management (docs/api.md)
 * (create, list, read, rotate, revoke). Permission rules, audit, storage
 * and telling the runtime live in lib/services/tokens.ts; this module only
 * reads requests and shapes responses.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { CreateTokenInput } from "../auth/issuance.ts";
import {
  createToken,
  getToken,
  type IssuedToken,
  listTokens,
  type ListTokensQuery,
  revokeToken,
  rotateToken,
  TOKEN_TYPES,
} from "../services/tokens.ts";
import { InvalidRequestError } from "../errors.ts";
import type { TokenStatus } from "../protocol/responses.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { requestContext } from "./authn.ts";
import { readJsonObject, readOptionalJsonObject } from "./body.ts";
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

  app.post("/", async (c) => {
    const body = await readJsonObject(c.req.raw);
    const issued = await createToken(
      deps,
      c.get("principal"),
      body as unknown as CreateTokenInput,
      requestContext(c),
    );
    return issuedResponse(c, issued);
  });

  app.get("/", async (c) => {
    const q = c.req.query();
    const query: ListTokensQuery = {};
    const tenant = shapedParam(q.tenant, "tenant", SHAPES.slug);
    if (tenant !== undefined) query.tenant = tenant;
    const namespace = shapedParam(q.namespace, "namespace", SHAPES.slug);
    if (namespace !== undefined) query.namespace = namespace;
    const type = choiceParam(q.type, "type", TOKEN_TYPES);
    if (type !== undefined) query.type = type;
    const status = choiceParam(q.status, "status", STATUSES);
    if (status !== undefined) query.status = status;
    const limit = intParam(q.limit, "limit");
    if (limit !== undefined) query.limit = limit;
    const after = shapedParam(q.after, "after", SHAPES.tokenId);
    if (after !== undefined) query.after = after;
    const page = await listTokens(deps, c.get("principal"), query);
    return c.json({ tokens: page.items, next: page.next });
  });

  app.get("/:id", async (c) => {
    return c.json({ token: await getToken(deps, c.get("principal"), c.req.param("id")) });
  });

  app.post("/:id/rotate", async (c) => {
    // an empty body means "inherit everything"
    const raw = await readOptionalJsonObject(c.req.raw);
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
      deps,
      c.get("principal"),
      c.req.param("id"),
      input,
      requestContext(c),
    );
    return issuedResponse(c, issued);
  });

  app.delete("/:id", async (c) => {
    const token = await revokeToken(deps, c.get("principal"), c.req.param("id"), requestContext(c));
    return c.json({
      token: { id: token.id, status: token.status, revoked_at: token.revoked_at },
      request_id: c.get("requestId"),
    });
  });

  return app;
}

/**
 * The 201 answer to a create or rotate: the metadata, the one-time secret
 * and any warnings, never cached.
 */
function issuedResponse(c: Context<AppEnv>, issued: IssuedToken): Response {
  const { token, secret, warnings } = issued;
  return c.json(
    { token, secret, ...(warnings ? { warnings } : {}), request_id: c.get("requestId") },
    201,
    { "cache-control": "no-store" },
  );
}

/** A query parameter that must be one of `allowed`; absent or empty is undefined. */
function choiceParam<T extends string>(
  value: string | undefined,
  field: string,
  allowed: readonly T[],
): T | undefined {
  if (!value) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidRequestError(`${field} must be one of ${allowed.join(", ")}`, {
      details: { field },
    });
  }
  return value as T;
}
