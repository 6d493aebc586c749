/**
 * The manifest operations of a namespace: read it (a version's files or
 * archive), push, lint, roll back, commit a set of files, and the
 * console's quick change of one flag (previewed, then committed). Each
 * authorises the caller once (`manifest.read` or `manifest.write`), finds
 * the namespace's head once (404 `namespace_not_found`), validates a
 * manifest through the runtime's workers (422 `invalid_manifest`), commits
 * through lib/store/versions.ts (a new version commits with its audit
 * entry, `manifest.pushed` or `manifest.rolled_back`, the caller as
 * actor), and tells the runtime which namespace changed and what it
 * counts (pushes, their sizes, rollbacks). Every commit goes through one
 * path: validate, digest, commit, audit, tell. Each runs in a trace span
 * `cfgtool.service.<operation>`. The HTTP layer and the console only read
 * requests and shape responses.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import {
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  type Problem,
  ProblemsError,
} from "../errors.ts";
import type { Flag } from "../flags/model.ts";
import { applyQuickChange, type QuickChange } from "../flags/quick_change.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { type CommitResult, getVersion, readFiles, type VersionMeta } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { type ChangeRequestRecord, openChangeRequest } from "./changes.ts";
import { checkAndCommit, commitChecked, pushFiles } from "./commits.ts";
import { type EditOutcome, type FileEdits, type MadeEdit, runEdit } from "./edits.ts";
import type { GuardOptions } from "./protection.ts";
import { isSuperadmin } from "./tenants.ts";
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import type { PreparedUpload, UploadFormat } from "../workers/manifest_work.ts";
import { type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import {
  currentHead,
  fileText,
  flagIn,
  flagPath,
  manifestTarget,
  type NamespaceRef,
  type NamespaceView,
  refAttributes,
  type ViewDeps,
} from "./versions.ts";

/** The namespace a manifest operation acts on, and the head it reads first. */
export { manifestTarget, type NamespaceRef };
/** A commit's outcome. */
export type { CommitResult };

/** A manifest as sent: the body's bytes and how they are encoded. */
export interface ManifestUpload {
  /** `json`: `{files: {path: text}, message?, propose?}`; `archive`: a tar.gz or tar. */
  format: UploadFormat;
  /** The body. */
  bytes: Uint8Array;
  /** The push message of an archive (a JSON body carries its own). */
  message?: string | undefined;
  /** Open a change request instead of committing (`?propose=true`; a JSON body may say so itself). */
  propose?: boolean | undefined;
}

/** A direct write's outcome: a version, or the change request it opened instead. */
export type WriteOutcome = CommitResult | { proposed: ChangeRequestRecord };

/** What {@linkcode pushManifest} commits. */
export interface PushRequest {
  /** The manifest. */
  upload: ManifestUpload;
  /** The head version the caller expects (`If-Match`); another head gives 412. */
  ifMatch?: number | undefined;
  /** A superadmin's reason to commit past protected environments (break-glass). */
  bypass?: string | undefined;
}

