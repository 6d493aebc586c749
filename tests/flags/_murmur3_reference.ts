/**
 * An independent MurmurHash3 x86 32-bit for the bucketing tests, written
 * from the published algorithm (Appleby, MurmurHash3.cpp `MurmurHash3_x86_32`)
 * over `TextEncoder` bytes, with 32-bit products computed through 16-bit
 * halves rather than `Math.imul`, so it shares no code with
 * `lib/flags/bucket.ts`.
 *
 * @module
 */

function mul32(a: number, b: number): number {
  const lo = (a & 0xffff) * b;
  const hi = (((a >>> 16) * b) & 0xffff) * 0x10000;
  return (lo + hi) >>> 0;
}

function rotl32(x: number, r: number): number {
  return ((x << r) | (x >>> (32 - r))) >>> 0;
}

/** MurmurHash3_x86_32 of `bytes` with `seed`. */
export function referenceMurmur3(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h1 = seed >>> 0;
  const nblocks = Math.floor(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < nblocks; i++) {
    let k1 = view.getUint32(i * 4, true);
    k1 = mul32(k1, c1);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, c2);
    h1 = (h1 ^ k1) >>> 0;
    h1 = rotl32(h1, 13);
    h1 = (mul32(h1, 5) + 0xe6546b64) >>> 0;
  }
  const tail = nblocks * 4;
  let k1 = 0;
  const rem = bytes.length & 3;
  if (rem >= 3) k1 ^= bytes[tail + 2]! << 16;
  if (rem >= 2) k1 ^= bytes[tail + 1]! << 8;
  if (rem >= 1) {
    k1 ^= bytes[tail]!;
    k1 = mul32(k1 >>> 0, c1);
    k1 = rotl32(k1, 15);
    k1 = mul32(k1, c2);
    h1 = (h1 ^ k1) >>> 0;
  }
  h1 = (h1 ^ bytes.length) >>> 0;
  h1 = (h1 ^ (h1 >>> 16)) >>> 0;
  h1 = mul32(h1, 0x85ebca6b);
  h1 = (h1 ^ (h1 >>> 13)) >>> 0;
  h1 = mul32(h1, 0xc2b2ae35);
  h1 = (h1 ^ (h1 >>> 16)) >>> 0;
  return h1;
}
