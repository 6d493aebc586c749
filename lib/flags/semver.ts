/**
 * Semantic versions as the `semver_eq`, `semver_lt` and `semver_gt`
 * operators read them: what the npm `semver` package (7.x, strict mode)
 * accepts and how it orders versions, written as a plain ES module so that
 * evaluating flags never loads a CommonJS package (which would switch on
 * Deno's Node compatibility layer and cost a cold CLI run tens of
 * milliseconds).
 *
 * A version is read as `semver.parse` reads it: surrounding whitespace is
 * ignored, one leading `v` is allowed, then `MAJOR.MINOR.PATCH` (no
 * leading zeros, each at most 2^53 − 1), an optional `-` pre-release of
 * dot-separated identifiers (letters, digits, hyphens; numeric ones without
 * leading zeros), an optional `+` build of dot-separated identifiers; at
 * most 256 characters before trimming. Build metadata does not count in
 * comparisons; a pre-release sorts before its release; pre-release
 * identifiers compare numerically when both are numeric, and a numeric one
 * sorts before an alphanumeric one. A property test checks this module
 * against the npm package.
 *
 * @module
 */

const MAX_LENGTH = 256;

/** A parsed semantic version. */
export interface SemVer {
  /** The version without build metadata or a leading `v`, e.g. `1.2.3-rc.1`. */
  readonly version: string;
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers; numeric ones as numbers. */
  readonly prerelease: readonly (string | number)[];
}

const DOT = 46, PLUS = 43, HYPHEN = 45, ZERO = 48, NINE = 57;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** `[a-zA-Z0-9-]` */
function isIdentChar(c: number): boolean {
  return isDigit(c) || c === HYPHEN || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * Reads a semantic version; null when it is not one (as `semver.parse`).
 *
 * @param input the text
 * @returns the version, or null
 *
 * @example
 * ```ts
 * import { parseSemver } from "./semver.ts";
 * if (parseSemver(" v1.2.3-rc.1+build.5 ")?.version !== "1.2.3-rc.1") throw new Error();
 * if (parseSemver("1.02.3") !== null || parseSemver("1.2") !== null) throw new Error();
 * ```
 */
export function parseSemver(input: unknown): SemVer | null {
  if (typeof input !== "string" || input.length > MAX_LENGTH) return null;
  const s = input.trim();
  const n = s.length;
  let i = s.charCodeAt(0) === 118 /* v */ ? 1 : 0;
  const main: number[] = [];
  for (let part = 0; part < 3; part++) {
    if (part > 0) {
      if (s.charCodeAt(i) !== DOT) return null;
      i++;
    }
    const start = i;
    if (s.charCodeAt(i) === ZERO) i++;
    else while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (i === start) return null;
    const value = +s.slice(start, i);
    if (value > Number.MAX_SAFE_INTEGER) return null;
    main.push(value);
  }
  const prerelease: (string | number)[] = [];
  if (s.charCodeAt(i) === HYPHEN) {
    i++;
    do {
      if (prerelease.length > 0) i++; // the dot
      const start = i;
      let digits = true;
      while (i < n && isIdentChar(s.charCodeAt(i))) {
        if (!isDigit(s.charCodeAt(i))) digits = false;
        i++;
      }
      if (i === start) return null;
      const id = s.slice(start, i);
      if (digits) {
        if (id.length > 1 && id.charCodeAt(0) === ZERO) return null;
        const num = +id;
        prerelease.push(num < Number.MAX_SAFE_INTEGER ? num : id);
      } else {
        prerelease.push(id);
      }
    } while (s.charCodeAt(i) === DOT);
  }
  if (s.charCodeAt(i) === PLUS) {
    i++;
    let first = true;
    do {
      if (!first) i++; // the dot
      first = false;
      const start = i;
      while (i < n && isIdentChar(s.charCodeAt(i))) i++;
      if (i === start) return null;
    } while (s.charCodeAt(i) === DOT);
  }
  if (i !== n) return null;
  const [major, minor, patch] = main as [number, number, number];
  let version = `${major}.${minor}.${patch}`;
  if (prerelease.length > 0) version += `-${prerelease.join(".")}`;
  return { version, major, minor, patch, prerelease };
}

const NUMERIC = /^[0-9]+$/;

/** npm semver's `compareIdentifiers`. */
function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return a === b ? 0 : a < b ? -1 : 1;
  const anum = NUMERIC.test(String(a));
  const bnum = NUMERIC.test(String(b));
  if (anum && bnum) {
    a = +a;
    b = +b;
  }
  return a === b ? 0 : (anum && !bnum) ? -1 : (bnum && !anum) ? 1 : a < b ? -1 : 1;
}

/**
 * Orders two versions: -1, 0 or 1 (as npm semver's `SemVer.compare`).
 *
 * @param a a version
 * @param b another
 * @returns the sign of a − b
 *
 * @example
 * ```ts
 * import { compareSemver, parseSemver } from "./semver.ts";
 * const v = (s: string) => parseSemver(s)!;
 * if (compareSemver(v("1.0.0-rc.2"), v("1.0.0")) !== -1) throw new Error();
 * if (compareSemver(v("1.0.0-rc.10"), v("1.0.0-rc.2")) !== 1) throw new Error();
 * if (compareSemver(v("1.0.0+a"), v("1.0.0+b")) !== 0) throw new Error();
 * ```
 */
export function compareSemver(a: SemVer, b: SemVer): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  const ap = a.prerelease, bp = b.prerelease;
  if (ap.length > 0 && bp.length === 0) return -1;
  if (ap.length === 0 && bp.length > 0) return 1;
  if (ap.length === 0) return 0;
  for (let i = 0;; i++) {
    const x = ap[i], y = bp[i];
    if (x === undefined && y === undefined) return 0;
    if (y === undefined) return 1;
    if (x === undefined) return -1;
    if (x === y) continue;
    return compareIdentifiers(x, y);
  }
}
