/**
 * Tolerant reading of the service's JSON bodies: a single resource may come
 * bare or wrapped (`{tenant: {...}}`), a list as an array, `{items, next}` or
 * `{<plural>: [...], next}`; anything else is an `unexpected_response` (502).
 *
 * @module
 */
import { CfgtoolError, type Problem } from "../errors.ts";
import type { Page } from "../protocol/responses.ts";

/** Whether a JSON value is an object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value as an object, or an `unexpected_response` error. */
export function asObject(v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw unexpected(`expected a JSON object, got ${JSON.stringify(v)}`);
  return v;
}

/** An `unexpected_response` (502) error with `message`. */
export function unexpected(message: string): CfgtoolError {
  return new CfgtoolError(
    "unexpected_response",
    `unexpected response from the service: ${message}`,
    {
      status: 502,
    },
  );
}

/** Reads a body as JSON; an empty body is `{}`. */
export async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw unexpected(`HTTP ${res.status} with a body that is not JSON`);
  }
}

/** A single resource, bare or wrapped in `{<key>: {...}}`; drops `request_id`. */
export function itemOf<T>(body: unknown, key: string): T {
  const obj = asObject(body);
  const inner = obj[key];
  if (isObject(inner)) return inner as T;
  const { request_id: _id, ...rest } = obj;
  return rest as T;
}

/** A list as an array, `{items, next}` or `{<key>: [...], next}`. */
export function pageOf<T>(body: unknown, key: string): Page<T> {
  if (Array.isArray(body)) return { items: body as T[], next: null };
  const obj = asObject(body);
  const list = Array.isArray(obj.items) ? obj.items : obj[key];
  if (!Array.isArray(list)) throw unexpected(`expected a list of ${key}`);
  const next = typeof obj.next === "string" || typeof obj.next === "number"
    ? String(obj.next)
    : null;
  return { items: list as T[], next };
}

/** A problem from JSON, keeping only well-typed fields. */
export function toProblem(v: unknown): Problem {
  const o = isObject(v) ? v : {};
  const problem: Problem = {
    path: typeof o.path === "string" ? o.path : "",
    message: typeof o.message === "string" ? o.message : JSON.stringify(v),
  };
  if (typeof o.line === "number") problem.line = o.line;
  if (typeof o.column === "number") problem.column = o.column;
  if (typeof o.key === "string") problem.key = o.key;
  return problem;
}
