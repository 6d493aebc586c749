/**
 * The versions of a namespace, read: its head (`manifestTarget`, which
 * authorises the caller first), one version parsed for a page
 * (`ManifestViews`, a per-process cache of parsed versions), the list of
 * versions (the API's `GET …/versions` and the console's list, one
 * function), one version's metadata, one version with what it changed
 * (the console's version page), and the files that differ between two
 * versions (the console's diff). Each authorises the caller once
 * (lib/auth/permissions.ts) and reads through lib/store/versions.ts; the
 * HTTP layer and the console only read requests and render what these
 * return. Each runs in a trace span `cfgtool.service.<operation>`.
 *
 * @module
 */
import { type Action, authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { NotFoundError } from "../errors.ts";
import type { Flag, Manifest, Segment } from "../flags/model.ts";
import { parseManifest } from "../flags/validate.ts";
import { getBlobs } from "../store/blobs.ts";
import type { Page } from "../store/page.ts";
import {
  findVersion,
  getHead,
  getVersion,
  type Head,
  listVersions,
  readFiles,
  readTree,
  type VersionMeta,
} from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** A namespace's head and a version's metadata, as these reads return them. */
export type { Head, Page, VersionMeta };

/** The namespace a version read acts on. */
export interface NamespaceRef {
  tenant: string;
  namespace: string;
}

/**
 * The span attributes naming a namespace.
 *
 * @param ref the namespace
 * @returns its tenant and namespace as span attributes
 *
 * @example
 * ```ts
 * import { refAttributes } from "./versions.ts";
 * const attributes = refAttributes({ tenant: "acme", namespace: "web" });
 * if (attributes["cfgtool.namespace"] !== "web") throw new Error();
 * ```
 */
export function refAttributes(ref: NamespaceRef): Record<string, string> {
  return { "cfgtool.tenant": ref.tenant, "cfgtool.namespace": ref.namespace };
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
 * import { manifestTarget } from "./versions.ts";
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
  action: Action,
): Promise<Head> {
  return withSpan("cfgtool.service.manifest_target", refAttributes(ref), async () => {
    const { tenant, namespace } = ref;
    await authorize(deps.kv, principal, action, { tenant, namespace }, { memo: memoOf(deps) });
    return await currentHead(deps, ref);
  });
}

/**
 * The namespace's head, read without authorising anyone: for a service
 * that has authorised its caller already (a commit refused with 412 reads
 * the head that beat it). 404 `namespace_not_found` without one.
 *
 * @param deps the store
 * @param ref the namespace
 * @returns the head
 *
 * @example
 * ```ts
 * import { currentHead } from "./versions.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const deps = { kv, key: undefined as never, runtime: undefined as never };
 * if ((await currentHead(deps, { tenant: "acme", namespace: "web" })).version !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function currentHead(deps: ServiceDeps, ref: NamespaceRef): Promise<Head> {
  const head = await getHead(deps.kv, ref.tenant, ref.namespace);
  if (head === null) {
    throw new NotFoundError(
      "namespace_not_found",
      `No namespace ${ref.namespace} in tenant ${ref.tenant}`,
    );
  }
  return head;
}

/** One version of a namespace, as pages show it. */
export interface NamespaceView {
  tenant: string;
  namespace: string;
  /** The namespace's current head. */
  head: Head;
  /** The version shown (the head's unless another was asked for). */
  meta: VersionMeta;
  /** Its files, path → bytes. */
  files: ReadonlyMap<string, Uint8Array>;
  /** Its parsed manifest. */
  manifest: Manifest;
  /**
   * When each file of this version last changed: path → the version that
   * gave it its current bytes, looking back at most
   * {@linkcode LAST_CHANGE_DEPTH} versions (older changes show that
   * oldest version looked at). Read on the first call, then kept with the
   * version.
   */
  lastChanges(): Promise<Map<string, number>>;
}

/** How many versions back {@linkcode NamespaceView.lastChanges} looks. */
export const LAST_CHANGE_DEPTH = 50;

interface Cached {
  meta: VersionMeta;
  files: ReadonlyMap<string, Uint8Array>;
  manifest: Manifest;
  lastChanges?: Promise<Map<string, number>>;
}

/**
 * Parsed versions of namespaces, per process: one version's files and its
 * parsed manifest (flags, segments, environments). A version never
 * changes, so both are kept in memory per version (a few namespaces'
 * worth, least recently used first out): a page over a namespace of 500
 * flags parses nothing on its second load. Entries are keyed by content
 * (the version's closure hash and tree), never by number alone: a
 * namespace deleted and made again reuses numbers with other files.
 *
 * @example
 * ```ts ignore
 * const views = new ManifestViews();
 * const view = await views.load(deps, person, { tenant: "acme", namespace: "web" });
 * Object.keys(view.manifest.flags);
 * ```
 */
export class ManifestViews {
  readonly #max: number;
  readonly #entries = new Map<string, Promise<Cached>>();

  /** @param max versions kept (default 16) */
  constructor(max = 16) {
    this.#max = max;
  }

  /**
   * A version of a namespace (default: the head) for `principal`, who
   * needs `manifest.read` on it (403, 404 otherwise).
   *
   * @param deps store and runtime
   * @param principal the caller
   * @param ref the namespace
   * @param version the version, or the head's when absent
   * @returns the view
   */
  async load(
    deps: ServiceDeps,
    principal: Principal,
    ref: NamespaceRef,
    version?: number,
  ): Promise<NamespaceView> {
    const head = await manifestTarget(deps, principal, ref, "manifest.read");
    return await this.view(deps, ref, head, version);
  }

  /**
   * A version of a namespace whose head the caller has just read, having
   * authorised its principal to read the manifest (a service does both
   * once, then asks for the versions it needs here): nothing is authorised
   * or read again but the version itself (404 `version_not_found`).
   *
   * @param deps the store
   * @param ref the namespace
   * @param head its head, as the caller read it
   * @param version the version, or the head's when absent
   * @returns the view
   */
  async view(
    deps: ServiceDeps,
    ref: NamespaceRef,
    head: Head,
    version?: number,
  ): Promise<NamespaceView> {
    const { kv } = deps;
    const v = version ?? head.version;
    const meta = v === head.version
      ? undefined
      : await getVersion(kv, ref.tenant, ref.namespace, v);
    const cached = await this.#cached(
      kv,
      ref,
      v,
      meta?.closure_hash ?? head.closure_hash,
      meta?.tree,
    );
    return {
      tenant: ref.tenant,
      namespace: ref.namespace,
      head,
      meta: cached.meta,
      files: cached.files,
      manifest: cached.manifest,
      lastChanges: () => cached.lastChanges ??= lastChanges(kv, ref, cached.meta.version),
    };
  }

  #cached(
    kv: Deno.Kv,
    ref: NamespaceRef,
    version: number,
    closureHash: string,
    tree = "",
  ): Promise<Cached> {
    const id =
      `${ref.tenant}\u0000${ref.namespace}\u0000${version}\u0000${closureHash}\u0000${tree}`;
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      entry = (async () => {
        const meta = await getVersion(kv, ref.tenant, ref.namespace, version);
        if (meta.closure_hash !== closureHash) {
          throw new Error(`Version ${version} of ${ref.namespace} changed while it was read`);
        }
        const files = await readFiles(kv, ref.tenant, ref.namespace, version);
        return { meta, files, manifest: parseManifest(files, { stored: true }) };
      })();
      entry.catch(() => this.#entries.delete(id));
      this.#entries.set(id, entry);
      while (this.#entries.size > this.#max) {
        this.#entries.delete(this.#entries.keys().next().value!);
      }
    } else {
      this.#entries.delete(id); // most recently used goes last
      this.#entries.set(id, entry);
    }
    return entry;
  }
}

