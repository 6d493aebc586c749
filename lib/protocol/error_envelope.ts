/**
 * The error envelope of docs/api.md, the body of every error answer of
 * `/api/v1`: `{code, message, details?, request_id}`, in that order. The
 * server writes it (lib/http/errors.ts); the SDK reads it tolerantly, since
 * a proxy in between may answer with anything.
 *
 * @module
 */

/** The body of an error answer. */
export interface ErrorEnvelope {
  /** Stable machine-readable code (lib/protocol/error_codes.ts). */
  code: string;
  /** What went wrong, for people. */
  message: string;
  /** Machine-readable facts (`field`, `problems`, `head`, `retry_after`, …), when there are any. */
  details?: Record<string, unknown>;
  /** The request id, as in the `X-Request-Id` header. */
  request_id: string;
}

/**
 * Serializes an envelope with the fixed field order `code`, `message`,
 * `details` (only when present), `request_id`.
 *
 * @param envelope the envelope
 * @returns JSON text
 *
 * @example
 * ```ts
 * import { encodeErrorEnvelope } from "./error_envelope.ts";
 * const text = encodeErrorEnvelope({ request_id: "r1", message: "No tenant x", code: "tenant_not_found" });
 * if (text !== '{"code":"tenant_not_found","message":"No tenant x","request_id":"r1"}') throw new Error(text);
 * ```
 */
export function encodeErrorEnvelope(envelope: ErrorEnvelope): string {
  const body: Record<string, unknown> = { code: envelope.code, message: envelope.message };
  if (envelope.details !== undefined) body.details = envelope.details;
  body.request_id = envelope.request_id;
  return JSON.stringify(body);
}

/**
 * Reads an error answer's body as an envelope, keeping only the fields that
 * have the envelope's types: a body that is not a JSON object gives `{}`,
 * a `details` that is not an object is dropped.
 *
 * @param text the body
 * @returns the well-typed fields found
 *
 * @example
 * ```ts
 * import { parseErrorEnvelope } from "./error_envelope.ts";
 * const env = parseErrorEnvelope('{"code":"forbidden","message":"no","details":[1],"request_id":7}');
 * if (env.code !== "forbidden" || env.details !== undefined || env.request_id !== undefined) {
 *   throw new Error();
 * }
 * if (Object.keys(parseErrorEnvelope("<html>")).length !== 0) throw new Error();
 * ```
 */
export function parseErrorEnvelope(text: string): Partial<ErrorEnvelope> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (!isObject(parsed)) return {};
  const out: Partial<ErrorEnvelope> = {};
  if (typeof parsed.code === "string") out.code = parsed.code;
  if (typeof parsed.message === "string") out.message = parsed.message;
  if (isObject(parsed.details)) out.details = parsed.details;
  if (typeof parsed.request_id === "string") out.request_id = parsed.request_id;
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
