/**
 * Linear-time regular expressions for the `matches` operator. Patterns use
 * RE2 syntax and run on `re2js`, a pure-JavaScript port of RE2: matching
 * takes time proportional to the input times the size of the compiled
 * pattern, never exponential time, so a pattern such as `^(a+)+$` cannot
 * stall the process the way a backtracking engine (JavaScript's `RegExp`)
 * would.
 *
 * Three limits keep one match cheap, whatever the pattern and the input:
 * a pattern has at most {@linkcode MAX_PATTERN_LENGTH} characters, compiles
 * to at most {@linkcode MAX_PATTERN_SIZE} instructions, and a value is
 * matched only when its length times the pattern's size stays within
 * {@linkcode MATCH_BUDGET}; a longer value does not match.
 *
 * Compiled patterns are shared through a small cache, so validating a
 * manifest and compiling its model compile each pattern once.
 *
 * @module
 */
import { RE2JS } from "re2js";

/** Longest accepted pattern, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 1024;

/** Largest accepted compiled pattern, in RE2 program instructions. */
export const MAX_PATTERN_SIZE = 1000;

/**
 * Largest `value length × pattern size` matched; a longer value does not
 * match. A 30-instruction pattern matches values of up to 33,333 characters.
 */
export const MATCH_BUDGET = 1_000_000;

/** A compiled pattern. */
export interface LinearRegex {
  /** The pattern as written. */
  readonly source: string;
  /** Its compiled size, in RE2 program instructions. */
  readonly size: number;
  /** The longest value matched (longer values do not match). */
  readonly maxInput: number;
  /** Whether the pattern matches anywhere in `value` (anchor with `^…$`). */
  test(value: string): boolean;
}

/** The outcome of {@linkcode compilePattern}: the pattern, or why it is refused. */
export type PatternResult = { regex: LinearRegex } | { problem: string };

const LOOKAROUND_OR_BACKREF = /\(\?<?[=!]|\\[1-9]|\\k</;
const CACHE = new Map<string, PatternResult>();
const CACHE_MAX = 512;

/**
 * Compiles a pattern for the `matches` operator, or says why it is refused:
 * too long, not RE2 syntax (backreferences and lookaround are named as
 * such), or too large once compiled. Results are cached by pattern.
 *
 * @param source the pattern, in RE2 syntax
 * @returns `{regex}`, or `{problem}` with a message for the user
 *
 * @example
 * ```ts
 * import { compilePattern } from "./linear_regex.ts";
 * const r = compilePattern("^(a+)+$");
 * if (!("regex" in r) || r.regex.test("a".repeat(5000) + "b")) throw new Error();
 * const bad = compilePattern("(a)\\1");
 * if (!("problem" in bad)) throw new Error();
 * ```
 */
export function compilePattern(source: string): PatternResult {
  let r = CACHE.get(source);
  if (r === undefined) {
    r = build(source);
    if (CACHE.size >= CACHE_MAX) CACHE.clear();
    CACHE.set(source, r);
  }
  return r;
}

function build(source: string): PatternResult {
  if (source.length > MAX_PATTERN_LENGTH) {
    return {
      problem:
        `pattern is ${source.length} characters long; the limit is ${MAX_PATTERN_LENGTH} characters`,
    };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    if (LOOKAROUND_OR_BACKREF.test(source)) {
      return { problem: "matches accepts the RE2-safe subset: no backreferences or lookaround" };
    }
    const msg = err instanceof Error ? err.message : String(err);
    return {
      problem: `invalid regular expression (RE2 syntax): ${
        msg.replace(/^error parsing regexp: /, "")
      }`,
    };
  }
  const size = re.programSize();
  if (size > MAX_PATTERN_SIZE) {
    return {
      problem:
        `pattern is too complex: it compiles to ${size} instructions; the limit is ${MAX_PATTERN_SIZE}` +
        " (large counted repetitions such as {500} cost the most)",
    };
  }
  const maxInput = Math.floor(MATCH_BUDGET / Math.max(size, 1));
  return {
    regex: Object.freeze({
      source,
      size,
      maxInput,
      test: (value: string) => value.length <= maxInput && re.test(value),
    }),
  };
}
