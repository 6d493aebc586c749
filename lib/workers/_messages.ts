/**
 * The messages between lib/workers/manifest_workers.ts and its worker
 * entry, lib/workers/_entry.ts. File sets travel packed
 * (lib/workers/packed_files.ts); problem lists as JSON text, which clones
 * as one string however many problems there are.
 *
 * @module
 */
import type { Environment, Flag, NamespaceInfo, Segment } from "../flags/model.ts";
import type { ValidateOptions } from "../flags/validate.ts";
import type { PackedFiles } from "./packed_files.ts";
import type { UploadFormat } from "./manifest_work.ts";

/** A request to a worker; `id` pairs it with its replies. */
export type WorkerRequest =
  | { id: number; op: "upload"; bytes: Uint8Array; format: UploadFormat }
  | {
    id: number;
    op: "prepare";
    files: PackedFiles;
    message: string | undefined;
    propose: boolean;
  }
  | { id: number; op: "check"; files: PackedFiles; options: ValidateOptions }
  | { id: number; op: "load"; files: PackedFiles }
  | { id: number; op: "archive"; files: PackedFiles }
  | { id: number; op: "compare"; before: PackedFiles; after: PackedFiles; values: boolean };

/** An upload prepared in a worker. */
export interface PreparedReply {
  files: PackedFiles;
  message: string | undefined;
  propose: boolean;
  /** 64 hex digits (the SHA-256 of the content) per file, in the order of `files`. */
  blobIds: string;
  closureHash: string;
  /** `Problem[]` as JSON. */
  problems: string;
  problemCount: number;
  /** `Problem[]` as JSON. */
  warnings: string;
  environments: Record<string, Environment>;
}

/** A check done in a worker. */
export interface CheckReply {
  /** `Problem[]` as JSON. */
  problems: string;
  problemCount: number;
  /** `Problem[]` as JSON. */
  warnings: string;
  environments: Record<string, Environment>;
}

/** The end of a stored load; the model's segments and flags came before it in parts. */
export interface LoadReply {
  /** `Problem[]` as JSON. */
  problems: string;
  /** `Problem[]` as JSON. */
  warnings: string;
  /** The namespace of a model that compiled; null when `problems` is not empty. */
  namespace: NamespaceInfo | null;
}

/** One slice of a stored model, sent ahead of its {@linkcode LoadReply}. */
export type LoadPart =
  | { segments: [string, Segment][] }
  | { flags: [string, Flag][] };

/** The pool's answer to a {@linkcode LoadPart}: send the next one. */
export interface PartAck {
  ack: number;
}

/** A failure that crosses back as the same `CfgtoolError` code, status and message. */
export interface RefusedReply {
  code: string;
  status: number;
  message: string;
  details?: Record<string, unknown>;
}

/** What a worker posts back: parts, then one final result, refusal or crash. */
export type WorkerReply =
  | { id: number; part: LoadPart }
  | { id: number; ok: unknown }
  | { id: number; refused: RefusedReply }
  | { id: number; crashed: string };
