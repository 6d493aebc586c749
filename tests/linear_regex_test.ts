import { assert, assertEquals, assertStringIncludes } from "./assert.ts";
import {
  beginRegexEvaluation,
  compilePattern,
  endRegexEvaluation,
  EVALUATION_BUDGET,
  type LinearRegex,
  MATCH_BUDGET,
  MATCH_OVERHEAD,
  MAX_MATCH_INPUT,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_SIZE,
  regexWork,
  warmPatterns,
} from "../lib/linear_regex.ts";

function regex(source: string): LinearRegex {
  const r = compilePattern(source);
  if (!("regex" in r)) throw new Error(`refused: ${r.problem}`);
  return r.regex;
}

function problem(source: string): string {
  const r = compilePattern(source);
  if (!("problem" in r)) throw new Error(`accepted: ${source}`);
  return r.problem;
}

Deno.test("compilePattern() answers a nested quantifier on a 4,001-character value", () => {
  const re = regex("^(a+)+$");
  assertEquals(re.test("a".repeat(4000) + "b"), false);
  assertEquals(re.test("a".repeat(4000)), true);
  assertEquals(regex("(.*a){20}").test("ab".repeat(2000) + "c"), true);
});

Deno.test("compilePattern() matches anywhere unless anchored, code point by code point", () => {
  assertEquals(regex("MSIE |Trident/").test("Mozilla/5.0 (Trident/7.0)"), true);
  assertEquals(regex("^Trident/").test("Mozilla/5.0 (Trident/7.0)"), false);
  assertEquals(regex("^.$").test("😀"), true);
  assertEquals(regex("^(?<name>[a-z]+)$").test("abc"), true);
  assertEquals(regex("x$").test("x\n"), false);
  // A lone surrogate in the value is not an error.
  assertEquals(regex("a").test("\ud800a"), true);
});

Deno.test("compilePattern() refuses backreferences and lookaround by name", () => {
  for (const p of ["(?=a)b", "(?!a)b", "a(?<=b)", "a(?<!b)", "(a)\\1", "(?<n>a)\\k<n>"]) {
    assertEquals(
      problem(p),
      "matches accepts the RE2-safe subset: no backreferences or lookaround",
      p,
    );
  }
});

Deno.test("compilePattern() names the RE2 syntax error of an invalid pattern", () => {
  assertEquals(
    problem("(unclosed"),
    "invalid regular expression (RE2 syntax): missing closing ): `(unclosed`",
  );
  assertEquals(
    problem("\\u00e9"),
    "invalid regular expression (RE2 syntax): invalid escape sequence: `\\u`",
  );
  assertEquals(
    problem("(a{2}){800}"),
    "invalid regular expression (RE2 syntax): invalid repeat count: `{800}`",
  );
  // A backslash before a digit is only refused as a backreference when RE2 refuses it.
  assertEquals(regex("\\\\1").test("\\1"), true);
});

Deno.test("compilePattern() refuses patterns over 1024 characters", () => {
  assertEquals(MAX_PATTERN_LENGTH, 1024);
  assertEquals(
    problem("a".repeat(1025)),
    "pattern is 1025 characters long; the limit is 1024 characters",
  );
  const wide = `[${"a-z".repeat(340)}]+$`; // 1024 characters, a small program
  assertEquals(wide.length, 1024);
  assertEquals(regex(wide).test("abc"), true);
});

Deno.test("compilePattern() refuses patterns that compile to more than 1000 instructions", () => {
  assertEquals(MAX_PATTERN_SIZE, 1000);
  const msg = problem("(abcdef){150}");
  assert(msg.startsWith("pattern is too complex: it compiles to 1"), msg);
  assert(msg.includes("the limit is 1000"), msg);
  assert(regex("[a-z]{600}").size <= MAX_PATTERN_SIZE);
});

Deno.test("compilePattern() does not match a value longer than its work budget allows", () => {
  const re = regex("[a-z]{500}");
  assertEquals(re.maxInput, Math.floor(MATCH_BUDGET / re.size));
  assertEquals(re.test("a".repeat(re.maxInput)), true);
  assertEquals(re.test("a".repeat(re.maxInput + 1)), false);
});

Deno.test("compilePattern() does not match a value over 4096 characters, whatever the pattern", () => {
  assertEquals(MAX_MATCH_INPUT, 4096);
  const re = regex("^[a-z.]+@example\\.com$");
  assertEquals(re.maxInput, MAX_MATCH_INPUT);
  const fits = "a".repeat(MAX_MATCH_INPUT - "@example.com".length) + "@example.com";
  assertEquals(re.test(fits), true);
  assertEquals(re.test("a" + fits), false);
});

