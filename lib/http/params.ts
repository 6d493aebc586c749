/**
 * The one place for the shapes of identifiers a request carries (tenant,
 * namespace and environment slugs, flag keys, token and user ids, version
 * numbers, audit cursors) and the readers of query strings and body fields.
 * A value is checked here before it reaches the store, so no request can
 * make a KV key of unbounded size:
 *
 * - a path identifier of the wrong shape names nothing that can exist: 404
 *   with the not-found code of what it names (`tenant_not_found`, …), except
 *   a version number, which is 400 `invalid_request`;
 * - a query parameter or body field of the wrong shape is 400
 *   `invalid_request` naming it in the message and in `details.field`.
 *
 * @module
 */
import type { Hono, MiddlewareHandler } from "hono";
import { InvalidRequestError, NotFoundError } from "../errors.ts";
import { MAX_EMAIL_LENGTH } from "../protocol/limits.ts";
import { SLUG_PATTERN } from "../protocol/slug.ts";
import type { AppEnv } from "./deps.ts";

/** The shape of one kind of identifier. */
export interface IdentifierShape {
  /** What the identifier names, for messages (`tenant slug`). */
  describe: string;
  /** The whole-string pattern. */
  pattern: RegExp;
}

const ULID = "[0-9A-HJKMNP-TV-Z]{26}";

/** Every identifier shape of the API. */
export const SHAPES = {
  /** Tenant, namespace and environment slugs and flag keys. */
  slug: { describe: "a slug", pattern: SLUG_PATTERN },
  /** Service-token ids, `tok_<ulid>`. */
  tokenId: { describe: "a token id (tok_…)", pattern: new RegExp(`^tok_${ULID}$`) },
  /** User ids, `usr_<ulid>`. */
  userId: { describe: "a user id (usr_…)", pattern: new RegExp(`^usr_${ULID}$`) },
  /** Session ids, `ssn_<ulid>`. */
  sessionId: { describe: "a session id (ssn_…)", pattern: new RegExp(`^ssn_${ULID}$`) },
  /** Change request ids, `cr_<ulid>`. */
  changeRequestId: { describe: "a change request id (cr_…)", pattern: new RegExp(`^cr_${ULID}$`) },
  /** Manifest version numbers. */
  version: { describe: "a non-negative integer", pattern: /^\d{1,15}$/ },
  /** Audit entry ids (the audit list cursor). */
  auditId: { describe: "an audit entry id", pattern: new RegExp(`^${ULID}$`) },
  /** Audit event types (`token.created`). */
  eventType: { describe: "an event type", pattern: /^[a-z][a-z0-9_.-]{0,63}$/ },
  /** Email addresses as user records hold them (the people list's cursor): printable ASCII, one `@`. */
  email: {
    describe: "an email address",
    pattern: new RegExp(`^(?=.{3,${MAX_EMAIL_LENGTH}}$)[!-?A-~]+@[!-?A-~]+$`),
  },
} as const satisfies Record<string, IdentifierShape>;

/** How a path parameter is checked: its shape and the error when it is off. */
interface PathParamRule {
  shape: IdentifierShape;
  fail: (value: string) => Error;
}

/** Path parameters by name, as the routes of lib/http/ name them. */
const PATH_PARAMS: Record<string, PathParamRule> = {
  tenant: {
    shape: SHAPES.slug,
    fail: (v) => new NotFoundError("tenant_not_found", `No tenant ${shown(v)}`),
  },
  ns: {
    shape: SHAPES.slug,
    fail: (v) => new NotFoundError("namespace_not_found", `No namespace ${shown(v)}`),
  },
  env: {
    shape: SHAPES.slug,
    fail: (v) => new NotFoundError("environment_not_found", `No environment ${shown(v)}`),
  },
  id: {
    shape: SHAPES.tokenId,
    fail: (v) => new NotFoundError("token_not_found", `No token ${shown(v)}`),
  },
  user: {
    shape: SHAPES.userId,
    fail: (v) => new NotFoundError("admin_not_found", `No admin ${shown(v)}`),
  },
  uid: {
    shape: SHAPES.userId,
    fail: (v) => new NotFoundError("user_not_found", `No user ${shown(v)}`),
  },
  session: {
    shape: SHAPES.sessionId,
    fail: (v) => new NotFoundError("session_not_found", `No session ${shown(v)}`),
  },
  cr: {
    shape: SHAPES.changeRequestId,
    fail: (v) => new NotFoundError("change_request_not_found", `No change request ${shown(v)}`),
  },
  v: {
    shape: SHAPES.version,
    fail: () =>
      new InvalidRequestError("version must be a non-negative integer", {
        details: { field: "version" },
      }),
  },
};

/**
 * The API's paths alternate a collection and an identifier
 * (`/tenants/{tenant}/namespaces/{ns}/environments/{env}/evaluate`): the
 * segment after one of these collection names is the identifier named.
 */
const COLLECTIONS: Readonly<Record<string, string>> = {
  tenants: "tenant",
  namespaces: "ns",
  environments: "env",
  admins: "user",
  versions: "v",
  tokens: "id",
  users: "uid",
  sessions: "session",
  "change-requests": "cr",
};

