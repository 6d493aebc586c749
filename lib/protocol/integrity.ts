/**
 * The integrity checks of the event protocol (docs/events.md, docs/sdk.md)
 * and the error a failed one raises. The SDK runs the checks before it
 * replaces a closure; the event-data parser of lib/protocol/events.ts fails
 * the `protocol` check.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";

/**
 * Which check failed: the four of docs/events.md (`prev_closure_hash`,
 * `file_sha256`, `closure_hash` after a delta, `snapshot_hash` after
 * unpacking an archive), a closure that does not validate
 * (`invalid_closure`), event data that is not protocol v2 or is malformed
 * (`protocol`), and a version that does not increase (`ordering`).
 */
export type IntegrityCheck =
  | "prev_closure_hash"
  | "file_sha256"
  | "closure_hash"
  | "snapshot_hash"
  | "invalid_closure"
  | "protocol"
  | "ordering";

/**
 * A failed integrity check (`code` `integrity_check_failed`, status 502).
 * The tracked closure is left as it was.
 *
 * @example
 * ```ts
 * import { IntegrityError } from "./integrity.ts";
 * const err = new IntegrityError("file_sha256", "web", 3, "flags/a.toml does not match its sha256");
 * if (err.check !== "file_sha256" || err.code !== "integrity_check_failed") throw new Error();
 * ```
 */
export class IntegrityError extends CfgtoolError {
  /** The check that failed. */
  readonly check: IntegrityCheck;
  /** The namespace (slug), when known. */
  readonly namespace: string | null;
  /** The version the failed event or archive was for, when known. */
  readonly version: number | null;

  /**
   * Records which check failed, for which namespace and version; all three
   * also go to `details`.
   *
   * @param check the check that failed
   * @param namespace the namespace slug, or null when unknown
   * @param version the version concerned, or null when unknown
   * @param message what happened
   * @param options the underlying error, if any
   */
  constructor(
    check: IntegrityCheck,
    namespace: string | null,
    version: number | null,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super("integrity_check_failed", message, {
      status: 502,
      details: { check, namespace, version },
      ...options,
    });
    this.name = "IntegrityError";
    this.check = check;
    this.namespace = namespace;
    this.version = version;
  }
}
