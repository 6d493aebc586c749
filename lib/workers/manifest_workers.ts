/**
 * The process's manifest workers: a small pool of long-lived workers that
 * decode, validate, digest, load and archive large manifests, so a
 * 10,000-file push, the first evaluation after it or the first archive of
 * it never holds the event loop that serves every other request. Small
 * inputs are handled in place, where a worker round trip would cost more
 * than the work. Workers start on first use, or at once with
 * {@linkcode ManifestWorkers.start} (a server does so before it listens:
 * starting a worker takes tens of milliseconds of the calling thread).
 *
 * @module
 */
import { CfgtoolError, type Problem, ProblemsError } from "../errors.ts";
import type { Flag, Manifest, Segment } from "../flags/model.ts";
import type { ValidateOptions } from "../flags/validate.ts";
import { packArchive } from "../closure/archive.ts";
import {
  checkFiles,
  compareFiles,
  type Comparison,
  decodeUpload,
  loadFiles,
  type ManifestCheck,
  type PreparedUpload,
  prepareFiles,
  type UploadFormat,
} from "./manifest_work.ts";
import { packFiles, transferablesOf, unpackFiles } from "./packed_files.ts";
import { yieldToEventLoop } from "../time_slice.ts";
import type {
  CheckReply,
  LoadPart,
  LoadReply,
  PreparedReply,
  WorkerReply,
  WorkerRequest,
} from "./_messages.ts";

/** Files up to which work runs in place: about 5 ms of validation. */
export const IN_PLACE_FILES = 64;
/** Bytes up to which work runs in place (TOML parsing is about 10 ms a 100 KiB). */
export const IN_PLACE_BYTES = 256 * 1024;
/** Compressed archive bytes up to which an upload is unpacked in place. */
export const IN_PLACE_ARCHIVE_BYTES = 8 * 1024;
/** Workers in the pool by default; further requests wait their turn. */
export const DEFAULT_WORKERS = 2;

/** A stored version's model and what loading it tolerated. */
export interface StoredManifest {
  /** The model. */
  manifest: Manifest;
  /** Tolerated findings, such as a `matches` pattern that never holds. */
  warnings: Problem[];
}

interface Job {
  request: WorkerRequest;
  transfer: Transferable[];
  onPart?: (part: LoadPart) => void;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
}

/**
 * A pool of manifest workers with in-place shortcuts for small inputs.
 * Every method gives the same outcome in place and in a worker.
 *
 * @example
 * ```ts
 * import { ManifestWorkers } from "./manifest_workers.ts";
 * const workers = new ManifestWorkers();
 * const body = new TextEncoder().encode(JSON.stringify({
 *   files: { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" },
 * }));
 * const up = await workers.upload(body, "json");
 * if (up.problems.length !== 0 || !up.environments.prod) throw new Error();
 * workers.close();
 * ```
 */
export class ManifestWorkers {
  readonly #size: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  /** @param options `size`: workers at most (default {@linkcode DEFAULT_WORKERS}) */
  constructor(options: { size?: number } = {}) {
    this.#size = Math.max(1, options.size ?? DEFAULT_WORKERS);
  }

