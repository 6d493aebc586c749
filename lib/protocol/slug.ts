/**
 * The slug rule shared by tenants, namespaces, environments and flag keys:
 * `^[a-z0-9][a-z0-9._-]{0,62}$`.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";

/** The slug pattern. */
export const SLUG_PATTERN: RegExp = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * Throws a 400 {@linkcode InvalidRequestError} unless `value` is a slug.
 *
 * @param what what the slug names, for the message (`tenant`, `namespace`)
 * @param value the candidate
 * @returns the slug, typed as a string
 *
 * @example
 * ```ts
 * import { assertSlug } from "./slug.ts";
 * assertSlug("tenant", "acme");
 * let failed = false;
 * try { assertSlug("tenant", "Acme!"); } catch { failed = true; }
 * if (!failed) throw new Error();
 * ```
 */
export function assertSlug(what: string, value: unknown): string {
  if (typeof value !== "string" || !SLUG_PATTERN.test(value)) {
    throw new InvalidRequestError(
      `Cannot use ${JSON.stringify(value)} as ${what} slug: it must match ${SLUG_PATTERN.source}`,
      { details: { field: "slug" } },
    );
  }
  return value;
}
