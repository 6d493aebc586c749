/**
 * The closure a client tracks for one namespace (docs/events.md): the
 * files, their closure hash, the version and the model compiled by the
 * server's own engine. A state is immutable and only ever built from files
 * that passed every check, so a failed check can never replace the last
 * good model: it simply produces no new state.
 *
 * Also here: the integrity checks of inline deltas and snapshots (the
 * event data itself is parsed by lib/protocol/events.ts).
 *
 * @module
 */
import { base64 } from "base";
import { closureHash } from "../closure/hash.ts";
import { bytesEqual, sha256Hex } from "../bytes.ts";
import { unpackArchive } from "../closure/archive.ts";
import { formatProblem, ProblemsError } from "../errors.ts";
import { type CompiledModel, compileManifest } from "../flags/evaluate.ts";
import type { Manifest } from "../flags/model.ts";
import { parseManifestPath } from "../flags/model.ts";
import { parseManifest } from "../flags/validate.ts";
import { versionEtag } from "../protocol/etag.ts";
import type { VersionEvent } from "../protocol/events.ts";
import { IntegrityError } from "../protocol/integrity.ts";

const HEX_RE = /^[0-9a-f]{64}$/;

/** What changed between two states. */
export interface StateDiff {
  /** Paths added, changed or removed, sorted. */
  paths: string[];
  /** Flag keys whose evaluation may have changed (every flag when a segment or namespace.toml changed). */
  flags: string[];
}

/**
 * A verified closure of one namespace. Build one with
 * {@linkcode ClosureState.fromFiles} (after a snapshot) or
 * {@linkcode ClosureState.applyDelta} (after an inline event); both throw
 * {@linkcode IntegrityError} and leave the caller's state alone.
 *
 * @example
 * ```ts
 * import { ClosureState } from "./closure_state.ts";
 * import { closureHash } from "../closure/hash.ts";
 * import { evaluateFlag } from "../flags/evaluate.ts";
 * const files = new Map([
 *   ["namespace.toml", new TextEncoder().encode("schema_version = 1\n[namespace.environments.prod]\n")],
 * ]);
 * const state = await ClosureState.fromFiles("web", 1, files, await closureHash(files));
 * if (state.version !== 1 || state.model.flagKeys.length !== 0) throw new Error();
 * if (evaluateFlag(state.model, "prod", "x", {}).error_code !== "FLAG_NOT_FOUND") throw new Error();
 * ```
 */
export class ClosureState {
  /** Namespace slug. */
  readonly namespace: string;
  /** Manifest version the closure is at. */
  readonly version: number;
  /** The closure hash of {@linkcode ClosureState.files}. */
  readonly hash: string;
  /** path → exact bytes. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The validated manifest. */
  readonly manifest: Manifest;
  /** The engine's compiled model. */
  readonly model: CompiledModel;

  private constructor(
    namespace: string,
    version: number,
    hash: string,
    files: ReadonlyMap<string, Uint8Array>,
    manifest: Manifest,
    model: CompiledModel,
  ) {
    this.namespace = namespace;
    this.version = version;
    this.hash = hash;
    this.files = files;
    this.manifest = manifest;
    this.model = model;
  }

  /** The closure endpoint ETag of this state, `"v<version>-<hash>"`. */
  get etag(): string {
    return versionEtag(this.version, this.hash);
  }

  /**
   * Builds a state from a full closure: recomputes the closure hash and
   * compares it with `expectedHash` (check 4, `snapshot_hash`), then
   * validates and compiles the files (`invalid_closure`).
   *
   * @param namespace slug
   * @param version the version the files are at
   * @param files the closure
   * @param expectedHash the hash the event (or ETag) announced
   * @returns the verified state
   */
  static async fromFiles(
    namespace: string,
    version: number,
    files: ReadonlyMap<string, Uint8Array>,
    expectedHash: string,
  ): Promise<ClosureState> {
    const hash = await closureHash(files);
    if (hash !== expectedHash) {
      throw new IntegrityError(
        "snapshot_hash",
        namespace,
        version,
        `snapshot of ${namespace} v${version} hashes to ${hash}, not ${expectedHash}`,
      );
    }
    return ClosureState.#build(namespace, version, hash, new Map(files));
  }