/** When each file of `version` last changed (see {@linkcode NamespaceView.lastChanges}). */
async function lastChanges(
  kv: Deno.Kv,
  ref: NamespaceRef,
  version: number,
): Promise<Map<string, number>> {
  const current = await readTree(kv, ref.tenant, ref.namespace, version);
  const out = new Map<string, number>();
  const open = new Set(current.keys());
  let newer = current;
  let newerVersion = version;
  const oldest = Math.max(0, version - LAST_CHANGE_DEPTH);
  const page = await listVersions(kv, ref.tenant, ref.namespace, {
    limit: LAST_CHANGE_DEPTH,
    after: version,
  });
  for (const meta of page.items) {
    if (open.size === 0 || meta.version < oldest) break;
    const tree = await readTree(kv, ref.tenant, ref.namespace, meta.version);
    for (const path of [...open]) {
      if (tree.get(path) !== newer.get(path)) {
        out.set(path, newerVersion);
        open.delete(path);
      }
    }
    newer = tree;
    newerVersion = meta.version;
  }
  for (const path of open) out.set(path, newerVersion);
  return out;
}

/** What the services that render parsed versions are given: the service deps and the cache. */
export interface ViewDeps extends ServiceDeps {
  /** The parsed versions of this process. */
  views: ManifestViews;
}

