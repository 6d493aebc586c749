/**
 * What the sign-in pages read before anyone is authenticated: a tenant's
 * login policy (which sign-in to show), whether the tenant or any tenant
 * exists (a new installation's page says how its operator gets in), the
 * per-address limit on starting sign-ins, and the email of a person a page
 * greets. Nothing here needs a principal; every answer is one the pages
 * show anyone. Tenant slugs are names, not secrets (they are in every URL
 * and token binding); the page that tells an unknown tenant from one
 * without sign-in counts each such answer against the same per-address
 * limit as a started sign-in, so names cannot be tried in bulk.
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2";
import { toHex } from "../bytes.ts";
import { RateLimitError } from "../errors.ts";
import type { LoginPolicy } from "../protocol/login_policy.ts";
import { countAttempt } from "../store/login_rate.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import { hasAnyTenant } from "../store/fresh_store.ts";
import { findTenant } from "../store/tenants.ts";
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
 * What the sign-in page of a tenant shows: its login policy, or why there
 * is none: the tenant exists without sign-in, there is no such tenant, or
 * the installation has no tenant at all yet (its operator must get in
 * first).
 *
 * @param deps the store
 * @param tenant the tenant slug
 * @returns the policy, or why not
 *
 * @example
 * ```ts
 * import { signInTarget } from "./sign_in.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await signInTarget({ kv }, "acme")).kind !== "new_installation") throw new Error();
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * if ((await signInTarget({ kv }, "acme")).kind !== "no_sign_in") throw new Error();
 * if ((await signInTarget({ kv }, "nope")).kind !== "no_tenant") throw new Error();
 * kv.close();
 * ```
 */
export async function signInTarget(
  deps: { kv: Deno.Kv },
  tenant: string,
): Promise<
  | { kind: "policy"; policy: LoginPolicy }
  | { kind: "no_sign_in" | "no_tenant" | "new_installation" }
> {
  const policy = await signInPolicy(deps, tenant);
  if (policy !== null) return { kind: "policy", policy };
  if (await findTenant(deps.kv, tenant) !== null) return { kind: "no_sign_in" };
  return { kind: await hasAnyTenant(deps.kv) ? "no_tenant" : "new_installation" };
}

/**
 * Whether the installation has no tenant yet: the sign-in page then says
 * how its operator gets in.
 *
 * @param deps the store
 * @returns true while there is no tenant
 *
 * @example
 * ```ts
 * import { isNewInstallation } from "./sign_in.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (!await isNewInstallation({ kv })) throw new Error();
 * kv.close();
 * ```
 */
export async function isNewInstallation(deps: { kv: Deno.Kv }): Promise<boolean> {
  return !await hasAnyTenant(deps.kv);
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
