/**
 * What every auth service function needs: the store, the token key, and a
 * clock (injectable for tests); and the per-request context.
 *
 * @module
 */

import type { TokenDigestIndex } from "../store/tokens.ts";

/** Dependencies of the auth service functions. */
export interface AuthDeps {
  /** The store. */
  kv: Deno.Kv;
  /** The HMAC key of lib/auth/hmac_key.ts. */
  key: CryptoKey;
  /** Clock; defaults to the system time. */
  now?: () => Date;
  /** The runtime's digest → token id index (without it, each lookup reads the index key). */
  tokenIds?: TokenDigestIndex;
}

/** Facts about the request being served. */
export interface RequestContext {
  /** The request id (`X-Request-Id`), copied into audit entries. */
  requestId: string;
  /** Client IP; only its HMAC digest is ever stored. */
  ip?: string;
}

/**
 * The current time according to the deps' clock.
 *
 * @param deps the dependencies
 * @returns now
 *
 * @example
 * ```ts
 * import { clock } from "./deps.ts";
 * const fixed = new Date("2030-01-01T00:00:00Z");
 * if (clock({ now: () => fixed }) !== fixed) throw new Error();
 * ```
 */
export function clock(deps: { now?: () => Date }): Date {
  return deps.now?.() ?? new Date();
}
