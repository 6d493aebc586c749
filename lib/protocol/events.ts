/**
 * Event data of the stream (protocol v2, docs/events.md): the `version`
 * events (inline and snapshot) and `resync` events the server writes, and
 * the parser the SDK reads them with. The server serializes with a fixed
 * field order; inline data is built from a prefix and a tail shared by
 * every connection of a subscription, only `prev_version` differs per
 * connection. The parser accepts only protocol v2 data that carries every
 * field the protocol requires.
 *
 * @module
 */
import { IntegrityError } from "./integrity.ts";

/** The wire protocol. */
export const PROTOCOL = "v2" as const;

/** Why a connection must resync (docs/events.md). */
export type ResyncReason =
  | "version_too_old"
  | "unknown_since"
  | "pre_git_era"
  | "protocol_downgrade";

/**
 * A delta op of an inline event: `added`, `modified`, `removed` (in or out
 * of the namespace), `enter`, `leave` (in or out of the subscription's
 * closure).
 */
export type WireOp = "added" | "modified" | "removed" | "enter" | "leave";

/** One file entry of an inline `version` event. */
export interface WireFileEntry {
  /** Manifest path. */
  path: string;
  /** What happened to it. */
  op: WireOp;
  /** Lower-case hex SHA-256 of the content (added, modified, enter). */
  sha256?: string;
  /** Standard base64 of the exact bytes (added, modified, enter). */
  content_b64?: string;
}

/** A `version` event's data, as the server writes it. */
export interface VersionEventData {
  /** Always `v2`. */
  protocol: "v2";
  /** Namespace slug. */
  namespace: string;
  /** The new version. */
  version: number;
  /** The version the connection held before, or null for its first event. */
  prev_version: number | null;
  /** The closure hash the delta applies to, or null with `prev_version`. */
  prev_closure_hash: string | null;
  /** The closure hash at `version`. */
  closure_hash: string;
  /** Whether the files come inline or from `snapshot_url`. */
  delivery: "inline" | "snapshot";
  /** Inline only: the delta, non-empty. */
  files?: WireFileEntry[];
  /** Snapshot only: the signed closure URL. */
  snapshot_url?: string;
  /** Snapshot only (advisory): the archive's size. */
  snapshot_size_bytes?: number;
}

/** A `resync` event's data, as the server writes it. */
export interface ResyncEventData {
  /** Always `v2`. */
  protocol: "v2";
  /** Namespace slug. */
  namespace: string;
  /** The version to resume from. */
  current_version: number;
  /** Why the connection must resync. */
  reason: ResyncReason;
  /** Signed URL of the closure at `current_version`. */
  snapshot_url: string;
}

/**
 * A parsed `version` event: the data as the server writes it
 * ({@linkcode VersionEventData}), with the event name and the
 * delivery-specific fields always present.
 */
export interface VersionEvent
  extends Omit<VersionEventData, "files" | "snapshot_url" | "snapshot_size_bytes"> {
  /** The SSE event name. */
  kind: "version";
  /** Inline only, non-empty. */
  files: WireFileEntry[];
  /** Snapshot only. */
  snapshot_url: string | null;
  /** Snapshot only (advisory). */
  snapshot_size_bytes: number | null;
}

/** A parsed `resync` event: the data as the server writes it, with the event name. */
export interface ResyncEvent extends ResyncEventData {
  /** The SSE event name. */
  kind: "resync";
}

/** The fields of a snapshot `version` event, for {@linkcode snapshotData}. */
export interface SnapshotFields {
  /** Namespace slug. */
  namespace: string;
  /** The new version. */
  version: number;
  /** The version the connection held before, or null for its first event. */
  prev_version: number | null;
  /** Its closure hash; ignored (sent as null) when `prev_version` is null. */
  prev_closure_hash: string | null;
  /** The closure hash at `version`. */
  closure_hash: string;
  /** The signed closure URL. */
  snapshot_url: string;
  /** The archive's size (advisory). */
  snapshot_size_bytes: number;
}

/** The shared parts of an inline event: data = `head + prev_version + tail`. */
export interface InlineParts {
  /** JSON text up to the `prev_version` value. */
  head: string;
  /** JSON text after it. */
  tail: string;
}

const HASH_RE = /^sha256:[0-9a-f]{64}$/;
const OPS: ReadonlySet<string> = new Set(["added", "modified", "removed", "enter", "leave"]);
const REASONS: ReadonlySet<string> = new Set([
  "version_too_old",
  "unknown_since",
  "pre_git_era",
  "protocol_downgrade",
]);

