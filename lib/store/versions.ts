/**
 * Manifest versions of a namespace. The head `["ns_head", t, ns]` names the
 * current version, its closure hash and the environments of its
 * `namespace.toml` (so auth can check `public_evaluate` without parsing
 * TOML); it is the key to watch for changes. Each version has metadata at
 * `["version", t, ns, v]` pointing to a tree blob (JSON list of
 * `[path, blob id]`, sorted by path); file contents are blobs.
 *
 * A commit writes its blobs first (idempotent), then one atomic operation
 * that checks the head's versionstamp and holds the version's audit entry
 * (`manifest.pushed` or `manifest.rolled_back`): two concurrent commits
 * never both win, a crash never leaves a half version, and a refused
 * commit leaves no entry.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import { NotFoundError, PreconditionFailedError } from "../errors.ts";
import { getBlob, getBlobs, putBlob, putBlobs } from "./blobs.ts";
import {
  actorFromId,
  addAudit,
  type AuditActor,
  type AuditEntry,
  eventAuditEntry,
} from "./audit.ts";
import { headKey, versionKey, versionPrefix } from "./keys.ts";
import { checkLength, checkManifestLimits, MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { type Page, pageLimit } from "./page.ts";

/** Settings of one environment, from `[namespace.environments.<env>]`. */
export interface EnvironmentSettings {
  public_evaluate: boolean;
}

/** The head of a namespace: its current version. */
export interface Head {
  version: number;
  closure_hash: string;
  environments: Record<string, EnvironmentSettings>;
}

/** Metadata of one manifest version. */
export interface VersionMeta {
  version: number;
  closure_hash: string;
  created_at: string;
  created_by: string;
  message: string | null;
  file_count: number;
  /** Blob id of the tree (sorted `[path, blob id]` pairs, JSON). */
  tree: string;
  /** Environments declared by this version's `namespace.toml`. */
  environments: Record<string, EnvironmentSettings>;
}

/** Input of {@linkcode commitVersion}. */
export interface CommitInput {
  tenant: string;
  namespace: string;
  /** Every file of the manifest: path → bytes. */
  files: ReadonlyMap<string, Uint8Array>;
  /** Environments parsed from `namespace.toml` by the caller. */
  environments: Record<string, EnvironmentSettings>;
  /**
   * The closure hash of `files` and each file's content id (SHA-256 hex) by
   * path (`hashFileSet` in lib/closure/hash.ts computes both; an upload has
   * them from its worker). The store trusts them: they must be those of `files`.
   */
  hashed: FileSetHashes;
  /** User id or token id of the author. */
  created_by: string;
  /** The acting principal and request, for the audit entry (default: the author, no request). */
  actor?: AuditActor;
  /**
   * The version whose files these are, when the commit is a rollback: the
   * audit entry is then `manifest.rolled_back` with `rolled_back_to`.
   */
  rolledBackTo?: number;
  message?: string | null;
  /** Expected head version (`If-Match`); a different head gives 412. */
  ifMatch?: number;
  /** Clock, for tests. */
  now?: () => Date;
  /**
   * Called in each attempt with the head the new version is to replace
   * (not when the content equals it): it may refuse the commit (throw),
   * and add checks, writes, audit entries and details of the audit entry
   * to it. Protected environments and change requests use it: what it
   * decided holds for exactly the head that is replaced.
   */
  guard?: (head: Head) => CommitAdditions | undefined | Promise<CommitAdditions | undefined>;
}

/** What a commit {@linkcode CommitInput.guard} adds to the commit. */
export interface CommitAdditions {
  /** Entries whose versionstamps the commit checks (a change request, a protection record). */
  checks?: Deno.AtomicCheck[];
  /** Writes of the same commit, given the new version's number. */
  write?: (op: Deno.AtomicOperation, version: number) => void;
  /** Audit entries of the same commit, given the new version's number. */
  audit?: (version: number) => AuditEntry[];
  /** Added to the details of the `manifest.pushed` (or `manifest.rolled_back`) entry. */
  details?: Record<string, unknown>;
}