/** What {@linkcode rollbackManifest} commits. */
export interface RollbackRequest {
  /** The version whose files become the new head. */
  version: number;
  /** The version's message (default `rollback to version <n>`). */
  message?: string | undefined;
  /** A superadmin's reason to commit past protected environments (break-glass). */
  bypass?: string | undefined;
  /** Open a change request with that version's files instead of committing. */
  propose?: boolean | undefined;
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
 * Pushes a manifest: authorises `manifest.write` (403), finds the
 * namespace (404), then reads the request, decodes and validates the
 * manifest off the event loop when large (400, 413, 422 with every
 * problem), commits it as the next version (412 when `ifMatch` is not the
 * head; nothing is written then) with its `manifest.pushed` audit entry
 * and, when the content changed, tells the runtime, so the next
 * evaluation sees the new version; the push and its size are counted. An
 * unchanged manifest commits nothing and is not audited.
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
 * if ("proposed" in pushed) throw new Error("a push without propose commits");
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
): Promise<WriteOutcome> {
  return withSpan("cfgtool.service.push_manifest", refAttributes(ref), async () => {
    const mustWrite = await writeOrProposeTarget(deps, principal, ref);
    const { upload, ifMatch, bypass } = await resolveInput(request);
    // an archive says whether it proposes beside it; a JSON body inside, once decoded
    const maybeProposal = upload.propose === true || upload.format === "json";
    if (!maybeProposal) await mustWrite();
    const guards = bypassGuards(principal, bypass, ctx);
    const prepared = await prepare(deps.runtime.workers, upload);
    if (prepared.problemCount > 0) {
      throw new ProblemsError(prepared.problems, undefined, undefined, prepared.problemCount);
    }
    if (upload.propose === true || prepared.propose) {
      const proposed = await openChangeRequest(deps, principal, ref, {
        files: prepared.files,
        message: prepared.message ?? "",
        base_version: ifMatch,
      }, ctx);
      return { proposed };
    }
    if (maybeProposal) await mustWrite();
    const result = await commitChecked(deps, principal, ref, {
      files: prepared.files,
      hashed: { closureHash: prepared.closureHash, blobIds: prepared.blobIds },
      environments: prepared.environments,
      message: prepared.message ?? null,
      ifMatch,
      guards,
    }, ctx);
    deps.runtime.metrics.pushed(upload.bytes.length, result.changed);
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
 * Rolls a namespace back, or proposes to (a change request with that
 * version's files, `propose`): authorises `manifest.write`, or
 * `change.propose` for a proposal (403), finds the namespace (404), reads
 * the files of the requested version (404 when it
 * does not exist), validates them again (422), commits them as a new
 * version with its `manifest.rolled_back` audit entry (`rolled_back_to`:
 * the version) and, when the content changed, tells the runtime; the
 * rollback is counted. A rollback to the head's content commits nothing
 * and is not audited.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param request the version and message, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @param intent whether the caller commits, proposes (a change request), or says so in the
 *   request (`either`, the default: who may only propose gets the request read, then 403
 *   unless it proposes); `commit` refuses who may not write before reading anything
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
 * if ("proposed" in back) throw new Error("a rollback without propose commits");
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
  intent: "commit" | "propose" | "either" = "either",
): Promise<WriteOutcome> {
  return withSpan("cfgtool.service.rollback_manifest", refAttributes(ref), async () => {
    if (intent === "commit") await manifestTarget(deps, principal, ref, "manifest.write");
    else if (intent === "propose") await manifestTarget(deps, principal, ref, "change.propose");
    const mustWrite = intent === "either"
      ? await writeOrProposeTarget(deps, principal, ref)
      : async () => {};
    const asked = await resolveInput(request);
    const { version, message, bypass } = asked;
    const propose = intent === "either" ? asked.propose === true : intent === "propose";
    if (!propose) await mustWrite();
    const guards = bypassGuards(principal, bypass, ctx);
    if (!Number.isInteger(version) || version < 0) {
      throw new InvalidRequestError("version must be a non-negative integer");
    }
    const files = await readFiles(deps.kv, ref.tenant, ref.namespace, version);
    if (propose) {
      const proposed = await openChangeRequest(deps, principal, ref, {
        files,
        message: message ?? `rollback to version ${version}`,
      }, ctx);
      return { proposed };
    }
    const result = await checkAndCommit(deps, principal, ref, files, {
      message: message ?? `rollback to version ${version}`,
      rolledBackTo: version,
      guards,
    }, ctx);
    deps.runtime.metrics.rolledBack(result.changed);
    return result;
  });
}

/**
 * Authorises a write that may turn out to be a proposal, reading the head
 * once: a writer passes; someone who may only propose passes too, and
 * `mustWrite` refuses them later if the request is not a proposal; anyone
 * else gets the refusal of `manifest.write`, which is what they tried.
 *
 * @returns a check that refuses (403) a caller who may not write
 */
async function writeOrProposeTarget(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
): Promise<() => Promise<void>> {
  const target = { tenant: ref.tenant, namespace: ref.namespace };
  const writer = await can(deps.kv, principal, "manifest.write", target, { memo: memoOf(deps) });
  const proposer = !writer &&
    await can(deps.kv, principal, "change.propose", target, { memo: memoOf(deps) });
  await manifestTarget(deps, principal, ref, proposer ? "change.propose" : "manifest.write");
  return async () => {
    if (!writer) {
      await authorize(deps.kv, principal, "manifest.write", target, { memo: memoOf(deps) });
    }
  };
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

/** One version of a manifest, as {@linkcode readManifest} finds it; its content is read on demand. */
export interface ManifestVersion {
  /** The version (the head's unless another was asked for). */
  version: number;
  /** Its closure hash (with the version, its ETag). */
  closure_hash: string;
  /** Reads its files, path → bytes, in path order. */
  files(): Promise<Map<string, Uint8Array>>;
  /** Its tar.gz archive, built once per process (a version never changes). */
  archive(): Promise<Uint8Array>;
}

/**
 * Finds a version of a manifest to download: authorises `manifest.read`
 * (403), finds the namespace (404), then reads the request and the
 * version's metadata (404 `version_not_found`; the head's costs no read,
 * so answering a matching `If-None-Match` reads nothing more). Its files
 * and archive are read only when asked for.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param request the version (default: the head's), read only once authorised
 * @returns the version, its closure hash, and readers of its files and archive
 *
 * @example
 * ```ts
 * import { pushManifest, readManifest } from "./manifests.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * const head = await readManifest({ kv, key, runtime }, admin, ref, {});
 * const v0 = await readManifest({ kv, key, runtime }, admin, ref, { version: 0 });
 * if (head.version !== 1 || (await head.files()).size !== 1 || (await v0.files()).size !== 0) {
 *   throw new Error();
 * }
 * if ((await head.archive()).length === 0) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function readManifest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<{ version?: number | undefined }>,
): Promise<ManifestVersion> {
  return withSpan("cfgtool.service.read_manifest", refAttributes(ref), async () => {
    const { tenant, namespace } = ref;
    const head = await manifestTarget(deps, principal, ref, "manifest.read");
    const { version } = await resolveInput(request);
    // the head carries what the ETag needs: no version read on the 304 path
    const meta = version === undefined || version === head.version
      ? head
      : await getVersion(deps.kv, tenant, namespace, version);
    const { kv, runtime } = deps;
    const files = () => readFiles(kv, tenant, namespace, meta.version);
    return {
      version: meta.version,
      closure_hash: meta.closure_hash,
      files,
      archive: async () => {
        const key = `${tenant}\u0000${namespace}\u0000${meta.version}\u0000${meta.closure_hash}`;
        const { archive } = await runtime.manifests.getOrCreate(key, async () => {
          const archive = await runtime.workers.archive(await files());
          return { archive, closureHash: meta.closure_hash, tarSize: archive.length };
        });
        return archive;
      },
    };
  });
}

/** What {@linkcode commitFiles} commits. */
export interface CommitFilesRequest {
  /** A superadmin's reason to commit past protected environments (break-glass). */
  bypass?: string | undefined;
  /** Every file of the manifest, path → bytes. */
  files: ReadonlyMap<string, Uint8Array>;
  /** The version's message. */
  message?: string | null | undefined;
  /** The head version the caller expects (`If-Match`); another head gives 412. */
  ifMatch?: number | undefined;
}

/**
 * Commits a set of files as the next version, as a push does but without
 * an upload to decode: authorises `manifest.write` (403), finds the
 * namespace (404), then reads the request, validates the files off the
 * event loop when large (422 with every problem), commits them (412 when
 * `ifMatch` is not the head; nothing is written then) with their
 * `manifest.pushed` audit entry and, when the content changed, tells the
 * runtime; the push and the files' size are counted. Unchanged content
 * commits nothing and is not audited.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param request the files, message and `If-Match`, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts
 * import { commitFiles } from "./manifests.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const toml = new TextEncoder().encode("schema_version = 1\n[namespace.environments.prod]\n");
 * const files = new Map([["namespace.toml", toml]]);
 * const made = await commitFiles({ kv, key, runtime }, admin, ref, { files, message: "first", ifMatch: 0 }, { requestId: "r2" });
 * if (made.version.version !== 1 || !made.changed || made.version.message !== "first") throw new Error();
 * let status = 0;
 * try {
 *   await commitFiles({ kv, key, runtime }, admin, ref, { files, ifMatch: 0 }, { requestId: "r3" });
 * } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 412) throw new Error("version 0 is no longer the head");
 * runtime.close();
 * kv.close();
 * ```
 */
export function commitFiles(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<CommitFilesRequest>,
  ctx: RequestContext,
): Promise<CommitResult> {
  return withSpan("cfgtool.service.commit_files", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "manifest.write");
    const { files, message, ifMatch, bypass } = await resolveInput(request);
    const guards = bypassGuards(principal, bypass, ctx);
    return await pushFiles(deps, principal, ref, files, {
      message: message ?? null,
      ifMatch,
      guards,
    }, ctx);
  });
}

/**
 * The head of a namespace for a person about to change one of its flags
 * (the quick-change form): who may change the manifest gets it at once;
 * anyone else gets the 403 of `manifest.read` when they cannot read it
 * either, the namespace's 404, or a 403 that says they may read it but not
 * change it.
 *
 * @param deps store, runtime and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @returns the head's view
 *
 * @example
 * ```ts
 * import { flagChangeForm } from "./manifests.ts";
 * import { ManifestViews } from "./versions.ts";
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
 * const deps = { kv, key, runtime, views: new ManifestViews() };
 * const view = await flagChangeForm(deps, admin, { tenant: "acme", namespace: "web" });
 * if (view.head.version !== 0 || view.meta.version !== 0) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function flagChangeForm(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
): Promise<NamespaceView> {
  return withSpan("cfgtool.service.flag_change_form", refAttributes(ref), async () => {
    const writer = await can(deps.kv, principal, "manifest.write", ref, { memo: memoOf(deps) });
    if (!writer) await authorize(deps.kv, principal, "manifest.read", ref, { memo: memoOf(deps) });
    const head = await currentHead(deps, ref);
    if (!writer) {
      throw new ForbiddenError(
        `You can read ${ref.namespace} but not change it: a namespace admin of ` +
          `${ref.tenant}/${ref.namespace} can`,
      );
    }
    return await deps.views.view(deps, ref, head);
  });
}

/** A quick change as the person entered it (lib/flags/quick_change.ts makes the edit). */
export interface AskedChange {
  /** The environment it is for, if any (a conflict checks that the head still declares it). */
  environment?: string | undefined;
  /** Open a change request with the change instead of committing it. */
  propose?: boolean | undefined;
  /** The new version's message: required, at most {@linkcode MAX_MESSAGE_LENGTH} characters. */
  message: string;
  /**
   * The change; a field that cannot be read throws an
   * {@linkcode InvalidRequestError} (the form again, with that refusal).
   */
  change(): QuickChange;
}

/** What a quick change of one flag asks for, read once the caller may change the namespace. */
export interface FlagChangeRequest {
  /** The version the change was made on: the form's `base` (the commit's `If-Match`). */
  base: number;
  /** The flag whose file `flags/<key>.toml` changes (404 when the base version has none). */
  flag: string;
  /**
   * Reads the change, given the base version (a 400 or 404 it throws is
   * the request's, such as an environment the version does not declare),
   * or null when the person only asks for the form again.
   */
  read(view: NamespaceView): AskedChange | null;
}

/** A change made on a version: the flag file before and after, and the manifest's problems then. */
export interface MadeChange {
  /** The flag file's text before the change. */
  before: string;
  /** Its text after. */
  after: string;
  /** What is wrong with the whole manifest after the change (empty: it can be committed). */
  problems: Problem[];
}

/** What a person's change does on the head that was committed after their base version. */
export type ChangeAgain =
  /** The head has no such flag any more. */
  | { kind: "flag_gone" }
  /** The head no longer declares the change's environment. */
  | { kind: "environment_gone" }
  /** The change, as entered, cannot be made on the head. */
  | { kind: "refused"; flag: Flag; error: InvalidRequestError }
  /** The head already has what the change asks for. */
  | { kind: "unchanged"; flag: Flag }
  /** The change made on the head: a new preview. */
  | ({ kind: "preview"; flag: Flag } & MadeChange);

/** What the parts of an outcome have in common: the base version and its flag. */
interface OnBase {
  /** The version the change was made on. */
  view: NamespaceView;
  /** The flag, in that version. */
  flag: Flag;
}

/** What became of a quick change ({@linkcode previewFlagChange}, {@linkcode commitFlagChange}). */
export type FlagChangeOutcome =
  /** Only the form was asked for. */
  | ({ kind: "form" } & OnBase)
  /** The message or the change was refused (400): the form again, with the refusal. */
  | ({ kind: "refused"; error: InvalidRequestError } & OnBase)
  /** The change changes nothing; nothing was committed. */
  | ({ kind: "unchanged" } & OnBase)
  /** The preview of the change. */
  | ({ kind: "preview" } & OnBase & MadeChange)
  /** The commit was refused: the manifest would not be valid (422). */
  | ({ kind: "invalid" } & OnBase & MadeChange)
  /**
   * The head is no longer the base version (412): the head, the versions
   * committed since the base (newest first, at most 20) and the change
   * made again on the head. Nothing was committed.
   */
  | ({
    kind: "conflict";
    head: NamespaceView;
    theirs: VersionMeta[];
    again: ChangeAgain;
  } & OnBase)
  /**
   * The change affects a protected environment (409 `approval_required`):
   * nothing was committed; the files it would have committed, to propose as
   * a change request.
   */
  | (
    & {
      kind: "approval_required";
      environments: string[];
      required: number;
      files: ReadonlyMap<string, Uint8Array>;
    }
    & OnBase
    & MadeChange
  )
  /** The change request the change opened (it was asked to propose). */
  | ({ kind: "proposed"; change_request: ChangeRequestRecord } & OnBase)
  /** The new version. */
  | ({ kind: "committed"; version: VersionMeta } & OnBase);

/**
 * Previews a quick change of one flag: authorises `manifest.write` (403)
 * and reads the head once (404 for the namespace), then the request: the
 * base version (404), its flag (404), the change. A message that is
 * missing or too long is refused; on a base that is no longer the head the
 * outcome is a conflict (what changed since, and the change made again on
 * the head); otherwise the change is made on the flag file (refused when
 * it cannot be) and the whole manifest validated as a commit would.
 * Nothing is written.
 *
 * @param deps store, runtime and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the base, the flag and the change, read only once authorised
 * @returns the outcome to show
 *
 * @example
 * ```ts
 * import { previewFlagChange, pushManifest } from "./manifests.ts";
 * import { ManifestViews } from "./versions.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const files = {
 *   "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n",
 *   "flags/dark.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 * };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * const deps = { kv, key, runtime, views: new ManifestViews() };
 * const shown = await previewFlagChange(deps, admin, ref, {
 *   base: 1,
 *   flag: "dark",
 *   read: () => ({
 *     environment: "prod",
 *     message: "dark off in prod",
 *     change: () => ({ kind: "toggle", environment: "prod", enabled: false }),
 *   }),
 * });
 * if (shown.kind !== "preview" || !shown.after.endsWith("[environments.prod]\nenabled = false\n")) {
 *   throw new Error(JSON.stringify(shown));
 * }
 * runtime.close();
 * kv.close();
 * ```
 */
export function previewFlagChange(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<FlagChangeRequest>,
): Promise<FlagChangeOutcome> {
  return withSpan(
    "cfgtool.service.preview_flag_change",
    refAttributes(ref),
    () => flagChange(deps, principal, ref, request, undefined),
  );
}

/**
 * Commits a quick change of one flag: as {@linkcode previewFlagChange}
 * (one authorisation, one head read), then the base version's files with
 * the changed flag file go through the same validation and commit as a
 * push, `If-Match` the base: a version with its `manifest.pushed` audit
 * entry, the runtime told and the push counted. A manifest that would not
 * be valid is refused (422: the preview again, with the problems); a head
 * that moved on is a conflict (412), as in a preview.
 *
 * @param deps store, runtime, clock and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the base, the flag and the change, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the outcome to show
 *
 * @example
 * ```ts
 * import { commitFlagChange, pushManifest } from "./manifests.ts";
 * import { ManifestViews } from "./versions.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const files = {
 *   "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n",
 *   "flags/dark.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 * };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * const deps = { kv, key, runtime, views: new ManifestViews() };
 * const request = {
 *   base: 1,
 *   flag: "dark",
 *   read: () => ({ message: "on by default", change: () => ({ kind: "default" as const, variation: "on" }) }),
 * };
 * const done = await commitFlagChange(deps, admin, ref, request, { requestId: "r3" });
 * if (done.kind !== "committed" || done.version.version !== 2) throw new Error(JSON.stringify(done));
 * const late = await commitFlagChange(deps, admin, ref, request, { requestId: "r4" });
 * if (late.kind !== "conflict" || late.head.meta.version !== 2 || late.again.kind !== "unchanged") {
 *   throw new Error("version 1 is no longer the head, which has the change already");
 * }
 * runtime.close();
 * kv.close();
 * ```
 */
export function commitFlagChange(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<FlagChangeRequest>,
  ctx: RequestContext,
): Promise<FlagChangeOutcome> {
  return withSpan(
    "cfgtool.service.commit_flag_change",
    refAttributes(ref),
    () => flagChange(deps, principal, ref, request, ctx),
  );
}

/**
 * A quick change, previewed (`ctx` undefined) or committed: an edit of
 * the flag's file (lib/services/edits.ts runs the flow: one
 * authorisation, one head read, the conflict on a moved head), told as
 * the quick-change pages tell it.
 */
async function flagChange(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<FlagChangeRequest>,
  ctx: RequestContext | undefined,
): Promise<FlagChangeOutcome> {
  let flag: Flag | undefined;
  const outcome = await runEdit(deps, principal, ref, async () => {
    const { base, flag: key, read } = await resolveInput(request);
    return {
      base,
      read: (view) => {
        flag = flagIn(view, key);
        const asked = read(view);
        if (asked === null) return null;
        return {
          message: asked.message,
          propose: asked.propose,
          make: (version) => quickEdit(version, key, asked),
        };
      },
    };
  }, ctx);
  return asFlagOutcome(outcome, flag!);
}

/** A quick change as an edit of the flag's file on a version (404 when its flag or environment is gone). */
function quickEdit(view: NamespaceView, key: string, asked: AskedChange): FileEdits {
  if (!Object.hasOwn(view.manifest.flags, key)) {
    throw new NotFoundError("flag_not_found", `Version ${view.meta.version} has no flag ${key}`);
  }
  const env = asked.environment;
  if (env !== undefined && !Object.hasOwn(view.manifest.namespace.environments, env)) {
    throw new NotFoundError(
      "environment_not_found",
      `Version ${view.meta.version} declares no environment ${env}`,
    );
  }
  const path = flagPath(key);
  return new Map([[path, applyQuickChange(fileText(view, path), asked.change())]]);
}

/** An edit's outcome as a quick change's: the flag file before and after. */
function asFlagOutcome(outcome: EditOutcome, flag: Flag): FlagChangeOutcome {
  const { view } = outcome;
  const one = (m: MadeEdit): MadeChange => ({
    before: m.edits[0]?.before ?? "",
    after: m.edits[0]?.after ?? "",
    problems: m.problems,
  });
  switch (outcome.kind) {
    case "form":
    case "unchanged":
      return { kind: outcome.kind, view, flag };
    case "refused":
      if (!(outcome.error instanceof InvalidRequestError)) throw outcome.error;
      return { kind: "refused", view, flag, error: outcome.error };
    case "preview":
    case "invalid":
      return { kind: outcome.kind, view, flag, ...one(outcome) };
    case "approval_required":
      return {
        kind: "approval_required",
        view,
        flag,
        ...one(outcome),
        problems: [],
        environments: outcome.protection.environments,
        required: outcome.protection.required,
        files: outcome.files,
      };
    case "proposed":
      return { kind: "proposed", view, flag, change_request: outcome.change_request };
    case "committed":
      return { kind: "committed", view, flag, version: outcome.version };
    case "conflict": {
      const base = {
        kind: "conflict" as const,
        view,
        flag,
        head: outcome.head,
        theirs: outcome.theirs,
      };
      const again = outcome.again;
      const headFlag = outcome.head.manifest.flags[flag.key];
      if (again.kind === "refused") {
        if (again.error.code === "flag_not_found" || headFlag === undefined) {
          return { ...base, again: { kind: "flag_gone" } };
        }
        if (again.error.code === "environment_not_found") {
          return { ...base, again: { kind: "environment_gone" } };
        }
        if (!(again.error instanceof InvalidRequestError)) throw again.error;
        return { ...base, again: { kind: "refused", flag: headFlag, error: again.error } };
      }
      if (headFlag === undefined) return { ...base, again: { kind: "flag_gone" } };
      if (again.kind === "unchanged") {
        return { ...base, again: { kind: "unchanged", flag: headFlag } };
      }
      return { ...base, again: { kind: "preview", flag: headFlag, ...one(again) } };
    }
  }
}

/**
 * The guard options of a commit sent with a break-glass reason: only a
 * superadmin may send one (403 before anything is read or written); an
 * empty reason is a 400.
 */
function bypassGuards(
  principal: Principal,
  reason: string | undefined,
  ctx: RequestContext,
): GuardOptions {
  if (reason === undefined) return {};
  if (!isSuperadmin(principal)) {
    throw new ForbiddenError(
      "Only a superadmin may bypass protected environments; open a change request instead",
    );
  }
  const trimmed = reason.trim();
  if (trimmed === "" || trimmed.length > MAX_MESSAGE_LENGTH) {
    throw new InvalidRequestError(
      `The bypass reason must say why, in 1 to ${MAX_MESSAGE_LENGTH} characters`,
      { details: { field: "X-Cfgtool-Bypass-Protection" } },
    );
  }
  return { bypass: { principal, reason: trimmed, requestId: ctx.requestId } };
}
