/**
 * Closures read from the store: one manifest version's files and model,
 * the closure of a subscription at that version, and its archive through
 * the per-process memo. Shared by the closure endpoint and the stream hub.
 *
 * @module
 */
import { packArchive } from "../closure/archive.ts";
import type { ManifestWorkers } from "../workers/manifest_workers.ts";
import { loadFiles } from "../workers/manifest_work.ts";
import { ProblemsError } from "../errors.ts";
import { closureHash, type FileSet } from "../closure/hash.ts";
import { type ClosureMemo, type MemoEntry, memoKey } from "../closure/memo.ts";
import { selectClosure } from "../flags/select.ts";
import { canonicalFlagList, type FlagSelection } from "../protocol/subscription.ts";
import type { Manifest } from "../flags/model.ts";
import { findVersion, readFiles, type VersionMeta } from "../store/versions.ts";

/** One stored manifest version, read (and parsed when a closure needs its model). */
export interface LoadedVersion {
  meta: VersionMeta;
  /** Every file of the version. */
  files: Map<string, Uint8Array>;
  /**
   * The parsed manifest, parsed on first use and kept: the whole-manifest
   * subscription (`*`), the common one, never needs it, so a push that only
   * `*` subscribers follow is never parsed here.
   */
  model(): Promise<Manifest>;
}

/**
 * Reads a manifest version, or null when its data is gone (pruned, or never
 * recorded). The model is parsed lazily ({@linkcode LoadedVersion.model}).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version the version
 * @param workers the process's manifest workers, which load a large version
 *   off the event loop (without them it loads in place)
 * @returns the version, or null
 *
 * @example
 * ```ts
 * import { loadVersion } from "./closures.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await loadVersion(kv, "acme", "web", 1) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function loadVersion(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  version: number,
  workers?: ManifestWorkers,
): Promise<LoadedVersion | null> {
  const meta = await findVersion(kv, tenant, namespace, version);
  if (meta === null) return null;
  let files: Map<string, Uint8Array>;
  try {
    files = await readFiles(kv, tenant, namespace, version);
  } catch {
    return null; // pruned between the two reads
  }
  // A stored version: loaded with the relaxed rules, as the model cache does
  // (that one logs the warnings).
  let model: Promise<Manifest> | undefined;
  return { meta, files, model: () => model ??= loadModel(files, workers) };
}

async function loadModel(
  files: ReadonlyMap<string, Uint8Array>,
  workers: ManifestWorkers | undefined,
): Promise<Manifest> {
  if (workers !== undefined) return (await workers.load(files)).manifest;
  const { problems, manifest } = loadFiles(files);
  if (manifest === undefined) throw new ProblemsError(problems);
  return manifest;
}

/** A closure and its hash. */
export interface Closure {
  files: Map<string, Uint8Array>;
  hash: string;
}

/**
 * The closure of a subscription at a loaded version.
 *
 * @param v the version
 * @param flags the subscription
 * @returns the closure files and hash
 *
 * @example
 * ```ts
 * import { closureOf } from "./closures.ts";
 * import { parseManifest } from "../flags/validate.ts";
 * const files = new Map<string, Uint8Array>();
 * const model = () => Promise.resolve(parseManifest(files));
 * const c = await closureOf({ meta: {} as never, files, model }, "*");
 * if (c.files.size !== 0 || !c.hash.startsWith("sha256:")) throw new Error();
 * ```
 */
export async function closureOf(v: LoadedVersion, flags: FlagSelection): Promise<Closure> {
  const files = flags === "*" ? new Map(v.files) : selectClosure(v.files, flags, await v.model());
  // every file selected: the closure is the version, whose hash is recorded
  if (files.size === v.files.size && v.meta.closure_hash) {
    return { files, hash: v.meta.closure_hash };
  }
  return { files, hash: await closureHash(files) };
}

/**
 * Size of the uncompressed ustar archive of a file set: a 512-byte header
 * per file, contents padded to 512 bytes, and two zero blocks at the end.
 *
 * @param files the files
 * @returns bytes
 *
 * @example
 * ```ts
 * import { tarSize } from "./closures.ts";
 * if (tarSize(new Map([["a", new Uint8Array(1)]])) !== 2048) throw new Error();
 * ```
 */
export function tarSize(files: FileSet): number {
  let size = 1024;
  for (const bytes of files.values()) size += 512 + Math.ceil(bytes.length / 512) * 512;
  return size;
}

/**
 * The archive of a closure, generated once per process and memoized.
 *
 * @param memo the process's closure memo
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param meta the version's metadata
 * @param flags the subscription
 * @param closure the closure, when the caller has it
 * @param load reads the version when the closure is not given
 * @param workers the process's manifest workers, which pack a large archive
 *   off the event loop (without them it is packed in place)
 * @returns archive, closure hash and tar size
 *
 * @example
 * ```ts ignore
 * const entry = await closureArchive(runtime.closures, "acme", "web", meta, "*", closure, load);
 * ```
 */
export function closureArchive(
  memo: ClosureMemo,
  tenant: string,
  namespace: string,
  meta: VersionMeta,
  flags: FlagSelection,
  closure: Closure | null,
  load: () => Promise<LoadedVersion | null>,
  workers?: ManifestWorkers,
): Promise<MemoEntry | null> {
  const key = memoKey(tenant, namespace, meta.version, meta.tree, canonicalFlagList(flags));
  const hit = memo.get(key);
  if (hit !== undefined) return Promise.resolve(hit);
  return memo.getOrCreate(key, async () => {
    let c = closure;
    if (c === null) {
      const v = await load();
      if (v === null) throw new GoneError();
      c = await closureOf(v, flags);
    }
    const archive = workers ? await workers.archive(c.files) : await packArchive(c.files);
    return { archive, closureHash: c.hash, tarSize: tarSize(c.files) };
  }).catch((err) => {
    if (err instanceof GoneError) return null;
    throw err;
  });
}

class GoneError extends Error {
  constructor() {
    super("version data is gone");
    this.name = "GoneError";
  }
}
