/**
 * The manifest operations of a namespace: push, lint and rollback. Each
 * authorises the caller (`manifest.write`), finds the namespace's head (404
 * `namespace_not_found`), decodes and validates the manifest through the
 * runtime's workers (422 `invalid_manifest`), commits through
 * lib/store/versions.ts (a new version commits with its audit entry,
 * `manifest.pushed` or `manifest.rolled_back`, the caller as actor), and
 * tells the runtime which namespace changed. Each runs in a trace span
 * `cfgtool.service.<operation>`. The HTTP layer only reads requests and
 * shapes responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize } from "../auth/permissions.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { hashFileSet } from "../closure/hash.ts";
import { InvalidRequestError, NotFoundError, type Problem, ProblemsError } from "../errors.ts";
import type { Environment } from "../flags/model.ts";
import {
  type CommitResult,
  commitVersion,
  getHead,
  type Head,
  readFiles,
} from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import type { PreparedUpload, UploadFormat } from "../workers/manifest_work.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** The namespace a manifest operation acts on. */
export interface NamespaceRef {
  tenant: string;
  namespace: string;
}

/** A manifest as sent: the body's bytes and how they are encoded. */
export interface ManifestUpload {
  /** `json`: `{files: {path: text}, message?}`; `archive`: a tar.gz or tar. */
  format: UploadFormat;
  /** The body. */
  bytes: Uint8Array;
  /** The push message of an archive (a JSON body carries its own). */
  message?: string | undefined;
}

/** What {@linkcode pushManifest} commits. */
export interface PushRequest {
  /** The manifest. */
  upload: ManifestUpload;
  /** The head version the caller expects (`If-Match`); another head gives 412. */
  ifMatch?: number | undefined;
}

/** What {@linkcode rollbackManifest} commits. */
export interface RollbackRequest {
  /** The version whose files become the new head. */
  version: number;
  /** The version's message (default `rollback to version <n>`). */
  message?: string | undefined;
}

/** The verdict of {@linkcode lintManifest}. */
export interface LintResult {
  /** True when the manifest has no problem. */
  ok: boolean;
  /** The problems, at most the reported limit. */
  problems: Problem[];
  /** How many problems there are in all. */
  problemCount: number;
}

/**
 * Authorises `action` on the namespace and reads its head, which exists
 * exactly while the namespace does (both are written and deleted in one
 * atomic operation): 403, then 404 `namespace_not_found`.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param action what the caller is about to do
 * @returns the namespace's head
 *
 * @example
 * ```ts
 * import { manifestTarget } from "./manifests.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const head = await manifestTarget({ kv, key, runtime }, admin, { tenant: "acme", namespace: "web" }, "manifest.read");
 * if (head.version !== 0) throw new Error("a new namespace is at version 0");
 * runtime.close();
 * kv.close();
 * ```
 */
export function manifestTarget(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  action: "manifest.read" | "manifest.write" | "versions.read",
): Promise<Head> {
  return withSpan("cfgtool.service.manifest_target", refAttributes(ref), async () => {
    const { tenant, namespace } = ref;
    await authorize(deps.kv, principal, action, { tenant, namespace });
    const head = await getHead(deps.kv, tenant, namespace);
    if (head === null) {
      throw new NotFoundError(
        "namespace_not_found",
        `No namespace ${namespace} in tenant ${tenant}`,
      );
    }
    return head;
  });
}

/** The span attributes naming a namespace. */
function refAttributes(ref: NamespaceRef): Record<string, string> {
  return { "cfgtool.tenant": ref.tenant, "cfgtool.namespace": ref.namespace };
}

/**
 * Pushes a manifest: authorises `manifest.write` (403), finds the
 * namespace (404), then reads the request, decodes and validates the
 * manifest off the event loop when large (400, 413, 422 with every
 * problem), commits it as the next version (412 when `ifMatch` is not the
 * head; nothing is written then) with its `manifest.pushed` audit entry
 * and, when the content changed, tells the runtime, so the next
 * evaluation sees the new version. An unchanged manifest commits nothing
 * and is not audited.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param request the manifest and `If-Match`, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts
 * import { pushManifest } from "./manifests.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files, message: "first" }));
 * const ref = { tenant: "acme", namespace: "web" };
 * const pushed = await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * if (pushed.version.version !== 1 || !pushed.changed || pushed.version.message !== "first") {
 *   throw new Error();
 * }
 * runtime.close();
 * kv.close();
 * ```
 */
