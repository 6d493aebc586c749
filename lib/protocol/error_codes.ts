/**
 * The error codes of the service (docs/api.md, docs/events.md): the one
 * table of every `code` an error envelope may carry, with the HTTP status
 * the service answers it with and what it means. The server's error
 * responses (lib/http/errors.ts) and the SDK's transport (lib/client/)
 * both read it; the SDK also uses it to name an answer that came without
 * an envelope (a proxy's 404, a gateway's 413).
 *
 * @module
 */

/** Every `code` the service sends in an error envelope. */
export type ServiceErrorCode =
  | "invalid_request"
  | "invalid_context"
  | "invalid_subscription"
  | "unauthorized"
  | "closure_token_invalid"
  | "forbidden"
  | "not_found"
  | "tenant_not_found"
  | "namespace_not_found"
  | "environment_not_found"
  | "version_not_found"
  | "token_not_found"
  | "user_not_found"
  | "session_not_found"
  | "login_failed"
  | "login_unavailable"
  | "read_only"
  | "upstream_unavailable"
  | "admin_not_found"
  | "webhook_not_found"
  | "change_request_not_found"
  | "approval_required"
  | "change_conflict"
  | "change_request_state"
  | "conflict"
  | "closure_unavailable"
  | "precondition_failed"
  | "request_timeout"
  | "payload_too_large"
  | "invalid_manifest"
  | "rate_limit_exceeded"
  | "internal"
  | "token_key_missing"
  | "token_key_mismatch"
  | "kv_unavailable"
  | "kv_access_token_missing";

/** What one error code means on the wire. */
export interface ErrorCodeInfo {
  /** The HTTP status the service answers with. */
  status: number;
  /** When the service sends it. */
  meaning: string;
  /**
   * True for the one code that stands for its status in general: what a
   * client calls an answer with this status and no error envelope.
   */
  generic?: true;
}

