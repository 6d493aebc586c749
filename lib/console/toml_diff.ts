/**
 * What changed in a TOML file, by value rather than by line: both sides
 * are parsed (smol-toml, through lib/toml.ts) and flattened to dotted key
 * paths (`environments.production.enabled`, `rule[1].rollout[0].weight`),
 * and each path whose value was added, removed or changed is listed, in
 * the order the new file has them (a removed path right after the path
 * that preceded it in the old file). A formatting or comment change gives
 * no change; a side that does not parse gives no summary at all (the line
 * diff still shows it). Pure: no store, no I/O.
 *
 * @module
 */
import { parseToml } from "../toml.ts";

/** One key path whose value differs. */
export interface TomlChange {
  /** The dotted key path: `rule[1].rollout[0].weight`. */
  path: string;
  kind: "added" | "removed" | "changed";
  /** The old value as TOML-like text (null when added). */
  before: string | null;
  /** The new value as TOML-like text (null when removed). */
  after: string | null;
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A key as TOML writes it: bare when it can be, quoted otherwise. */
function keyText(key: string): string {
  return BARE_KEY.test(key) ? key : JSON.stringify(key);
}

/**
 * A value as short TOML-like text: strings quoted, arrays and inline
 * tables spelled out (`[1, 2]`, `{ a = 1 }`).
 *
 * @param value a parsed TOML value (dates already strings)
 * @returns its text
 *
 * @example
 * ```ts
 * import { formatTomlValue } from "./toml_diff.ts";
 * const text = formatTomlValue({ a: [1, "x"], "b c": true });
 * if (text !== '{ a = [1, "x"], "b c" = true }') throw new Error(text);
 * ```
 */
export function formatTomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(formatTomlValue).join(", ")}]`;
  if (isTable(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([k, v]) => `${keyText(k)} = ${formatTomlValue(v)}`).join(", ")} }`;
  }
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  }
  return String(value);
}

/**
 * Every leaf of a table by key path, in document order. Tables are walked
 * into (an empty one is a leaf, `{}`); an array holding a table is walked
 * into by index (`rule[0]`); any other array is one leaf.
 */
function flatten(value: unknown, path: string, out: Map<string, string>): void {
  if (isTable(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && path !== "") out.set(path, "{}");
    for (const [k, v] of entries) {
      flatten(v, path === "" ? keyText(k) : `${path}.${keyText(k)}`, out);
    }
    return;
  }
  if (Array.isArray(value) && value.length > 0 && value.some(isTable)) {
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, out));
    return;
  }
  out.set(path, formatTomlValue(value));
}

/**
 * The value changes between two versions of a TOML file (see the module
 * comment), or null when either side is not valid TOML.
 *
 * @param before the old text
 * @param after the new text
 * @returns the changes (empty when only formatting or comments changed), or null
 *
 * @example
 * ```ts
 * import { tomlChanges } from "./toml_diff.ts";
 * const changes = tomlChanges(
 *   "[environments.production]\nenabled = true\n",
 *   "# now off\n[environments.production]\nenabled = false\ndefault = \"off\"\n",
 * );
 * const text = changes!.map((c) => `${c.kind} ${c.path}: ${c.before} → ${c.after}`);
 * if (text.join("; ") !== 'changed environments.production.enabled: true → false; ' +
 *   'added environments.production.default: null → "off"') throw new Error(text.join("; "));
 * if (tomlChanges("a = 1\n", "a = = 2\n") !== null) throw new Error("unparsable: no summary");
 * ```
 */
export function tomlChanges(before: string, after: string): TomlChange[] | null {
  const a = parseToml(before, "before.toml");
  const b = parseToml(after, "after.toml");
  if (!a.ok || !b.ok) return null;
  const old = new Map<string, string>();
  const now = new Map<string, string>();
  flatten(a.table, "", old);
  flatten(b.table, "", now);
  // a removed path goes after the last path before it (in the old file) that is still there
  const removedAfter = new Map<string | null, string[]>();
  let anchor: string | null = null;
  for (const path of old.keys()) {
    if (now.has(path)) {
      anchor = path;
      continue;
    }
    const list = removedAfter.get(anchor) ?? [];
    list.push(path);
    removedAfter.set(anchor, list);
  }
  const out: TomlChange[] = [];
  const removed = (at: string | null) => {
    for (const path of removedAfter.get(at) ?? []) {
      out.push({ path, kind: "removed", before: old.get(path)!, after: null });
    }
  };
  removed(null);
  for (const [path, value] of now) {
    const was = old.get(path);
    if (was === undefined) out.push({ path, kind: "added", before: null, after: value });
    else if (was !== value) out.push({ path, kind: "changed", before: was, after: value });
    removed(path);
  }
  return out;
}

/**
 * One change as a line a person reads: `path: old → new`, `path: added =
 * new`, `path: removed (was old)`.
 *
 * @param change a change of {@linkcode tomlChanges}
 * @returns the line
 *
 * @example
 * ```ts
 * import { tomlChangeText } from "./toml_diff.ts";
 * const line = tomlChangeText({ path: "rule[1].rollout[0].weight", kind: "changed", before: "25", after: "50" });
 * if (line !== "rule[1].rollout[0].weight: 25 → 50") throw new Error(line);
 * ```
 */
export function tomlChangeText(change: TomlChange): string {
  switch (change.kind) {
    case "added":
      return `${change.path}: added = ${change.after}`;
    case "removed":
      return `${change.path}: removed (was ${change.before})`;
    case "changed":
      return `${change.path}: ${change.before} → ${change.after}`;
  }
}