export function pushManifest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<PushRequest>,
  ctx: RequestContext,
): Promise<CommitResult> {
  return withSpan("cfgtool.service.push_manifest", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "manifest.write");
    const { upload, ifMatch } = await resolveInput(request);
    const prepared = await prepare(deps.runtime.workers, upload);
    if (prepared.problemCount > 0) {
      throw new ProblemsError(prepared.problems, undefined, undefined, prepared.problemCount);
    }
    const result = await commitVersion(deps.kv, {
      ...ref,
      files: prepared.files,
      hashed: { closureHash: prepared.closureHash, blobIds: prepared.blobIds },
      environments: prepared.environments,
      created_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      message: prepared.message ?? null,
      now: clockOf(deps),
      ...(ifMatch === undefined ? {} : { ifMatch }),
    });
    if (result.changed) deps.runtime.namespaceChanged(ref.tenant, ref.namespace);
    return result;
  });
}

/**
 * Lints a manifest without storing it: authorises `manifest.write` (403),
 * finds the namespace (404), then decodes and validates the upload (400,
 * 413 when it cannot be decoded). Problems are returned, not thrown.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param upload the manifest, read only once authorised
 * @returns whether it is valid, and its problems
 *
 * @example
 * ```ts
 * import { lintManifest } from "./manifests.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const bytes = new TextEncoder().encode(JSON.stringify({ files: { "namespace.toml": "schema_version = 99\n" } }));
 * const verdict = await lintManifest({ kv, key, runtime }, admin, { tenant: "acme", namespace: "web" }, { format: "json", bytes });
 * if (verdict.ok || verdict.problemCount === 0) throw new Error("schema 99 is not valid");
 * runtime.close();
 * kv.close();
 * ```
 */
export function lintManifest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  upload: Deferred<ManifestUpload>,
): Promise<LintResult> {
  return withSpan("cfgtool.service.lint_manifest", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "manifest.write");
    const { problems, problemCount } = await prepare(
      deps.runtime.workers,
      await resolveInput(upload),
    );
    return { ok: problemCount === 0, problems, problemCount };
  });
}

/**
 * Rolls a namespace back: authorises `manifest.write` (403), finds the
 * namespace (404), reads the files of the requested version (404 when it
 * does not exist), validates them again (422), commits them as a new
 * version with its `manifest.rolled_back` audit entry (`rolled_back_to`:
 * the version) and, when the content changed, tells the runtime. A
 * rollback to the head's content commits nothing and is not audited.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param request the version and message, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts
 * import { pushManifest, rollbackManifest } from "./manifests.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * const ref = { tenant: "acme", namespace: "web" };
 * const ctx = { requestId: "r2" };
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, ctx);
 * const back = await rollbackManifest({ kv, key, runtime }, admin, ref, { version: 0 }, ctx);
 * if (back.version.version !== 2 || back.version.message !== "rollback to version 0") throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function rollbackManifest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<RollbackRequest>,
  ctx: RequestContext,
): Promise<CommitResult> {
  return withSpan("cfgtool.service.rollback_manifest", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "manifest.write");
    const { version, message } = await resolveInput(request);
    if (!Number.isInteger(version) || version < 0) {
      throw new InvalidRequestError("version must be a non-negative integer");
    }
    const files = await readFiles(deps.kv, ref.tenant, ref.namespace, version);
    const result = await commitVersion(deps.kv, {
      ...ref,
      files,
      hashed: await hashFileSet(files),
      environments: await validEnvironments(deps.runtime.workers, files),
      created_by: principalId(principal),
      actor: actorOf(principal, ctx.requestId),
      rolledBackTo: version,
      message: message ?? `rollback to version ${version}`,
      now: clockOf(deps),
    });
    if (result.changed) deps.runtime.namespaceChanged(ref.tenant, ref.namespace);
    return result;
  });
}

/**
 * Decodes, validates and digests an upload (off the event loop when
 * large); an empty archive body is a 400. An archive's message is the one
 * given beside it.
 */
async function prepare(workers: ManifestWorkers, upload: ManifestUpload): Promise<PreparedUpload> {
  if (upload.format === "json") return await workers.upload(upload.bytes, "json");
  if (upload.bytes.length === 0) {
    throw new InvalidRequestError("request body is empty: send a tar.gz or JSON manifest");
  }
  const prepared = await workers.upload(upload.bytes, "archive");
  return { ...prepared, message: upload.message };
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
