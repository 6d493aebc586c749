/**
 * Rollout bucketing (docs/flags.md): a context's bucket for a flag is murmur3
 * x86 32-bit, seed 0, of the UTF-8 bytes of `<flag key>/<bucket value>`,
 * modulo 100000. The bucket value is the context value at the rule's
 * `bucket_by` path, turned into a string by {@linkcode bucketValueOf}.
 *
 * The hash is computed straight from the JavaScript strings, encoding UTF-8
 * on the fly (lone surrogates become U+FFFD, as `TextEncoder` does), so a
 * rollout allocates nothing: no concatenated string, no byte buffer. The
 * state after `<flag key>/` is computed once per rollout rule
 * ({@linkcode murmur3Begin}) and finished per context ({@linkcode murmur3Finish}).
 * `tests/flags/bucket_test.ts` checks it against an independent reference
 * and publishes test vectors (also in docs/flags.md).
 *
 * @module
 */
import { ROLLOUT_TOTAL } from "./model.ts";

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/**
 * MurmurHash3 x86 32-bit of a byte string or of the UTF-8 encoding of a
 * JavaScript string.
 *
 * @param input the bytes, or a string hashed as its UTF-8 encoding
 * @param seed the seed (default 0, the one bucketing uses)
 * @returns the hash, an unsigned 32-bit integer
 *
 * @example
 * ```ts
 * import { murmur3 } from "./bucket.ts";
 * if (murmur3("") !== 0) throw new Error();
 * if (murmur3("hello") !== 613153351) throw new Error();
 * if (murmur3(new TextEncoder().encode("é")) !== murmur3("é")) throw new Error();
 * ```
 */
export function murmur3(input: string | Uint8Array, seed = 0): number {
  if (typeof input === "string") return murmur3Strings("", input, seed);
  let h = seed | 0;
  const n = input.length;
  const blocks = n & ~3;
  let i = 0;
  for (; i < blocks; i += 4) {
    h = murmur3MixBlock(
      h,
      input[i]! | (input[i + 1]! << 8) | (input[i + 2]! << 16) | (input[i + 3]! << 24),
    );
  }
  let k = 0;
  switch (n & 3) {
    case 3:
      k ^= input[i + 2]! << 16;
    // falls through
    case 2:
      k ^= input[i + 1]! << 8;
    // falls through
    case 1:
      k ^= input[i]!;
      h ^= mixK(k);
  }
  return murmur3Finalize(h, n);
}

/**
 * A murmur3 computation in progress: the hash so far, the pending bytes of an
 * incomplete block and the byte count. Made by {@linkcode murmur3Begin} once
 * per prefix (rollout rules precompute `<flag key>/`), finished by
 * {@linkcode murmur3Finish} as often as needed.
 */
export interface Murmur3State {
  /** The hash after the complete blocks so far. */
  h: number;
  /** Pending bytes of the incomplete block, little-endian. */
  k: number;
  /** Bits pending in `k`: 0, 8, 16 or 24. */
  shift: number;
  /** Bytes absorbed. */
  len: number;
}

/**
 * Starts a MurmurHash3 x86 32-bit computation with the UTF-8 encoding of a
 * prefix.
 *
 * @param prefix the first part of the hashed string
 * @param seed the seed (default 0)
 * @returns a state for {@linkcode murmur3Finish} (not changed by it)
 *
 * @example
 * ```ts
 * import { murmur3, murmur3Begin, murmur3Finish } from "./bucket.ts";
 * const st = murmur3Begin("new-checkout/");
 * if (murmur3Finish(st, "user-1") !== murmur3("new-checkout/user-1")) throw new Error();
 * ```
 */
export function murmur3Begin(prefix: string, seed = 0): Murmur3State {
  const st: Murmur3State = { h: seed | 0, k: 0, shift: 0, len: 0 };
  absorb(st, prefix);
  return st;
}

const scratch: Murmur3State = { h: 0, k: 0, shift: 0, len: 0 };

/**
 * Finishes a computation started by {@linkcode murmur3Begin} with the UTF-8
 * encoding of `rest`, without allocating.
 *
 * @param state from {@linkcode murmur3Begin}
 * @param rest the rest of the hashed string
 * @returns the hash of UTF-8(prefix) followed by UTF-8(rest), unsigned 32-bit
 *
 * @example
 * ```ts
 * import { murmur3, murmur3Begin, murmur3Finish } from "./bucket.ts";
 * if (murmur3Finish(murmur3Begin(""), "hello") !== murmur3("hello")) throw new Error();
 * ```
 */
