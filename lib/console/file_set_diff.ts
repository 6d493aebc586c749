/**
 * What changed between two file sets (two versions of a namespace): each
 * path that was added, removed or whose bytes differ, in path order (the
 * byte order of UTF-8, as trees are stored), with both sides decoded as
 * UTF-8 text for a line diff. A side that is not valid UTF-8 is marked
 * binary (its text then holds replacement characters), so a diff never
 * fails on what a file holds. Pure: no store, no I/O.
 *
 * @module
 */
import { bytesEqual, compareUtf8 } from "../bytes.ts";

/** How a path differs between the two sets. */
export type FileStatus = "added" | "removed" | "changed";

/** One path that differs. */
export interface FileChange {
  path: string;
  status: FileStatus;
  /** The old text ("" when added). */
  before: string;
  /** The new text ("" when removed). */
  after: string;
  /** The old size in bytes (null when added). */
  beforeSize: number | null;
  /** The new size in bytes (null when removed). */
  afterSize: number | null;
  /** Either side is not valid UTF-8 (its text is not worth a line diff). */
  binary: boolean;
}

const strict = new TextDecoder("utf-8", { fatal: true });
const lenient = new TextDecoder("utf-8");

/** Text of bytes, and whether they were valid UTF-8. */
function decode(bytes: Uint8Array | undefined): { text: string; binary: boolean } {
  if (bytes === undefined) return { text: "", binary: false };
  try {
    return { text: strict.decode(bytes), binary: false };
  } catch {
    return { text: lenient.decode(bytes), binary: true };
  }
}

/**
 * The paths that differ between two file sets, sorted by path: added (only
 * in `after`), removed (only in `before`) and changed (different bytes).
 * Paths with equal bytes are left out, so equal sets give `[]`.
 *
 * @param before the old files, path → bytes
 * @param after the new files, path → bytes
 * @returns the changes, in path order
 *
 * @example
 * ```ts
 * import { diffFileSets } from "./file_set_diff.ts";
 * const t = (s: string) => new TextEncoder().encode(s);
 * const changes = diffFileSets(
 *   new Map([["b.toml", t("x = 1\n")], ["a.toml", t("same")], ["gone.toml", t("")]]),
 *   new Map([["b.toml", t("x = 2\n")], ["a.toml", t("same")], ["new.bin", new Uint8Array([0xff])]]),
 * );
 * const seen = changes.map((c) => `${c.status} ${c.path}${c.binary ? " (binary)" : ""}`);
 * if (seen.join(", ") !== "changed b.toml, removed gone.toml, added new.bin (binary)") {
 *   throw new Error(seen.join(", "));
 * }
 * if (changes[0]!.after !== "x = 2\n") throw new Error();
 * ```
 */
export function diffFileSets(
  before: ReadonlyMap<string, Uint8Array>,
  after: ReadonlyMap<string, Uint8Array>,
): FileChange[] {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort(compareUtf8);
  const out: FileChange[] = [];
  for (const path of paths) {
    const old = before.get(path);
    const now = after.get(path);
    if (old !== undefined && now !== undefined && bytesEqual(old, now)) continue;
    const a = decode(old);
    const b = decode(now);
    out.push({
      path,
      status: old === undefined ? "added" : now === undefined ? "removed" : "changed",
      before: a.text,
      after: b.text,
      beforeSize: old?.length ?? null,
      afterSize: now?.length ?? null,
      binary: a.binary || b.binary,
    });
  }
  return out;
}

/**
 * How many paths were added, removed and changed.
 *
 * @param changes the changes of {@linkcode diffFileSets}
 * @returns the count of each status
 *
 * @example
 * ```ts
 * import { countChanges } from "./file_set_diff.ts";
 * const counts = countChanges([{ path: "a", status: "added", before: "", after: "x",
 *   beforeSize: null, afterSize: 1, binary: false }]);
 * if (counts.added !== 1 || counts.removed !== 0 || counts.changed !== 0) throw new Error();
 * ```
 */
export function countChanges(changes: readonly FileChange[]): Record<FileStatus, number> {
  const counts: Record<FileStatus, number> = { added: 0, removed: 0, changed: 0 };
  for (const c of changes) counts[c.status]++;
  return counts;
}
