/**
 * The web console, mounted at `/ui`: its assets (no sign-in needed), then
 * every page behind the console's door (lib/console/gate.ts), and the
 * one place where a console error becomes a page (or, for an htmx swap, a
 * notice to swap in). Each area of the console is its own route module.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import { CfgtoolError, NotFoundError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import { errorPageResponse } from "../http/errors.ts";
import { tooLarge } from "../http/body.ts";
import { assetNamed } from "./assets.ts";
import type { ConsoleEnv } from "./env.ts";
import { consoleGate } from "./gate.ts";
import { consoleFragment, consolePage, isFragmentRequest } from "./layout.tsx";
import { ManifestViews } from "../services/versions.ts";
import { homeRoutes } from "./namespaces.tsx";
import { flagListRoutes } from "./flags.tsx";
import { liveRoutes } from "./live.ts";
import { flagRoutes } from "./flag.tsx";
import { playgroundRoutes } from "./playground.tsx";
import { versionRoutes } from "./versions.tsx";
import { changeRoutes } from "./change.tsx";
import { changeRequestRoutes } from "./change_requests.tsx";
import { tokenRoutes } from "./tokens.tsx";
import { peopleRoutes } from "./people.tsx";
import { auditRoutes } from "./audit.tsx";
import { webhookRoutes } from "./webhooks.tsx";
import { authoringRoutes } from "./authoring/routes.tsx";
import { loginPolicyRoutes } from "./login_policy_form.tsx";
import { Notice } from "./widgets.tsx";

/** Largest console form body: 256 KiB (a playground context is the largest). */
export const CONSOLE_BODY_LIMIT = 256 * 1024;

/** The largest form an authoring editor (`/edit/…`) accepts, bytes. */
export const EDITOR_BODY_LIMIT = 2 * 1024 * 1024;

/**
 * The console routes.
 *
 * @param deps the app dependencies
 * @returns the routes, to mount at `/ui`
 *
 * @example
 * ```ts ignore
 * app.route("/ui", consoleRoutes(deps));
 * ```
 */
export function consoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const views = new ManifestViews();
  app.onError((err, c) => consoleError(deps, err, c));
  app.notFound((c) =>
    consoleError(deps, new NotFoundError("not_found", `There is no console page ${c.req.path}`), c)
  );

  // Pages and assets cross the wire compressed (a 500-flag list is ~170 KB of
  // HTML, ~6 KB gzipped); the event stream is never buffered by a compressor.
  const compressor = compress({ threshold: 1024 });
  app.use("*", function compressPages(c, next) {
    return c.req.path.endsWith("/live") ? next() : compressor(c, next);
  });

  app.get("/assets/:name", (c) => {
    const asset = assetNamed(c.req.param("name"));
    if (asset === undefined) throw new NotFoundError("not_found", "No such asset");
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, {
      "content-type": asset.type,
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    });
  });

  const limits = [CONSOLE_BODY_LIMIT, EDITOR_BODY_LIMIT].map((maxSize) =>
    bodyLimit({
      maxSize,
      onError: () => {
        throw tooLarge(maxSize);
      },
    })
  );
  app.use("*", function limitBodies(c, next) {
    // an editor's form may carry a whole file (a segment's list of 10,000 ids)
    return (c.req.path.includes("/edit/") ? limits[1]! : limits[0]!)(c, next);
  });
  app.use("*", consoleGate(deps));
  app.route("/", homeRoutes(deps));
  app.route("/", liveRoutes(deps));
  app.route("/t/:tenant/ns/:ns", flagListRoutes(deps, views));
  app.route("/t/:tenant/ns/:ns", authoringRoutes(deps, views)); // /edit/: flags, rules, segments…
  app.route("/t/:tenant/ns/:ns", flagRoutes(deps, views)); // one flag, one segment
  app.route("/t/:tenant/ns/:ns", playgroundRoutes(deps, views));
  app.route("/t/:tenant/ns/:ns", versionRoutes(deps, views)); // versions, diff, rollback
  app.route("/t/:tenant/ns/:ns", changeRoutes(deps, views)); // quick changes
  app.route("/t/:tenant/ns/:ns", changeRequestRoutes(deps)); // change requests, protection, rollouts
  app.route("/t/:tenant", tokenRoutes(deps, views));
  app.route("/t/:tenant", peopleRoutes(deps, views));
  app.route("/t/:tenant", loginPolicyRoutes(deps)); // how people sign in
  app.route("/t/:tenant", auditRoutes(deps, views));
  app.route("/t/:tenant", webhookRoutes(deps));
  return app;
}

const TITLES: Record<number, string> = {
  400: "That did not work",
  401: "Signed out",
  403: "Not allowed",
  404: "Not found",
  409: "Conflict",
  412: "Someone changed this first",
  413: "Too large",
  422: "Not valid",
  429: "Too many requests",
};

/** A console error as a page for the signed-in person, a notice for a swap. */
function consoleError(deps: AppDeps, err: unknown, c: Context<ConsoleEnv>): Promise<Response> {
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  if (c.get("person" as never) === undefined) {
    return errorPageResponse(err, requestId, deps.log); // refused at the door: the sign-in style page
  }
  const known = err instanceof CfgtoolError;
  if (!known) {
    deps.log("error", "unhandled error", {
      request_id: requestId,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
  } else if (err.status >= 500) {
    deps.log("error", "request failed", { request_id: requestId, code: err.code });
  }
  const status = (known ? err.status : 500) as 400;
  const message = known ? err.message : "Something went wrong on the server.";
  const body = (
    <Notice kind="error">
      <p>{message}</p>
      <p class="small muted">
        Request id: <code>{requestId}</code>
      </p>
    </Notice>
  );
  if (isFragmentRequest(c)) return consoleFragment(c, body, status);
  const tenant = c.req.param("tenant" as never) as string | undefined;
  return consolePage(
    c,
    { title: TITLES[status] ?? "Something went wrong", status, ...(tenant ? { tenant } : {}) },
    body,
  );
}
