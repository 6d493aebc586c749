/**
 * Test helper: tampering that is certain to change a value. Replacing a
 * character with a fixed one ("…x") leaves the value unchanged whenever it
 * already held that character, which makes a "wrong secret" test pass or fail
 * by chance.
 *
 * @module
 */

/**
 * Returns `text` with the character at `index` (negative counts from the end)
 * replaced by a different character of the same Base58/Base64url-safe
 * alphabet, so the result always differs from `text` and keeps its shape.
 *
 * @example
 * ```ts
 * import { tamper } from "./tamper.ts";
 * if (tamper("abcx") !== "abcy" || tamper("abcd") !== "abcx") throw new Error();
 * if (tamper("Abc", 0) !== "xbc") throw new Error();
 * ```
 */
export function tamper(text: string, index = -1): string {
  const at = index < 0 ? text.length + index : index;
  if (at < 0 || at >= text.length) {
    throw new RangeError(`no character at ${index} in a ${text.length}-character value`);
  }
  const replacement = text[at] === "x" ? "y" : "x";
  return text.slice(0, at) + replacement + text.slice(at + 1);
}