/**
 * Builds the shared parts of an inline `version` event.
 *
 * @param namespace slug
 * @param version new version
 * @param prevHash closure hash before the delta
 * @param hash closure hash after it
 * @param files the entries
 * @returns head and tail
 *
 * @example
 * ```ts
 * import { inlineData, inlineParts } from "./events.ts";
 * const parts = inlineParts("web", 2, "sha256:a", "sha256:b", [{ path: "flags/f.toml", op: "removed" }]);
 * const data = JSON.parse(inlineData(parts, 1));
 * if (data.prev_version !== 1 || data.delivery !== "inline") throw new Error();
 * ```
 */
export function inlineParts(
  namespace: string,
  version: number,
  prevHash: string,
  hash: string,
  files: readonly WireFileEntry[],
): InlineParts {
  return {
    head: `{"protocol":"${PROTOCOL}","namespace":${
      JSON.stringify(namespace)
    },"version":${version},"prev_version":`,
    tail: `,"prev_closure_hash":${JSON.stringify(prevHash)},"closure_hash":${
      JSON.stringify(hash)
    },"delivery":"inline","files":${JSON.stringify(files)}}`,
  };
}

/**
 * The inline data for one `prev_version`.
 *
 * @param parts the shared parts
 * @param prevVersion the connection's previous version
 * @returns JSON text
 *
 * @example
 * ```ts
 * import { inlineData } from "./events.ts";
 * if (inlineData({ head: "[", tail: "]" }, 4) !== "[4]") throw new Error();
 * ```
 */
export function inlineData(parts: InlineParts, prevVersion: number): string {
  return `${parts.head}${prevVersion}${parts.tail}`;
}

/**
 * Data of a snapshot `version` event.
 *
 * @param fields the event's fields
 * @returns JSON text
 *
 * @example
 * ```ts
 * import { snapshotData } from "./events.ts";
 * const d = JSON.parse(snapshotData({
 *   namespace: "web", version: 1, prev_version: null, prev_closure_hash: null,
 *   closure_hash: "sha256:x", snapshot_url: "http://h/c", snapshot_size_bytes: 1024,
 * }));
 * if (d.delivery !== "snapshot" || d.protocol !== "v2") throw new Error();
 * ```
 */
export function snapshotData(fields: SnapshotFields): string {
  const data: VersionEventData = {
    protocol: PROTOCOL,
    namespace: fields.namespace,
    version: fields.version,
    prev_version: fields.prev_version,
    prev_closure_hash: fields.prev_version === null ? null : fields.prev_closure_hash,
    closure_hash: fields.closure_hash,
    delivery: "snapshot",
    snapshot_url: fields.snapshot_url,
    snapshot_size_bytes: fields.snapshot_size_bytes,
  };
  return JSON.stringify(data);
}

/**
 * Data of a `resync` event.
 *
 * @param namespace slug
 * @param currentVersion the version to resume from
 * @param reason why
 * @param snapshotUrl signed URL of the closure at `currentVersion`
 * @returns JSON text
 *
 * @example
 * ```ts
 * import { resyncData } from "./events.ts";
 * const d = JSON.parse(resyncData("web", 3, "unknown_since", "http://h/c"));
 * if (d.reason !== "unknown_since" || d.current_version !== 3) throw new Error();
 * ```
 */
export function resyncData(
  namespace: string,
  currentVersion: number,
  reason: ResyncReason,
  snapshotUrl: string,
): string {
  const data: ResyncEventData = {
    protocol: PROTOCOL,
    namespace,
    current_version: currentVersion,
    reason,
    snapshot_url: snapshotUrl,
  };
  return JSON.stringify(data);
}

/**
 * Whether a value is a closure hash as the protocol writes it:
 * `sha256:` and 64 lower-case hex digits.
 *
 * @param v any value
 * @returns true for a well-formed closure hash
 *
 * @example
 * ```ts
 * import { isClosureHash } from "./events.ts";
 * if (!isClosureHash("sha256:" + "0".repeat(64)) || isClosureHash("sha256:AB")) throw new Error();
 * ```
 */
export function isClosureHash(v: unknown): v is string {
  return typeof v === "string" && HASH_RE.test(v);
}

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
 * import { parseEventData } from "./events.ts";
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
      reason: o.reason as ResyncReason,
      snapshot_url: o.snapshot_url as string,
    };
  }
  if (!isVersion(o.version)) bad("version");
  if (o.prev_version !== null && !isVersion(o.prev_version)) bad("prev_version");
  if (o.prev_closure_hash !== null && !isClosureHash(o.prev_closure_hash)) {
    bad("prev_closure_hash");
  }
  if (o.prev_closure_hash === null && o.prev_version !== null) bad("prev_closure_hash");
  if (!isClosureHash(o.closure_hash)) bad("closure_hash");
  const base = {
    kind: "version" as const,
    protocol: PROTOCOL,
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
