/**
 * Leaf helpers over bytes and strings that every layer shares: UTF-8 order,
 * hex, SHA-256 and equality (plain and constant-time). Nothing here imports
 * another module of the project but lib/time_slice.ts, and everything runs
 * in a browser.
 *
 * @module
 */
import { TimeSlice } from "./time_slice.ts";

/**
 * Compares two strings in the byte-wise order of their UTF-8 encodings,
 * which is Unicode code-point order, without encoding them. JavaScript's own
 * `<` compares UTF-16 code units and puts a surrogate pair (U+10000 and up)
 * before U+E000–U+FFFF; this does not. (An unpaired surrogate, which
 * `TextEncoder` writes as U+FFFD, is compared as itself.)
 *
 * @param a first string
 * @param b second string
 * @returns negative when `a` sorts first, positive when `b` does, 0 when equal
 *
 * @example
 * ```ts
 * import { compareUtf8 } from "./bytes.ts";
 * // U+FF5E is 0xEF 0xBD 0x9E in UTF-8, U+1F600 starts with 0xF0
 * if (compareUtf8("～", "😀") >= 0 || compareUtf8("a", "a") !== 0) throw new Error();
 * ```
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (0xD800–0xDFFF) stands for a code point above 0xFFFF:
    // it sorts after every other code unit of 0xD800 and up.
    if (x >= 0xd800 && y >= 0xd800) return surrogateRank(x) - surrogateRank(y);
    return x - y;
  }
  return a.length - b.length;
}

function surrogateRank(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/**
 * Byte-wise lexicographic comparison of two byte arrays.
 *
 * @param x first array
 * @param y second array
 * @returns negative, zero or positive, as `Array.prototype.sort` takes it
 *
 * @example
 * ```ts
 * import { compareBytes } from "./bytes.ts";
 * if (compareBytes(new Uint8Array([1]), new Uint8Array([1, 0])) >= 0) throw new Error();
 * ```
 */
export function compareBytes(x: Uint8Array, y: Uint8Array): number {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]! - y[i]!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * Lower-case hex of bytes.
 *
 * @param bytes the bytes
 * @returns two hex digits per byte
 *
 * @example
 * ```ts
 * import { toHex } from "./bytes.ts";
 * if (toHex(new Uint8Array([0, 171, 255])) !== "00abff") throw new Error();
 * ```
 */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

/**
 * SHA-256 of bytes as lower-case hex.
 *
 * @param bytes the content
 * @returns 64 hex digits
 *
 * @example
 * ```ts
 * import { sha256Hex } from "./bytes.ts";
 * const hex = await sha256Hex(new Uint8Array());
 * if (hex !== "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") throw new Error(hex);
 * ```
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)));
}

/** Digests started at once by {@linkcode sha256All}. */
const DIGEST_SLICE = 32;

/**
 * SHA-256 of many contents, in input order. Digests run a slice at a time,
 * and the event loop gets a turn every few milliseconds (a digest of a
 * small input settles at once, so awaiting it alone would not yield), so
 * hashing thousands of files never holds the event loop for long.
 *
 * @param contents the contents to digest
 * @returns one 32-byte digest per content
 *
 * @example
 * ```ts
 * import { sha256All, toHex } from "./bytes.ts";
 * const [empty, a] = await sha256All([new Uint8Array(), new Uint8Array([97])]);
 * if (!toHex(empty!).startsWith("e3b0c442") || !toHex(a!).startsWith("ca978112")) throw new Error();
 * ```
 */
export async function sha256All(contents: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  const slice = new TimeSlice();
  for (let i = 0; i < contents.length; i += DIGEST_SLICE) {
    await slice.pause();
    const digests = await Promise.all(
      contents.slice(i, i + DIGEST_SLICE).map((c) =>
        crypto.subtle.digest("SHA-256", c as BufferSource)
      ),
    );
    for (const d of digests) out.push(new Uint8Array(d));
  }
  return out;
}

/**
 * Whether two byte arrays hold the same bytes; returns at the first
 * difference, so never use it on secrets (see {@linkcode timingSafeEqual}).
 *
 * @param a first array
 * @param b second array
 * @returns true when equal
 *
 * @example
 * ```ts
 * import { bytesEqual } from "./bytes.ts";
 * if (!bytesEqual(new Uint8Array([1]), new Uint8Array([1]))) throw new Error();
 * if (bytesEqual(new Uint8Array([1]), new Uint8Array([2]))) throw new Error();
 * ```
 */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Compares two byte arrays in time that depends only on their length.
 * Arrays of different lengths are unequal (lengths are not secret here:
 * digests and MACs have fixed sizes).
 *
 * @param a first array
 * @param b second array
 * @returns true when every byte is equal
 *
 * @example
 * ```ts
 * import { timingSafeEqual } from "./bytes.ts";
 * if (!timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))) throw new Error();
 * if (timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))) throw new Error();
 * ```
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