/** Result of {@linkcode commitVersion}. */
export interface CommitResult {
  /** The new version, or the head when nothing changed. */
  version: VersionMeta;
  /** False when the content equals the head's. */
  changed: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The closure hash of the empty manifest: SHA-256 of the empty buffer. */
export const EMPTY_CLOSURE_HASH =
  "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** A file set's closure hash and each file's content id (SHA-256 hex) by path. */
export interface FileSetHashes {
  /** `sha256:<hex>` over the file set. */
  closureHash: string;
  /** Path to the SHA-256 hex of its content. */
  blobIds: ReadonlyMap<string, string>;
}

/**
 * Stores a file set content-addressed: each file as a blob (written once
 * for all versions and change requests that hold it) and the tree (path →
 * content id, in path order) as a blob of its own, whose id names the set.
 * Blobs are written before whatever record names the tree commits.
 *
 * @param kv the store
 * @param files path → bytes
 * @param blobIds path → SHA-256 hex of the bytes (from `hashFileSet`)
 * @returns the tree's blob id
 *
 * @example
 * ```ts
 * import { readTreeFiles, writeTree } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const bytes = new TextEncoder().encode("schema_version = 1\n");
 * const id = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
 *   .map((b) => b.toString(16).padStart(2, "0")).join("");
 * const tree = await writeTree(kv, new Map([["namespace.toml", bytes]]), new Map([["namespace.toml", id]]));
 * if ((await readTreeFiles(kv, tree)).get("namespace.toml")?.length !== bytes.length) throw new Error();
 * kv.close();
 * ```
 */
export async function writeTree(
  kv: Deno.Kv,
  files: ReadonlyMap<string, Uint8Array>,
  blobIds: ReadonlyMap<string, string>,
): Promise<string> {
  const entries = [...files];
  const ids = await putBlobs(
    kv,
    entries.map(([, bytes]) => bytes),
    entries.map(([path]) => blobIds.get(path)!),
  );
  const pairs = entries.map(([path], i): [string, string] => [path, ids[i]!]);
  pairs.sort((a, b) => compareUtf8(a[0], b[0]));
  return await putBlob(kv, encoder.encode(JSON.stringify(pairs)));
}

/**
 * Writes version 0 (the empty manifest) and returns the writes to add to
 * the namespace-creating atomic operation.
 *
 * @param kv the store (the empty tree blob is written at once)
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param createdBy author id
 * @param now creation time
 * @returns a function adding the head and version-0 writes to an operation
 *
 * @example
 * ```ts
 * import { EMPTY_CLOSURE_HASH, getHead, initialVersionOps } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const add = await initialVersionOps(kv, "acme", "web", "usr_1", new Date());
 * await add(kv.atomic()).commit();
 * const head = await getHead(kv, "acme", "web");
 * if (head?.version !== 0 || head.closure_hash !== EMPTY_CLOSURE_HASH) throw new Error();
 * kv.close();
 * ```
 */
export async function initialVersionOps(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  createdBy: string,
  now: Date,
): Promise<(op: Deno.AtomicOperation) => Deno.AtomicOperation> {
  const tree = await writeTree(kv, new Map(), new Map());
  const hash = EMPTY_CLOSURE_HASH;
  const meta: VersionMeta = {
    version: 0,
    closure_hash: hash,
    created_at: now.toISOString(),
    created_by: createdBy,
    message: null,
    file_count: 0,
    tree,
    environments: {},
  };
  const head: Head = { version: 0, closure_hash: hash, environments: {} };
  return (op) =>
    op.set(headKey(tenant, namespace), head).set(
      versionKey(tenant, namespace, 0),
      meta,
    );
}

/**
 * Reads the head of a namespace (the current version).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @returns the head, or null when the namespace does not exist
 *
 * @example
 * ```ts
 * import { getHead } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await getHead(kv, "acme", "web") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function getHead(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
): Promise<Head | null> {
  return (await kv.get<Head>(headKey(tenant, namespace))).value;
}

/**
 * Commits a new manifest version. Blobs are written first; then one atomic
 * operation checks the head's versionstamp and writes head, metadata and
 * the audit entry (`manifest.pushed`, or `manifest.rolled_back` with
 * `rolledBackTo`; details: version, closure hash, message, file count,
 * previous version). Content equal to the head's gives `changed: false`
 * and the head, and no entry. With `ifMatch` set and different from the
 * head, throws 412 `precondition_failed`; without it, a lost race retries
 * on the new head. A message over {@linkcode MAX_MESSAGE_LENGTH}
 * characters is a 400 and more environments than lib/protocol/limits.ts
 * allows a 422, before any write.
 *
 * @param kv the store
 * @param input namespace, files, environments, author, message, ifMatch
 * @returns the version and whether it is new
 *
 * @example
 * ```ts
 * import { commitVersion, initialVersionOps } from "./versions.ts";
 * import { hashFileSet } from "../closure/hash.ts";
 * const kv = await Deno.openKv(":memory:");
 * await (await initialVersionOps(kv, "acme", "web", "usr_1", new Date()))(kv.atomic()).commit();
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const push = () => hashFileSet(files).then((hashed) =>
 *   commitVersion(kv, { tenant: "acme", namespace: "web", files, hashed, environments: {}, created_by: "usr_1" })
 * );
 * const first = await push();
 * const again = await push();
 * if (first.version.version !== 1 || !first.changed || again.changed) throw new Error();
 * kv.close();
 * ```
 */
export async function commitVersion(
  kv: Deno.Kv,
  input: CommitInput,
): Promise<CommitResult> {
  const { tenant, namespace } = input;
  checkLength("message", input.message, MAX_MESSAGE_LENGTH);
  checkManifestLimits(input.environments);
  const { closureHash: hash, blobIds } = input.hashed;
  // The tree is written only once a new version is needed: an unchanged
  // push costs the hash and one read.
  let tree: string | undefined;
  while (true) {
    const head = await kv.get<Head>(headKey(tenant, namespace));
    if (head.value === null) {
      throw new NotFoundError(
        "namespace_not_found",
        `No namespace ${namespace} in tenant ${tenant}`,
      );
    }
    const current = head.value.version;
    if (input.ifMatch !== undefined && input.ifMatch !== current) {
      throw new PreconditionFailedError(
        `Cannot commit on v${input.ifMatch}: the head is v${current}`,
        { details: { head: current } },
      );
    }
    if (head.value.closure_hash === hash) {
      return {
        version: await getVersion(kv, tenant, namespace, current),
        changed: false,
      };
    }
    const extra = await input.guard?.(head.value);
    tree ??= await writeTree(kv, input.files, blobIds);
    const now = input.now?.() ?? new Date();
    const meta: VersionMeta = {
      version: current + 1,
      closure_hash: hash,
      created_at: now.toISOString(),
      created_by: input.created_by,
      message: input.message ?? null,
      file_count: input.files.size,
      tree,
      environments: input.environments,
    };
    const next: Head = {
      version: meta.version,
      closure_hash: hash,
      environments: input.environments,
    };
    const rollback = input.rolledBackTo;
    const entry = eventAuditEntry(
      rollback === undefined ? "manifest.pushed" : "manifest.rolled_back",
      input.actor ?? actorFromId(input.created_by),
      now,
      {
        tenant_slug: tenant,
        namespace_slug: namespace,
        details: {
          version: meta.version,
          closure_hash: hash,
          message: meta.message,
          file_count: meta.file_count,
          previous_version: current,
          ...(rollback === undefined ? {} : { rolled_back_to: rollback }),
          ...extra?.details,
        },
      },
    );
    const op = kv.atomic()
      .check(head, ...(extra?.checks ?? []))
      .check({ key: versionKey(tenant, namespace, meta.version), versionstamp: null })
      .set(headKey(tenant, namespace), next)
      .set(versionKey(tenant, namespace, meta.version), meta);
    extra?.write?.(op, meta.version);
    for (const more of extra?.audit?.(meta.version) ?? []) addAudit(op, more);
    const res = await addAudit(op, entry).commit();
    if (res.ok) return { version: meta, changed: true };
  }
}

/**
 * Reads the metadata of one version, or throws 404 `version_not_found`.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version number
 * @returns the metadata
 *
 * @example
 * ```ts
 * import { getVersion } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getVersion(kv, "acme", "web", 3); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "version_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getVersion(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
): Promise<VersionMeta> {
  const entry = await kv.get<VersionMeta>(versionKey(tenant, namespace, version));
  if (entry.value === null) {
    throw new NotFoundError(
      "version_not_found",
      `No version ${version} of ${tenant}/${namespace}`,
    );
  }
  return entry.value;
}

/**
 * Reads the metadata of one version, or null when there is none (never
 * written, or pruned).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version number
 * @returns the metadata, or null
 *
 * @example
 * ```ts
 * import { findVersion, initialVersionOps } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * await (await initialVersionOps(kv, "acme", "web", "usr_1", new Date()))(kv.atomic()).commit();
 * if ((await findVersion(kv, "acme", "web", 0))?.version !== 0) throw new Error();
 * if (await findVersion(kv, "acme", "web", 1) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findVersion(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
): Promise<VersionMeta | null> {
  return (await kv.get<VersionMeta>(versionKey(tenant, namespace, version))).value;
}

/**
 * Lists version metadata newest first; `after` is a version number and the
 * page holds the versions below it.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param page `limit` (default 50, max 500) and `after`
 * @returns a page of metadata; `next` is the cursor (a version number as text)
 *
 * @example
 * ```ts
 * import { listVersions } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const page = await listVersions(kv, "acme", "web");
 * if (page.items.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listVersions(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  page: { limit?: number; after?: number } = {},
): Promise<Page<VersionMeta>> {
  const limit = pageLimit(page.limit);
  const prefix = versionPrefix(tenant, namespace);
  const selector: Deno.KvListSelector = page.after === undefined
    ? { prefix }
    : { prefix, end: versionKey(tenant, namespace, page.after) };
  const items: VersionMeta[] = [];
  for await (
    const entry of kv.list<VersionMeta>(selector, {
      reverse: true,
      limit: limit + 1,
    })
  ) {
    items.push(entry.value);
  }
  if (items.length <= limit) return { items, next: null };
  items.length = limit;
  return { items, next: String(items[limit - 1]!.version) };
}

/**
 * Reads every file of a version.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version number
 * @returns path → bytes, in path order
 *
 * @example
 * ```ts
 * import { initialVersionOps, readFiles } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * await (await initialVersionOps(kv, "acme", "web", "usr_1", new Date()))(kv.atomic()).commit();
 * if ((await readFiles(kv, "acme", "web", 0)).size !== 0) throw new Error("version 0 is empty");
 * kv.close();
 * ```
 */
export async function readFiles(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
): Promise<Map<string, Uint8Array>> {
  return await filesOf(kv, await readTree(kv, tenant, namespace, version), `version ${version}`);
}

/**
 * Reads every file of a stored tree ({@linkcode writeTree}).
 *
 * @param kv the store
 * @param tree the tree's blob id
 * @returns path → bytes, in path order
 *
 * @example
 * ```ts
 * import { readTreeFiles } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const missing = await readTreeFiles(kv, "0".repeat(64)).then(() => false, () => true);
 * if (!missing) throw new Error("an unknown tree is an error");
 * kv.close();
 * ```
 */
export async function readTreeFiles(kv: Deno.Kv, tree: string): Promise<Map<string, Uint8Array>> {
  return await filesOf(kv, await treeIds(kv, tree, `tree ${tree}`), `tree ${tree}`);
}

/** Reads the blobs of a tree's entries. */
async function filesOf(
  kv: Deno.Kv,
  ids: ReadonlyMap<string, string>,
  what: string,
): Promise<Map<string, Uint8Array>> {
  const pairs = [...ids];
  const blobs = await getBlobs(kv, pairs.map(([, id]) => id));
  const files = new Map<string, Uint8Array>();
  for (const [path, id] of pairs) {
    const bytes = blobs.get(id);
    if (bytes === undefined) {
      throw new Error(`Cannot read ${path} of ${what}: blob ${id} is missing`);
    }
    files.set(path, bytes);
  }
  return files;
}

/**
 * The tree of a version: each path's content id (SHA-256 hex of its
 * bytes), in path order, without reading the files. Two versions hold the
 * same bytes at a path exactly when the ids are equal.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version number
 * @returns path → content id
 *
 * @example
 * ```ts
 * import { initialVersionOps, readTree } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * await (await initialVersionOps(kv, "acme", "web", "usr_1", new Date()))(kv.atomic()).commit();
 * if ((await readTree(kv, "acme", "web", 0)).size !== 0) throw new Error("version 0 is empty");
 * kv.close();
 * ```
 */
export async function readTree(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
): Promise<Map<string, string>> {
  const meta = await getVersion(kv, tenant, namespace, version);
  return await treeIds(kv, meta.tree, `version ${version}`);
}

/**
 * The entries of a stored tree: path → content id, in path order.
 *
 * @param kv the store
 * @param tree the tree's blob id
 * @param what what the tree is, for the error when it is missing
 * @returns path → content id
 *
 * @example
 * ```ts
 * import { treeIds } from "./versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const missing = await treeIds(kv, "0".repeat(64), "test").then(() => false, () => true);
 * if (!missing) throw new Error();
 * kv.close();
 * ```
 */
export async function treeIds(
  kv: Deno.Kv,
  tree: string,
  what: string,
): Promise<Map<string, string>> {
  const treeBytes = await getBlob(kv, tree);
  if (treeBytes === null) throw new Error(`Cannot read ${what}: tree blob ${tree} is missing`);
  return new Map(JSON.parse(decoder.decode(treeBytes)) as [string, string][]);
}
