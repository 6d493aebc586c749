/**
 * Deltas between two closures of one subscription (docs/events.md) and the
 * inline-or-snapshot decision. Five ops: `added` (new in the namespace and
 * the closure), `modified` (content changed), `removed` (gone from the
 * namespace), `enter` (in both versions of the namespace, newly in the
 * closure) and `leave` (still in the namespace, no longer in the closure).
 * `enter` and `leave` happen when a subscribed flag starts or stops
 * referencing a segment.
 *
 * @module
 */
import { base64 } from "base";
import type { FileSet } from "./hash.ts";
import { bytesEqual, compareUtf8, sha256Hex } from "../bytes.ts";

/** A delta op. */
export type DeltaOp = "added" | "modified" | "removed" | "enter" | "leave";

/** One file entry of an inline `version` event. */
export interface FileEntry {
  path: string;
  op: DeltaOp;
  /** Lower-case hex SHA-256 of the content (added, modified, enter). */
  sha256?: string;
  /** Standard base64 of the exact bytes (added, modified, enter). */
  content_b64?: string;
}

/** The two sides of a delta. */
export interface DeltaInput {
  /** The prior closure. */
  prev: FileSet;
  /** The new closure. */
  next: FileSet;
  /** Every path of the namespace at the prior version. */
  prevPaths: ReadonlySet<string> | ReadonlyMap<string, unknown>;
  /** Every path of the namespace at the new version. */
  nextPaths: ReadonlySet<string> | ReadonlyMap<string, unknown>;
}

/**
 * Computes the file entries that turn `prev` into `next`, sorted by path
 * (byte-wise). Equal closures give no entries.
 *
 * @param input both closures and both versions' namespace paths
 * @returns the entries
 *
 * @example
 * ```ts
 * import { computeDelta } from "./delta.ts";
 * const a = new TextEncoder().encode("a");
 * const prev = new Map([["segments/s.toml", a]]);
 * const next = new Map([["flags/f.toml", a]]);
 * const entries = await computeDelta({
 *   prev, next,
 *   prevPaths: new Set(["segments/s.toml"]),
 *   nextPaths: new Set(["segments/s.toml", "flags/f.toml"]),
 * });
 * if (entries.map((e) => e.op).join() !== "added,leave") throw new Error();
 * ```
 */
export async function computeDelta(input: DeltaInput): Promise<FileEntry[]> {
  const { prev, next, prevPaths, nextPaths } = input;
  const out: FileEntry[] = [];
  for (const path of changedPaths(prev, next).sort(compareUtf8)) {
    const before = prev.get(path);
    const after = next.get(path);
    if (after !== undefined) {
      if (before !== undefined) {
        if (!bytesEqual(before, after)) out.push(await withContent(path, "modified", after));
      } else {
        out.push(await withContent(path, prevPaths.has(path) ? "enter" : "added", after));
      }
    } else {
      out.push({ path, op: nextPaths.has(path) ? "leave" : "removed" });
    }
  }
  return out;
}

/**
 * Applies file entries to a closure (what a client does), returning a new
 * map. Entries with content are checked against their `sha256`.
 *
 * @param closure the closure the entries were computed against
 * @param entries the entries
 * @returns the new closure
 *
 * @example
 * ```ts
 * import { applyDelta } from "./delta.ts";
 * const out = await applyDelta(new Map([["a", new Uint8Array([1])]]), [{ path: "a", op: "removed" }]);
 * if (out.size !== 0) throw new Error();
 * ```
 */
export async function applyDelta(
  closure: FileSet,
  entries: readonly FileEntry[],
): Promise<Map<string, Uint8Array>> {
  const out = new Map(closure);
  for (const e of entries) {
    if (e.op === "removed" || e.op === "leave") {
      out.delete(e.path);
      continue;
    }
    if (e.content_b64 === undefined || e.sha256 === undefined) {
      throw new TypeError(`Cannot apply ${e.op} of ${e.path}: content or sha256 missing`);
    }
    const bytes = base64.decode(e.content_b64);
    if (await sha256Hex(bytes) !== e.sha256) {
      throw new TypeError(`Cannot apply ${e.op} of ${e.path}: sha256 mismatch`);
    }
    out.set(e.path, bytes);
  }
  return out;
}

/** Why a `version` event goes as a snapshot (or `inline` when none holds). */
export type Delivery =
  | "inline"
  | "snapshot:first"
  | "snapshot:too_large"
  | "snapshot:too_many_files"
  | "snapshot:pruned_base";

/** Facts the delivery decision looks at. */
export interface DeliveryFacts {
  /** First event for this namespace on the connection. */
  first: boolean;
  /** The delta base (prev_version) can no longer be rebuilt (pruned past retention). */
  baseUnavailable: boolean;
  /** Number of file entries of the delta. */
  entries: number;
  /** Size in bytes of the serialized inline event data (UTF-8 JSON). */
  dataBytes: number;
}

/** The tunable limits (lib/settings.ts). */
export interface DeliveryLimits {
  /** Largest inline event data, bytes (spec: 64 KiB). */
  inlineEventLimitBytes: number;
  /** More entries than this force a snapshot (spec: 32). */
  deltaFileLimit: number;
}

/**
 * Decides inline or snapshot delivery, in the spec's order: first event,
 * pruned base, more than `deltaFileLimit` entries, data over
 * `inlineEventLimitBytes`.
 *
 * @param facts what the event looks like
 * @param limits the limits
 * @returns `inline` or the reason for a snapshot
 *
 * @example
 * ```ts
 * import { chooseDelivery } from "./delta.ts";
 * const limits = { inlineEventLimitBytes: 65536, deltaFileLimit: 32 };
 * const d = chooseDelivery({ first: false, baseUnavailable: false, entries: 33, dataBytes: 10 }, limits);
 * if (d !== "snapshot:too_many_files") throw new Error(d);
 * ```
 */
export function chooseDelivery(facts: DeliveryFacts, limits: DeliveryLimits): Delivery {
  if (facts.first) return "snapshot:first";
  if (facts.baseUnavailable) return "snapshot:pruned_base";
  if (facts.entries > limits.deltaFileLimit) return "snapshot:too_many_files";
  if (facts.dataBytes > limits.inlineEventLimitBytes) return "snapshot:too_large";
  return "inline";
}

/**
 * How many entries {@linkcode computeDelta} would give, without hashing or
 * encoding anything: enough to decide that a large change goes out as a
 * snapshot before paying for a delta nobody receives.
 *
 * @param prev the previous closure
 * @param next the new closure
 * @returns the number of paths added, changed or removed
 *
 * @example
 * ```ts
 * import { countDelta } from "./delta.ts";
 * const a = new Uint8Array([1]);
 * if (countDelta(new Map([["x", a]]), new Map([["x", a], ["y", a]])) !== 1) throw new Error();
 * ```
 */
export function countDelta(prev: FileSet, next: FileSet): number {
  return changedPaths(prev, next).length;
}

function changedPaths(prev: FileSet, next: FileSet): string[] {
  const out: string[] = [];
  for (const [path, after] of next) {
    const before = prev.get(path);
    if (before === undefined || !bytesEqual(before, after)) out.push(path);
  }
  for (const path of prev.keys()) if (!next.has(path)) out.push(path);
  return out;
}

async function withContent(path: string, op: DeltaOp, bytes: Uint8Array): Promise<FileEntry> {
  return { path, op, sha256: await sha256Hex(bytes), content_b64: base64.encode(bytes) };
}
