/**
 * The closure a client tracks for one namespace (docs/events.md): the
 * files, their closure hash, the version and the model compiled by the
 * server's own engine. A state is immutable and only ever built from files
 * that passed every check, so a failed check can never replace the last
 * good model: it simply produces no new state.
 *
 * Also here: parsing of the stream's event data (protocol v2) and the
 * integrity checks of inline deltas and snapshots.
 *
 * @module
 */
import { base64 } from "base";
import { closureHash } from "../closure/hash.ts";
import { sha256Hex } from "../bytes.ts";
import { unpackArchive } from "../closure/archive.ts";
import { CfgtoolError, formatProblem, ProblemsError } from "../errors.ts";
import { type CompiledModel, compileManifest } from "../flags/evaluate.ts";
import type { Manifest } from "../flags/model.ts";
import { parseManifestPath } from "../flags/model.ts";
import { parseManifest } from "../flags/validate.ts";

/** The only wire protocol this client speaks. */
export const PROTOCOL = "v2";

/**
 * Which check failed: the four of docs/events.md (`prev_closure_hash`,
 * `file_sha256`, `closure_hash` after a delta, `snapshot_hash` after
 * unpacking an archive), a closure that does not validate
 * (`invalid_closure`), event data that is not protocol v2 or is malformed
 * (`protocol`), and a version that does not increase (`ordering`).
 */
export type IntegrityCheck =
  | "prev_closure_hash"
  | "file_sha256"
  | "closure_hash"
  | "snapshot_hash"
  | "invalid_closure"
  | "protocol"
  | "ordering";

/**
 * A failed integrity check (`code` `integrity_check_failed`). The tracked
 * closure is left as it was.
 *
 * @example
 * ```ts
 * import { IntegrityError } from "./closure_state.ts";
 * const err = new IntegrityError("file_sha256", "web", 3, "flags/a.toml does not match its sha256");
 * if (err.check !== "file_sha256" || err.code !== "integrity_check_failed") throw new Error();
 * ```
 */
export class IntegrityError extends CfgtoolError {
  /** The check that failed. */
  readonly check: IntegrityCheck;
  /** The namespace (slug), when known. */
  readonly namespace: string | null;
  /** The version the failed event or archive was for, when known. */
  readonly version: number | null;

  constructor(
    check: IntegrityCheck,
    namespace: string | null,
    version: number | null,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super("integrity_check_failed", message, {
      status: 502,
      details: { check, namespace, version },
      ...options,
    });
    this.name = "IntegrityError";
    this.check = check;
    this.namespace = namespace;
    this.version = version;
  }
}

/** A delta op of an inline event. */
export type WireOp = "added" | "modified" | "removed" | "enter" | "leave";

/** One file entry of an inline event. */
export interface WireFileEntry {
  path: string;
  op: WireOp;
  sha256?: string;
  content_b64?: string;
}

/** A parsed `version` event. */
export interface VersionEvent {
  kind: "version";
  protocol: "v2";
  namespace: string;
  version: number;
  prev_version: number | null;
  prev_closure_hash: string | null;
  closure_hash: string;
  delivery: "inline" | "snapshot";
  /** Inline only, non-empty. */
  files: WireFileEntry[];
  /** Snapshot only. */
  snapshot_url: string | null;
  /** Snapshot only (advisory). */
  snapshot_size_bytes: number | null;
}

/** A parsed `resync` event. */
export interface ResyncEvent {
  kind: "resync";
  protocol: "v2";
  namespace: string;
  current_version: number;
  reason: "version_too_old" | "unknown_since" | "pre_git_era" | "protocol_downgrade";
  snapshot_url: string;
}

const HASH_RE = /^sha256:[0-9a-f]{64}$/;
const HEX_RE = /^[0-9a-f]{64}$/;
const OPS: ReadonlySet<string> = new Set(["added", "modified", "removed", "enter", "leave"]);
const REASONS: ReadonlySet<string> = new Set([
  "version_too_old",
  "unknown_since",
  "pre_git_era",
  "protocol_downgrade",
]);

