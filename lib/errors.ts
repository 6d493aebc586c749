/**
 * Typed errors with a stable `code`. Every failure a user can see is one of
 * these classes; the CLI turns them into exit codes (lib/cli/exit.ts) and the
 * HTTP layer into the JSON error envelope (lib/http/errors.ts), each in exactly
 * one place.
 *
 * @module
 */

/** Options shared by every {@linkcode CfgtoolError}. */
export interface CfgtoolErrorOptions {
  /** HTTP status used when the error reaches the HTTP layer. */
  status?: number;
  /** Extra machine-readable facts (goes to `details` in the envelope). */
  details?: Record<string, unknown>;
  /** The underlying error, kept for debugging, never shown to users. */
  cause?: unknown;
}

/**
 * Base class of every cfgtool error: a stable `code`, a human message, an
 * HTTP status and optional `details`.
 *
 * @example
 * ```ts
 * import { CfgtoolError } from "./errors.ts";
 * const err = new CfgtoolError("conflict", "Tenant acme exists", { status: 409 });
 * if (err.code !== "conflict" || err.status !== 409) throw new Error();
 * ```
 */
export class CfgtoolError extends Error {
  /** Stable machine-readable code (`tenant_not_found`, `usage`, …). */
  readonly code: string;
  /** HTTP status for the error envelope. */
  readonly status: number;
  /** Extra machine-readable facts. */
  readonly details: Record<string, unknown> | undefined;

  /**
   * Creates an error with a stable code.
   *
   * @param code the stable machine-readable code
   * @param message the human-readable message
   * @param options HTTP status (default 500), details and cause
   */
  constructor(
    code: string,
    message: string,
    options: CfgtoolErrorOptions = {},
  ) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "CfgtoolError";
    this.code = code;
    this.status = options.status ?? 500;
    this.details = options.details;
  }
}

/**
 * Bad command-line usage: wrong flags, a missing argument, a malformed
 * option value. Exit status 2 on the CLI. Server code refuses a bad request
 * with {@linkcode InvalidRequestError} instead; a `UsageError` that reaches
 * the HTTP layer anyway is answered like one (400 `invalid_request`).
 *
 * @example
 * ```ts
 * import { UsageError } from "./errors.ts";
 * const err = new UsageError("--context needs key=value");
 * if (err.name !== "UsageError" || err.status !== 400) throw new Error();
 * ```
 */
export class UsageError extends CfgtoolError {
  /**
   * Creates a usage error (CLI exit 2, HTTP 400 `invalid_request`).
   *
   * @param message what was wrong with the usage or request
   * @param options details and cause
   */
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("invalid_request", message, { ...options, status: 400 });
    this.name = "UsageError";
  }
}

/**
 * A request the service refuses as malformed: a field of the wrong shape, a
 * missing parameter, a body that is not JSON. 400 `invalid_request` over
 * HTTP, usually with `details.field` naming the field. Server code
 * (lib/http, lib/auth, lib/events, lib/store) throws this, never
 * {@linkcode UsageError}, which is for command-line mistakes.
 *
 * @example
 * ```ts
 * import { InvalidRequestError } from "./errors.ts";
 * const err = new InvalidRequestError("limit must be a positive integer", {
 *   details: { field: "limit" },
 * });
 * if (err.status !== 400 || err.code !== "invalid_request") throw new Error();
 * ```
 */
export class InvalidRequestError extends CfgtoolError {
  /**
   * Creates the error for a request the server refuses (HTTP 400 `invalid_request`).
   *
   * @param message what was wrong with the request
   * @param options details and cause
   */
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("invalid_request", message, { ...options, status: 400 });
    this.name = "InvalidRequestError";
  }
}

/**
 * Something named does not exist (a workspace, a variable, a tenant, a
 * namespace, a token). `code` says which: `workspace_not_found`,
 * `variable_not_found`, `tenant_not_found`, `namespace_not_found`,
 * `token_not_found`, `not_found`.
 *
 * @example
 * ```ts
 * import { NotFoundError } from "./errors.ts";
 * const err = new NotFoundError("tenant_not_found", "No tenant acme");
 * if (err.status !== 404) throw new Error();
 * ```
 */
