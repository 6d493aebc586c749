/**
 * The `matches` operator's engine (docs/performance.md, "Regular
 * expressions"): a hostile nested quantifier, `^(a+)+$`, against an
 * all-`a` value ending in `b`, on JavaScript's backtracking `RegExp` (with a
 * short value, so that it finishes) and on the linear-time engine
 * (lib/linear_regex.ts, re2js) with short and long values; and an ordinary
 * pattern on both.
 *
 * Run: deno bench -A bench/regex_bench.ts
 */
import { compilePattern, type LinearRegex } from "../lib/linear_regex.ts";

function linear(source: string): LinearRegex {
  const r = compilePattern(source);
  if (!("regex" in r)) throw new Error(r.problem);
  return r.regex;
}

const HOSTILE = "^(a+)+$";
const short = "a".repeat(22) + "b";
const long = "a".repeat(5000) + "b";
const huge = "a".repeat(32 * 1024 - 1) + "b";
const backtracking = new RegExp(HOSTILE, "u");
const re2 = linear(HOSTILE);
let sink = 0;

Deno.bench("RegExp (backtracking) ^(a+)+$, 23 characters", { group: "hostile" }, () => {
  sink += backtracking.test(short) ? 1 : 0;
});
Deno.bench("re2js ^(a+)+$, 23 characters", { group: "hostile", baseline: true }, () => {
  sink += re2.test(short) ? 1 : 0;
});
Deno.bench("re2js ^(a+)+$, 5,001 characters", { group: "hostile" }, () => {
  sink += re2.test(long) ? 1 : 0;
});
Deno.bench("re2js ^(a+)+$, 32 KiB", { group: "hostile" }, () => {
  sink += re2.test(huge) ? 1 : 0;
});

const EMAIL = "^[a-z.]+@example\\.com$";
const email = "jane.doe@example.com";
const emailJs = new RegExp(EMAIL, "u");
const emailRe2 = linear(EMAIL);
Deno.bench("RegExp ^[a-z.]+@example\\.com$", { group: "ordinary", baseline: true }, () => {
  sink += emailJs.test(email) ? 1 : 0;
});
Deno.bench("re2js ^[a-z.]+@example\\.com$", { group: "ordinary" }, () => {
  sink += emailRe2.test(email) ? 1 : 0;
});

globalThis.addEventListener("unload", () => {
  if (sink < 0) console.log(sink);
});
