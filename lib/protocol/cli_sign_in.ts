/**
 * What crosses the wire when the command line signs in (`/auth/cli/*`),
 * shared by the server (lib/http/auth/cli.ts) and the CLI's client
 * (lib/client/sign_in.ts): the grant types, the token and device answers,
 * the OAuth-style error words (in `details.error` of a `login_failed`
 * envelope), the PKCE S256 challenge, the loopback `redirect_uri` rule and
 * the shape of a user code (`BCDF-GHJK`, consonants only: no look-alike
 * characters, no words).
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";

/** `grant_type` of the loopback (browser) flow. */
export const CODE_GRANT = "authorization_code";

/** `grant_type` of the device flow (RFC 8628). */
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** The answer of `POST /auth/cli/token`: a CLI session. */
export interface CliSessionGrant {
  /** The bearer session token `ses_…`, given once. */
  session_token: string;
  /** The session's id and absolute end. */
  session: { id: string; expires_at: string };
  /** Who signed in. */
  user: { id: string; email: string };
  /** The tenant the session was admitted to. */
  tenant: string;
}

/** The answer of `POST /auth/cli/device`. */
export interface DeviceAuthorization {
  /** The secret the CLI polls with. */
  device_code: string;
  /** What the person types or checks in the browser, `BCDF-GHJK`. */
  user_code: string;
  /** Where the person goes: `<server>/auth/cli/device`. */
  verification_uri: string;
  /** The same with the user code filled in. */
  verification_uri_complete: string;
  /** Seconds until the codes expire. */
  expires_in: number;
  /** Seconds to wait between polls. */
  interval: number;
}

/**
 * OAuth error words of the token endpoint, sent in `details.error` (and
 * `details.reason`) of a `login_failed` error envelope.
 */
export type CliTokenError =
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  | "access_denied"
  | "invalid_grant"
  | "unsupported_grant_type"
  | "invalid_request";

/** Letters of a user code: consonants without look-alikes (RFC 8628 §6.1). */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

/** Characters of a user code (without its dash). */
export const USER_CODE_LENGTH = 8;

/**
 * The PKCE S256 challenge of a verifier: base64url (no padding) of its
 * SHA-256 (RFC 7636 §4.2).
 *
 * @param verifier the code verifier
 * @returns the challenge
 *
 * @example
 * ```ts
 * import { pkceChallenge } from "./cli_sign_in.ts";
 * // RFC 7636, appendix B
 * const c = await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
 * if (c !== "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") throw new Error(c);
 * ```
 */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/**
 * Whether a string has the shape of a PKCE verifier or S256 challenge:
 * 43 to 128 unreserved characters (RFC 7636 §4.1).
 *
 * @param value the candidate
 * @returns true when well-formed
 *
 * @example
 * ```ts
 * import { isPkceValue } from "./cli_sign_in.ts";
 * if (!isPkceValue("a".repeat(43)) || isPkceValue("short") || isPkceValue("a".repeat(42) + "/")) {
 *   throw new Error();
 * }
 * ```
 */
export function isPkceValue(value: unknown): value is string {
  return typeof value === "string" && /^[A-Za-z0-9._~-]{43,128}$/.test(value);
}

/**
 * Base64url without padding (RFC 4648 §5).
 *
 * @param bytes the bytes
 * @returns the text
 *
 * @example
 * ```ts
 * import { base64url } from "./cli_sign_in.ts";
 * if (base64url(new Uint8Array([251, 255])) !== "-_8") throw new Error(base64url(new Uint8Array([251, 255])));
 * ```
 */
export function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return trimTrailing(btoa(text).replace(/\+/g, "-").replace(/\//g, "_"), "=");
}

/**
 * Whether a `redirect_uri` is the CLI's own loopback listener:
 * `http://127.0.0.1:<port>/…` or `http://localhost:<port>/…` with an
 * explicit port, no credentials and no fragment. Anything else (another
 * host, https, a default port, `http://127.0.0.1:80@evil.example/`) is
 * refused: the server never redirects a sign-in code elsewhere.
 *
 * @param uri the requested redirect URI
 * @returns true for a loopback URI
 *
 * @example
 * ```ts
 * import { isLoopbackRedirect } from "./cli_sign_in.ts";
 * if (!isLoopbackRedirect("http://127.0.0.1:53682/callback")) throw new Error();
 * if (!isLoopbackRedirect("http://localhost:8000/callback")) throw new Error();
 * for (const bad of ["https://evil.example/cb", "http://127.0.0.1/cb", "http://127.0.0.1:1@evil.example/",
 *   "http://127.0.0.1.evil.example:80/", "http://[::1]:80/", "http://127.0.0.1:80/cb#x"]) {
 *   if (isLoopbackRedirect(bad)) throw new Error(bad);
 * }
 * ```
 */
export function isLoopbackRedirect(uri: unknown): uri is string {
  if (typeof uri !== "string" || uri.length > 512) return false;
  const m = /^http:\/\/(127\.0\.0\.1|localhost):([0-9]{1,5})(\/[^#\s\\]*)?$/.exec(uri);
  if (m === null) return false;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  return url.protocol === "http:" && url.hostname === m[1] && url.port === String(port) &&
    url.username === "" && url.password === "" && url.hash === "";
}

/**
 * A user code as the person typed it, normalised: upper case, dashes and
 * spaces dropped; null unless it is {@linkcode USER_CODE_LENGTH} letters of
 * {@linkcode USER_CODE_ALPHABET}.
 *
 * @param text what was typed
 * @returns the eight letters, or null
 *
 * @example
 * ```ts
 * import { normalizeUserCode } from "./cli_sign_in.ts";
 * if (normalizeUserCode(" bcdf-ghjk ") !== "BCDFGHJK") throw new Error();
 * if (normalizeUserCode("ABCD-EFGH") !== null) throw new Error("vowels are not in the alphabet");
 * ```
 */
export function normalizeUserCode(text: unknown): string | null {
  if (typeof text !== "string" || text.length > 32) return null;
  const code = text.toUpperCase().replace(/[\s-]/g, "");
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const ch of code) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return code;
}

/**
 * A user code as shown: `BCDF-GHJK`.
 *
 * @param code the eight letters
 * @returns the code with its dash
 *
 * @example
 * ```ts
 * import { formatUserCode } from "./cli_sign_in.ts";
 * if (formatUserCode("BCDFGHJK") !== "BCDF-GHJK") throw new Error();
 * ```
 */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A random user code (eight letters of {@linkcode USER_CODE_ALPHABET},
 * drawn without bias).
 *
 * @returns the code, without its dash
 *
 * @example
 * ```ts
 * import { normalizeUserCode, randomUserCode } from "./cli_sign_in.ts";
 * const code = randomUserCode();
 * if (normalizeUserCode(code) !== code) throw new Error(code);
 * ```
 */
export function randomUserCode(): string {
  let code = "";
  const n = USER_CODE_ALPHABET.length;
  const limit = 256 - (256 % n); // reject bytes that would favour the first letters
  while (code.length < USER_CODE_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(16))) {
      if (b < limit && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[b % n];
    }
  }
  return code;
}
