/**
 * Manifest endpoints of a namespace: download (tar.gz or JSON, ETag, 304),
 * upload (tar.gz or JSON, `If-Match`, validation → 422), lint, version
 * metadata and rollback. Each reads its request and calls one service
 * (lib/services/manifests.ts, lib/services/versions.ts), which
 * authorises, reads and writes; this file shapes the responses.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { InvalidRequestError } from "../errors.ts";
import { etagMatches, parseIfMatch, versionEtag } from "../protocol/etag.ts";
import {
  lintManifest,
  type ManifestUpload,
  type NamespaceRef,
  pushManifest,
  readManifest,
  rollbackManifest,
  type WriteOutcome,
} from "../services/manifests.ts";
import { changeView } from "../services/changes.ts";
import { listVersionPage, type VersionMeta, versionMeta } from "../services/versions.ts";
import { requestContext } from "./authn.ts";
import type { AppDeps, AppEnv } from "./deps.ts";
import { MANIFEST_BODY_LIMIT, readBodyBytes, readJsonObject } from "./body.ts";
import { intParam, stringField } from "./params.ts";

type Ctx = Context<AppEnv>;

/**
 * The manifest routes, mounted under `/tenants/:tenant/namespaces/:ns`.
 *
 * @example
 * ```ts ignore
 * api.route("/tenants/:tenant/namespaces/:ns", manifestRoutes(deps));
 * ```
 */
export function manifestRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/manifest", async (c) => {
    const ref = route(c);
    const manifest = await readManifest(deps, c.get("principal"), ref, () => ({
      version: intParam(c.req.query("version"), "version"),
    }));
    const etag = versionEtag(manifest.version, manifest.closure_hash);
    const headers = { etag, "cache-control": "private, no-cache", vary: "Accept" };
    if (etagMatches(c.req.header("if-none-match"), etag)) {
      return c.body(null, 304, headers);
    }
    if (!wantsJson(c.req.header("accept"))) {
      const archive = await manifest.archive();
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "content-type": "application/gzip",
        "content-disposition":
          `attachment; filename="${ref.namespace}-v${manifest.version}.tar.gz"`,
      });
    }
    const files: Record<string, string> = {};
    for (const [path, bytes] of await manifest.files()) {
      files[path] = new TextDecoder().decode(bytes);
    }
    return c.json(
      { version: manifest.version, closure_hash: manifest.closure_hash, files },
      200,
      headers,
    );
  });

  app.put("/manifest", async (c) => {
    const result = await pushManifest(deps, c.get("principal"), route(c), async () => {
      const ifMatch = parseIfMatch(c.req.header("if-match"));
      return { ifMatch, upload: await readUpload(c), bypass: bypassReason(c) };
    }, requestContext(c));
    return writeResponse(c, result);
  });

  app.post("/lint", async (c) => {
    const { problems, problemCount } = await lintManifest(
      deps,
      c.get("principal"),
      route(c),
      () => readUpload(c),
    );
    return c.json({
      ok: problemCount === 0,
      problems,
      ...(problemCount > problems.length ? { problem_count: problemCount } : {}),
    });
  });

  app.get("/versions", async (c) => {
    const page = await listVersionPage(deps, c.get("principal"), route(c), () => ({
      limit: intParam(c.req.query("limit"), "limit"),
      after: intParam(c.req.query("after"), "after"),
    }));
    return c.json({ versions: page.items.map(publicMeta), next: page.next });
  });

  app.get("/versions/:v", async (c) => {
    const meta = await versionMeta(
      deps,
      c.get("principal"),
      route(c),
      () => intParam(c.req.param("v"), "version")!,
    );
    return c.json({ version: publicMeta(meta) });
  });

  app.post("/rollback", async (c) => {
    const result = await rollbackManifest(deps, c.get("principal"), route(c), async () => {
      const body = await readJsonObject(c.req.raw);
      const version = body.version;
      if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
        throw new InvalidRequestError("version must be a non-negative integer");
      }
      const propose = body.propose;
      if (propose !== undefined && typeof propose !== "boolean") {
        throw new InvalidRequestError("propose must be true or false", {
          details: { field: "propose" },
        });
      }
      return { version, message: stringField(body, "message"), propose, bypass: bypassReason(c) };
    }, requestContext(c));
    return writeResponse(c, result);
  });

  return app;
}

/** The namespace a manifest route names. */
function route(c: Ctx): NamespaceRef {
  return { tenant: c.req.param("tenant")!, namespace: c.req.param("ns")! };
}

/**
 * Reads a manifest body: JSON `{files: {path: text}, message?}` when the
 * content type says JSON, else a tar.gz (or tar) archive with the message
 * in `?message=`. Decoding and validation are the service's.
 */
async function readUpload(c: Ctx): Promise<ManifestUpload> {
  const bytes = await readBodyBytes(c.req.raw, MANIFEST_BODY_LIMIT);
  const type = c.req.header("content-type") ?? "";
  const propose = proposeParam(c.req.query("propose"));
  if (/^application\/(.+\+)?json\b/i.test(type)) return { format: "json", bytes, propose };
  return { format: "archive", bytes, message: c.req.query("message"), propose };
}

/** `?propose=true|false` (400 for anything else). */
function proposeParam(value: string | undefined): boolean | undefined {
  if (value === undefined || value === "" || value === "false") return undefined;
  if (value === "true" || value === "1") return true;
  throw new InvalidRequestError("propose must be true or false", { details: { field: "propose" } });
}

/** A superadmin's break-glass reason: `X-Cfgtool-Bypass-Protection`. */
function bypassReason(c: Ctx): string | undefined {
  return c.req.header("x-cfgtool-bypass-protection");
}

/** A version (201, or 200 when unchanged), or the change request opened instead (201). */
function writeResponse(c: Ctx, result: WriteOutcome): Response {
  if ("proposed" in result) {
    return c.json(
      { change_request: changeView(result.proposed), request_id: c.get("requestId") },
      201,
    );
  }
  return versionResponse(c, result.version, result.changed);
}

function versionResponse(c: Ctx, meta: VersionMeta, changed: boolean): Response {
  return c.json(
    {
      version: meta.version,
      closure_hash: meta.closure_hash,
      created_at: meta.created_at,
      changed,
      request_id: c.get("requestId"),
    },
    changed ? 201 : 200,
    { etag: versionEtag(meta.version, meta.closure_hash) },
  );
}

/** Version metadata as the API shows it (without the internal tree id). */
function publicMeta(meta: VersionMeta) {
  return {
    version: meta.version,
    closure_hash: meta.closure_hash,
    created_at: meta.created_at,
    created_by: meta.created_by,
    message: meta.message,
    file_count: meta.file_count,
  };
}

function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && /application\/json/i.test(accept) &&
    !/application\/(gzip|x-tar)/i.test(accept);
}