  /** Starts every worker now, so no request pays for a worker's start. */
  start(): void {
    while (!this.#closed && this.#slots.length < this.#size) this.#spawn();
  }

  /**
   * Refuses new work and ends the workers: idle ones at once, busy ones
   * once the work they hold or that waits for them is done, so a graceful
   * shutdown finishes the pushes it lets finish.
   */
  close(): void {
    this.#closed = true;
    this.#dispatch();
  }

  /**
   * Decodes, validates and digests an upload (see `prepareUpload`).
   *
   * @param bytes the request body
   * @param format how it is encoded
   * @returns the prepared upload; validation problems are in it, decoding errors thrown
   */
  async upload(bytes: Uint8Array, format: UploadFormat): Promise<PreparedUpload> {
    const limit = format === "json" ? IN_PLACE_BYTES : IN_PLACE_ARCHIVE_BYTES;
    if (bytes.length > limit) {
      const copy = bytes.slice();
      const reply = await this.#run<PreparedReply>({ id: 0, op: "upload", bytes: copy, format }, [
        copy.buffer,
      ]);
      const prepared = fromPrepared(reply);
      await yieldToEventLoop(); // what the caller does next starts on a fresh turn
      return prepared;
    }
    const { files, message, propose } = await decodeUpload(bytes, format);
    if (small(files)) return await prepareFiles(files, message, propose);
    const packed = packFiles(files);
    return fromPrepared(
      await this.#run<PreparedReply>(
        { id: 0, op: "prepare", files: packed, message, propose },
        transferablesOf(packed),
      ),
    );
  }

  /**
   * Validates a file set (`{stored: true}` to tolerate what a stored version may hold).
   *
   * @param files path to bytes
   * @param options as `validateManifest` takes them
   * @returns the problems, warnings and environments
   */
  async check(
    files: ReadonlyMap<string, Uint8Array>,
    options: ValidateOptions = {},
  ): Promise<ManifestCheck> {
    if (small(files)) return checkFiles(files, options);
    const packed = packFiles(files);
    const reply = await this.#run<CheckReply>(
      { id: 0, op: "check", files: packed, options },
      transferablesOf(packed),
    );
    return {
      problems: JSON.parse(reply.problems),
      problemCount: reply.problemCount,
      warnings: JSON.parse(reply.warnings),
      environments: reply.environments,
    };
  }

  /**
   * Loads a stored version into its model; throws `ProblemsError` (422
   * `invalid_manifest`) only for what cannot be compiled at all. A large
   * model arrives in slices, each a short task of the calling thread.
   *
   * @param files path to bytes of the stored version
   * @returns the model and the warnings to log
   */
  async load(files: ReadonlyMap<string, Uint8Array>): Promise<StoredManifest> {
    if (small(files)) {
      const { problems, warnings, manifest } = loadFiles(files);
      if (manifest === undefined) throw new ProblemsError(problems);
      return { manifest, warnings };
    }
    const segments: Record<string, Segment> = {};
    const flags: Record<string, Flag> = {};
    const packed = packFiles(files);
    const reply = await this.#run<LoadReply>(
      { id: 0, op: "load", files: packed },
      transferablesOf(packed),
      (part) => {
        if ("segments" in part) { for (const [k, v] of part.segments) segments[k] = v; }
        else for (const [k, v] of part.flags) flags[k] = v;
      },
    );
    if (reply.namespace === null) throw new ProblemsError(JSON.parse(reply.problems));
    return {
      manifest: { namespace: reply.namespace, flags, segments },
      warnings: JSON.parse(reply.warnings),
    };
  }

  /**
   * Packs a file set into its deterministic tar.gz archive (see `packArchive`).
   *
   * @param files path to bytes
   * @returns the archive
   */
  async archive(files: ReadonlyMap<string, Uint8Array>): Promise<Uint8Array> {
    if (small(files)) return await packArchive(files);
    const packed = packFiles(files);
    return await this.#run<Uint8Array>(
      { id: 0, op: "archive", files: packed },
      transferablesOf(packed),
    );
  }

  /**
   * Compares two valid file sets, off the event loop when large: the
   * environments whose evaluation can differ and, with `values`, what
   * changed value by value (lib/workers/manifest_work.ts `compareFiles`).
   *
   * @param before the files before
   * @param after the files after
   * @param values whether to list the value changes too
   * @returns the comparison
   */
  async compare(
    before: ReadonlyMap<string, Uint8Array>,
    after: ReadonlyMap<string, Uint8Array>,
    values = false,
  ): Promise<Comparison> {
    if (small(before) && small(after)) return compareFiles(before, after, values);
    const a = packFiles(before);
    const b = packFiles(after);
    return await this.#run<Comparison>(
      { id: 0, op: "compare", before: a, after: b, values },
      [...transferablesOf(a), ...transferablesOf(b)],
    );
  }

  #run<T>(
    request: WorkerRequest,
    transfer: Transferable[],
    onPart?: (p: LoadPart) => void,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("manifest workers are closed"));
    request.id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const job: Job = { request, transfer, resolve: resolve as (v: unknown) => void, reject };
      if (onPart) job.onPart = onPart;
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.job === null);
      if (slot === undefined) {
        if (this.#slots.length >= this.#size) return;
        slot = this.#spawn();
      }
      const job = this.#queue.shift()!;
      slot.job = job;
      slot.worker.postMessage(job.request, job.transfer);
    }
    if (this.#closed) {
      for (const slot of this.#slots.filter((s) => s.job === null)) this.#remove(slot);
    }
  }

  #remove(slot: Slot): void {
    slot.worker.terminate();
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
  }

  #spawn(): Slot {
    const worker = new Worker(new URL("./_entry.ts", import.meta.url), { type: "module" });
    const slot: Slot = { worker, job: null };
    worker.onmessage = (e: MessageEvent<WorkerReply>) => {
      const reply = e.data;
      const job = slot.job;
      if (job === null || job.request.id !== reply.id) return;
      if ("part" in reply) {
        job.onPart?.(reply.part);
        // the next part comes on a later turn of the event loop
        setTimeout(() => worker.postMessage({ ack: reply.id }), 0);
        return;
      }
      slot.job = null;
      if ("ok" in reply) job.resolve(reply.ok);
      else if ("refused" in reply) {
        const { code, status, message, details } = reply.refused;
        job.reject(new CfgtoolError(code, message, { status, ...(details ? { details } : {}) }));
      } else job.reject(new Error(`manifest work failed: ${reply.crashed}`));
      this.#dispatch();
    };
    worker.onerror = (e) => {
      // An uncaught error ends this worker: refuse its job, replace it on demand.
      e.preventDefault();
      this.#remove(slot);
      slot.job?.reject(new Error(`manifest work failed: ${e.message}`));
      slot.job = null;
      this.#dispatch();
    };
    this.#slots.push(slot);
    return slot;
  }
}

function small(files: ReadonlyMap<string, Uint8Array>): boolean {
  if (files.size > IN_PLACE_FILES) return false;
  let n = 0;
  for (const bytes of files.values()) n += bytes.length;
  return n <= IN_PLACE_BYTES;
}

function fromPrepared(reply: PreparedReply): PreparedUpload {
  const files = unpackFiles(reply.files);
  const blobIds = new Map<string, string>();
  let i = 0;
  for (const path of files.keys()) {
    blobIds.set(path, reply.blobIds.slice(64 * i, 64 * i + 64));
    i++;
  }
  return {
    files,
    message: reply.message,
    propose: reply.propose,
    blobIds,
    closureHash: reply.closureHash,
    problems: JSON.parse(reply.problems),
    problemCount: reply.problemCount,
    warnings: JSON.parse(reply.warnings),
    environments: reply.environments,
  };
}
