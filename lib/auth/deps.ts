/**
 * What every auth service function needs: the store, the token key, and a
 * clock (injectable for tests); and the per-request context.
 *
 * @module
 */

import type { Head } from "../store/versions.ts";
import type { CredentialCache } from "./credential_cache.ts";

/** Dependencies of the auth service functions. */
export interface AuthDeps {
  /** The store. */
  kv: Deno.Kv;
  /** The HMAC key of lib/auth/hmac_key.ts. */
  key: CryptoKey;
  /** Clock; defaults to the system time. */
  now?: () => Date;
  /**
   * The server's cache of token records (lib/auth/credential_cache.ts).
   * With it, authenticating a known token reads nothing from the KV and
   * `last_used_at` is written after the response; without it (library
   * and CLI use), every lookup reads the KV and the write is awaited.
   */
  credentials?: CredentialCache;
  /**
   * Where the namespace-client gate reads a namespace's current head (the
   * server passes its model cache's, which follows every push); default:
   * the KV.
   */
  headOf?: (tenant: string, namespace: string) => Promise<Head | null>;
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
