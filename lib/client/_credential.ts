/**
 * Naming a credential in an error without revealing it: a service token
 * (`svc_<type>_<payload>`) by its public prefix, the first 14 characters
 * the service also shows in token lists; a session token only as `ses_…`;
 * anything else by its length. Also the one constructor of the client's 401
 * errors, which name the server and that label.
 *
 * @module
 */
import { UnauthorizedError } from "../errors.ts";

/** Characters of a service token shown as its public prefix (as the service stores it). */
const PUBLIC_PREFIX_LENGTH = 14;
const SERVICE_TOKEN = /^svc_(read|write|client|tenant|admin)_[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SESSION_TOKEN = /^ses_[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * A label for a credential that is safe to print: `svc_read_AbCdE…` (the
 * public prefix), `a session token (ses_…)`, or, for a string that is not
 * shaped like a cfgtool credential, only its length.
 *
 * @param token the credential sent
 * @returns the label
 *
 * @example
 * ```ts
 * import { credentialLabel } from "./_credential.ts";
 * const token = "svc_read_" + "A".repeat(43);
 * if (credentialLabel(token) !== "token svc_read_AAAAA…") throw new Error(credentialLabel(token));
 * if (credentialLabel("hunter2").includes("hunter2")) throw new Error();
 * ```
 */
export function credentialLabel(token: string): string {
  if (SERVICE_TOKEN.test(token)) return `token ${token.slice(0, PUBLIC_PREFIX_LENGTH)}…`;
  if (SESSION_TOKEN.test(token)) return `session ${token.slice(0, PUBLIC_PREFIX_LENGTH)}…`;
  return `credential of ${token.length} characters, not shaped like a cfgtool token ` +
    `(svc_<type>_<payload> or ses_<payload>)`;
}

/**
 * The 401 error of a client request: names the server asked and the
 * credential sent (by {@linkcode credentialLabel}), keeps the server's own
 * reason, and records all three in `details` (`server`, `credential`,
 * `reason`) for the CLI's advice.
 *
 * @param server the base URL asked
 * @param token the credential sent
 * @param reason the server's message (`Unknown credential`, `Token is revoked`, …)
 * @param details the envelope's own details, if any
 * @returns the error
 *
 * @example
 * ```ts
 * import { unauthorizedError } from "./_credential.ts";
 * const err = unauthorizedError("http://127.0.0.1:8080", "svc_x", "Unknown credential");
 * if (!err.message.includes("http://127.0.0.1:8080") || err.message.includes("svc_x")) {
 *   throw new Error(err.message);
 * }
 * ```
 */
export function unauthorizedError(
  server: string,
  token: string,
  reason: string,
  details: Record<string, unknown> = {},
): UnauthorizedError {
  const credential = credentialLabel(token);
  return new UnauthorizedError(
    `${server} rejected the ${credential}: ${reason}`,
    { details: { ...details, server, credential, reason } },
  );
}
