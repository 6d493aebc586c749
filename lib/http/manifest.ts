/**
 * Manifest endpoints of a namespace: download (tar.gz or JSON, ETag, 304),
 * upload (tar.gz or JSON, `If-Match`, validation → 422), lint, version
 * metadata and rollback.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { InvalidRequestError } from "../errors.ts";
import { etagMatches, parseIfMatch, versionEtag } from "../protocol/etag.ts";
import {
  lintManifest,
  manifestTarget,
  type ManifestUpload,
  type NamespaceRef,
  pushManifest,
  rollbackManifest,
} from "../services/manifests.ts";
import { getVersion, listVersions, readFiles } from "../store/versions.ts";
import type { VersionMeta } from "../store/versions.ts";
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
  const { kv } = deps;
  const { workers } = deps.runtime;
  const app = new Hono<AppEnv>();
  const archives = deps.runtime.manifests;

  /** The namespace of the route, authorised for `action`, and its head. */
  async function target(c: Ctx, action: "manifest.read" | "manifest.write" | "versions.read") {
    const ref = route(c);
    const head = await manifestTarget(deps, c.get("principal"), ref, action);
    return { ...ref, head };
  }

  app.get("/manifest", async (c) => {
    const { tenant, namespace, head } = await target(c, "manifest.read");
    const requested = intParam(c.req.query("version"), "version");
    // the head carries what the ETag needs: no version read on the 304 path
    const meta = requested === undefined || requested === head.version
      ? head
      : await getVersion(kv, tenant, namespace, requested);
    const etag = versionEtag(meta.version, meta.closure_hash);
    const headers = { etag, "cache-control": "private, no-cache", vary: "Accept" };
    if (etagMatches(c.req.header("if-none-match"), etag)) {
      return c.body(null, 304, headers);
    }
    if (!wantsJson(c.req.header("accept"))) {
      // A version's archive never changes: built once per process, then served from memory.
      const key = `${tenant}\u0000${namespace}\u0000${meta.version}\u0000${meta.closure_hash}`;
      const { archive } = await archives.getOrCreate(key, async () => {
        const archive = await workers.archive(await readFiles(kv, tenant, namespace, meta.version));
        return { archive, closureHash: meta.closure_hash, tarSize: archive.length };
      });
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        "content-type": "application/gzip",
        "content-disposition": `attachment; filename="${namespace}-v${meta.version}.tar.gz"`,
      });
    }
    const files: Record<string, string> = {};
    for (const [path, bytes] of await readFiles(kv, tenant, namespace, meta.version)) {
      files[path] = new TextDecoder().decode(bytes);
    }
    return c.json({ version: meta.version, closure_hash: meta.closure_hash, files }, 200, headers);
  });

  app.put("/manifest", async (c) => {
    let bytes = 0;
    const result = await pushManifest(deps, c.get("principal"), route(c), async () => {
      const ifMatch = parseIfMatch(c.req.header("if-match"));
      const upload = await readUpload(c);
      bytes = upload.bytes.length;
      return { ifMatch, upload };
    }, { requestId: c.get("requestId") });
    deps.runtime.metrics.pushed(bytes, result.changed);
    return versionResponse(c, result.version, result.changed);
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
    const { tenant, namespace } = await target(c, "versions.read");
    const limit = intParam(c.req.query("limit"), "limit");
    const after = intParam(c.req.query("after"), "after");
    const page = await listVersions(kv, tenant, namespace, {
      ...(limit === undefined ? {} : { limit }),
      ...(after === undefined ? {} : { after }),
    });
    return c.json({ versions: page.items.map(publicMeta), next: page.next });
  });

  app.get("/versions/:v", async (c) => {
    const { tenant, namespace } = await target(c, "versions.read");
    const v = intParam(c.req.param("v"), "version")!;
    return c.json({ version: publicMeta(await getVersion(kv, tenant, namespace, v)) });
  });

  app.post("/rollback", async (c) => {
    const result = await rollbackManifest(deps, c.get("principal"), route(c), async () => {
      const body = await readJsonObject(c.req.raw);
      const version = body.version;
      if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
        throw new InvalidRequestError("version must be a non-negative integer");
      }
      return { version, message: stringField(body, "message") };
    }, { requestId: c.get("requestId") });
    deps.runtime.metrics.rolledBack(result.changed);
    return versionResponse(c, result.version, result.changed);
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
  if (/^application\/(.+\+)?json\b/i.test(type)) return { format: "json", bytes };
  return { format: "archive", bytes, message: c.req.query("message") };
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
