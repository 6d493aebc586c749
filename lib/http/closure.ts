/**
 * `GET /api/v1/tenants/{tenant}/namespaces/{slug}/closure` (docs/events.md):
 * the closure of (tenant, slug, version, subscription) as a deterministic
 * tar.gz archive. Authenticated either by a bearer credential with
 * `manifest.read`, or by a signed `token` query parameter from the event
 * stream (when no `Authorization` header is sent). Archives are memoized
 * per process.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { Principal } from "../auth/principal.ts";
import { etagMatches, versionEtag } from "../protocol/etag.ts";
import { decodeSubscription } from "../protocol/subscription.ts";
import { InvalidRequestError, UnauthorizedError } from "../errors.ts";
import { closureFor, type ClosureRequest } from "../services/streams.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { authenticate } from "./authn.ts";

/**
 * The (tenant, namespace, version, subscription) of a closure request.
 * Shared with the relay.
 *
 * @param c the request, routed with `:tenant` and `:ns`
 * @returns what it names
 * @throws {InvalidRequestError} when `version` or `subscription` is missing or malformed
 *
 * @example
 * ```ts ignore
 * const { tenant, namespace, version, flags } = closureRequest(c);
 * ```
 */
export function closureRequest(c: Context): ClosureRequest {
  const tenant = c.req.param("tenant") ?? "";
  const namespace = c.req.param("ns") ?? "";
  const versionParam = c.req.query("version");
  if (versionParam === undefined || versionParam === "") {
    throw new InvalidRequestError("version is required");
  }
  if (!/^[1-9]\d{0,14}$/.test(versionParam)) {
    throw new InvalidRequestError(
      "version must be a positive integer (version 0 has no closure)",
    );
  }
  const version = Number(versionParam);
  const subscription = c.req.query("subscription");
  if (subscription === undefined || subscription === "") {
    throw new InvalidRequestError("subscription is required");
  }
  return { tenant, namespace, version, subscription, flags: decodeSubscription(subscription) };
}

/**
 * The closure route, mounted under `/api/v1` before the bearer-auth routes
 * (it authenticates itself).
 *
 * @param deps the app's dependencies
 * @returns the route
 *
 * @example
 * ```ts ignore
 * app.route("/api/v1", closureRoutes(deps));
 * ```
 */
export function closureRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // A bearer credential, or a signed token (the snapshot URL of an event) in the query.
  const authn = authenticate(deps, { from: ["bearer"], required: false });
  app.get("/tenants/:tenant/namespaces/:ns/closure", authn, async (c) => {
    const req = closureRequest(c);
    const principal = c.get("principal") as Principal | undefined;
    const token = c.req.query("token");
    if (principal === undefined && token === undefined) {
      throw new UnauthorizedError(
        "Missing credential: send Authorization: Bearer <token> or a signed token parameter",
      );
    }
    const entry = await closureFor(
      deps,
      principal !== undefined ? { principal } : { token: token! },
      req,
    );
    const etag = versionEtag(req.version, entry.closureHash);
    const headers: Record<string, string> = { etag, "cache-control": "private, max-age=60" };
    if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
    return c.body(entry.archive as Uint8Array<ArrayBuffer>, 200, {
      ...headers,
      "content-type": "application/x-tar",
      "content-length": String(entry.archive.length),
    });
  });

  return app;
}
