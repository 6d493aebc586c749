/**
 * Which host names are this machine's loopback: where plain HTTP is
 * accepted (an identity provider or server on the same host, in
 * development and tests) and where sign-in may build URLs from the
 * request's own origin.
 *
 * @module
 */

/** The loopback host names, as `URL.hostname` spells them. */
const LOOPBACK_HOSTS: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/**
 * Whether `hostname` (as `URL.hostname` gives it) is a loopback host.
 *
 * @param hostname the host name
 * @returns true for `127.0.0.1`, `localhost` and `[::1]`
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./loopback.ts";
 * if (!isLoopbackHost(new URL("http://[::1]:8080/").hostname)) throw new Error();
 * if (isLoopbackHost("flags.example.com")) throw new Error();
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.includes(hostname);
}
