/**
 * The one reader of `Authorization: Bearer <credential>` headers: the
 * credential, or a 401 {@linkcode UnauthorizedError} saying what is wrong
 * with the header.
 *
 * @module
 */
import { UnauthorizedError } from "../errors.ts";

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The credential of an `Authorization` header: `Bearer <credential>`, the
 * scheme case-insensitive, spaces or tabs around the credential. Throws 401
 * {@linkcode UnauthorizedError} "Missing credential: …" when the header is
 * absent or empty and "Malformed Authorization header: …" when it is not of
 * that form.
 *
 * @param authorization the header value (null or undefined when absent)
 * @returns the credential
 *
 * @example
 * ```ts
 * import { bearerCredential } from "./bearer.ts";
 * if (bearerCredential("bearer  svc_read_abc ") !== "svc_read_abc") throw new Error();
 * let status = 0;
 * try { bearerCredential("Basic dXNlcg=="); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 401) throw new Error();
 * ```
 */
export function bearerCredential(authorization: string | null | undefined): string {
  if (authorization === null || authorization === undefined || authorization === "") {
    throw new UnauthorizedError("Missing credential: send Authorization: Bearer <token>");
  }
  const m = BEARER.exec(authorization);
  if (m === null) {
    throw new UnauthorizedError("Malformed Authorization header: expected Bearer <token>");
  }
  return m[1]!;
}