/**
 * Parses and checks the data of a `version` or `resync` event. Data that is
 * not JSON, whose `protocol` is not `v2`, or that lacks a field the protocol
 * requires throws {@linkcode IntegrityError} (`protocol`).
 *
 * @param event the SSE event name (`version` or `resync`)
 * @param data the event data
 * @returns the event
 *
 * @example
 * ```ts
 * import { parseEventData } from "./closure_state.ts";
 * const ev = parseEventData("resync", JSON.stringify({
 *   protocol: "v2", namespace: "web", current_version: 4, reason: "unknown_since",
 *   snapshot_url: "http://h/c",
 * }));
 * if (ev.kind !== "resync" || ev.current_version !== 4) throw new Error();
 * try {
 *   parseEventData("resync", '{"protocol":"v1"}');
 *   throw new Error("accepted v1");
 * } catch (err) {
 *   if ((err as { check?: string }).check !== "protocol") throw err;
 * }
 * ```
 */
export function parseEventData(
  event: "version" | "resync",
  data: string,
): VersionEvent | ResyncEvent {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch (err) {
    throw new IntegrityError("protocol", null, null, `${event} event data is not JSON`, {
      cause: err,
    });
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new IntegrityError("protocol", null, null, `${event} event data is not an object`);
  }
  const o = raw as Record<string, unknown>;
  const ns = typeof o.namespace === "string" ? o.namespace : null;
  if (o.protocol !== PROTOCOL) {
    throw new IntegrityError(
      "protocol",
      ns,
      null,
      `${event} event for ${ns ?? "?"} has protocol ${
        JSON.stringify(o.protocol)
      }; only ${PROTOCOL} is accepted`,
    );
  }
  const bad = (field: string): never => {
    throw new IntegrityError(
      "protocol",
      ns,
      typeof o.version === "number" ? o.version : null,
      `${event} event for ${ns ?? "?"} has a missing or invalid ${field}`,
    );
  };
  if (ns === null || ns === "") bad("namespace");
  if (event === "resync") {
    if (!isVersion(o.current_version)) bad("current_version");
    if (typeof o.reason !== "string" || !REASONS.has(o.reason)) bad("reason");
    if (typeof o.snapshot_url !== "string") bad("snapshot_url");
    return {
      kind: "resync",
      protocol: PROTOCOL,
      namespace: ns!,
      current_version: o.current_version as number,
      reason: o.reason as ResyncEvent["reason"],
      snapshot_url: o.snapshot_url as string,
    };
  }
  if (!isVersion(o.version)) bad("version");
  if (o.prev_version !== null && !isVersion(o.prev_version)) bad("prev_version");
  if (o.prev_closure_hash !== null && !isHash(o.prev_closure_hash)) bad("prev_closure_hash");
  if (o.prev_closure_hash === null && o.prev_version !== null) bad("prev_closure_hash");
  if (!isHash(o.closure_hash)) bad("closure_hash");
  const base = {
    kind: "version" as const,
    protocol: PROTOCOL as "v2",
    namespace: ns!,
    version: o.version as number,
    prev_version: o.prev_version as number | null,
    prev_closure_hash: o.prev_closure_hash as string | null,
    closure_hash: o.closure_hash as string,
  };
  if (o.delivery === "snapshot") {
    if (typeof o.snapshot_url !== "string") bad("snapshot_url");
    return {
      ...base,
      delivery: "snapshot",
      files: [],
      snapshot_url: o.snapshot_url as string,
      snapshot_size_bytes: typeof o.snapshot_size_bytes === "number" ? o.snapshot_size_bytes : null,
    };
  }
  if (o.delivery !== "inline") bad("delivery");
  if (!Array.isArray(o.files) || o.files.length === 0) bad("files");
  if (o.prev_closure_hash === null) bad("prev_closure_hash");
  const files: WireFileEntry[] = [];
  for (const f of o.files as unknown[]) {
    if (f === null || typeof f !== "object") bad("files entry");
    const e = f as Record<string, unknown>;
    if (typeof e.path !== "string" || typeof e.op !== "string" || !OPS.has(e.op)) {
      bad("files entry");
    }
    const entry: WireFileEntry = { path: e.path as string, op: e.op as WireOp };
    if (e.op === "removed" || e.op === "leave") {
      files.push(entry);
      continue;
    }
    if (typeof e.sha256 !== "string" || typeof e.content_b64 !== "string") {
      bad(`sha256 or content_b64 of ${e.path}`);
    }
    entry.sha256 = e.sha256 as string;
    entry.content_b64 = e.content_b64 as string;
    files.push(entry);
  }
  return { ...base, delivery: "inline", files, snapshot_url: null, snapshot_size_bytes: null };
}

function isVersion(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isHash(v: unknown): v is string {
  return typeof v === "string" && HASH_RE.test(v);
}

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
    return `"v${this.version}-${this.hash}"`;
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
      if (a === undefined || !sameBytes(a, b)) paths.push(p);
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

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
