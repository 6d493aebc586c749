/**
 * Manifest work that never holds the event loop: decoding a JSON upload and
 * validating. Small manifests are handled in place (a few milliseconds at
 * most), large ones in a worker, so a 10,000-file push, or the first
 * evaluation after it, does not stall the evaluations and streams that the
 * same process serves meanwhile.
 *
 * @module
 */
import { type Problem, ProblemsError, UsageError } from "../errors.ts";
import { type JsonManifest, manifestFromJson } from "./files.ts";
import { type Environment, environmentsOf, type Manifest } from "./model.ts";
import { validateManifest, type ValidateOptions, type ValidationResult } from "./validate.ts";

/** What the service needs of a validated manifest. */
export interface ManifestCheck {
  /** Every problem, sorted; empty when the manifest is valid. */
  problems: Problem[];
  /** What a `stored` check tolerated (always empty when strict). */
  warnings: Problem[];
  /** The environments of a valid manifest (`{}` when invalid). */
  environments: Record<string, Environment>;
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
  // The model stays here: cloning 10,000 flags back from a worker costs tens of ms.
  const { problems, warnings, manifest } = validateManifest(files, options);
  return { problems, warnings, environments: manifest ? environmentsOf(manifest) : {} };
}

/**
 * Loads a stored version in the calling thread; what the worker runs for
 * {@linkcode loadStoredManifest}.
 *
 * @param files path to file bytes
 * @returns the validation result with `{stored: true}`
 *
 * @example
 * ```ts
 * import { loadInPlace } from "./check_off_thread.ts";
 * const { manifest } = loadInPlace(new Map());
 * if (manifest === undefined) throw new Error();
 * ```
 */
export function loadInPlace(files: ReadonlyMap<string, Uint8Array>): ValidationResult {
  return validateManifest(files, { stored: true });
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
  const { problems, warnings, manifest } = files.size <= IN_PLACE_FILES &&
      totalBytes(files) <= IN_PLACE_BYTES
    ? loadInPlace(files)
    : await inTurn(() => inWorker<ValidationResult>({ op: "load", files }));
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

/**
 * Decodes a manifest sent as JSON (`{files: {path: text}, message?}`), in a
 * worker when the body is over {@linkcode IN_PLACE_BYTES}; throws what
 * {@linkcode manifestFromJson} throws either way.
 *
 * @param bytes the request body
 * @returns the files and the message
 *
 * @example
 * ```ts
 * import { decodeJsonManifest } from "./check_off_thread.ts";
 * const body = new TextEncoder().encode('{"files": {}, "message": "empty"}');
 * const { files, message } = await decodeJsonManifest(body);
 * if (files.size !== 0 || message !== "empty") throw new Error();
 * ```
 */
export function decodeJsonManifest(bytes: Uint8Array): Promise<JsonManifest> {
  if (bytes.length <= IN_PLACE_BYTES) return Promise.resolve(manifestFromJson(bytes));
  return inTurn(() => inWorker<JsonManifest>({ op: "json", bytes }));
}

function checkInWorker(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions,
): Promise<ManifestCheck> {
  return inWorker<ManifestCheck>({ op: "check", files, options });
}

/** Runs one request in a new worker; a refusal there is rethrown here as `UsageError`. */
function inWorker<T>(request: WorkerRequest): Promise<T> {
  const worker = new Worker(new URL("./_check_worker.ts", import.meta.url), { type: "module" });
  return new Promise<T>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<WorkerReply<T>>) => {
      const reply = e.data;
      if ("ok" in reply) resolve(reply.ok);
      else reject(new UsageError(reply.refused.message, { details: reply.refused.details ?? {} }));
    };
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`manifest work failed: ${e.message}`));
    };
    worker.postMessage(request);
  }).finally(() => worker.terminate());
}

/** What {@linkcode inWorker} sends its worker (lib/flags/_check_worker.ts). */
export type WorkerRequest =
  | { op: "check"; files: ReadonlyMap<string, Uint8Array>; options: ValidateOptions }
  | { op: "load"; files: ReadonlyMap<string, Uint8Array> }
  | { op: "json"; bytes: Uint8Array };

/** What the worker answers: a result, or the message of a `UsageError`. */
export type WorkerReply<T> = { ok: T } | {
  refused: { message: string; details?: Record<string, unknown> };
};
