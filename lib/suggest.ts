/**
 * "Did you mean …?" for names a user mistyped: the one known name nearest to
 * an unknown one by edit distance (Levenshtein, over UTF-16 code units, as
 * `fastest-levenshtein` counts; tests/suggest_test.ts checks the two agree),
 * when it is near enough to be a plausible typo. It imports no package: a
 * workspace command that finds no mistake never needs it, and any npm
 * package on a cold `cfgtool resolve`'s module graph costs about 2.5 ms of
 * CPU (docs/performance.md). Every unknown-name message
 * (segments, qualifiers, catalogs, entries, variables, flags) uses this
 * module, so they all suggest alike.
 *
 * @module
 */

/** Longest name a suggestion is looked for (keys and slugs have at most 63 characters). */
export const MAX_SUGGESTED_LENGTH = 128;

/** Longest name a message quotes whole; longer ones are cut with "…". */
export const MAX_QUOTED_LENGTH = 80;

/**
 * A name as a message quotes it: JSON-quoted, cut to
 * {@linkcode MAX_QUOTED_LENGTH} characters (a name of megabytes must not
 * make a message of megabytes).
 *
 * @param name the name
 * @returns the quoted name
 *
 * @example
 * ```ts
 * import { quoteName } from "./suggest.ts";
 * if (quoteName("eu") !== '"eu"') throw new Error();
 * if (quoteName("x".repeat(1000)).length !== 83) throw new Error();
 * ```
 */
export function quoteName(name: string): string {
  return JSON.stringify(
    name.length <= MAX_QUOTED_LENGTH ? name : `${name.slice(0, MAX_QUOTED_LENGTH)}…`,
  );
}

/**
 * The known name nearest to `name`, or undefined when none is close. A name
 * is close when at most about a third of its characters differ (at least
 * one edit is always allowed, at most 4), and never when every character
 * would change (`x` is not a typo of `a`): `eu-customer` → `eu-customers`,
 * `securty-alerts` → `security-alerts`, but `sec` → nothing. Ties go to the
 * name that sorts first, so the answer does not depend on the order given.
 * Comparison ignores case; `name` itself is never suggested.
 *
 * @param name the unknown name, as written
 * @param known the names that exist
 * @returns the suggestion, or undefined
 *
 * @example
 * ```ts
 * import { closestName } from "./suggest.ts";
 * if (closestName("eu-customer", ["beta-testers", "eu-customers"]) !== "eu-customers") {
 *   throw new Error();
 * }
 * if (closestName("sec", ["security-alerts"]) !== undefined) throw new Error();
 * ```
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  // No key or name is this long: such a name is no typo, and comparing it
  // with every candidate would cost its length times theirs.
  if (name.length > MAX_SUGGESTED_LENGTH) return undefined;
  const limit = Math.min(4, Math.max(1, Math.floor(name.length / 3)));
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    if (candidate === name) continue;
    // The distance is at least the difference of the lengths.
    if (Math.abs(candidate.length - name.length) > limit) continue;
    const d = editDistance(lower, candidate.toLowerCase());
    if (d > limit || d >= Math.min(name.length, candidate.length)) continue;
    if (d < bestDistance || (d === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * The `; did you mean "<name>"?` tail of an unknown-name message, or the
 * empty string when no known name is close (see {@linkcode closestName}).
 *
 * @param name the unknown name, as written
 * @param known the names that exist
 * @returns `; did you mean "x"?` or `""`
 *
 * @example
 * ```ts
 * import { didYouMean } from "./suggest.ts";
 * const message = `unknown segment "eu-customer"${didYouMean("eu-customer", ["eu-customers"])}`;
 * if (message !== 'unknown segment "eu-customer"; did you mean "eu-customers"?') throw new Error();
 * if (didYouMean("zzz", ["eu-customers"]) !== "") throw new Error();
 * ```
 */
export function didYouMean(name: string, known: Iterable<string>): string {
  const s = closestName(name, known);
  return s === undefined ? "" : `; did you mean ${JSON.stringify(s)}?`;
}

/**
 * The Levenshtein distance of two strings: the fewest one-character
 * insertions, deletions and substitutions that turn one into the other,
 * counting UTF-16 code units. Quadratic, for names of at most
 * {@linkcode MAX_SUGGESTED_LENGTH} characters.
 *
 * @param a one string
 * @param b the other
 * @returns the distance
 *
 * @example
 * ```ts
 * import { editDistance } from "./suggest.ts";
 * if (editDistance("kitten", "sitting") !== 3) throw new Error();
 * if (editDistance("", "abc") !== 3) throw new Error();
 * ```
 */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const substitute = prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, substitute);
    }
    prev = cur;
  }
  return prev[b.length]!;
}