/** Runs `body` as one evaluation and returns the regex work it was charged. */
function workOf(body: () => void): number {
  const before = regexWork();
  beginRegexEvaluation();
  try {
    body();
  } finally {
    endRegexEvaluation();
  }
  return regexWork() - before;
}

Deno.test("a match is charged (value length + 1) × pattern size + 2,000, and nothing when refused", () => {
  assertEquals(MATCH_OVERHEAD, 2000);
  const re = regex("^(a|b)*$");
  assertEquals(workOf(() => assert(re.test("abab"))), 5 * re.size + MATCH_OVERHEAD);
  assertEquals(workOf(() => assert(!re.test("a".repeat(MAX_MATCH_INPUT + 1)))), 0);
});

Deno.test("one evaluation tries a pattern on the same value once", () => {
  const re = regex("^(a|b)*$");
  const value = "ab".repeat(MAX_MATCH_INPUT / 2);
  let hits = 0;
  const work = workOf(() => {
    for (let i = 0; i < 2000; i++) if (re.test(value)) hits++;
  });
  assertEquals(hits, 2000);
  const once = (value.length + 1) * re.size + MATCH_OVERHEAD;
  assertEquals(work, once);
  // A new evaluation starts a new memo: the pattern runs again.
  assertEquals(workOf(() => assert(re.test(value))), once);
});

Deno.test("once an evaluation's regex budget is spent, later matches do not hold", () => {
  const value = "ab".repeat(MAX_MATCH_INPUT / 2);
  // Distinct patterns that all match the value, so the memo cannot help.
  const patterns = Array.from({ length: 2000 }, (_, i) => regex(`^(a|b)*(x${i})?$`));
  for (const re of patterns.slice(0, 3)) assert(re.test(value));
  const outcomes: boolean[] = [];
  const work = workOf(() => {
    for (const re of patterns) outcomes.push(re.test(value));
  });
  const first = outcomes.indexOf(false);
  assert(first > 0, "the first matches run");
  assert(outcomes.slice(first).every((hit) => !hit), "every match after the first refusal fails");
  assert(work <= EVALUATION_BUDGET, `charged ${work} steps`);
  assert(work + (value.length + 1) * patterns[first]!.size + MATCH_OVERHEAD > EVALUATION_BUDGET);
  // A short value after the budget is spent does not match either.
  const late = regex("^a$");
  workOf(() => {
    for (const re of patterns) re.test(value);
    assertEquals(late.test("a"), false);
  });
  // Outside an evaluation there is no such budget.
  assert(patterns.slice(first, first + 5).every((re) => re.test(value)));
});

Deno.test("an evaluation runs at most 1,000 matches on short values", () => {
  const patterns = Array.from({ length: 1500 }, (_, i) => regex(`^(a|b)*(z${i})?$`));
  let hits = 0;
  workOf(() => {
    for (const re of patterns) if (re.test("ab")) hits++;
  });
  assert(hits > 900 && hits <= 1000, `${hits} matches ran`);
});

Deno.test("a nested evaluation shares the budget of the one around it", () => {
  const value = "ab".repeat(MAX_MATCH_INPUT / 2);
  const patterns = Array.from({ length: 2000 }, (_, i) => regex(`^(a|b)*(y${i})?$`));
  let outerAfter = true;
  workOf(() => {
    for (const re of patterns.slice(0, 1000)) re.test(value);
    workOf(() => {
      for (const re of patterns.slice(1000)) re.test(value);
    });
    // The nested evaluation spent the rest: the outer one has nothing left.
    outerAfter = regex("^(a|b)*z?$").test(value);
  });
  assertEquals(outerAfter, false);
});

Deno.test("compilePattern() returns the same compiled pattern for the same source", () => {
  const a = compilePattern("^v[0-9]+$");
  assert(a === compilePattern("^v[0-9]+$"));
});

Deno.test("compilePattern() refuses counted repetitions that add up past the limit, before compiling", () => {
  const r = compilePattern("(x{1000})".repeat(100));
  assert("problem" in r);
  assertStringIncludes(r.problem, "counted repetitions add up to 100000");
  assert("regex" in compilePattern("^[a-z]{2,8}-\\d{1,4}$"), "ordinary counts stay accepted");
});

Deno.test("warmPatterns() compiles patterns with pauses for the event loop between slices", async () => {
  const sources = Array.from({ length: 40 }, (_, i) => `^warm-${i}-(a|b)+$`);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  try {
    await warmPatterns(sources, 0);
  } finally {
    clearInterval(timer);
  }
  assert(ticks > 0, "timers ran while the patterns compiled");
  const r = compilePattern(sources[39]!);
  assert("regex" in r && r.regex.test("warm-39-abab"));
});
