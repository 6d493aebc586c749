/**
 * Parse and validate a namespace manifest (a set of files) into a
 * {@linkcode Manifest}. Every problem is reported at once, in a stable order
 * (by file path, then key path): TOML syntax errors with line and column,
 * everything else with a key path such as `rule[1].rollout[0].weight`.
 * The rules are documented in docs/flags.md.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";
import { type Problem, ProblemsError } from "../errors.ts";
import { parseToml, type TomlTable } from "../toml.ts";
import { compareKeyPaths } from "./_key_path.ts";
import { reportCycles } from "./_segment_cycles.ts";
import { reportNesting } from "./_segment_nesting.ts";
import { type CheckMode, FileChecker } from "./_validate_common.ts";
import { checkFlag } from "./_validate_flag.ts";
import { checkNamespace } from "./_validate_namespace.ts";
import { checkSegment } from "./_validate_segment.ts";
import {
  type Flag,
  type Manifest,
  MAX_FILE_BYTES,
  parseManifestPath,
  type Segment,
  unknownFileMessage,
} from "./model.ts";

/** The outcome of {@linkcode validateManifest}. */
export interface ValidationResult {
  /** Every problem found, sorted by path then key path; empty when valid. */
  problems: Problem[];
  /**
   * What a `stored` load tolerated (a `matches` pattern that never holds),
   * sorted as `problems`; always empty in the default, strict mode.
   */
  warnings: Problem[];
  /** The model; present only when `problems` is empty. */
  manifest?: Manifest;
}

/** Options of {@linkcode validateManifest}. */
export interface ValidateOptions {
  /**
   * Load a version that is already stored rather than check one being
   * written. Only what compiling and evaluating need is checked: the
   * push-only limits (segment nesting depth, environment count) are
   * skipped, and a `matches` pattern the linear-time engine refuses becomes
   * a predicate that never holds, reported in `warnings`. Versions accepted
   * by an earlier release with looser rules so keep being served. Push,
   * lint and rollback use the default, strict mode.
   */
  stored?: boolean;
}

/**
 * Validates a manifest file set and builds its model. Accepted paths are
 * `namespace.toml`, `flags/<key>.toml` and `segments/<key>.toml`; every other
 * path is an "unknown file" problem. `namespace.toml` is required as soon as
 * any other file exists; the empty set is the valid empty manifest. Files must
 * be UTF-8 TOML of at most 1 MiB. All problems are reported, sorted by path
 * (byte-wise) and then key path (array indices numerically). With
 * `{stored: true}` the push-only rules are relaxed (see
 * {@linkcode ValidateOptions}).
 *
 * @param files path (relative, `/`-separated) to the exact file bytes
 * @param options `stored` to load a version already in the store
 * @returns `{problems, warnings}`, plus `manifest` when there are no problems
 *
 * @example
 * ```ts
 * import { validateManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const files = new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n")],
 *   ["flags/dark-mode.toml", enc.encode(
 *     'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 *   )],
 * ]);
 * const { problems, manifest } = validateManifest(files);
 * if (problems.length !== 0 || manifest?.flags["dark-mode"]?.type !== "boolean") throw new Error();
 * ```
 */