/** One flag of the head, as its page shows it. */
export interface FlagView {
  /** The head version. */
  view: NamespaceView;
  /** The flag. */
  flag: Flag;
  /** Whether the caller may change the manifest (edit links, quick changes). */
  mayWrite: boolean;
}

/**
 * One flag of the head for its page: needs `manifest.read` (403, 404 for
 * the namespace), then the flag (404) and the environment when one is
 * named (404 when the head does not declare it); with an environment, also
 * whether the caller may change the manifest (the page's quick-change
 * links).
 *
 * @param deps store, runtime and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the flag's key and the environment (`""`: none)
 * @returns the head's view, the flag and whether the caller may change it
 *
 * @example
 * ```ts
 * import { flagView, ManifestViews } from "./versions.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const files = {
 *   "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n",
 *   "flags/dark.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 * };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * const deps = { kv, key, runtime, views: new ManifestViews() };
 * const shown = await flagView(deps, admin, ref, { flag: "dark", env: "prod" });
 * if (shown.flag.default !== "off" || !shown.mayWrite || shown.view.meta.version !== 1) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function flagView(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: { flag: string; env: string },
): Promise<FlagView> {
  return withSpan("cfgtool.service.flag_view", refAttributes(ref), async () => {
    const view = await deps.views.load(deps, principal, ref);
    const flag = flagIn(view, request.flag);
    if (request.env !== "") environmentIn(view, request.env);
    const mayWrite = await can(deps.kv, principal, "manifest.write", ref, { memo: memoOf(deps) });
    return { view, flag, mayWrite };
  });
}

/**
 * Whether the caller may change a namespace's manifest (`manifest.write`),
 * for pages that offer edits to those who may make them. Asking refuses
 * nothing; the edit itself authorises again.
 *
 * @param deps the store
 * @param principal the caller
 * @param ref the namespace
 * @returns true when the caller may push, roll back and edit
 *
 * @example
 * ```ts ignore
 * if (await mayChangeManifest(deps, person, ref)) links.push(<a href={ui.edit.newFlag(t, ns)}>New flag</a>);
 * ```
 */
export function mayChangeManifest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
): Promise<boolean> {
  return can(deps.kv, principal, "manifest.write", ref, { memo: memoOf(deps) });
}

/**
 * The flag `key` of a view's version (404 when it has none).
 *
 * @param view the version
 * @param key the flag's key
 * @returns the flag
 *
 * @example
 * ```ts
 * import { flagIn } from "./versions.ts";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 3 },
 *   manifest: { flags: {}, segments: {}, namespace: { environments: { prod: {} } } } } as never;
 * let message = "";
 * try { flagIn(view, "nope"); } catch (e) { message = (e as Error).message; }
 * if (message !== "Version 3 of acme/web has no flag nope") throw new Error(message);
 * ```
 */
export function flagIn(view: NamespaceView, key: string): Flag {
  if (!Object.hasOwn(view.manifest.flags, key)) {
    throw new NotFoundError("not_found", `${versionName(view)} has no flag ${key}`);
  }
  return view.manifest.flags[key]!;
}

/**
 * The segment `key` of a view's version (404 when it has none).
 *
 * @param view the version
 * @param key the segment's key
 * @returns the segment
 *
 * @example
 * ```ts
 * import { segmentIn } from "./versions.ts";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 3 },
 *   manifest: { flags: {}, segments: {}, namespace: { environments: { prod: {} } } } } as never;
 * let message = "";
 * try { segmentIn(view, "beta"); } catch (e) { message = (e as Error).message; }
 * if (message !== "Version 3 of acme/web has no segment beta") throw new Error(message);
 * ```
 */
export function segmentIn(view: NamespaceView, key: string): Segment {
  if (!Object.hasOwn(view.manifest.segments, key)) {
    throw new NotFoundError("not_found", `${versionName(view)} has no segment ${key}`);
  }
  return view.manifest.segments[key]!;
}

/**
 * Checks that a view's version declares the environment `env` (404 when it
 * does not).
 *
 * @param view the version
 * @param env the environment
 * @returns `env`
 *
 * @example
 * ```ts
 * import { environmentIn } from "./versions.ts";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 3 },
 *   manifest: { flags: {}, segments: {}, namespace: { environments: { prod: {} } } } } as never;
 * if (environmentIn(view, "prod") !== "prod") throw new Error();
 * let status = 0;
 * try { environmentIn(view, "qa"); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 404) throw new Error();
 * ```
 */
export function environmentIn(view: NamespaceView, env: string): string {
  if (!Object.hasOwn(view.manifest.namespace.environments, env)) {
    throw new NotFoundError(
      "environment_not_found",
      `${versionName(view)} declares no environment ${env}`,
    );
  }
  return env;
}

