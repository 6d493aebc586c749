/**
 * What console pages read about a namespace: one version's files and its
 * parsed manifest (flags, segments, environments), authorised as a
 * manifest read for the person, and when each file last changed; the flag,
 * segment or environment a page names, or a 404 that says which version
 * lacks it. A
 * version never changes, so both are kept in memory per version (a few
 * namespaces' worth, least recently used first out): a page over a
 * namespace of 500 flags parses nothing on its second load.
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import { NotFoundError } from "../errors.ts";
import type { Flag, Manifest, Segment } from "../flags/model.ts";
import { parseManifest } from "../flags/validate.ts";
import { manifestTarget, type NamespaceRef } from "../services/manifests.ts";
import type { ServiceDeps } from "../services/deps.ts";
import {
  getVersion,
  type Head,
  listVersions,
  readFiles,
  readTree,
  type VersionMeta,
} from "../store/versions.ts";

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
}

/** How many versions back {@linkcode ManifestViews.lastChanges} looks. */
export const LAST_CHANGE_DEPTH = 50;

interface Cached {
  meta: VersionMeta;
  files: ReadonlyMap<string, Uint8Array>;
  manifest: Manifest;
  lastChanges?: Promise<Map<string, number>>;
}

/**
 * Parsed versions of namespaces, per process.
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
   * @param principal the person
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
    const v = version ?? head.version;
    // The cache is keyed by content (the version's closure hash and tree), never by number
    // alone: a namespace deleted and made again reuses numbers with other files.
    const meta = v === head.version
      ? undefined
      : await getVersion(deps.kv, ref.tenant, ref.namespace, v);
    const cached = await this.#cached(
      deps.kv,
      ref,
      v,
      meta?.closure_hash ?? head.closure_hash,
      meta?.tree,
    );
    return { ...ref, head, meta: cached.meta, files: cached.files, manifest: cached.manifest };
  }

  /**
   * When each file of the view's version last changed: path → the version
   * that gave it its current bytes, looking back at most
   * {@linkcode LAST_CHANGE_DEPTH} versions (older changes show that oldest
   * version looked at).
   *
   * @param kv the store
   * @param view a view from {@linkcode ManifestViews.load}
   * @returns path → version
   */
  lastChanges(kv: Deno.Kv, view: NamespaceView): Promise<Map<string, number>> {
    const key = keyOf(
      view,
      view.meta.version,
      `${view.meta.closure_hash}\u0000${
        view.meta.version === view.head.version ? "" : view.meta.tree
      }`,
    );
    const entry = this.#entries.get(key);
    const compute = () => lastChanges(kv, view, view.meta.version);
    if (entry === undefined) return compute();
    return entry.then((c) => c.lastChanges ??= compute());
  }

  #cached(
    kv: Deno.Kv,
    ref: NamespaceRef,
    version: number,
    closureHash: string,
    tree = "",
  ): Promise<Cached> {
    const id = keyOf(ref, version, `${closureHash}\u0000${tree}`);
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

function keyOf(ref: NamespaceRef, version: number, closureHash: string): string {
  return `${ref.tenant}\u0000${ref.namespace}\u0000${version}\u0000${closureHash}`;
}

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

/**
 * The flag `key` of a view's version (404 when it has none).
 *
 * @param view the version
 * @param key the flag's key
 * @returns the flag
 *
 * @example
 * ```ts
 * import { flagIn } from "./manifest_view.ts";
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
 * import { segmentIn } from "./manifest_view.ts";
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
 * import { environmentIn } from "./manifest_view.ts";
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
