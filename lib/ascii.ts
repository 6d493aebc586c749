/**
 * ASCII-only text helpers for identifiers people type or identity providers
 * send (email addresses, attribute values). Only ASCII: full Unicode case
 * mapping would make distinct strings one (the Kelvin sign `\u212A`
 * lower-cases to `k`), and Unicode trimming would drop characters a sender
 * kept. Each is one linear pass, whatever the input (no regular expression
 * that backtracks over a long run of spaces).
 *
 * @module
 */

/** Whether a UTF-16 code unit is ASCII whitespace (space, tab, CR, LF). */
function isAsciiSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/**
 * Removes ASCII whitespace (space, tab, CR, LF) at both ends.
 *
 * @param s the text
 * @returns the text without the whitespace around it
 *
 * @example
 * ```ts
 * import { asciiTrim } from "./ascii.ts";
 * if (asciiTrim(" \tana@acme.com\r\n") !== "ana@acme.com") throw new Error();
 * if (asciiTrim("\u00a0x\u00a0") !== "\u00a0x\u00a0") throw new Error("no-break spaces stay");
 * ```
 */
export function asciiTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isAsciiSpace(s.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * Lower-cases the ASCII letters A–Z and nothing else.
 *
 * @param s the text
 * @returns the text with A–Z as a–z
 *
 * @example
 * ```ts
 * import { asciiLower } from "./ascii.ts";
 * if (asciiLower("Ana@ACME.com") !== "ana@acme.com") throw new Error();
 * if (asciiLower("\u212Aate") !== "\u212Aate") throw new Error("the Kelvin sign is not k");
 * ```
 */
export function asciiLower(s: string): string {
  let upper = false;
  for (let i = 0; i < s.length && !upper; i++) {
    const c = s.charCodeAt(i);
    upper = c >= 0x41 && c <= 0x5a;
  }
  if (!upper) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c >= 0x41 && c <= 0x5a ? String.fromCharCode(c + 0x20) : s[i];
  }
  return out;
}

/**
 * Whether every character is printable ASCII other than space
 * (U+0021–U+007E).
 *
 * @param s the text
 * @returns whether it is plain printable ASCII
 *
 * @example
 * ```ts
 * import { isPrintableAscii } from "./ascii.ts";
 * if (!isPrintableAscii("kate@acme.com")) throw new Error();
 * if (isPrintableAscii("\u212Aate@acme.com") || isPrintableAscii("a b")) throw new Error();
 * ```
 */
export function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/**
 * Removes every trailing `char` (a URL's trailing slashes, base64 padding),
 * in one backward pass.
 *
 * @param s the text
 * @param char the one character to remove from the end
 * @returns the text without it at the end
 *
 * @example
 * ```ts
 * import { trimTrailing } from "./ascii.ts";
 * if (trimTrailing("https://flags.example.com///", "/") !== "https://flags.example.com") throw new Error();
 * if (trimTrailing("YWI=", "=") !== "YWI" || trimTrailing("/", "/") !== "") throw new Error();
 * ```
 */
export function trimTrailing(s: string, char: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === char) end--;
  return end === s.length ? s : s.slice(0, end);
}
