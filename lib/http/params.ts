/**
 * Query-string and body-field readers that turn bad input into 400
 * `invalid_request` with a message naming the field.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/**
 * An optional non-negative integer query parameter.
 *
 * @example
 * ```ts
 * import { intParam } from "./params.ts";
 * if (intParam("5", "limit") !== 5 || intParam(undefined, "limit") !== undefined) throw new Error();
 * ```
 */
export function intParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new UsageError(`${name} must be a non-negative integer`);
  return Number(value);
}

/**
 * An optional string field of a JSON body (400 when present and not a string).
 *
 * @example
 * ```ts
 * import { stringField } from "./params.ts";
 * if (stringField({ a: "x" }, "a") !== "x") throw new Error();
 * ```
 */
export function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new UsageError(`${name} must be a string`);
  return v;
}

/**
 * A required string field of a JSON body.
 *
 * @example
 * ```ts
 * import { requiredString } from "./params.ts";
 * if (requiredString({ slug: "acme" }, "slug") !== "acme") throw new Error();
 * ```
 */
export function requiredString(body: Record<string, unknown>, name: string): string {
  const v = stringField(body, name);
  if (v === undefined || v === "") throw new UsageError(`${name} is required`);
  return v;
}