/**
 * Checks every path identifier of a request before any route reads it (see
 * the module doc for the answers), once per request, left to right (the
 * tenant before the namespace before the environment). Register it on the
 * root app before the routes.
 *
 * @param app the root application
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { guardPathIdentifiers } from "./params.ts";
 * import type { AppEnv } from "./deps.ts";
 * const app = new Hono<AppEnv>();
 * guardPathIdentifiers(app);
 * app.onError((err) => new Response(null, { status: (err as { status?: number }).status ?? 500 }));
 * app.get("/api/v1/tokens/:id", (c) => c.text("ok"));
 * if ((await app.request(`/api/v1/tokens/tok_${"x".repeat(3000)}`)).status !== 404) throw new Error();
 * ```
 */
export function guardPathIdentifiers(app: Hono<AppEnv>): void {
  app.use("/api/v1/*", checkPathIdentifiers);
}

const API_PREFIX = "/api/v1/";

const checkPathIdentifiers: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = c.req.path;
  const segments = path.slice(API_PREFIX.length).split("/");
  for (let i = 0; i + 1 < segments.length; i++) {
    const name = COLLECTIONS[segments[i]!];
    if (name === undefined || segments[i + 1] === "") continue;
    const rule = PATH_PARAMS[name]!;
    const value = pathSegment(segments[++i]!);
    if (value === null || !rule.shape.pattern.test(value)) throw rule.fail(value ?? segments[i]!);
  }
  await next();
};

/** A path segment as a route parameter would read it (percent-decoded), or null when undecodable. */
function pathSegment(raw: string): string | null {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/**
 * An optional query parameter that must have `shape` when present (400
 * naming the parameter otherwise); the empty string counts as absent.
 *
 * @param value the raw value
 * @param name the parameter name
 * @param shape its shape (one of {@linkcode SHAPES})
 * @returns the value, or undefined
 *
 * @example
 * ```ts
 * import { SHAPES, shapedParam } from "./params.ts";
 * if (shapedParam("acme", "tenant", SHAPES.slug) !== "acme") throw new Error();
 * let failed = false;
 * try { shapedParam("Acme!", "tenant", SHAPES.slug); } catch { failed = true; }
 * if (!failed) throw new Error();
 * ```
 */
export function shapedParam(
  value: string | undefined,
  name: string,
  shape: IdentifierShape,
): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!shape.pattern.test(value)) {
    throw new InvalidRequestError(`${name} must be ${shape.describe}, not ${shown(value)}`, {
      details: { field: name },
    });
  }
  return value;
}

/**
 * An optional non-negative integer query parameter.
 *
 * @example
 * ```ts
 * import { intParam } from "./params.ts";
 * if (intParam("5", "limit") !== 5 || intParam(undefined, "limit") !== undefined) throw new Error();
 * ```
 */
export function intParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!SHAPES.version.pattern.test(value)) {
    throw new InvalidRequestError(`${name} must be a non-negative integer`, {
      details: { field: name },
    });
  }
  return Number(value);
}

/**
 * An optional string field of a JSON body (400 when present and not a string).
 *
 * @example
 * ```ts
 * import { stringField } from "./params.ts";
 * if (stringField({ a: "x" }, "a") !== "x") throw new Error();
 * ```
 */
export function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") {
    throw new InvalidRequestError(`${name} must be a string`, { details: { field: name } });
  }
  return v;
}

/**
 * A required string field of a JSON body.
 *
 * @example
 * ```ts
 * import { requiredString } from "./params.ts";
 * if (requiredString({ slug: "acme" }, "slug") !== "acme") throw new Error();
 * ```
 */
export function requiredString(body: Record<string, unknown>, name: string): string {
  const v = stringField(body, name);
  if (v === undefined || v === "") {
    throw new InvalidRequestError(`${name} is required`, { details: { field: name } });
  }
  return v;
}

/**
 * The `user_id` field of an add-admin request: a user id or an email. Over
 * the email limit it is a 400 naming `user_id`; a value of neither shape
 * names no user (404 `user_not_found`).
 *
 * @param body the request body
 * @returns the user id or email, for `getUser`
 *
 * @example
 * ```ts
 * import { userRefField } from "./params.ts";
 * if (userRefField({ user_id: "ana@example.com" }) !== "ana@example.com") throw new Error();
 * ```
 */
export function userRefField(body: Record<string, unknown>): string {
  const v = requiredString(body, "user_id");
  if (v.length > MAX_EMAIL_LENGTH) {
    throw new InvalidRequestError(
      `user_id is ${v.length} characters long; the limit is ${MAX_EMAIL_LENGTH}`,
      { details: { field: "user_id", limit: MAX_EMAIL_LENGTH } },
    );
  }
  if (!SHAPES.userId.pattern.test(v) && !v.includes("@")) {
    throw new NotFoundError("user_not_found", `No user ${shown(v)}`);
  }
  return v;
}

/** A value as messages quote it: JSON, cut to a readable length. */
function shown(value: string): string {
  const json = JSON.stringify(value);
  return json.length <= 80 ? json : `${json.slice(0, 77)}…"`;
}
