/**
 * What the sign-in pages read before anyone is authenticated: a tenant's
 * login policy (which sign-in to show), the per-address limit on starting
 * sign-ins, and the email of a person a page greets. Nothing here needs a
 * principal; every answer is one the pages show anyone (an unknown tenant
 * and a tenant without sign-in look the same).
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2";
import { toHex } from "../bytes.ts";
import { RateLimitError } from "../errors.ts";
import type { LoginPolicy } from "../protocol/login_policy.ts";
import { countAttempt } from "../store/login_rate.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import { findUser } from "../store/users.ts";
import { clockOf, type ServiceDeps } from "./deps.ts";

/** Sign-ins a client address may start in 10 minutes (each stores a flow record). */
export const LOGIN_STARTS_PER_ADDRESS = 60;

/** The window of {@linkcode LOGIN_STARTS_PER_ADDRESS}, ms. */
const LOGIN_START_WINDOW_MS = 600_000;

/**
 * The login policy a tenant's sign-in page follows, or null when the
 * tenant has none (or does not exist: the page says the same).
 *
 * @param deps the store
 * @param tenant the tenant slug
 * @returns the policy, or null
 *
 * @example
 * ```ts
 * import { signInPolicy } from "./sign_in.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await signInPolicy({ kv }, "acme") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function signInPolicy(
  deps: { kv: Deno.Kv },
  tenant: string,
): Promise<LoginPolicy | null> {
  return (await findLoginPolicy(deps.kv, tenant))?.policy ?? null;
}

/**
 * Counts a sign-in started from `ip` (429 `rate_limit_exceeded` beyond
 * {@linkcode LOGIN_STARTS_PER_ADDRESS} in 10 minutes, across every process
 * on the store). The address is kept only as a SHA-256 digest.
 *
 * @param deps store, clock
 * @param ip the client's address
 * @returns nothing
 *
 * @example
 * ```ts
 * import { countSignInStart } from "./sign_in.ts";
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, key: undefined as never, runtime: undefined as never };
 * await countSignInStart(deps, "192.0.2.7");
 * kv.close();
 * ```
 */
export async function countSignInStart(deps: ServiceDeps, ip: string): Promise<void> {
  const id = toHex(sha256(new TextEncoder().encode(`ip:${ip}`)));
  const now = clockOf(deps)().getTime();
  if (
    !await countAttempt(
      deps.kv,
      "login_start",
      id,
      LOGIN_STARTS_PER_ADDRESS,
      LOGIN_START_WINDOW_MS,
      now,
    )
  ) {
    throw new RateLimitError(
      "Too many sign-ins started from this network; wait a few minutes, then try again",
      LOGIN_START_WINDOW_MS / 1000,
    );
  }
}

/**
 * The email a page greets a signed-in person by (their id when the user
 * record is gone).
 *
 * @param deps the store
 * @param userId the user id
 * @returns the email, or the id
 *
 * @example
 * ```ts
 * import { greetingName } from "./sign_in.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await greetingName({ kv }, "usr_1") !== "usr_1") throw new Error();
 * kv.close();
 * ```
 */
export async function greetingName(deps: { kv: Deno.Kv }, userId: string): Promise<string> {
  return (await findUser(deps.kv, userId))?.email ?? userId;
}
