import { assert, assertEquals } from "./assert.ts";
import {
  compilePattern,
  type LinearRegex,
  MATCH_BUDGET,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_SIZE,
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

Deno.test("compilePattern() answers a nested quantifier on a 5,001-character value", () => {
  const re = regex("^(a+)+$");
  assertEquals(re.test("a".repeat(5000) + "b"), false);
  assertEquals(re.test("a".repeat(5000)), true);
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
    problem("a{1001}"),
    "invalid regular expression (RE2 syntax): invalid repeat count: `{1001}`",
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
  const msg = problem("[a-z]{600}[0-9]{600}");
  assert(msg.startsWith("pattern is too complex: it compiles to 1"), msg);
  assert(msg.includes("the limit is 1000"), msg);
  assert(regex("[a-z]{600}").size <= MAX_PATTERN_SIZE);
});

Deno.test("compilePattern() does not match a value longer than its work budget allows", () => {
  const re = regex("[a-z]{500}");
  assertEquals(re.maxInput, Math.floor(MATCH_BUDGET / re.size));
  assertEquals(re.test("a".repeat(re.maxInput)), true);
  assertEquals(re.test("a".repeat(re.maxInput + 1)), false);
  // Ordinary patterns keep every value a context can hold (32 KiB).
  assert(regex("^[a-z.]+@example\\.com$").maxInput > 32 * 1024);
});

Deno.test("compilePattern() returns the same compiled pattern for the same source", () => {
  const a = compilePattern("^v[0-9]+$");
  assert(a === compilePattern("^v[0-9]+$"));
});
