/**
 * Linear-time regular expressions for the `matches` operator. Patterns use
 * RE2 syntax and run on `re2js`, a pure-JavaScript port of RE2: matching
 * takes time proportional to the input times the size of the compiled
 * pattern, never exponential time, so a pattern such as `^(a+)+$` cannot
 * stall the process the way a backtracking engine (JavaScript's `RegExp`)
 * would.
 *
 * Limits keep one match cheap, whatever the pattern and the input: a
 * pattern has at most {@linkcode MAX_PATTERN_LENGTH} characters and compiles
 * to at most {@linkcode MAX_PATTERN_SIZE} instructions; a value is matched
 * only when it has at most {@linkcode MAX_MATCH_INPUT} characters and its
 * length times the pattern's size stays within {@linkcode MATCH_BUDGET}; a
 * longer value does not match.
 *
 * One flag evaluation holds many matches, so it also gets a budget as a
 * whole: between {@linkcode beginRegexEvaluation} and
 * {@linkcode endRegexEvaluation}, every match is charged
 * `(value length + 1) × pattern size + ` {@linkcode MATCH_OVERHEAD} steps
 * out of {@linkcode EVALUATION_BUDGET}; once a match would overrun what is left,
 * the budget is spent and every later match in that evaluation fails (does
 * not match) without running. Within one evaluation a pattern already tried
 * on the same value answers from a memo, free of charge, so the same
 * `matches` predicate in many segments costs one match.
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

/** Longest value matched, in UTF-16 code units; a longer value does not match. */
export const MAX_MATCH_INPUT = 4096;

/**
 * Regex work allowed in one evaluation, in steps: a match costs `(value
 * length + 1) × pattern size + ` {@linkcode MATCH_OVERHEAD} steps. Matching
 * runs at about 5 ns a step once compiled by the JavaScript engine, so a
 * whole evaluation's regex work stays near 10 ms.
 */
export const EVALUATION_BUDGET = 2_000_000;

/**
 * Steps charged for every match on top of its length times size: the fixed
 * cost of a call (a few microseconds), so that many matches on short values
 * are bounded too (at most 1,000 matches per evaluation).
 */
export const MATCH_OVERHEAD = 2_000;

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

/** Evaluations in progress (nested ones share the outermost's budget). */
let depth = 0;
/** Steps left in the evaluation in progress; unlimited outside evaluations. */
let remaining = Infinity;
/** Memo stamp of the evaluation in progress; 0 outside evaluations (no memo). */
let stamp = 0;
/** The last stamp handed out. */
let lastStamp = 0;
/** Steps charged since the process started. */
let charged = 0;

/** A compiled pattern with its one-entry memo for the evaluation in progress. */
class Pattern implements LinearRegex {
  #memoStamp = 0;
  #memoValue = "";
  #memoHit = false;

  constructor(
    readonly source: string,
    readonly size: number,
    readonly maxInput: number,
    private readonly re: RE2JS,
  ) {}

  test(value: string): boolean {
    const len = value.length;
    if (len > this.maxInput) return false;
    if (stamp !== 0 && this.#memoStamp === stamp && this.#memoValue === value) {
      return this.#memoHit;
    }
    const cost = (len + 1) * this.size + MATCH_OVERHEAD;
    if (cost > remaining) {
      remaining = 0;
      return false;
    }
    remaining -= cost;
    charged += cost;
    const hit = this.re.test(value);
    if (stamp !== 0) {
      this.#memoStamp = stamp;
      this.#memoValue = value;
      this.#memoHit = hit;
    }
    return hit;
  }
}

/**
 * Starts an evaluation's regex budget ({@linkcode EVALUATION_BUDGET} steps)
 * and memo. Evaluation is synchronous: pair every call with
 * {@linkcode endRegexEvaluation} in a `finally`. A nested call (an
 * evaluation started while another runs) shares the outer budget and memo.
 *
 * @example
 * ```ts
 * import {
 *   beginRegexEvaluation, compilePattern, endRegexEvaluation, MAX_MATCH_INPUT,
 * } from "./linear_regex.ts";
 * const r = compilePattern("^(a|b)*$");
 * if (!("regex" in r)) throw new Error();
 * const value = "ab".repeat(MAX_MATCH_INPUT / 2);
 * let hits = 0;
 * beginRegexEvaluation();
 * try {
 *   // The same pattern on the same value is charged once: every try matches.
 *   for (let i = 0; i < 1000; i++) if (r.regex.test(value)) hits++;
 * } finally {
 *   endRegexEvaluation();
 * }
 * if (hits !== 1000) throw new Error();
 * ```
 */
export function beginRegexEvaluation(): void {
  if (depth++ !== 0) return;
  remaining = EVALUATION_BUDGET;
  lastStamp = lastStamp === 0xffff_ffff ? 1 : lastStamp + 1;
  stamp = lastStamp;
}

