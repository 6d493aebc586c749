/**
 * Whether a store is a new installation's: it holds no tenant and no user
 * yet (service tokens, such as the first superadmin of `admin bootstrap`,
 * do not count). `serve` offers its first-run console link only then, and
 * the sign-in page explains how to get in while there is no tenant. Each
 * question reads at most one record, however large the store.
 *
 * @module
 */
import { tenantPrefix, userPrefix } from "./keys.ts";

async function anyUnder(kv: Deno.Kv, prefix: Deno.KvKey): Promise<boolean> {
  for await (const _ of kv.list({ prefix }, { limit: 1 })) return true;
  return false;
}

/**
 * Whether the installation has at least one tenant.
 *
 * @param kv the store
 * @returns true once a tenant exists
 *
 * @example
 * ```ts
 * import { hasAnyTenant } from "./fresh_store.ts";
 * import { createTenant } from "./tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await hasAnyTenant(kv)) throw new Error("a new store has no tenant");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * if (!await hasAnyTenant(kv)) throw new Error();
 * kv.close();
 * ```
 */
export function hasAnyTenant(kv: Deno.Kv): Promise<boolean> {
  return anyUnder(kv, tenantPrefix());
}

/**
 * Whether the store is a new installation's: no tenant and no user.
 *
 * @param kv the store
 * @returns true while nobody and nothing has been set up
 *
 * @example
 * ```ts
 * import { isFreshStore } from "./fresh_store.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (!await isFreshStore(kv)) throw new Error("a new store is fresh");
 * await createUser(kv, { email: "ops@example.com" });
 * if (await isFreshStore(kv)) throw new Error("a user makes it set up");
 * kv.close();
 * ```
 */
export async function isFreshStore(kv: Deno.Kv): Promise<boolean> {
  const [tenant, user] = await Promise.all([hasAnyTenant(kv), anyUnder(kv, userPrefix())]);
  return !tenant && !user;
}
