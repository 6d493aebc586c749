/**
 * Limits of the fields the store keeps that a caller chooses freely:
 * descriptions, push and rollback messages, token origins, user emails and
 * the environments of a manifest. Deno KV refuses values over 64 KiB; with
 * these limits every record the store writes stays far below that (a KV
 * string costs at most 2 bytes per character), so a write never fails on
 * size. Every refusal is a 400 `invalid_request` whose `details.field` names
 * the field, except environments, which are a manifest problem (422).
 *
 * Lengths count characters (UTF-16 code units, JavaScript's `length`).
 *
 * @module
 */
import { InvalidRequestError, type Problem, ProblemsError } from "../errors.ts";

/** Longest description of a tenant, a namespace or a token. */
export const MAX_DESCRIPTION_LENGTH = 1024;
/** Longest push or rollback message. */
export const MAX_MESSAGE_LENGTH = 4096;
/** Most origins in a `namespace-client` token's `allowed_origins`. */
export const MAX_ALLOWED_ORIGINS = 50;
/** Longest origin in `allowed_origins`. */
export const MAX_ORIGIN_LENGTH = 256;
/** Longest user email. */
export const MAX_EMAIL_LENGTH = 254;
/** Most environments a stored version may carry: the validator refuses more (flags/model.ts, `MAX_ENVIRONMENTS`), and the store keeps the bound by itself. */
export const MAX_ENVIRONMENTS = 100;

/**
 * Throws a 400 `invalid_request` naming `field` when `value` is a string
 * longer than `max` characters; `null` and `undefined` pass.
 *
 * @param field the field name, as the caller sent it (`description`)
 * @param value the value
 * @param max the largest accepted length
 *
 * @example
 * ```ts
 * import { checkLength, MAX_DESCRIPTION_LENGTH } from "./limits.ts";
 * checkLength("description", "short", MAX_DESCRIPTION_LENGTH);
 * let field = "";
 * try { checkLength("description", "x".repeat(2000), MAX_DESCRIPTION_LENGTH); }
 * catch (e) { field = String((e as { details: { field: string } }).details.field); }
 * if (field !== "description") throw new Error(field);
 * ```
 */
export function checkLength(field: string, value: string | null | undefined, max: number): void {
  if (typeof value !== "string" || value.length <= max) return;
  throw new InvalidRequestError(
    `${field} is ${value.length} characters long; the limit is ${max}`,
    { details: { field, limit: max } },
  );
}

/**
 * Throws a 400 `invalid_request` naming `allowed_origins` when a token has
 * more than {@linkcode MAX_ALLOWED_ORIGINS} origins or one longer than
 * {@linkcode MAX_ORIGIN_LENGTH}.
 *
 * @param origins the origins
 *
 * @example
 * ```ts
 * import { checkOrigins } from "./limits.ts";
 * checkOrigins(["https://app.example.com"]);
 * let failed = false;
 * try { checkOrigins(Array.from({ length: 51 }, (_, i) => `https://a${i}.example`)); }
 * catch { failed = true; }
 * if (!failed) throw new Error();
 * ```
 */
export function checkOrigins(origins: readonly string[]): void {
  if (origins.length > MAX_ALLOWED_ORIGINS) {
    throw new InvalidRequestError(
      `allowed_origins lists ${origins.length} origins; the limit is ${MAX_ALLOWED_ORIGINS}`,
      { details: { field: "allowed_origins", limit: MAX_ALLOWED_ORIGINS } },
    );
  }
  for (const o of origins) checkLength("allowed_origins", o, MAX_ORIGIN_LENGTH);
}

/**
 * The problems of a manifest that the store cannot keep: more than
 * {@linkcode MAX_ENVIRONMENTS} environments (the head and every version
 * record carry them).
 *
 * @param environments the environments of `namespace.toml`
 * @returns the problems (empty when the manifest fits)
 *
 * @example
 * ```ts
 * import { manifestLimitProblems } from "./limits.ts";
 * if (manifestLimitProblems({ prod: {} }).length !== 0) throw new Error();
 * ```
 */
export function manifestLimitProblems(environments: Record<string, unknown>): Problem[] {
  const count = Object.keys(environments).length;
  if (count <= MAX_ENVIRONMENTS) return [];
  return [{
    path: "namespace.toml",
    key: "namespace.environments",
    message: `declares ${count} environments; the limit is ${MAX_ENVIRONMENTS}`,
  }];
}

/**
 * Throws 422 `invalid_manifest` with the problems of
 * {@linkcode manifestLimitProblems}, if any.
 *
 * @param environments the environments of `namespace.toml`
 *
 * @example
 * ```ts
 * import { checkManifestLimits, MAX_ENVIRONMENTS } from "./limits.ts";
 * checkManifestLimits({ prod: { public_evaluate: false } });
 * const many = Object.fromEntries(
 *   Array.from({ length: MAX_ENVIRONMENTS + 1 }, (_, i) => [`env${i}`, {}]),
 * );
 * let code = "";
 * try { checkManifestLimits(many); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "invalid_manifest") throw new Error(code);
 * ```
 */
export function checkManifestLimits(environments: Record<string, unknown>): void {
  const problems = manifestLimitProblems(environments);
  if (problems.length > 0) throw new ProblemsError(problems);
}
