/**
 * The manifest work that a large upload or stored version costs, written
 * once and run either in place (small inputs) or in a worker
 * (lib/workers/manifest_workers.ts): decoding an upload, validating,
 * digesting every file, loading a stored version, packing an archive.
 *
 * @module
 */
import { sha256All, toHex } from "../bytes.ts";
import { closureHashOfDigests } from "../closure/hash.ts";
import { unpackArchive } from "../closure/archive.ts";
import type { Problem } from "../errors.ts";
import { manifestFromJson } from "../flags/files.ts";
import { environmentsAffected, manifestOfFiles, sameFiles } from "../flags/impact.ts";
import { type Environment, environmentsOf } from "../flags/model.ts";
import { type ValueChange, valueChanges } from "../flags/value_changes.ts";
import {
  validateManifest,
  type ValidateOptions,
  type ValidationResult,
} from "../flags/validate.ts";

/** How an upload's body is encoded. */
export type UploadFormat = "json" | "archive";

/**
 * Problems a check reports at most: an upload of ten thousand broken files
 * would otherwise answer with megabytes of problems, built and serialised
 * on the thread that serves every other request.
 */
export const MAX_REPORTED_PROBLEMS = 1000;

/** What the service needs of a validated manifest. */
export interface ManifestCheck {
  /** The problems, sorted, at most {@linkcode MAX_REPORTED_PROBLEMS}; empty when valid. */
  problems: Problem[];
  /** How many problems there are in all. */
  problemCount: number;
  /** What a `stored` check tolerated (always empty when strict). */
  warnings: Problem[];
  /** The environments of a valid manifest (`{}` when invalid). */
  environments: Record<string, Environment>;
}

/** An upload decoded, validated and digested: everything a push needs. */
export interface PreparedUpload extends ManifestCheck {
  /** The files, in upload order. */
  files: Map<string, Uint8Array>;
  /** The push message of a JSON body (an archive's comes from the URL). */
  message: string | undefined;
  /** A JSON body's `"propose": true` (an archive's comes from the URL). */
  propose: boolean;
  /** Each file's content id, the SHA-256 of its bytes as hex, by path. */
  blobIds: Map<string, string>;
  /** The closure hash of the file set. */
  closureHash: string;
}

/**
 * Decodes an upload (a JSON body or a tar/tar.gz archive), validates it in
 * strict mode and digests every file once, so the push that follows hashes
 * nothing again. Throws what decoding throws (400 for a malformed body, 413
 * for an archive over the limits); validation problems are returned.
 *
 * @param bytes the request body
 * @param format how the body is encoded
 * @returns the files, their digests, the closure hash and the check
 *
 * @example
 * ```ts
 * import { prepareUpload } from "./manifest_work.ts";
 * const body = new TextEncoder().encode(JSON.stringify({
 *   files: { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" },
 *   message: "first",
 * }));
 * const up = await prepareUpload(body, "json");
 * if (up.problems.length !== 0 || !up.environments.prod || up.message !== "first") throw new Error();
 * if (!up.closureHash.startsWith("sha256:") || up.blobIds.size !== 1) throw new Error();
 * ```
 */
export async function prepareUpload(
  bytes: Uint8Array,
  format: UploadFormat,
): Promise<PreparedUpload> {
  const { files, message } = await decodeUpload(bytes, format);
  return await prepareFiles(files, message);
}

/**
 * Decodes an upload without validating it: a JSON body's files and
 * message, or an archive's files. Throws 400 for a malformed body, 413 for
 * one over the limits.
 *
 * @param bytes the request body
 * @param format how the body is encoded
 * @returns the files and the message (always undefined for an archive)
 *
 * @example
 * ```ts
 * import { decodeUpload } from "./manifest_work.ts";
 * const { files } = await decodeUpload(new TextEncoder().encode('{"files": {"a": "b"}}'), "json");
 * if (files.get("a")?.[0] !== 98) throw new Error();
 * ```
 */
export async function decodeUpload(
  bytes: Uint8Array,
  format: UploadFormat,
): Promise<{ files: Map<string, Uint8Array>; message: string | undefined; propose: boolean }> {
  return format === "json"
    ? manifestFromJson(bytes)
    : { files: await unpackArchive(bytes), message: undefined, propose: false };
}