export function validateManifest(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions = {},
): ValidationResult {
  const problems: Problem[] = [];
  const mode: CheckMode = { stored: options.stored === true, warnings: [] };
  const tables: {
    path: string;
    kind: "namespace" | "flag" | "segment";
    key: string;
    t: TomlTable;
  }[] = [];
  const segmentKeys = new Set<string>();
  let hasNamespace = false;

  for (const [path, bytes] of files) {
    const kind = parseManifestPath(path);
    if (kind === undefined) {
      problems.push({ path, message: unknownFileMessage(path) });
      continue;
    }
    if (kind.kind === "namespace") hasNamespace = true;
    if (kind.kind === "segment") segmentKeys.add(kind.key);
    if (bytes.length > MAX_FILE_BYTES) {
      problems.push({
        path,
        message: `file is ${bytes.length} bytes; the limit is ${MAX_FILE_BYTES} bytes (1 MiB)`,
      });
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      problems.push({ path, message: "file is not valid UTF-8" });
      continue;
    }
    const parsed = parseToml(text, path);
    if (!parsed.ok) {
      problems.push(parsed.problem);
      continue;
    }
    tables.push({
      path,
      kind: kind.kind,
      key: kind.kind === "namespace" ? "" : kind.key,
      t: parsed.table,
    });
  }
  if (files.size > 0 && !hasNamespace) {
    problems.push({
      path: "namespace.toml",
      message: "file is missing: a manifest with any file needs namespace.toml",
    });
  }

  tables.sort((a, b) => compareUtf8(a.path, b.path));
  let namespace: Manifest["namespace"] = { description: "", environments: {} };
  // Environment keys that overrides may name; undefined when they cannot be
  // known (namespace.toml missing or unreadable), so overrides are not checked.
  let envKeys: Set<string> | undefined;
  const nsEntry = tables.find((x) => x.kind === "namespace");
  if (nsEntry) {
    const r = checkNamespace(new FileChecker(nsEntry.path, problems, mode), nsEntry.t);
    namespace = r.namespace;
    envKeys = r.envKeys;
  }

  const segments: Record<string, Segment> = {};
  const edges = new Map<string, { target: string; key: string }[]>();
  const flags: Record<string, Flag> = {};
  for (const entry of tables) {
    const fc = new FileChecker(entry.path, problems, mode);
    if (entry.kind === "segment") {
      const { segment, refs } = checkSegment(fc, entry.key, entry.t, segmentKeys);
      segments[entry.key] = segment;
      edges.set(entry.key, refs);
    } else if (entry.kind === "flag") {
      flags[entry.key] = checkFlag(fc, entry.key, entry.t, segmentKeys, envKeys);
    }
  }
  // Cycles cannot be evaluated; depth only costs time, so it is push-only.
  if (!reportCycles(edges, problems) && !mode.stored) reportNesting(edges, problems);

  problems.sort(compareProblems);
  const warnings = mode.warnings.sort(compareProblems);
  if (problems.length > 0) return { problems, warnings };
  return { problems, warnings, manifest: { namespace, flags, segments } };
}

/**
 * Validates a manifest and returns its model, or throws a
 * {@linkcode ProblemsError} listing every problem (exit 1 on the CLI, 422
 * `invalid_manifest` over HTTP).
 *
 * @param files path to exact file bytes, as for {@linkcode validateManifest}
 * @param options as for {@linkcode validateManifest} (`stored` to load a stored version)
 * @returns the validated manifest
 * @throws {ProblemsError} when any problem is found
 *
 * @example
 * ```ts
 * import { parseManifest } from "./validate.ts";
 * import { ProblemsError } from "../errors.ts";
 * if (Object.keys(parseManifest(new Map()).flags).length !== 0) throw new Error();
 * try {
 *   parseManifest(new Map([["README.md", new Uint8Array()]]));
 *   throw new Error("expected problems");
 * } catch (err) {
 *   if (!(err instanceof ProblemsError)) throw err;
 * }
 * ```
 */
export function parseManifest(
  files: ReadonlyMap<string, Uint8Array>,
  options: ValidateOptions = {},
): Manifest {
  const { problems, manifest } = validateManifest(files, options);
  if (manifest === undefined) throw new ProblemsError(problems);
  return manifest;
}

/**
 * Orders problems by path (byte-wise over UTF-8), then key path (file-level
 * problems first, array indices compared as numbers), then line and column.
 *
 * @example
 * ```ts
 * import { compareProblems } from "./validate.ts";
 * const a = { path: "flags/a.toml", key: "rule[2]", message: "" };
 * const b = { path: "flags/a.toml", key: "rule[10]", message: "" };
 * if (compareProblems(a, b) >= 0) throw new Error();
 * ```
 */
export function compareProblems(a: Problem, b: Problem): number {
  const p = compareUtf8(a.path, b.path);
  if (p !== 0) return p;
  const k = compareKeyPaths(a.key ?? "", b.key ?? "");
  if (k !== 0) return k;
  return (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0);
}
