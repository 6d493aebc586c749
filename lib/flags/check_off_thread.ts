/**
 * Manifest validation that never holds the event loop: small manifests are
 * validated in place (a few milliseconds at most), large ones in a worker, so
 * a 10,000-file push, or the first evaluation after it, does not stall the
 * evaluations and streams that the same process serves meanwhile.
 *
 * @module
 */
import { type Problem, ProblemsError } from "../errors.ts";
import { type Environment, environmentsOf, type Manifest } from "./model.ts";
import { validateManifest, type ValidateOptions } from "./validate.ts";

/** What the service needs of a validated manifest. */
export interface ManifestCheck {
  /** Every problem, sorted; empty when the manifest is valid. */
  problems: Problem[];
  /** What a `stored` check tolerated (always empty when strict). */
  warnings: Problem[];
  /** The environments of a valid manifest (`{}` when invalid). */
  environments: Record<string, Environment>;
  /** The model of a valid manifest. */
  manifest?: Manifest;
}

/** Files up to which validation runs in place: about 5 ms of work. */
export const IN_PLACE_FILES = 64;
/** Bytes up to which validation runs in place (TOML parsing is about 10 ms a 100 KiB). */
export const IN_PLACE_BYTES = 256 * 1024;
/** Validation workers running at once in one process; further checks wait their turn. */
export const MAX_WORKERS = 2;

/**
 * Validates a manifest file set, in a worker when it has more than
 * {@linkcode IN_PLACE_FILES} files; the outcome is the same either way.
 *
 * @param files path to file bytes, as {@linkcode validateManifest} takes them
 * @param options as {@linkcode validateManifest} takes them (`stored` to load a stored version)
 * @returns the problems and, for a valid manifest, its environments
 *
 * @example
 * ```ts
 * import { checkManifest } from "./check_off_thread.ts";
 * const enc = new TextEncoder();
 * const files = new Map([["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.prod]\n")]]);
 * const { problems, environments } = await checkManifest(files);
 * if (problems.length !== 0 || !environments.prod) throw new Error();
 * ```
 */
export function checkManifest(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions = {},
): Promise<ManifestCheck> {
  if (files.size <= IN_PLACE_FILES && totalBytes(files) <= IN_PLACE_BYTES) {
    return Promise.resolve(checkInPlace(files, options));
  }
  return inTurn(() => checkInWorker(files, options));
}

/**
 * Validates in the calling thread; what the worker runs.
 *
 * @param files path to file bytes
 * @param options as {@linkcode validateManifest} takes them
 * @returns the problems and environments
 *
 * @example
 * ```ts
 * import { checkInPlace } from "./check_off_thread.ts";
 * const { problems } = checkInPlace(new Map([["oops.txt", new Uint8Array()]]));
 * if (problems.length === 0) throw new Error();
 * ```
 */
export function checkInPlace(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions = {},
): ManifestCheck {
  const { problems, warnings, manifest } = validateManifest(files, options);
  if (manifest === undefined) return { problems, warnings, environments: {} };
  return { problems, warnings, environments: environmentsOf(manifest), manifest };
}

/** A stored version's model and what loading it tolerated. */
export interface StoredManifest {
  /** The model. */
  manifest: Manifest;
  /** Tolerated findings, such as a `matches` pattern that never holds. */
  warnings: Problem[];
}

/**
 * Loads a version that is already in the store, off the event loop when it
 * is large: validation with `{stored: true}`, so a version an earlier
 * release accepted under looser rules keeps loading (see
 * `ValidateOptions.stored`). Throws `ProblemsError` (422
 * `invalid_manifest`) only for what cannot be compiled at all.
 *
 * @param files path to file bytes
 * @returns the model and the warnings to log
 *
 * @example
 * ```ts
 * import { loadStoredManifest } from "./check_off_thread.ts";
 * const enc = new TextEncoder();
 * const { manifest, warnings } = await loadStoredManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n")],
 *   ["segments/a.toml", enc.encode(
 *     'schema_version = 1\n[[predicate]]\nattribute = "x"\nop = "matches"\nvalue = "(?=a)"\n',
 *   )],
 * ]));
 * if (!manifest.segments.a || warnings.length !== 1) throw new Error();
 * ```
 */
export async function loadStoredManifest(
  files: ReadonlyMap<string, Uint8Array>,
): Promise<StoredManifest> {
  const { problems, warnings, manifest } = await checkManifest(files, { stored: true });
  if (manifest === undefined) throw new ProblemsError(problems);
  return { manifest, warnings };
}

function totalBytes(files: ReadonlyMap<string, Uint8Array>): number {
  let n = 0;
  for (const bytes of files.values()) n += bytes.length;
  return n;
}

/** Workers running now, and the checks waiting for one. */
let running = 0;
const waiting: (() => void)[] = [];

/**
 * Runs `task` once fewer than {@linkcode MAX_WORKERS} run: a burst of large
 * lints or model loads queues instead of starting a worker (and its memory)
 * each.
 */
async function inTurn<T>(task: () => Promise<T>): Promise<T> {
  if (running >= MAX_WORKERS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function checkInWorker(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions,
): Promise<ManifestCheck> {
  const worker = new Worker(new URL("./_check_worker.ts", import.meta.url), { type: "module" });
  return new Promise<ManifestCheck>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<ManifestCheck>) => resolve(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`manifest validation failed: ${e.message}`));
    };
    worker.postMessage({ files, options } satisfies CheckRequest);
  }).finally(() => worker.terminate());
}

/** What {@linkcode checkInWorker} sends its worker (lib/flags/_check_worker.ts). */
export interface CheckRequest {
  /** The file set. */
  files: ReadonlyMap<string, Uint8Array>;
  /** The validation options. */
  options: ValidateOptions;
}
