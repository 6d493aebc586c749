/**
 * Event data of the stream (protocol v2, docs/events.md): `version` events
 * (inline and snapshot) and `resync` events, serialized with a fixed field
 * order. Inline data is built from a prefix and a tail shared by every
 * connection of a subscription; only `prev_version` differs per connection.
 *
 * @module
 */
import type { FileEntry } from "../closure/delta.ts";

/** The wire protocol. */
export const PROTOCOL = "v2";

/** Resync reasons. */
export type ResyncReason =
  | "version_too_old"
  | "unknown_since"
  | "pre_git_era"
  | "protocol_downgrade";

/** A `version` event's data (as clients parse it). */
export interface VersionEventData {
  protocol: "v2";
  namespace: string;
  version: number;
  prev_version: number | null;
  prev_closure_hash: string | null;
  closure_hash: string;
  delivery: "inline" | "snapshot";
  files?: FileEntry[];
  snapshot_url?: string;
  snapshot_size_bytes?: number;
}

/** A `resync` event's data. */
export interface ResyncEventData {
  protocol: "v2";
  namespace: string;
  current_version: number;
  reason: ResyncReason;
  snapshot_url: string;
}

/** The shared parts of an inline event: data = `head + prev_version + tail`. */
export interface InlineParts {
  head: string;
  tail: string;
}

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
 * import { inlineData, inlineParts } from "./payload.ts";
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
  files: readonly FileEntry[],
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
 * import { inlineData } from "./payload.ts";
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
 * import { snapshotData } from "./payload.ts";
 * const d = JSON.parse(snapshotData({
 *   namespace: "web", version: 1, prev_version: null, prev_closure_hash: null,
 *   closure_hash: "sha256:x", snapshot_url: "http://h/c", snapshot_size_bytes: 1024,
 * }));
 * if (d.delivery !== "snapshot" || d.protocol !== "v2") throw new Error();
 * ```
 */
export function snapshotData(fields: {
  namespace: string;
  version: number;
  prev_version: number | null;
  prev_closure_hash: string | null;
  closure_hash: string;
  snapshot_url: string;
  snapshot_size_bytes: number;
}): string {
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
 * import { resyncData } from "./payload.ts";
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
 * The closure endpoint URL of a snapshot.
 *
 * @param origin scheme and host of the stream request
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version
 * @param subscription encoded subscription
 * @param token signed token
 * @returns the absolute URL
 *
 * @example
 * ```ts
 * import { snapshotUrl } from "./payload.ts";
 * const u = snapshotUrl("http://h", "acme", "web", 2, "Kg", "t.s");
 * if (u !== "http://h/api/v1/tenants/acme/namespaces/web/closure?version=2&subscription=Kg&token=t.s") throw new Error(u);
 * ```
 */
export function snapshotUrl(
  origin: string,
  tenant: string,
  namespace: string,
  version: number,
  subscription: string,
  token: string,
): string {
  return `${origin}/api/v1/tenants/${encodeURIComponent(tenant)}/namespaces/${
    encodeURIComponent(namespace)
  }/closure?version=${version}&subscription=${subscription}&token=${token}`;
}