export function murmur3Finish(state: Readonly<Murmur3State>, rest: string): number {
  // The common case, ASCII text, in local variables: first complete the
  // prefix's pending block, then four characters per block, then the tail.
  let h = state.h;
  let k = state.k;
  let shift = state.shift;
  const n = rest.length;
  let i = 0;
  let c = 0;
  for (; shift !== 0 && i < n; i++) {
    c = rest.charCodeAt(i);
    if (c >= 0x80) break;
    k |= c << shift;
    if (shift === 24) {
      h = murmur3MixBlock(h, k);
      k = 0;
      shift = 0;
    } else shift += 8;
  }
  if (shift === 0) {
    for (; i + 3 < n; i += 4) {
      const c0 = rest.charCodeAt(i);
      const c1 = rest.charCodeAt(i + 1);
      const c2 = rest.charCodeAt(i + 2);
      const c3 = rest.charCodeAt(i + 3);
      if ((c0 | c1 | c2 | c3) >= 0x80) break;
      h = murmur3MixBlock(h, c0 | (c1 << 8) | (c2 << 16) | (c3 << 24));
    }
    for (; i < n; i++) {
      c = rest.charCodeAt(i);
      if (c >= 0x80) break;
      k |= c << shift;
      shift += 8; // at most three characters remain: the block stays incomplete
    }
  }
  let len = state.len + i;
  if (i < n) {
    // Not ASCII: the general encoder takes over from character i.
    const st = scratch;
    st.h = h;
    st.k = k;
    st.shift = shift;
    st.len = len;
    absorb(st, rest, i);
    h = st.h;
    k = st.k;
    shift = st.shift;
    len = st.len;
  }
  if (shift !== 0) h ^= mixK(k);
  return murmur3Finalize(h, len);
}

/**
 * MurmurHash3 x86 32-bit of the UTF-8 encoding of `a + b`, computed without
 * building the concatenation. Each part is encoded on its own, so a
 * surrogate pair split between `a` and `b` counts as two lone surrogates.
 *
 * @param a the first string
 * @param b the second string
 * @param seed the seed (default 0)
 * @returns the hash of UTF-8(a) followed by UTF-8(b), unsigned 32-bit
 *
 * @example
 * ```ts
 * import { murmur3, murmur3Strings } from "./bucket.ts";
 * if (murmur3Strings("flag/", "user-1") !== murmur3("flag/user-1")) throw new Error();
 * ```
 */
export function murmur3Strings(a: string, b: string, seed = 0): number {
  return murmur3Finish(murmur3Begin(a, seed), b);
}

/**
 * Feeds the UTF-8 encoding of `s` from character `from` on into `st` (lone
 * surrogates as U+FFFD, like TextEncoder).
 */
function absorb(st: Murmur3State, s: string, from = 0): void {
  let h = st.h;
  let k = st.k;
  let shift = st.shift;
  let len = st.len;
  const n = s.length;
  for (let i = from; i < n; i++) {
    if (shift === 0) {
      // Fast path: four ASCII characters make one block.
      while (i + 3 < n) {
        const c0 = s.charCodeAt(i);
        const c1 = s.charCodeAt(i + 1);
        const c2 = s.charCodeAt(i + 2);
        const c3 = s.charCodeAt(i + 3);
        if ((c0 | c1 | c2 | c3) >= 0x80) break;
        h = murmur3MixBlock(h, c0 | (c1 << 8) | (c2 << 16) | (c3 << 24));
        i += 4;
        len += 4;
      }
      if (i >= n) break;
    }
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      k |= c << shift;
      if (shift === 24) {
        h = murmur3MixBlock(h, k);
        k = 0;
        shift = 0;
      } else shift += 8;
      len++;
      continue;
    }
    // Multi-byte: assemble up to four bytes, then feed them one by one.
    let bytes: number;
    let count: number;
    if (c < 0x800) {
      bytes = (0xc0 | (c >> 6)) | ((0x80 | (c & 0x3f)) << 8);
      count = 2;
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        } else {
          c = 0xfffd; // lone surrogate, as TextEncoder
        }
      }
      if (c < 0x10000) {
        bytes = (0xe0 | (c >> 12)) | ((0x80 | ((c >> 6) & 0x3f)) << 8) |
          ((0x80 | (c & 0x3f)) << 16);
        count = 3;
      } else {
        bytes = (0xf0 | (c >> 18)) | ((0x80 | ((c >> 12) & 0x3f)) << 8) |
          ((0x80 | ((c >> 6) & 0x3f)) << 16) | ((0x80 | (c & 0x3f)) << 24);
        count = 4;
      }
    }
    for (let j = 0; j < count; j++) {
      k |= ((bytes >>> (8 * j)) & 0xff) << shift;
      if (shift === 24) {
        h = murmur3MixBlock(h, k);
        k = 0;
        shift = 0;
      } else shift += 8;
    }
    len += count;
  }
  st.h = h;
  st.k = k;
  st.shift = shift;
  st.len = len;
}

