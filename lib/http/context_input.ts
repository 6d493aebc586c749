/**
 * Validation of the evaluation context a caller sends: a JSON object, at
 * most {@linkcode MAX_CONTEXT_DEPTH} levels deep and at most
 * {@linkcode MAX_CONTEXT_BYTES} bytes once serialized. A bad context is
 * 400 `invalid_context` with a message that says what is wrong and where
 * (`context.user.tags: …`). OFREP maps the same error to `INVALID_CONTEXT`
 * (lib/http/ofrep.ts).
 *
 * @module
 */
import { CfgtoolError, type CfgtoolErrorOptions } from "../errors.ts";
import type { Context } from "../flags/conditions.ts";

/** Deepest nesting accepted: the context object itself is level 1. */
export const MAX_CONTEXT_DEPTH = 10;

/** Largest context accepted, in bytes of its JSON serialization (32 KiB). */
export const MAX_CONTEXT_BYTES = 32 * 1024;

/** Largest request body of an evaluation request (64 KiB: a context plus room for the rest). */
export const EVALUATION_BODY_LIMIT = 64 * 1024;

/**
 * A context that is not an object, too deep or too large. 400
 * `invalid_context` over HTTP; OFREP answers `INVALID_CONTEXT`.
 *
 * @example
 * ```ts
 * import { InvalidContextError } from "./context_input.ts";
 * const err = new InvalidContextError("context must be a JSON object");
 * if (err.status !== 400 || err.code !== "invalid_context") throw new Error();
 * ```
 */
export class InvalidContextError extends CfgtoolError {
  constructor(message: string, options: Omit<CfgtoolErrorOptions, "status"> = {}) {
    super("invalid_context", message, { ...options, status: 400 });
    this.name = "InvalidContextError";
  }
}

/** Limits of {@linkcode validateContext} (tests pass small ones). */
export interface ContextLimits {
  /** Deepest nesting (default {@linkcode MAX_CONTEXT_DEPTH}). */
  maxDepth?: number;
  /** Largest serialization in bytes (default {@linkcode MAX_CONTEXT_BYTES}). */
  maxBytes?: number;
  /**
   * Size of the request body the context came from, when known: a body no
   * larger than `maxBytes` cannot hold a larger context, so the context is
   * not serialized again to measure it.
   */
  bodyBytes?: number;
}

/**
 * Checks a context taken from a request body and returns it typed. An
 * absent context (`undefined` or `null`) is the empty context.
 *
 * @param value the `context` member of the parsed body
 * @param limits depth and size limits
 * @returns the context
 * @throws {InvalidContextError} when it is not an object, too deep or too large
 *
 * @example
 * ```ts
 * import { InvalidContextError, validateContext } from "./context_input.ts";
 * const ctx = validateContext({ user: { id: "u1" } });
 * if ((ctx.user as { id: string }).id !== "u1") throw new Error();
 * try {
 *   validateContext([1, 2]);
 *   throw new Error("expected a refusal");
 * } catch (err) {
 *   if (!(err instanceof InvalidContextError)) throw err;
 * }
 * ```
 */
export function validateContext(value: unknown, limits: ContextLimits = {}): Context {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidContextError(
      `context must be a JSON object, not ${describeJson(value)}`,
    );
  }
  const maxDepth = limits.maxDepth ?? MAX_CONTEXT_DEPTH;
  const maxBytes = limits.maxBytes ?? MAX_CONTEXT_BYTES;
  checkDepth(value, 1, maxDepth, "context");
  if (limits.bodyBytes === undefined || limits.bodyBytes > maxBytes) {
    const size = new TextEncoder().encode(JSON.stringify(value)).length;
    if (size > maxBytes) {
      throw new InvalidContextError(
        `context is ${size} bytes of JSON; the limit is ${maxBytes} bytes`,
        { details: { bytes: size, limit: maxBytes } },
      );
    }
  }
  return value as Context;
}

function checkDepth(value: object, depth: number, max: number, path: string): void {
  if (depth > max) {
    throw new InvalidContextError(
      `context is nested deeper than ${max} levels (at ${path})`,
      { details: { path, limit: max } },
    );
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === "object") checkDepth(v, depth + 1, max, `${path}[${i}]`);
    }
    return;
  }
  for (const key in value) {
    const v: unknown = (value as Record<string, unknown>)[key];
    if (v !== null && typeof v === "object") checkDepth(v, depth + 1, max, `${path}.${key}`);
  }
}

/**
 * Names the JSON type of a value for messages: `an array`, `a string`, ….
 *
 * @param value any JSON value
 * @returns its type with an article
 *
 * @example
 * ```ts
 * import { describeJson } from "./context_input.ts";
 * if (describeJson([]) !== "an array") throw new Error();
 * ```
 */
export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}