/** "Version 3 of acme/web", as a 404 names it. */
function versionName(view: NamespaceView): string {
  return `Version ${view.meta.version} of ${view.tenant}/${view.namespace}`;
}

/**
 * The path of a flag's file: `flags/<key>.toml`.
 *
 * @param key the flag's key
 * @returns its path in the manifest
 *
 * @example
 * ```ts
 * import { flagPath } from "./versions.ts";
 * if (flagPath("dark-mode") !== "flags/dark-mode.toml") throw new Error();
 * ```
 */
export function flagPath(key: string): string {
  return `flags/${key}.toml`;
}

const decoder = new TextDecoder();

/**
 * The text of a file of a view's version (`""` when it has none).
 *
 * @param view the version
 * @param path the file's path
 * @returns its text
 *
 * @example
 * ```ts
 * import { fileText } from "./versions.ts";
 * const view = { files: new Map([["a.toml", new TextEncoder().encode("x = 1\n")]]) } as never;
 * if (fileText(view, "a.toml") !== "x = 1\n" || fileText(view, "b.toml") !== "") throw new Error();
 * ```
 */
export function fileText(view: Pick<NamespaceView, "files">, path: string): string {
  const bytes = view.files.get(path);
  return bytes === undefined ? "" : decoder.decode(bytes);
}

/** A page of versions, newest first, and the head. */
export interface VersionPage extends Page<VersionMeta> {
  /** The namespace's head. */
  head: Head;
}

/**
 * A page of a namespace's versions, newest first: needs `versions.read`
 * (403, 404 for the namespace), then reads the page (`limit`: default 50,
 * at most 500; `after`: the versions below that number). The API's version
 * list and the console's are both this.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param request `limit` and `after`, read only once authorised
 * @returns the head, the versions and the cursor of the next page
 *
 * @example
 * ```ts
 * import { listVersionPage } from "./versions.ts";
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
 * const page = await listVersionPage({ kv, key, runtime }, admin, { tenant: "acme", namespace: "web" }, {});
 * if (page.items.length !== 1 || page.items[0]!.version !== 0 || page.next !== null) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function listVersionPage(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<{ limit?: number | undefined; after?: number | undefined }>,
): Promise<VersionPage> {
  return withSpan("cfgtool.service.list_versions", refAttributes(ref), async () => {
    const head = await manifestTarget(deps, principal, ref, "versions.read");
    const { limit, after } = await resolveInput(request);
    const page = await listVersions(deps.kv, ref.tenant, ref.namespace, {
      ...(limit === undefined ? {} : { limit }),
      ...(after === undefined ? {} : { after }),
    });
    return { head, items: page.items, next: page.next };
  });
}

/**
 * One version's metadata: needs `versions.read` (403, 404 for the
 * namespace), then the version (404 `version_not_found`).
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param version the version number, read only once authorised
 * @returns its metadata
 *
 * @example
 * ```ts
 * import { versionMeta } from "./versions.ts";
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
 * const meta = await versionMeta({ kv, key, runtime }, admin, { tenant: "acme", namespace: "web" }, 0);
 * if (meta.version !== 0 || meta.file_count !== 0) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function versionMeta(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  version: Deferred<number>,
): Promise<VersionMeta> {
  return withSpan("cfgtool.service.get_version", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "versions.read");
    return await getVersion(deps.kv, ref.tenant, ref.namespace, await resolveInput(version));
  });
}

/**
 * The files that differ between two versions, both sides: only the paths
 * whose bytes differ (a path missing on one side is missing from its map).
 */
export interface FileSetChange {
  /** The older side's differing files, path → bytes. */
  before: Map<string, Uint8Array>;
  /** The newer side's differing files, path → bytes. */
  after: Map<string, Uint8Array>;
}

/** One version with its files and what it changed, as the console's version page shows it. */
export interface VersionDetails {
  /** The namespace's head. */
  head: Head;
  /** The version's metadata. */
  meta: VersionMeta;
  /** Its files, path → bytes, in path order. */
  files: Map<string, Uint8Array>;
  /** What it changed since the version before it; null for version 0 or when that one is gone. */
  changes: FileSetChange | null;
  /** Whether the caller may change the manifest (roll back to this version). */
  mayWrite: boolean;
}

