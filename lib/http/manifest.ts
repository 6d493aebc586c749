/**
 * Manifest endpoints of a namespace: download (tar.gz or JSON, ETag, 304),
 * upload (tar.gz or JSON, `If-Match`, validation → 422), lint, version
 * metadata and rollback.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { principalId } from "../auth/principal.ts";
import { authorize } from "../auth/permissions.ts";
import { InvalidRequestError, NotFoundError, ProblemsError } from "../errors.ts";
import type { Environment } from "../flags/model.ts";
import { hashFileSet } from "../closure/hash.ts";
import { etagMatches, parseIfMatch, versionEtag } from "../protocol/etag.ts";
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import type { PreparedUpload } from "../workers/manifest_work.ts";
import { commitVersion, getHead, getVersion, listVersions, readFiles } from "../store/versions.ts";
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
  const now = () => deps.now?.() ?? new Date();
  const archives = deps.runtime.manifests;

  /**
   * Authorizes the action and reads the head, which exists exactly while the
   * namespace does (both are written and deleted in one atomic operation).
   */
  async function target(c: Ctx, action: "manifest.read" | "manifest.write") {
    const tenant = c.req.param("tenant")!;
    const namespace = c.req.param("ns")!;
    await authorize(kv, c.get("principal"), action, { tenant, namespace });
    const head = await getHead(kv, tenant, namespace);
    if (head === null) {
      throw new NotFoundError(
        "namespace_not_found",
        `No namespace ${namespace} in tenant ${tenant}`,
      );
    }
    return { tenant, namespace, head };
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
    const { tenant, namespace } = await target(c, "manifest.write");
    const ifMatch = parseIfMatch(c.req.header("if-match"));
    const upload = await readUpload(c, workers);
    if (upload.problemCount > 0) {
      throw new ProblemsError(upload.problems, undefined, undefined, upload.problemCount);
    }
    const result = await commitVersion(kv, {
      tenant,
      namespace,
      files: upload.files,
      hashed: { closureHash: upload.closureHash, blobIds: upload.blobIds },
      environments: upload.environments,
      created_by: principalId(c.get("principal")),
      message: upload.message ?? null,
      now,
      ...(ifMatch === undefined ? {} : { ifMatch }),
    });
    if (result.changed) deps.runtime.namespaceChanged(tenant, namespace);
    return versionResponse(c, result.version, result.changed);
  });

  app.post("/lint", async (c) => {
    await target(c, "manifest.write");
    const { problems, problemCount } = await readUpload(c, workers);
    return c.json({
      ok: problemCount === 0,
      problems,
      ...(problemCount > problems.length ? { problem_count: problemCount } : {}),
    });
  });

  app.get("/versions", async (c) => {
    const { tenant, namespace } = await target(c, "manifest.write");
    const limit = intParam(c.req.query("limit"), "limit");
    const after = intParam(c.req.query("after"), "after");
    const page = await listVersions(kv, tenant, namespace, {
      ...(limit === undefined ? {} : { limit }),
      ...(after === undefined ? {} : { after }),
    });
    return c.json({ versions: page.items.map(publicMeta), next: page.next });
  });

  app.get("/versions/:v", async (c) => {
    const { tenant, namespace } = await target(c, "manifest.write");
    const v = intParam(c.req.param("v"), "version")!;
    return c.json({ version: publicMeta(await getVersion(kv, tenant, namespace, v)) });
  });

  app.post("/rollback", async (c) => {
    const { tenant, namespace } = await target(c, "manifest.write");
    const body = await readJsonObject(c.req.raw);
    const v = body.version;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
      throw new InvalidRequestError("version must be a non-negative integer");
    }
    const files = await readFiles(kv, tenant, namespace, v);
    const result = await commitVersion(kv, {
      tenant,
      namespace,
      files,
      hashed: await hashFileSet(files),
      environments: await validEnvironments(workers, files),
      created_by: principalId(c.get("principal")),
      message: stringField(body, "message") ?? `rollback to version ${v}`,
      now,
    });
    if (result.changed) deps.runtime.namespaceChanged(tenant, namespace);
    return versionResponse(c, result.version, result.changed);
  });

  return app;
}

/**
 * Validates a manifest off the event loop when it is large; throws 422
 * `invalid_manifest` with every problem, else returns its environments.
 */
async function validEnvironments(
  workers: ManifestWorkers,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<Record<string, Environment>> {
  const { problems, problemCount, environments } = await workers.check(files);
  if (problemCount > 0) throw new ProblemsError(problems, undefined, undefined, problemCount);
  return environments;
}

/**
 * Reads a manifest body, decoded, validated and digested (off the event
 * loop when large): JSON `{files: {path: text}, message?}` when the content
 * type says JSON, else a tar.gz (or tar) archive with the message in
 * `?message=`.
 */
async function readUpload(c: Ctx, workers: ManifestWorkers): Promise<PreparedUpload> {
  const bytes = await readBodyBytes(c.req.raw, MANIFEST_BODY_LIMIT);
  const type = c.req.header("content-type") ?? "";
  if (/^application\/(.+\+)?json\b/i.test(type)) return await workers.upload(bytes, "json");
  if (bytes.length === 0) {
    throw new InvalidRequestError("request body is empty: send a tar.gz or JSON manifest");
  }
  const upload = await workers.upload(bytes, "archive");
  return { ...upload, message: c.req.query("message") };
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
