/**
 * The pattern compiler of the `matches` operator, as the predicate engine
 * (lib/flags/conditions.ts) reaches it. The linear-time engine
 * (lib/linear_regex.ts, on `re2js`, a 0.9 MB module) is loaded when this
 * module is, unless the process asked for it to wait
 * (`deferPatternEngine()`, lib/flags/compile_defer.ts): then it is loaded by
 * {@linkcode loadPatternEngine}, which the workspace reader awaits when a
 * file holds a `matches` predicate. Compiling stays synchronous either way,
 * so evaluation (the server, the SDK's closures) never waits.
 *
 * @module
 */
import type { PatternResult } from "../linear_regex.ts";
import { patternEngineDeferred } from "./compile_defer.ts";

let compile: ((source: string) => PatternResult) | undefined;

/**
 * Loads the pattern engine (once; later calls return at once).
 *
 * @example
 * ```ts
 * import { compilePattern, loadPatternEngine } from "./compile_pattern.ts";
 * await loadPatternEngine();
 * const r = compilePattern("^a+$");
 * if (!("regex" in r) || !r.regex.test("aaa")) throw new Error();
 * ```
 */
export async function loadPatternEngine(): Promise<void> {
  // A string literal on purpose, although Deno then reads `re2js` ahead (not
  // compiles it) even when no predicate needs it: `deno bundle` (the SDK's
  // Node build) and `deno compile` follow only literal imports.
  compile ??= (await import("../linear_regex.ts")).compilePattern;
}

/**
 * Whether the pattern engine is loaded.
 *
 * @example
 * ```ts
 * import { patternEngineLoaded } from "./compile_pattern.ts";
 * // loaded with this module unless the process deferred it
 * if (!patternEngineLoaded()) throw new Error();
 * ```
 */
export function patternEngineLoaded(): boolean {
  return compile !== undefined;
}

/**
 * Compiles a `matches` pattern with the linear-time engine (see
 * `compilePattern` in lib/linear_regex.ts: cached, `{regex}` or
 * `{problem}`). Throws when the process deferred the engine and nothing
 * loaded it: a missing {@linkcode loadPatternEngine} on a path that reads
 * predicates, a fault in cfgtool rather than in the input.
 *
 * @example
 * ```ts
 * import { compilePattern } from "./compile_pattern.ts";
 * const r = compilePattern("(a)\\1");
 * if (!("problem" in r)) throw new Error("backreferences are refused");
 * ```
 */
export function compilePattern(source: string): PatternResult {
  if (compile === undefined) {
    throw new Error(
      "internal: the matches pattern engine was deferred and not loaded (await loadPatternEngine())",
    );
  }
  return compile(source);
}

if (!patternEngineDeferred()) await loadPatternEngine();