/**
 * Validates decoded upload files in strict mode and digests each once.
 *
 * @param files the decoded files
 * @param message the push message, passed through
 * @param propose whether the upload asks for a change request, passed through
 * @returns the prepared upload
 *
 * @example
 * ```ts
 * import { prepareFiles } from "./manifest_work.ts";
 * const up = await prepareFiles(new Map([["notes.txt", new Uint8Array()]]), undefined);
 * if (!up.problems.some((p) => p.path === "notes.txt")) throw new Error();
 * if (up.blobIds.get("notes.txt")?.length !== 64) throw new Error();
 * ```
 */
export async function prepareFiles(
  files: Map<string, Uint8Array>,
  message: string | undefined,
  propose = false,
): Promise<PreparedUpload> {
  const check = checkFiles(files);
  const paths = [...files.keys()];
  const list = await sha256All([...files.values()]);
  const closureHash = await closureHashOfDigests(paths.map((p, i) => [p, list[i]!]));
  const blobIds = new Map(paths.map((p, i) => [p, toHex(list[i]!)]));
  return { ...check, files, message, propose, blobIds, closureHash };
}

/**
 * Validates a file set and keeps only what the service needs: the model
 * stays where it was built (cloning ten thousand flags out of a worker
 * costs tens of milliseconds).
 *
 * @param files path to file bytes
 * @param options as `validateManifest` takes them
 * @returns the problems, warnings and environments
 *
 * @example
 * ```ts
 * import { checkFiles } from "./manifest_work.ts";
 * const { problems } = checkFiles(new Map([["oops.txt", new Uint8Array()]]));
 * if (!problems.some((p) => p.path === "oops.txt")) throw new Error();
 * ```
 */
export function checkFiles(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions = {},
): ManifestCheck {
  const { problems, warnings, manifest } = validateManifest(files, options);
  return {
    problems: problems.slice(0, MAX_REPORTED_PROBLEMS),
    problemCount: problems.length,
    warnings: warnings.slice(0, MAX_REPORTED_PROBLEMS),
    environments: manifest ? environmentsOf(manifest) : {},
  };
}

/** What two file sets differ in: the environments affected, and the value changes if asked. */
export interface Comparison {
  /** Environments whose evaluation can differ (lib/flags/impact.ts). */
  impact: string[];
  /** What changed, value by value (lib/flags/value_changes.ts); null unless asked. */
  changes: ValueChange[] | null;
}

/**
 * Compares two valid file sets (both loaded as stored versions are): the
 * environments whose evaluation can differ, and, with `values`, what
 * changed value by value.
 *
 * @param before the files before
 * @param after the files after
 * @param values whether to list the value changes too
 * @returns the comparison
 * @throws {ProblemsError} when either side is not a valid manifest
 *
 * @example
 * ```ts
 * import { compareFiles } from "./manifest_work.ts";
 * const t = (s: string) => new TextEncoder().encode(s);
 * const ns = "schema_version = 1\n[namespace.environments.prod]\n";
 * const before = new Map([["namespace.toml", t(ns)]]);
 * const after = new Map([["namespace.toml", t(ns + "public_evaluate = true\n")]]);
 * const { impact, changes } = compareFiles(before, after, true);
 * if (impact.join() !== "prod" || changes?.length !== 1) throw new Error();
 * ```
 */
export function compareFiles(
  before: ReadonlyMap<string, Uint8Array>,
  after: ReadonlyMap<string, Uint8Array>,
  values: boolean,
): Comparison {
  const a = manifestOfFiles(before, { stored: true });
  const b = manifestOfFiles(after, { stored: true });
  const same = sameFiles(before, after); // files left as they were need no comparing
  return {
    impact: environmentsAffected(a, b, same),
    changes: values ? valueChanges(a, b, same) : null,
  };
}

/**
 * Loads a version that is already stored: validation with `{stored: true}`,
 * so a version an earlier release accepted under looser rules keeps loading.
 *
 * @param files path to file bytes
 * @returns the validation result, with the model when it compiles
 *
 * @example
 * ```ts
 * import { loadFiles } from "./manifest_work.ts";
 * const { manifest, problems } = loadFiles(new Map());
 * if (manifest === undefined || problems.length !== 0) throw new Error();
 * ```
 */
export function loadFiles(files: ReadonlyMap<string, Uint8Array>): ValidationResult {
  return validateManifest(files, { stored: true });
}
