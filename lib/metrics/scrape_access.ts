/**
 * Who may read `GET /metrics`:
 *
 * - anyone presenting `Authorization: Bearer <metrics token>` when the
 *   server has one (`--metrics-token`), from any address; the token is
 *   compared by the SHA-256 of each side in constant time;
 * - without an `Authorization` header, a client whose peer address is a
 *   loopback address (127.0.0.0/8, ::1), unless the request carries
 *   `Forwarded`, `X-Forwarded-For` or `X-Real-IP`: a reverse proxy on the
 *   same host makes every request it passes on come from loopback, and
 *   those headers say it did, so such a request needs the token too.
 *
 * Everything else is refused: 401 `unauthorized` for a wrong token, or for
 * no token where one would be accepted; 403 `forbidden` where no token is
 * configured (only a local scraper may read the metrics then). A proxy that
 * strips forwarding headers and is reachable from elsewhere must not pass
 * `/metrics` on; docs/operations.md says so.
 *
 * @module
 */
import { timingSafeEqual } from "../bytes.ts";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";

/** Headers by which a proxy says it passed a request on. */
export const FORWARDING_HEADERS: readonly string[] = ["forwarded", "x-forwarded-for", "x-real-ip"];

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/**
 * Whether an IP address is a loopback address: 127.0.0.0/8, `::1`, or
 * 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`).
 *
 * @param ip the address as the server reports the peer
 * @returns true for loopback
 *
 * @example
 * ```ts
 * import { isLoopback } from "./scrape_access.ts";
 * if (!isLoopback("127.0.0.1") || !isLoopback("::1") || !isLoopback("::ffff:127.1.2.3")) throw new Error();
 * if (isLoopback("192.0.2.7") || isLoopback("::2") || isLoopback("1270.0.0.1")) throw new Error();
 * ```
 */
export function isLoopback(ip: string): boolean {
  const v4 = ip.toLowerCase().startsWith("::ffff:") ? ip.slice(7) : ip;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  const groups = ip.split(":"); // ::1 is ["", "", "1"]; 0:0:0:0:0:0:0:1 has eight
  if (groups.length < 3 || groups.length > 8 || !/^0{0,3}1$/.test(groups.at(-1)!)) return false;
  const rest = groups.slice(0, -1);
  return rest.every((g) => /^0{0,4}$/.test(g)) && (groups.length === 8 || rest.includes(""));
}

/**
 * The access rule of `GET /metrics` for one server.
 *
 * @example
 * ```ts
 * import { ScrapeAccess } from "./scrape_access.ts";
 * const access = new ScrapeAccess("s3cret");
 * await access.check(null, new Headers(), "127.0.0.1"); // a local scraper
 * await access.check("s3cret", new Headers(), "192.0.2.7");
 * const refused = await access.check(null, new Headers(), "192.0.2.7").then(() => false, () => true);
 * if (!refused) throw new Error("a remote client without the token is refused");
 * ```
 */
export class ScrapeAccess {
  readonly #token: Promise<Uint8Array> | null;

  /** @param token the metrics token; without one only local clients may scrape */
  constructor(token?: string) {
    this.#token = token === undefined || token === "" ? null : digest(token);
  }

  /** Whether a token is configured. */
  get hasToken(): boolean {
    return this.#token !== null;
  }

  /**
   * Admits or refuses a scrape.
   *
   * @param bearer the bearer credential the request presents (read by the
   *   service's one authentication module), or null without one
   * @param headers the request's headers (forwarding headers make a local peer remote)
   * @param peer the peer's IP address, if known (unknown is not loopback)
   * @throws {UnauthorizedError} a wrong token, or none where one is needed
   * @throws {ForbiddenError} not local and no token configured
   */
  async check(bearer: string | null, headers: Headers, peer: string | undefined): Promise<void> {
    if (bearer !== null) {
      if (this.#token !== null && timingSafeEqual(await digest(bearer), await this.#token)) return;
      throw new UnauthorizedError("Wrong metrics token");
    }
    const local = peer !== undefined && isLoopback(peer);
    const forwarded = FORWARDING_HEADERS.some((h) => headers.has(h));
    if (local && !forwarded) return;
    const why = local
      ? "This request came through a proxy (it carries forwarding headers)"
      : "Only clients on a loopback address may read /metrics without a token";
    if (this.#token !== null) {
      throw new UnauthorizedError(`${why}: present the metrics token as a Bearer credential`);
    }
    throw new ForbiddenError(`${why}, and this server has no metrics token (--metrics-token)`);
  }
}
