/**
 * Manifest validation that never holds the event loop: small manifests are
 * validated in place (a few milliseconds at most), large ones in a worker, so
 * a 10,000-file push does not stall the evaluations and streams that the
 * same process serves meanwhile.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { type Environment, environmentsOf } from "./model.ts";
import { validateManifest } from "./validate.ts";

/** What the service needs of a validated manifest. */
export interface ManifestCheck {
  /** Every problem, sorted; empty when the manifest is valid. */
  problems: Problem[];
  /** The environments of a valid manifest (`{}` when invalid). */
  environments: Record<string, Environment>;
}

/** Files up to which validation runs in place: about 5 ms of work. */
export const IN_PLACE_FILES = 64;

/**
 * Validates a manifest file set, in a worker when it has more than
 * {@linkcode IN_PLACE_FILES} files; the outcome is the same either way.
 *
 * @param files path to file bytes, as {@linkcode validateManifest} takes them
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
): Promise<ManifestCheck> {
  if (files.size <= IN_PLACE_FILES) return Promise.resolve(checkInPlace(files));
  return checkInWorker(files);
}

/**
 * Validates in the calling thread; what the worker runs.
 *
 * @param files path to file bytes
 * @returns the problems and environments
 *
 * @example
 * ```ts
 * import { checkInPlace } from "./check_off_thread.ts";
 * const { problems } = checkInPlace(new Map([["oops.txt", new Uint8Array()]]));
 * if (problems.length === 0) throw new Error();
 * ```
 */
export function checkInPlace(files: ReadonlyMap<string, Uint8Array>): ManifestCheck {
  const { problems, manifest } = validateManifest(files);
  return { problems, environments: manifest ? environmentsOf(manifest) : {} };
}

function checkInWorker(files: ReadonlyMap<string, Uint8Array>): Promise<ManifestCheck> {
  const worker = new Worker(new URL("./_check_worker.ts", import.meta.url), { type: "module" });
  return new Promise<ManifestCheck>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<ManifestCheck>) => resolve(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`manifest validation failed: ${e.message}`));
    };
    worker.postMessage(files);
  }).finally(() => worker.terminate());
}