  /**
   * Unpacks a closure archive (tar.gz, with the unpacker's limits and path
   * checks) and builds a state from it as {@linkcode ClosureState.fromFiles}
   * does. An archive that cannot be unpacked fails `snapshot_hash`.
   *
   * @param namespace slug
   * @param version the version of the archive
   * @param archive the bytes
   * @param expectedHash the announced closure hash
   * @returns the verified state
   */
  static async fromArchive(
    namespace: string,
    version: number,
    archive: Uint8Array,
    expectedHash: string,
  ): Promise<ClosureState> {
    let files: Map<string, Uint8Array>;
    try {
      files = await unpackArchive(archive);
    } catch (err) {
      throw new IntegrityError(
        "snapshot_hash",
        namespace,
        version,
        `snapshot of ${namespace} v${version} cannot be unpacked: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return await ClosureState.fromFiles(namespace, version, files, expectedHash);
  }

  /**
   * Applies an inline `version` event with checks 1 to 3 of
   * docs/events.md: the tracked hash must equal `prev_closure_hash`, each
   * written file must match its `sha256`, and the result must hash to
   * `closure_hash`; the result must also validate.
   *
   * @param event an inline event for this namespace
   * @returns the new state (this one is unchanged)
   */
  async applyDelta(event: VersionEvent): Promise<ClosureState> {
    const { namespace } = this;
    const v = event.version;
    if (event.prev_closure_hash !== this.hash) {
      throw new IntegrityError(
        "prev_closure_hash",
        namespace,
        v,
        `inline event ${namespace}:${v} applies to ${event.prev_closure_hash}, but the tracked closure (v${this.version}) is ${this.hash}`,
      );
    }
    const next = new Map(this.files);
    for (const entry of event.files) {
      if (parseManifestPath(entry.path) === undefined) {
        throw new IntegrityError(
          "protocol",
          namespace,
          v,
          `inline event ${namespace}:${v} names "${entry.path}", which is not a manifest path`,
        );
      }
      if (entry.op === "removed" || entry.op === "leave") {
        next.delete(entry.path);
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = base64.decode(entry.content_b64!);
      } catch (err) {
        throw new IntegrityError(
          "file_sha256",
          namespace,
          v,
          `inline event ${namespace}:${v}: content_b64 of ${entry.path} is not base64`,
          { cause: err },
        );
      }
      const sha = await sha256Hex(bytes);
      if (!HEX_RE.test(entry.sha256!) || sha !== entry.sha256) {
        throw new IntegrityError(
          "file_sha256",
          namespace,
          v,
          `inline event ${namespace}:${v}: ${entry.path} hashes to ${sha}, not ${entry.sha256}`,
        );
      }
      next.set(entry.path, bytes);
    }
    const hash = await closureHash(next);
    if (hash !== event.closure_hash) {
      throw new IntegrityError(
        "closure_hash",
        namespace,
        v,
        `inline event ${namespace}:${v}: the closure hashes to ${hash} after the delta, not ${event.closure_hash}`,
      );
    }
    return ClosureState.#build(namespace, v, hash, next);
  }

  /**
   * The same closure at another version (a snapshot whose `closure_hash`
   * equals the tracked hash needs no download: the files are the ones
   * announced).
   *
   * @param version the new version
   * @returns a state sharing files and model
   */
  withVersion(version: number): ClosureState {
    if (version === this.version) return this;
    return new ClosureState(
      this.namespace,
      version,
      this.hash,
      this.files,
      this.manifest,
      compileManifest(this.manifest, version),
    );
  }

  /**
   * What changed from `prev` to this state.
   *
   * @param prev the earlier state, or null
   * @returns changed paths and flags
   */
  diff(prev: ClosureState | null): StateDiff {
    const paths: string[] = [];
    const before = prev?.files ?? new Map<string, Uint8Array>();
    for (const [p, b] of this.files) {
      const a = before.get(p);
      if (a === undefined || !bytesEqual(a, b)) paths.push(p);
    }
    for (const p of before.keys()) if (!this.files.has(p)) paths.push(p);
    paths.sort();
    const flags = new Set<string>();
    const global = paths.some((p) => !p.startsWith("flags/"));
    if (global) {
      for (const k of this.model.flagKeys) flags.add(k);
      for (const k of prev?.model.flagKeys ?? []) flags.add(k);
    } else {
      for (const p of paths) flags.add(p.slice("flags/".length, -".toml".length));
    }
    return { paths, flags: [...flags].sort() };
  }

  static #build(
    namespace: string,
    version: number,
    hash: string,
    files: Map<string, Uint8Array>,
  ): ClosureState {
    let manifest: Manifest;
    try {
      // The server stored and served this version: load it with the relaxed
      // rules it loads stored versions with, so an SDK keeps evaluating a
      // version accepted by an earlier release.
      manifest = parseManifest(files, { stored: true });
    } catch (err) {
      const detail = err instanceof ProblemsError
        ? err.problems.slice(0, 3).map(formatProblem).join("; ")
        : (err as Error).message;
      throw new IntegrityError(
        "invalid_closure",
        namespace,
        version,
        `closure of ${namespace} v${version} does not validate: ${detail}`,
        { cause: err },
      );
    }
    return new ClosureState(
      namespace,
      version,
      hash,
      files,
      manifest,
      compileManifest(manifest, version),
    );
  }
}