export class NotFoundError extends CfgtoolError {
  /**
   * Creates a not-found error (HTTP 404).
   *
   * @param code which thing is missing (`tenant_not_found`, …)
   * @param message what was looked for, in words
   * @param options details and cause
   */
  constructor(
    code: string,
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super(code, message, { ...options, status: 404 });
    this.name = "NotFoundError";
  }
}

/**
 * One problem found in a set of files: the file, and either a line/column
 * (syntax errors) or a key path (schema and reference errors).
 */
export interface Problem {
  /** Path of the file, relative to the workspace or manifest root, `/`-separated. */
  path: string;
  /** 1-based line, for syntax errors. */
  line?: number;
  /** 1-based column, for syntax errors. */
  column?: number;
  /** Key path inside the file (`resolve.rule[2].value`). */
  key?: string;
  /** What is wrong. */
  message: string;
}

/**
 * Formats a problem as one line: `<path>:<line>:<col>: <message>` when it has
 * a line, `<path>: <key path>: <message>` when it has a key path, else
 * `<path>: <message>`.
 *
 * @example
 * ```ts
 * import { formatProblem } from "./errors.ts";
 * const line = formatProblem({ path: "variables/x.toml", key: "type", message: "bad" });
 * if (line !== "variables/x.toml: type: bad") throw new Error(line);
 * ```
 */
export function formatProblem(p: Problem): string {
  if (p.line !== undefined) {
    return `${p.path}:${p.line}:${p.column ?? 1}: ${p.message}`;
  }
  if (p.key !== undefined && p.key !== "") {
    return `${p.path}: ${p.key}: ${p.message}`;
  }
  return `${p.path}: ${p.message}`;
}

/**
 * A set of files failed validation; `problems` lists every problem found.
 * Exit status 1 on the CLI; 422 `invalid_manifest` (or the given code) over HTTP.
 *
 * @example
 * ```ts
 * import { ProblemsError } from "./errors.ts";
 * const err = new ProblemsError([{ path: "a.toml", message: "bad" }]);
 * if (err.problems.length !== 1) throw new Error();
 * ```
 */
export class ProblemsError extends CfgtoolError {
  /** Every problem, in a stable order. */
  readonly problems: Problem[];

  /**
   * Creates the error for a set of problems (HTTP 422).
   *
   * @param problems every problem found, or the first of them
   * @param code the stable code (default `invalid_manifest`)
   * @param message the message (default: a count of the problems)
   * @param total how many problems there are, when `problems` lists only the first
   */
  constructor(
    problems: Problem[],
    code = "invalid_manifest",
    message?: string,
    total: number = problems.length,
  ) {
    const listed = total > problems.length ? ` (the first ${problems.length} are listed)` : "";
    super(
      code,
      message ?? `${total} problem${total === 1 ? "" : "s"} found${listed}`,
      {
        status: 422,
        details: total > problems.length ? { problems, problem_count: total } : { problems },
      },
    );
    this.name = "ProblemsError";
    this.problems = problems;
  }
}

/**
 * A request without a valid credential: missing, malformed, unknown,
 * expired or revoked. 401 `unauthorized` over HTTP (the HTTP layer adds
 * `WWW-Authenticate: Bearer`).
 *
 * @example
 * ```ts
 * import { UnauthorizedError } from "./errors.ts";
 * const err = new UnauthorizedError("Token is revoked");
 * if (err.status !== 401 || err.code !== "unauthorized") throw new Error();
 * ```
 */
export class UnauthorizedError extends CfgtoolError {
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("unauthorized", message, { ...options, status: 401 });
    this.name = "UnauthorizedError";
  }
}

/**
 * An authenticated principal that may not do what it asked: insufficient
 * permission, a `{tenant}` that differs from the binding, or a
 * `namespace-client` token whose environment is not public. 403 `forbidden`.
 *
 * @example
 * ```ts
 * import { ForbiddenError } from "./errors.ts";
 * const err = new ForbiddenError("Token is bound to tenant acme");
 * if (err.status !== 403 || err.code !== "forbidden") throw new Error();
 * ```
 */
export class ForbiddenError extends CfgtoolError {
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("forbidden", message, { ...options, status: 403 });
    this.name = "ForbiddenError";
  }
}

