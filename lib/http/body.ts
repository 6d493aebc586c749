/**
 * Reading request bodies with a size limit: a body over the limit is refused
 * with 413 `payload_too_large` before it is buffered whole; invalid JSON or a
 * JSON value of the wrong shape is 400 `invalid_request`.
 *
 * @module
 */
import { CfgtoolError, InvalidRequestError } from "../errors.ts";

/** Default limit for JSON bodies of control-plane requests (1 MiB). */
export const JSON_BODY_LIMIT = 1024 * 1024;

/** Limit for a manifest upload (16 MiB, the unpacked manifest limit). */
export const MANIFEST_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * Reads the whole body, refusing more than `limit` bytes (413).
 *
 * @example
 * ```ts
 * import { readBodyBytes } from "./body.ts";
 * const bytes = await readBodyBytes(new Request("http://x", { method: "POST", body: "abc" }), 10);
 * if (bytes.length !== 3) throw new Error();
 * ```
 */
export async function readBodyBytes(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/**
 * Reads a JSON object body (400 when it is not valid JSON or not an object).
 *
 * @example
 * ```ts
 * import { readJsonObject } from "./body.ts";
 * const body = await readJsonObject(new Request("http://x", { method: "POST", body: '{"a":1}' }));
 * if (body.a !== 1) throw new Error();
 * ```
 */
export async function readJsonObject(
  req: Request,
  limit: number = JSON_BODY_LIMIT,
): Promise<Record<string, unknown>> {
  const bytes = await readBodyBytes(req, limit);
  return parseJsonObject(bytes);
}

/**
 * Reads a JSON object body that may be left out: an empty body is `{}`
 * (400 when a body is sent and is not a JSON object).
 *
 * @example
 * ```ts
 * import { readOptionalJsonObject } from "./body.ts";
 * const body = await readOptionalJsonObject(new Request("http://x", { method: "POST" }));
 * if (Object.keys(body).length !== 0) throw new Error();
 * ```
 */
export async function readOptionalJsonObject(
  req: Request,
  limit: number = JSON_BODY_LIMIT,
): Promise<Record<string, unknown>> {
  const bytes = await readBodyBytes(req, limit);
  return bytes.length === 0 ? {} : parseJsonObject(bytes);
}

/** Decoders for every body: `decode` without `stream` keeps no state between calls. */
const UTF8 = new TextDecoder();
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes UTF-8, refusing invalid input (a TypeError, as a fatal decoder
 * throws). The lenient decoder is several times faster; it turns every
 * invalid sequence into U+FFFD, so only a text holding U+FFFD is decoded
 * again strictly to tell an invalid input from a real U+FFFD.
 */
function utf8(bytes: Uint8Array): string {
  const text = UTF8.decode(bytes);
  return text.includes("\uFFFD") ? STRICT_UTF8.decode(bytes) : text;
}

/**
 * Parses bytes as a JSON object (400 when they are not).
 *
 * @example
 * ```ts
 * import { parseJsonObject } from "./body.ts";
 * if (parseJsonObject(new TextEncoder().encode("{}")) === null) throw new Error();
 * ```
 */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8(bytes));
  } catch (err) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidRequestError("request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/**
 * Reads a posted HTML form (`application/x-www-form-urlencoded` or
 * `multipart/form-data`) into its text fields (files are dropped; the
 * first value of a repeated field wins). A body that is not a form is a
 * 400 `invalid_request`, never a server error.
 *
 * @param req the request
 * @returns field name → value
 *
 * @example
 * ```ts
 * import { readForm } from "./body.ts";
 * const req = new Request("http://x/", { method: "POST", body: new URLSearchParams({ a: "1" }) });
 * if ((await readForm(req)).get("a") !== "1") throw new Error();
 * let status = 0;
 * const junk = new Request("http://x/", { method: "POST", headers: { "content-type": "multipart/form-data" }, body: "x" });
 * try { await readForm(junk); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 400) throw new Error();
 * ```
 */
export async function readForm(req: Request): Promise<Map<string, string>> {
  let data: FormData;
  try {
    data = await req.formData();
  } catch {
    throw new InvalidRequestError("request body is not an HTML form");
  }
  const out = new Map<string, string>();
  for (const [k, v] of data) if (typeof v === "string" && !out.has(k)) out.set(k, v);
  return out;
}

/** Largest body of a sign-in form or CLI sign-in request (`/auth/…`): 64 KiB. */
export const FORM_BODY_LIMIT = 64 * 1024;

/**
 * The 413 `payload_too_large` error for a body over `limit` bytes.
 *
 * @param limit the limit in bytes
 * @returns the error
 *
 * @example
 * ```ts
 * import { tooLarge } from "./body.ts";
 * if (tooLarge(10).status !== 413) throw new Error();
 * ```
 */
export function tooLarge(limit: number): CfgtoolError {
  return new CfgtoolError("payload_too_large", `request body is larger than ${limit} bytes`, {
    status: 413,
    details: { limit },
  });
}