/**
 * Ends the evaluation started by {@linkcode beginRegexEvaluation}: outside
 * evaluations, matches have only the per-match limits and no memo.
 *
 * @example
 * ```ts
 * import {
 *   beginRegexEvaluation, compilePattern, endRegexEvaluation, regexWork,
 * } from "./linear_regex.ts";
 * const r = compilePattern("^a+$");
 * if (!("regex" in r)) throw new Error();
 * beginRegexEvaluation();
 * r.regex.test("aaa");
 * const charged = regexWork();
 * r.regex.test("aaa"); // memo hit inside the evaluation: free
 * endRegexEvaluation();
 * if (regexWork() !== charged) throw new Error("the memo answered");
 * r.regex.test("aaa"); // after it: no memo, charged again
 * if (regexWork() === charged) throw new Error("no memo outside evaluations");
 * ```
 */
export function endRegexEvaluation(): void {
  if (depth === 0 || --depth !== 0) return;
  remaining = Infinity;
  stamp = 0;
}

/**
 * The regex work charged since the process started, in steps (a match
 * costs `(value length + 1) × pattern size + ` {@linkcode MATCH_OVERHEAD}): what tests and diagnostics read to see how
 * much matching an evaluation did (memo hits and refused values cost
 * nothing).
 *
 * @example
 * ```ts
 * import { compilePattern, MATCH_OVERHEAD, regexWork } from "./linear_regex.ts";
 * const r = compilePattern("^a+$");
 * if (!("regex" in r)) throw new Error();
 * const before = regexWork();
 * r.regex.test("aaa");
 * if (regexWork() - before !== 4 * r.regex.size + MATCH_OVERHEAD) throw new Error();
 * ```
 */
export function regexWork(): number {
  return charged;
}

const LOOKAROUND_OR_BACKREF = /\(\?<?[=!]|\\[1-9]|\\k</;
const CACHE = new Map<string, PatternResult>();
const CACHE_MAX = 4096;

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
 * if (!("regex" in r) || r.regex.test("a".repeat(4000) + "b")) throw new Error();
 * const bad = compilePattern("(a)\\1");
 * if (!("problem" in bad)) throw new Error();
 * ```
 */
export function compilePattern(source: string): PatternResult {
  let r = CACHE.get(source);
  if (r === undefined) {
    r = build(source);
    // the oldest entry goes first (a Map iterates in insertion order)
    if (CACHE.size >= CACHE_MAX) CACHE.delete(CACHE.keys().next().value!);
    CACHE.set(source, r);
  }
  return r;
}

/**
 * Compiles patterns ahead of their first use, a few milliseconds of work at a
 * time with a pause for the event loop in between, so that loading a model
 * with thousands of patterns never holds the thread that serves requests.
 * Later {@linkcode compilePattern} calls for them are cache hits.
 *
 * @param sources the patterns
 * @param sliceMs work between two pauses, ms
 *
 * @example
 * ```ts
 * import { compilePattern, warmPatterns } from "./linear_regex.ts";
 * await warmPatterns(["^a+$", "^b+$"]);
 * const r = compilePattern("^a+$");
 * if (!("regex" in r) || !r.regex.test("aaa")) throw new Error();
 * ```
 */
export async function warmPatterns(sources: Iterable<string>, sliceMs = 8): Promise<void> {
  let sliceStart = performance.now();
  for (const source of new Set(sources)) {
    if (CACHE.has(source)) continue;
    compilePattern(source);
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      sliceStart = performance.now();
    }
  }
}

function build(source: string): PatternResult {
  if (source.length > MAX_PATTERN_LENGTH) {
    return {
      problem:
        `pattern is ${source.length} characters long; the limit is ${MAX_PATTERN_LENGTH} characters`,
    };
  }
  // Counted repetitions are expanded when compiled: refuse those that cannot
  // fit before spending the time (x{1000} a hundred times took 320 ms).
  const repeated = repetitionTotal(source);
  if (repeated > MAX_PATTERN_SIZE) {
    return {
      problem: `pattern is too complex: its counted repetitions add up to ${repeated}; the limit ` +
        `is ${MAX_PATTERN_SIZE} (large counted repetitions such as {500} cost the most)`,
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
  const maxInput = Math.min(MAX_MATCH_INPUT, Math.floor(MATCH_BUDGET / Math.max(size, 1)));
  return { regex: new Pattern(source, size, maxInput, re) };
}

/** The sum of the upper bounds of the counted repetitions (`{n}`, `{n,m}`, `{n,}`) of a pattern. */
function repetitionTotal(source: string): number {
  let total = 0;
  for (const m of source.matchAll(/\{(\d{1,9})(?:,(\d{0,9}))?\}/g)) {
    total += Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0);
  }
  return total;
}
