/**
 * Key paths of manifest problems (`rule[1].rollout[0].weight`): building
 * them one key at a time and ordering them.
 *
 * @module
 */
import { compareUtf8 } from "../bytes.ts";

const BARE_KEY_RE = /^[A-Za-z0-9_-]+$/;

/** Appends a key to a key path, quoting keys that are not bare TOML keys. */
export function join(prefix: string, key: string): string {
  const k = BARE_KEY_RE.test(key) ? key : JSON.stringify(key);
  return prefix === "" ? k : `${prefix}.${k}`;
}

type KeyToken = string | number;

function tokenizeKey(key: string): KeyToken[] {
  const out: KeyToken[] = [];
  const re = /\[(\d+)\]|"((?:[^"\\]|\\.)*)"|([^.[\]"]+)/g;
  for (const m of key.matchAll(re)) {
    if (m[1] !== undefined) out.push(Number(m[1]));
    else out.push(m[2] ?? m[3] ?? "");
  }
  return out;
}

/** Orders key paths: segment by segment, array indices as numbers, shorter first. */
export function compareKeyPaths(a: string, b: string): number {
  if (a === b) return 0;
  const x = tokenizeKey(a);
  const y = tokenizeKey(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const s = x[i]!;
    const t = y[i]!;
    if (s === t) continue;
    if (typeof s === "number" && typeof t === "number") return s - t;
    if (typeof s === "number") return -1;
    if (typeof t === "number") return 1;
    return compareUtf8(s, t);
  }
  return x.length - y.length || compareUtf8(a, b);
}