/**
 * One version with its files and what it changed since the version before
 * it: needs `versions.read` (403, 404 for the namespace; whoever may read
 * version metadata may read the manifest too), then the version (404
 * `version_not_found`); also whether the caller may change the manifest.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param version the version number
 * @returns the head, the version, its files, its changes and the caller's right to roll back
 *
 * @example
 * ```ts
 * import { versionDetails } from "./versions.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
 * const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 * await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r2" });
 * const v1 = await versionDetails({ kv, key, runtime }, admin, ref, 1);
 * if (v1.files.size !== 1 || !v1.mayWrite || v1.changes?.after.has("namespace.toml") !== true) throw new Error();
 * if (v1.changes.before.size !== 0) throw new Error("version 0 has no files");
 * runtime.close();
 * kv.close();
 * ```
 */
export function versionDetails(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  version: number,
): Promise<VersionDetails> {
  return withSpan("cfgtool.service.version_details", refAttributes(ref), async () => {
    const { kv } = deps;
    const { tenant, namespace } = ref;
    const head = await manifestTarget(deps, principal, ref, "versions.read");
    const meta = await getVersion(kv, tenant, namespace, version);
    const [files, changes, mayWrite] = await Promise.all([
      readFiles(kv, tenant, namespace, version),
      version === 0
        ? null
        : findVersion(kv, tenant, namespace, version - 1).then((previous) =>
          previous === null ? null : changedFiles(kv, ref, version - 1, version)
        ),
      can(kv, principal, "manifest.write", ref, { memo: memoOf(deps) }),
    ]);
    return { head, meta, files, changes, mayWrite };
  });
}

/** Two versions and the files that differ between them. */
export interface VersionDiff extends FileSetChange {
  /** The namespace's head. */
  head: Head;
  /** The version compared from. */
  from: VersionMeta;
  /** The version compared to. */
  to: VersionMeta;
}

/**
 * The files that differ between two versions: needs `versions.read` (403,
 * 404 for the namespace), then both versions (404 `version_not_found`,
 * `from` first). The trees are compared by content id and only the
 * differing files are read.
 *
 * @param deps store and runtime
 * @param principal the caller
 * @param ref the namespace
 * @param request the two version numbers
 * @returns the head, both versions' metadata and their differing files
 *
 * @example
 * ```ts
 * import { versionDiff } from "./versions.ts";
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
 * const ref = { tenant: "acme", namespace: "web" };
 * const push = async (envs: string) => {
 *   const files = { "namespace.toml": `schema_version = 1\n${envs}` };
 *   const bytes = new TextEncoder().encode(JSON.stringify({ files }));
 *   await pushManifest({ kv, key, runtime }, admin, ref, { upload: { format: "json", bytes } }, { requestId: "r" });
 * };
 * await push("[namespace.environments.prod]\n");
 * await push("[namespace.environments.prod]\n[namespace.environments.qa]\n");
 * const diff = await versionDiff({ kv, key, runtime }, admin, ref, { from: 1, to: 2 });
 * const after = new TextDecoder().decode(diff.after.get("namespace.toml"));
 * if (diff.to.version !== 2 || !after.includes("qa") || diff.before.size !== 1) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function versionDiff(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: { from: number; to: number },
): Promise<VersionDiff> {
  return withSpan("cfgtool.service.diff_versions", refAttributes(ref), async () => {
    const { kv } = deps;
    const { tenant, namespace } = ref;
    const head = await manifestTarget(deps, principal, ref, "versions.read");
    const from = await getVersion(kv, tenant, namespace, request.from);
    const to = await getVersion(kv, tenant, namespace, request.to);
    const changes = await changedFiles(kv, ref, request.from, request.to);
    return { head, from, to, ...changes };
  });
}

/**
 * The files that differ between two versions: the trees are compared by
 * content id and only the differing files are read.
 */
async function changedFiles(
  kv: Deno.Kv,
  ref: NamespaceRef,
  from: number,
  to: number,
): Promise<FileSetChange> {
  const [a, b] = await Promise.all([
    readTree(kv, ref.tenant, ref.namespace, from),
    readTree(kv, ref.tenant, ref.namespace, to),
  ]);
  const differing = (mine: Map<string, string>, theirs: Map<string, string>) =>
    [...mine].filter(([path, id]) => theirs.get(path) !== id);
  const onlyA = differing(a, b);
  const onlyB = differing(b, a);
  const blobs = await getBlobs(kv, [...onlyA, ...onlyB].map(([, id]) => id));
  const bytes = (pairs: [string, string][]) =>
    new Map(pairs.map(([path, id]): [string, Uint8Array] => {
      const content = blobs.get(id);
      if (content === undefined) throw new Error(`Cannot read ${path}: blob ${id} is missing`);
      return [path, content];
    }));
  return { before: bytes(onlyA), after: bytes(onlyB) };
}
