/**
 * Validation of a token-creation request (docs/api.md `POST
 * /api/v1/tokens`): every refusal is a 400 `invalid_request`
 * (`InvalidRequestError`) naming the field. Permission and existence checks come
 * after, in lib/services/tokens.ts.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import type { TokenInfo } from "../protocol/responses.ts";
import { SLUG_PATTERN } from "../protocol/slug.ts";
import { TOKEN_TYPES, type TokenRecord, type TokenType } from "../store/tokens.ts";

/** The fields of a token its creator chooses. */
export type ChosenTokenField =
  | "type"
  | "name"
  | "description"
  | "tenant_slug"
  | "namespace_slug"
  | "environment_slug"
  | "allowed_origins"
  | "scopes"
  | "expires_at";

/**
 * The body of a token-creation request, as received: the chosen fields as
 * the wire carries a token ({@linkcode TokenInfo}, optional and nullable),
 * with `type` still an unchecked string.
 */
export type CreateTokenInput = Omit<Pick<TokenInfo, ChosenTokenField>, "type"> & { type: string };

/**
 * A validated, normalised token specification: the fields of a
 * {@linkcode TokenRecord} a caller chooses.
 */
export type TokenSpec = Pick<TokenRecord, ChosenTokenField>;

/** Longest accepted token name. */
export const MAX_TOKEN_NAME_LENGTH = 100;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const bad = (field: string, message: string) =>
  new InvalidRequestError(message, { details: { field } });

/**
 * Whether a string is a serialised RFC 6454 origin as browsers send it in
 * `Origin`: `http(s)://host[:port]`, lower case, no default port, no path.
 * `*` and `null` are not origins here.
 *
 * @param value the candidate
 * @returns true for an origin
 *
 * @example
 * ```ts
 * import { isOrigin } from "./issuance.ts";
 * if (!isOrigin("https://app.example.com")) throw new Error();
 * if (isOrigin("*") || isOrigin("https://app.example.com/")) throw new Error();
 * ```
 */
export function isOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  return url.origin === value;
}

/**
 * Validates an RFC 3339 expiry that lies after `now`, or null.
 *
 * @param value the candidate (`undefined`/`null`: no expiry)
 * @param now the current time
 * @returns the expiry as an ISO string, or null
 *
 * @example
 * ```ts
 * import { parseExpiry } from "./issuance.ts";
 * const at = parseExpiry("2100-01-01T00:00:00Z", new Date());
 * if (at !== "2100-01-01T00:00:00.000Z") throw new Error(String(at));
 * ```
 */
export function parseExpiry(value: unknown, now: Date): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || !RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw bad(
      "expires_at",
      `Cannot use expires_at ${JSON.stringify(value)}: it must be an RFC 3339 timestamp`,
    );
  }
  const at = new Date(Date.parse(value));
  if (at.getTime() <= now.getTime()) {
    throw bad("expires_at", `Cannot use expires_at ${value}: it is in the past`);
  }
  return at.toISOString();
}

/**
 * Validates a token name: 1 to 100 characters without control characters.
 *
 * @param value the candidate
 * @returns the name
 *
 * @example
 * ```ts
 * import { parseTokenName } from "./issuance.ts";
 * if (parseTokenName("ci deploy") !== "ci deploy") throw new Error();
 * ```
 */
export function parseTokenName(value: unknown): string {
  if (
    typeof value !== "string" || value.trim() === "" ||
    value.length > MAX_TOKEN_NAME_LENGTH ||
    // deno-lint-ignore no-control-regex
    /[\u0000-\u001f\u007f]/.test(value)
  ) {
    throw bad(
      "name",
      `Cannot use name ${
        JSON.stringify(value)
      }: it must be 1 to ${MAX_TOKEN_NAME_LENGTH} printable characters`,
    );
  }
  return value;
}

function slugField(
  field: string,
  value: unknown,
  wanted: boolean,
  type: string,
): string | null {
  const given = value !== undefined && value !== null;
  if (!wanted) {
    if (given) throw bad(field, `Cannot set ${field} on a ${type} token`);
    return null;
  }
  if (!given) throw bad(field, `A ${type} token needs ${field}`);
  if (typeof value !== "string" || !SLUG_PATTERN.test(value)) {
    throw bad(field, `Cannot use ${field} ${JSON.stringify(value)}: not a slug`);
  }
  return value;
}

/**
 * Validates and normalises a creation request: known type; name; binding
 * fields present exactly where the type needs them (`tenant_slug` is
 * ignored for superadmin); `scopes` omitted or empty; `allowed_origins`
 * only for `namespace-client`, each an RFC 6454 origin (`*` rejected);
 * `expires_at` RFC 3339 in the future. Throws 400 `invalid_request`.
 *
 * @param input the request body
 * @param now the current time
 * @returns the normalised specification
 *
 * @example
 * ```ts
 * import { validateCreateInput } from "./issuance.ts";
 * const spec = validateCreateInput(
 *   { type: "namespace-read", name: "web", tenant_slug: "acme", namespace_slug: "web" },
 *   new Date(),
 * );
 * if (spec.environment_slug !== null || spec.scopes.length !== 0) throw new Error();
 * ```
 */
export function validateCreateInput(
  input: CreateTokenInput,
  now: Date,
): TokenSpec {
  const type = input.type as TokenType;
  if (!TOKEN_TYPES.includes(type)) {
    throw bad(
      "type",
      input.type === undefined
        ? `type is required: one of ${TOKEN_TYPES.join(", ")}`
        : `Cannot use type ${JSON.stringify(input.type)}: expected one of ${
          TOKEN_TYPES.join(", ")
        }`,
    );
  }
  const name = parseTokenName(input.name);
  const description = input.description ?? null;
  if (description !== null && typeof description !== "string") {
    throw bad("description", "description must be a string");
  }
  const nsToken = type.startsWith("namespace-");
  const tenant = type === "superadmin"
    ? null
    : slugField("tenant_slug", input.tenant_slug, true, type);
  const namespace = slugField("namespace_slug", input.namespace_slug, nsToken, type);
  const environment = slugField(
    "environment_slug",
    input.environment_slug,
    type === "namespace-client",
    type,
  );
  const scopes = input.scopes ?? [];
  if (!Array.isArray(scopes) || scopes.length !== 0) {
    throw bad("scopes", "scopes must be omitted or [] (schema 1.0 has no optional scopes)");
  }
  const origins = input.allowed_origins ?? [];
  if (!Array.isArray(origins)) throw bad("allowed_origins", "allowed_origins must be a list");
  if (type !== "namespace-client" && origins.length !== 0) {
    throw bad("allowed_origins", `Cannot set allowed_origins on a ${type} token`);
  }
  for (const o of origins) {
    if (o === "*") {
      throw bad("allowed_origins", "Cannot use * in allowed_origins: list each origin");
    }
    if (typeof o !== "string" || !isOrigin(o)) {
      throw bad(
        "allowed_origins",
        `Cannot use ${
          JSON.stringify(o)
        } as an origin: expected scheme://host[:port] as browsers send it`,
      );
    }
  }
  return {
    type,
    name,
    description,
    tenant_slug: tenant,
    namespace_slug: namespace,
    environment_slug: environment,
    allowed_origins: [...new Set(origins)],
    scopes: [],
    expires_at: parseExpiry(input.expires_at, now),
  };
}