/**
 * A sign-in the server refused. `reason` says why in a stable word
 * (`state`, `nonce`, `issuer`, `audience`, `expired`, `signature`,
 * `email_domain`, `email_unverified`, `code`, `csrf`, …) for the audit log
 * and tests; the message is what the person reads. 403 `login_failed`
 * (400 for a malformed request), or 503 `login_unavailable` when the
 * server cannot reach the identity provider or lacks its client secret.
 *
 * @example
 * ```ts
 * import { LoginError } from "./errors.ts";
 * const err = new LoginError("state", "This sign-in link has expired; start again");
 * if (err.status !== 403 || err.code !== "login_failed" || err.reason !== "state") throw new Error();
 * ```
 */
export class LoginError extends CfgtoolError {
  /** Why, in one stable word. */
  readonly reason: string;

  constructor(
    reason: string,
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> & { status?: 400 | 403 } = {},
  ) {
    super("login_failed", message, {
      ...options,
      status: options.status ?? 403,
      details: { ...options.details, reason },
    });
    this.name = "LoginError";
    this.reason = reason;
  }
}

/**
 * Something the server needs is missing or unreachable: an identity
 * provider that does not answer, a sign-in client secret the operator has
 * not provided. 503 with the given code (`login_unavailable`).
 *
 * @example
 * ```ts
 * import { UnavailableError } from "./errors.ts";
 * const err = new UnavailableError("login_unavailable", "The identity provider does not answer");
 * if (err.status !== 503 || err.code !== "login_unavailable") throw new Error();
 * ```
 */
export class UnavailableError extends CfgtoolError {
  constructor(
    code: "login_unavailable",
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super(code, message, { ...options, status: 503 });
    this.name = "UnavailableError";
  }
}

/**
 * A duplicate name or slug, or a state that does not allow the change (a
 * token that is no longer active). 409 `conflict`.
 *
 * @example
 * ```ts
 * import { ConflictError } from "./errors.ts";
 * const err = new ConflictError("Tenant acme exists");
 * if (err.status !== 409 || err.code !== "conflict") throw new Error();
 * ```
 */
export class ConflictError extends CfgtoolError {
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("conflict", message, { ...options, status: 409 });
    this.name = "ConflictError";
  }
}

/**
 * An `If-Match` precondition that no longer holds (the manifest head moved).
 * 412 `precondition_failed`.
 *
 * @example
 * ```ts
 * import { PreconditionFailedError } from "./errors.ts";
 * const err = new PreconditionFailedError("Head is v4, not v3");
 * if (err.status !== 412 || err.code !== "precondition_failed") throw new Error();
 * ```
 */
export class PreconditionFailedError extends CfgtoolError {
  constructor(
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("precondition_failed", message, { ...options, status: 412 });
    this.name = "PreconditionFailedError";
  }
}

/**
 * Too many requests; `retryAfter` is the number of seconds to wait (the HTTP
 * layer sends it as `Retry-After`). 429 `rate_limit_exceeded`.
 *
 * @example
 * ```ts
 * import { RateLimitError } from "./errors.ts";
 * const err = new RateLimitError("Slow down", 2);
 * if (err.status !== 429 || err.retryAfter !== 2) throw new Error();
 * ```
 */
export class RateLimitError extends CfgtoolError {
  /** Seconds until a retry may succeed. */
  readonly retryAfter: number;

  constructor(
    message: string,
    retryAfter: number,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super("rate_limit_exceeded", message, {
      ...options,
      status: 429,
      details: { ...options.details, retry_after: retryAfter },
    });
    this.name = "RateLimitError";
    this.retryAfter = retryAfter;
  }
}

/**
 * The KV store named by `--kv` / `CFGTOOL_KV` cannot be opened. `code` says
 * why: `kv_access_token_missing` (a KV Connect URL without
 * `DENO_KV_ACCESS_TOKEN`; exit status 2 on the CLI, like a missing option)
 * or `kv_unavailable` (the store did not answer or refused). 503 over HTTP.
 *
 * @example
 * ```ts
 * import { KvOpenError } from "./errors.ts";
 * const err = new KvOpenError("kv_unavailable", "Cannot open the KV Connect store");
 * if (err.status !== 503 || err.code !== "kv_unavailable") throw new Error();
 * ```
 */
export class KvOpenError extends CfgtoolError {
  constructor(
    code: "kv_access_token_missing" | "kv_unavailable",
    message: string,
    options: Omit<CfgtoolErrorOptions, "status"> = {},
  ) {
    super(code, message, { ...options, status: 503 });
    this.name = "KvOpenError";
  }
}