/** The table: code → status and meaning. */
export const ERROR_CODES: Readonly<Record<ServiceErrorCode, ErrorCodeInfo>> = {
  invalid_request: {
    status: 400,
    meaning: "malformed JSON, a missing or wrong field (`details.field` names it), a bad query " +
      "parameter, a bad `If-Match`, a broken archive",
    generic: true,
  },
  invalid_context: {
    status: 400,
    meaning: "an evaluation context that is not an object, too deep or too large",
  },
  invalid_subscription: {
    status: 400,
    meaning: "an event-stream subscription the server refuses (`details.reason`)",
  },
  unauthorized: {
    status: 401,
    meaning: "missing, malformed, unknown, expired or revoked credential",
    generic: true,
  },
  closure_token_invalid: {
    status: 401,
    meaning: "a signed closure URL token that is invalid, expired or for another closure",
  },
  forbidden: {
    status: 403,
    meaning: "authenticated but not allowed, including a path tenant/namespace that differs " +
      "from the token's binding",
    generic: true,
  },
  not_found: { status: 404, meaning: "no such route", generic: true },
  tenant_not_found: { status: 404, meaning: "unknown tenant" },
  namespace_not_found: { status: 404, meaning: "unknown namespace" },
  environment_not_found: {
    status: 404,
    meaning: "evaluation in an environment the current manifest does not declare",
  },
  version_not_found: { status: 404, meaning: "unknown manifest version" },
  token_not_found: { status: 404, meaning: "unknown token id" },
  user_not_found: { status: 404, meaning: "unknown user id or email" },
  session_not_found: { status: 404, meaning: "unknown or already ended session" },
  login_failed: {
    status: 403,
    meaning: "a sign-in the server refused (`details.reason`: `state`, `nonce`, `issuer`, " +
      "`audience`, `expired`, `email_domain`, `code`, `csrf`, …); 400 for a malformed one",
  },
  login_unavailable: {
    status: 503,
    meaning: "the identity provider does not answer, or the sign-in client secret is missing",
  },
  read_only: {
    status: 405,
    meaning: "a request a read-only relay does not serve (a write); `details.upstream` names " +
      "the service to send it to",
  },
  upstream_unavailable: {
    status: 503,
    meaning: "a relay cannot check a credential: its upstream does not answer and it holds no " +
      "verdict on it within --offline-grace",
  },
  admin_not_found: { status: 404, meaning: "removing a user who is not an admin" },
  webhook_not_found: { status: 404, meaning: "unknown webhook id in the tenant" },
  change_request_not_found: {
    status: 404,
    meaning: "unknown change request id in the namespace",
  },
  approval_required: {
    status: 409,
    meaning: "the change affects a protected environment: it needs a change request " +
      "(`details.environments`)",
  },
  change_conflict: {
    status: 409,
    meaning: "files the change request changes moved on the head since its base " +
      "(`details.files`); update the request",
  },
  change_request_state: {
    status: 409,
    meaning: "the change request is not in a state that allows this step (`details.status`)",
  },
  conflict: {
    status: 409,
    meaning: "a tenant, namespace or token name that exists; rotating a token twice",
    generic: true,
  },
  closure_unavailable: { status: 410, meaning: "a closure version pruned past retention" },
  precondition_failed: {
    status: 412,
    meaning: "`If-Match` names a version that is no longer the head",
    generic: true,
  },
  request_timeout: {
    status: 408,
    meaning: "the request (head and body) did not arrive within the server's request timeout; " +
      "the connection is closed",
    generic: true,
  },
  payload_too_large: { status: 413, meaning: "body over the limit", generic: true },
  invalid_manifest: {
    status: 422,
    meaning: "the manifest does not validate; `details.problems` lists every problem",
    generic: true,
  },
  rate_limit_exceeded: {
    status: 429,
    meaning: "`namespace-client` evaluation over its quota, or too many event streams; with " +
      "`Retry-After` (seconds)",
    generic: true,
  },
  internal: {
    status: 500,
    meaning: "a bug; the message is generic and the server logs the cause under the same " +
      "request id",
  },
  token_key_missing: {
    status: 500,
    meaning: "the token key file is missing although the store's tokens were digested with a key " +
      "(the server does not start)",
  },
  token_key_mismatch: {
    status: 500,
    meaning: "the token key is not the one the store's tokens were digested with (the server " +
      "does not start)",
  },
  kv_unavailable: { status: 503, meaning: "the KV store does not answer or refused" },
  kv_access_token_missing: {
    status: 503,
    meaning: "a KV Connect URL without `DENO_KV_ACCESS_TOKEN`",
  },
};

/**
 * Whether a string is one of the service's error codes.
 *
 * @param code any string
 * @returns true when the table has it
 *
 * @example
 * ```ts
 * import { isServiceErrorCode } from "./error_codes.ts";
 * if (!isServiceErrorCode("tenant_not_found") || isServiceErrorCode("toString")) throw new Error();
 * ```
 */
export function isServiceErrorCode(code: string): code is ServiceErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * The code that stands for an HTTP status in general (`404` →
 * `not_found`), for an answer that came without an error envelope; a
 * status no code stands for is undefined.
 *
 * @param status an HTTP status
 * @returns the generic code, or undefined
 *
 * @example
 * ```ts
 * import { genericCodeOf } from "./error_codes.ts";
 * if (genericCodeOf(404) !== "not_found" || genericCodeOf(502) !== undefined) throw new Error();
 * ```
 */
export function genericCodeOf(status: number): ServiceErrorCode | undefined {
  return GENERIC.get(status);
}

const GENERIC: ReadonlyMap<number, ServiceErrorCode> = new Map(
  (Object.entries(ERROR_CODES) as [ServiceErrorCode, ErrorCodeInfo][])
    .filter(([, info]) => info.generic === true)
    .map(([code, info]) => [info.status, code]),
);
