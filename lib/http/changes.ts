/**
 * A namespace's protected environments and change requests, mounted under
 * `/tenants/:tenant/namespaces/:ns`: `GET|PUT /protection`, and
 * `/change-requests` (open, list, read, update, approve, reject, comment,
 * withdraw, apply, cancel a schedule) and `POST /rollouts` (a progressive
 * rollout, opened as a change request). Each route reads its
 * request and calls one service (lib/services/protection.ts,
 * lib/services/changes.ts, lib/services/change_apply.ts), which authorises,
 * reads and writes; this file shapes the responses.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { RequestContext } from "../auth/deps.ts";
import type { Principal } from "../auth/principal.ts";
import { InvalidRequestError } from "../errors.ts";
import { CHANGE_STATUSES } from "../protocol/changes.ts";
import { durationMsOf } from "../protocol/time_text.ts";
import { applyChange, cancelSchedule, openRollout } from "../services/change_apply.ts";
import {
  approveChange,
  changeDetails,
  type ChangeRequestRecord,
  type ChangeStatus,
  changeView,
  commentOnChange,
  listChanges,
  openChangeRequest,
  rejectChange,
  updateChange,
  withdrawChange,
} from "../services/changes.ts";
import { getProtection, parseProtection, setProtection } from "../services/protection.ts";
import type { NamespaceRef } from "../services/versions.ts";
import { requestContext } from "./authn.ts";
import {
  MANIFEST_BODY_LIMIT,
  parseJsonObject,
  readBodyBytes,
  readJsonObject,
  readOptionalJsonObject,
} from "./body.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { intParam, shapedParam, SHAPES, stringField } from "./params.ts";

type Ctx = Context<AppEnv>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The protection and change-request routes.
 *
 * @example
 * ```ts ignore
 * api.route("/tenants/:tenant/namespaces/:ns", changeRoutes(deps));
 * ```
 */
export function changeRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/protection", async (c) => {
    const record = await getProtection(deps, c.get("principal"), route(c));
    return c.json({ environments: record.environments, updated_at: record.updated_at });
  });

  app.put("/protection", async (c) => {
    const record = await setProtection(
      deps,
      c.get("principal"),
      route(c),
      async () => parseProtection(await readJsonObject(c.req.raw)),
      requestContext(c),
    );
    return c.json({ environments: record.environments, updated_at: record.updated_at });
  });

  app.post("/change-requests", async (c) => {
    const record = await openChangeRequest(deps, c.get("principal"), route(c), async () => {
      const body = await readLargeJson(c);
      return {
        files: filesField(body),
        message: typeof body.message === "string" ? body.message : "",
        base_version: intField(body, "base_version"),
      };
    }, requestContext(c));
    return c.json({ change_request: changeView(record) }, 201);
  });

  app.post("/rollouts", async (c) => {
    const record = await openRollout(
      deps,
      c.get("principal"),
      route(c),
      await rolloutAsk(c),
      requestContext(c),
    );
    return c.json({ change_request: changeView(record) }, 201);
  });

  app.get("/change-requests", async (c) => {
    const q = c.req.query();
    const statuses = q.status === undefined || q.status === ""
      ? undefined
      : q.status.split(",").map((s) => statusParam(s));
    const after = shapedParam(q.after, "after", SHAPES.changeRequestId);
    const page = await listChanges(deps, c.get("principal"), route(c), {
      ...(statuses === undefined ? {} : { statuses }),
      ...(q.limit === undefined ? {} : { limit: intParam(q.limit, "limit")! }),
      ...(after === undefined ? {} : { after }),
    });
    return c.json({ change_requests: page.items, next: page.next });
  });

  app.get("/change-requests/:cr", async (c) => {
    const d = await changeDetails(deps, c.get("principal"), route(c), c.req.param("cr"));
    const files: Record<string, string | null> = {};
    const base: Record<string, string | null> = {};
    for (const path of d.request.changed_paths) {
      const bytes = d.files.get(path);
      files[path] = bytes === undefined ? null : decoder.decode(bytes);
      if (d.base !== null) {
        const was = d.base.get(path) ?? null;
        base[path] = was === null ? null : decoder.decode(was);
      }
    }
    return c.json({
      change_request: changeView(d.request),
      comments: d.comments,
      changes: d.changes,
      files,
      base: d.base === null ? null : base,
      can: d.may,
    });
  });

  app.put("/change-requests/:cr", async (c) => {
    const record = await updateChange(
      deps,
      c.get("principal"),
      route(c),
      c.req.param("cr"),
      async () => {
        const body = await readLargeJson(c);
        return { files: filesField(body), message: stringField(body, "message") };
      },
      requestContext(c),
    );
    return c.json({ change_request: changeView(record) });
  });

  app.post("/change-requests/:cr/approve", async (c) => {
    const body = await readOptionalJsonObject(c.req.raw);
    const comment = stringField(body, "comment");
    const revision = intField(body, "revision");
    return await step(
      c,
      (p, ref, id, ctx) => approveChange(deps, p, ref, id, comment, ctx, revision),
    );
  });

  app.post("/change-requests/:cr/reject", async (c) => {
    const body = await readJsonObject(c.req.raw);
    const comment = stringField(body, "comment") ?? "";
    const revision = intField(body, "revision");
    return await step(
      c,
      (p, ref, id, ctx) => rejectChange(deps, p, ref, id, comment, ctx, revision),
    );
  });

  app.post("/change-requests/:cr/comments", async (c) => {
    const body = await readJsonObject(c.req.raw);
    const comment = await commentOnChange(
      deps,
      c.get("principal"),
      route(c),
      c.req.param("cr"),
      stringField(body, "text") ?? "",
      requestContext(c),
    );
    return c.json({ comment }, 201);
  });

  app.post(
    "/change-requests/:cr/withdraw",
    (c) => step(c, (p, ref, id, ctx) => withdrawChange(deps, p, ref, id, ctx)),
  );

  app.post("/change-requests/:cr/apply", async (c) => {
    const body = await readOptionalJsonObject(c.req.raw);
    const outcome = await applyChange(
      deps,
      c.get("principal"),
      route(c),
      c.req.param("cr"),
      stringField(body, "at"),
      requestContext(c),
    );
    const change_request = changeView(outcome.change_request);
    if (outcome.version === null) return c.json({ version: null, change_request }, 202);
    return c.json({ version: outcome.version.version, change_request }, 201);
  });

  app.delete(
    "/change-requests/:cr/schedule",
    (c) => step(c, (p, ref, id, ctx) => cancelSchedule(deps, p, ref, id, ctx)),
  );

  return app;
}

