/**
 * The service-token format (docs/api.md, "Tokens"): `svc_<type>_<payload>`
 * where `<type>` is `read`, `write`, `client`, `tenant` or `admin` and the
 * payload is 32 random bytes in Base58. The prefix is public metadata; it
 * does not authorize.
 *
 * @module
 */
import { base58 } from "base";
import type { TokenType } from "../store/tokens.ts";

/** Number of characters of a token kept as its public display prefix. */
export const TOKEN_PREFIX_LENGTH = 14;
/** Random bytes in a token payload. */
export const TOKEN_PAYLOAD_BYTES = 32;

/** Token type → the word after `svc_`. */
export const TYPE_WORDS: Readonly<Record<TokenType, string>> = {
  "namespace-read": "read",
  "namespace-write": "write",
  "namespace-client": "client",
  "tenant-admin": "tenant",
  "superadmin": "admin",
};

const WORD_TYPES: ReadonlyMap<string, TokenType> = new Map(
  Object.entries(TYPE_WORDS).map(([t, w]) => [w, t as TokenType]),
);

const BASE58_CHARS = /^[1-9A-HJ-NP-Za-km-z]+$/;

/**
 * Returns 32 random bytes encoded in Base58 (the alphabet of Bitcoin).
 *
 * @returns a payload string (usually 43 or 44 characters)
 *
 * @example
 * ```ts
 * import { randomPayload } from "./token_format.ts";
 * if (randomPayload().length < 40) throw new Error();
 * ```
 */
export function randomPayload(): string {
  return base58.encode(
    crypto.getRandomValues(new Uint8Array(TOKEN_PAYLOAD_BYTES)),
  );
}

/**
 * Makes a new service token of a type.
 *
 * @param type the token type
 * @returns the plaintext token, e.g. `svc_read_3xK…`
 *
 * @example
 * ```ts
 * import { generateToken } from "./token_format.ts";
 * if (!generateToken("namespace-client").startsWith("svc_client_")) throw new Error();
 * ```
 */
export function generateToken(type: TokenType): string {
  return `svc_${TYPE_WORDS[type]}_${randomPayload()}`;
}

/**
 * The public display prefix of a token: its first 14 characters.
 *
 * @param token the plaintext token
 * @returns the prefix
 *
 * @example
 * ```ts
 * import { tokenPrefix } from "./token_format.ts";
 * if (tokenPrefix("svc_read_abcdefghijk") !== "svc_read_abcde") throw new Error();
 * ```
 */
export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}

/** Fewest Base58 characters of a 32-byte payload (leading zero bytes are one `1` each). */
const MIN_PAYLOAD_CHARS = 32;
/** Most Base58 characters of a 32-byte payload: ceil(256 / log2(58)). */
const MAX_PAYLOAD_CHARS = 44;

/**
 * Recognises a service token: the type named by its prefix and its
 * payload, or null when the string is not shaped like one (wrong prefix,
 * non-Base58 payload, payload not 32–44 characters long, the lengths Base58 gives
 * 32 bytes).
 *
 * @param token a candidate string
 * @returns `{type, payload}` or null
 *
 * @example
 * ```ts
 * import { generateToken, parseToken } from "./token_format.ts";
 * if (parseToken(generateToken("tenant-admin"))?.type !== "tenant-admin") throw new Error();
 * if (parseToken("svc_nope_abc") !== null) throw new Error();
 * ```
 */
export function parseToken(
  token: string,
): { type: TokenType; payload: string } | null {
  const m = /^svc_([a-z]+)_(.+)$/.exec(token);
  if (m === null) return null;
  const type = WORD_TYPES.get(m[1]!);
  const payload = m[2]!;
  if (type === undefined || !BASE58_CHARS.test(payload)) return null;
  // Base58 of 32 bytes is 32 to 44 characters. A shape check, not a decode:
  // this runs on every request (Base58 decoding is quadratic), and a string
  // of the right shape that is no token fails the digest lookup anyway.
  if (payload.length < MIN_PAYLOAD_CHARS || payload.length > MAX_PAYLOAD_CHARS) return null;
  return { type, payload };
}