function mixK(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

/**
 * Folds one complete 32-bit block into a MurmurHash3 x86 32-bit hash: the
 * body step of the algorithm. With {@linkcode murmur3Finalize} it hashes any
 * sequence of 32-bit words, which is how the OFREP bulk ETag combines the
 * hashes of its fragments (lib/http/ofrep.ts).
 *
 * @param h the hash so far (the seed before the first block)
 * @param k the block, as a 32-bit integer (little-endian bytes)
 * @returns the hash after the block, a signed 32-bit integer
 *
 * @example
 * ```ts
 * import { murmur3, murmur3Finalize, murmur3MixBlock } from "./bucket.ts";
 * const abcd = 0x61 | (0x62 << 8) | (0x63 << 16) | (0x64 << 24);
 * if (murmur3Finalize(murmur3MixBlock(0, abcd), 4) !== murmur3("abcd")) throw new Error();
 * ```
 */
export function murmur3MixBlock(h: number, k: number): number {
  h ^= mixK(k);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/**
 * Finishes a MurmurHash3 x86 32-bit hash: folds in the length and applies
 * the final avalanche (`fmix32`). The tail bytes of an incomplete block must
 * already be mixed in.
 *
 * @param h the hash after every block
 * @param len the length folded in (bytes for murmur3 proper)
 * @returns the hash, an unsigned 32-bit integer
 *
 * @example
 * ```ts
 * import { murmur3, murmur3Finalize } from "./bucket.ts";
 * if (murmur3Finalize(0, 0) !== murmur3("")) throw new Error();
 * if (murmur3Finalize(7, 0) !== murmur3("", 7)) throw new Error();
 * ```
 */
export function murmur3Finalize(h: number, len: number): number {
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The string a context value is bucketed by, or undefined when the value
 * cannot be bucketed (the rollout rule is then skipped). Strings are used as
 * they are, except the empty string, which counts as missing; finite numbers
 * and booleans are stringified with JavaScript's `String(v)` (`42` → `"42"`,
 * `1.5` → `"1.5"`, `-0` → `"0"`, `true` → `"true"`); `null`, objects, arrays
 * and absent values give undefined.
 *
 * @param value the value read at `bucket_by`
 * @returns the bucket value, or undefined
 *
 * @example
 * ```ts
 * import { bucketValueOf } from "./bucket.ts";
 * if (bucketValueOf(42) !== "42" || bucketValueOf(true) !== "true") throw new Error();
 * if (bucketValueOf("") !== undefined || bucketValueOf(null) !== undefined) throw new Error();
 * ```
 */
export function bucketValueOf(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return value === "" ? undefined : value;
    case "number":
      return Number.isFinite(value) ? String(value) : undefined;
    case "boolean":
      return value ? "true" : "false";
    default:
      return undefined;
  }
}

/**
 * The bucket of a bucket value for a flag: murmur3 x86 32-bit (seed 0) of
 * the UTF-8 string `<flag key>/<bucket value>`, modulo 100000.
 *
 * @param flagKey the flag key
 * @param bucketValue the bucket value (see {@linkcode bucketValueOf})
 * @returns an integer from 0 to 99999
 *
 * @example
 * ```ts
 * import { bucketOf, murmur3 } from "./bucket.ts";
 * if (bucketOf("new-checkout", "user-1") !== murmur3("new-checkout/user-1") % 100000) {
 *   throw new Error();
 * }
 * ```
 */
export function bucketOf(flagKey: string, bucketValue: string): number {
  return murmur3Strings(flagKey + "/", bucketValue) % ROLLOUT_TOTAL;
}