/** One step on the request the route names, answered with the request after it. */
async function step(
  c: Ctx,
  call: (
    principal: Principal,
    ref: NamespaceRef,
    id: string,
    ctx: RequestContext,
  ) => Promise<ChangeRequestRecord>,
): Promise<Response> {
  const record = await call(c.get("principal"), route(c), c.req.param("cr")!, requestContext(c));
  return c.json({ change_request: changeView(record) });
}

/** The namespace a route names. */
function route(c: Ctx): NamespaceRef {
  return { tenant: c.req.param("tenant")!, namespace: c.req.param("ns")! };
}

/** A JSON body that may be as large as a manifest. */
async function readLargeJson(c: Ctx): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBodyBytes(c.req.raw, MANIFEST_BODY_LIMIT));
}

/** `files: {path: text}` → path → bytes (400 naming the field otherwise). */
function filesField(body: Record<string, unknown>): Map<string, Uint8Array> {
  const files = body.files;
  if (files === null || typeof files !== "object" || Array.isArray(files)) {
    throw new InvalidRequestError(
      'files must be an object of path → text: {"files": {"namespace.toml": "…"}}',
      {
        details: { field: "files" },
      },
    );
  }
  const out = new Map<string, Uint8Array>();
  for (const [path, text] of Object.entries(files)) {
    if (typeof text !== "string") {
      throw new InvalidRequestError(`files.${path} must be the file's text`, {
        details: { field: `files.${path}` },
      });
    }
    out.set(path, encoder.encode(text));
  }
  return out;
}

function intField(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw new InvalidRequestError(`${name} must be a non-negative integer`, {
      details: { field: name },
    });
  }
  return v;
}

function statusParam(s: string): ChangeStatus {
  if ((CHANGE_STATUSES as readonly string[]).includes(s)) return s as ChangeStatus;
  throw new InvalidRequestError(
    `status must be one of ${CHANGE_STATUSES.join(", ")}, not ${JSON.stringify(s.slice(0, 40))}`,
    {
      details: { field: "status" },
    },
  );
}

/** `{flag, environment, variation?, steps: [5, 25], every: "1d" | every_ms, message}`. */
async function rolloutAsk(c: Ctx) {
  const body = await readJsonObject(c.req.raw);
  const steps = body.steps;
  const every = body.every;
  return {
    flag: requiredSlug(body, "flag"),
    environment: requiredSlug(body, "environment"),
    variation: stringField(body, "variation"),
    steps: Array.isArray(steps) ? steps as number[] : [],
    every_ms: typeof body.every_ms === "number"
      ? body.every_ms
      : typeof every === "string"
      ? everyMs(every)
      : NaN,
    message: stringField(body, "message") ?? "",
  };
}

function requiredSlug(body: Record<string, unknown>, name: string): string {
  const v = shapedParam(stringField(body, name), name, SHAPES.slug);
  if (v === undefined) {
    throw new InvalidRequestError(`${name} is required`, { details: { field: name } });
  }
  return v;
}

function everyMs(text: string): number {
  const ms = durationMsOf(text);
  if (ms === null) {
    throw new InvalidRequestError(
      `every must be a whole number and a unit (s, m, h, d, w), like 1d or 6h, not ${
        JSON.stringify(text.slice(0, 40))
      }`,
      { details: { field: "every" } },
    );
  }
  return ms;
}
