/**
 * The errors only a relay answers with (docs/operations.md, "Scaling
 * reads"): a write, or any request that is not a read the relay serves,
 * is 405 `read_only` naming the upstream to send it to; a credential the
 * relay cannot check because its upstream does not answer (and that it has
 * no verdict for within `--offline-grace`) is 503 `upstream_unavailable`.
 * Both are turned into the error envelope by lib/http/errors.ts, as every
 * other error.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";

/**
 * A request a read-only relay does not serve: 405 `read_only`, with
 * `details.upstream`, the service to send it to.
 *
 * @example
 * ```ts
 * import { ReadOnlyError } from "./errors.ts";
 * const err = new ReadOnlyError("PUT", "/api/v1/tenants", "https://flags.example.com");
 * if (err.status !== 405 || err.code !== "read_only" || err.details?.upstream !== "https://flags.example.com") {
 *   throw new Error();
 * }
 * ```
 */
export class ReadOnlyError extends CfgtoolError {
  /**
   * @param method the request's method
   * @param path the request's path
   * @param upstream the upstream's base URL
   */
  constructor(method: string, path: string, upstream: string) {
    super(
      "read_only",
      `This is a read-only relay: ${method} ${path} is not served here; send it to ${upstream}`,
      { status: 405, details: { upstream } },
    );
    this.name = "ReadOnlyError";
  }
}

/**
 * The upstream cannot be asked about a credential the relay holds no
 * verdict for: 503 `upstream_unavailable`.
 *
 * @example
 * ```ts
 * import { UpstreamUnavailableError } from "./errors.ts";
 * const err = new UpstreamUnavailableError("https://flags.example.com", "connection refused");
 * if (err.status !== 503 || err.code !== "upstream_unavailable") throw new Error();
 * ```
 */
export class UpstreamUnavailableError extends CfgtoolError {
  /**
   * @param upstream the upstream's base URL
   * @param why what failed
   */
  constructor(upstream: string, why: string) {
    super(
      "upstream_unavailable",
      `The relay cannot check this credential: its upstream ${upstream} does not answer (${why}) ` +
        "and the relay has no earlier verdict for it",
      { status: 503, details: { upstream } },
    );
    this.name = "UpstreamUnavailableError";
  }
}
