/**
 * Monotonic ULIDs: 26 Crockford base32 characters, 48 bits of milliseconds
 * then 80 random bits. Ids made in the same millisecond by one process
 * increase by one in their random part, so ids sort in creation order and
 * `kv.list({prefix})` returns records oldest first.
 *
 * @module
 */

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
const lastRandom = new Uint8Array(10);

/**
 * Returns a new ULID, strictly greater than every ULID this process made
 * before (as long as the clock does not go back more than the ids made).
 *
 * @param now milliseconds since the epoch; defaults to `Date.now()`
 * @returns a 26-character ULID
 *
 * @example
 * ```ts
 * import { ulid } from "./ulid.ts";
 * const a = ulid();
 * const b = ulid();
 * if (a.length !== 26 || !(a < b)) throw new Error(`${a} ${b}`);
 * ```
 */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    increment(lastRandom);
  } else {
    lastTime = now;
    crypto.getRandomValues(lastRandom);
  }
  return encodeTime(lastTime) + encodeRandom(lastRandom);
}

/**
 * The smallest ULID of a millisecond (its random part all zeros): every id
 * made at or after `ms` sorts at or after it, so a list can start there.
 *
 * @param ms milliseconds since the epoch
 * @returns a 26-character ULID
 *
 * @example
 * ```ts
 * import { ulid, ulidFloor } from "./ulid.ts";
 * const t = Date.parse("2030-01-01T00:00:00Z");
 * if (!(ulidFloor(t) <= ulid(t)) || !ulidFloor(t).endsWith("0".repeat(16))) throw new Error();
 * ```
 */
export function ulidFloor(ms: number): string {
  return encodeTime(ms) + "0".repeat(16);
}

function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] === 0xff) {
      bytes[i] = 0;
    } else {
      bytes[i] = bytes[i]! + 1;
      return;
    }
  }
  throw new RangeError("Cannot make a ULID: random part overflowed");
}

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits = 16 characters of 5 bits, read from the most significant bit.
  let out = "";
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31]!;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}
