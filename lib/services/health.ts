/**
 * The service's readiness: whether the store answers. Anyone may ask (the
 * `/readyz` probe of a load balancer carries no credential), and the
 * answer says nothing but ready or not.
 *
 * @module
 */
import { pingKv } from "../store/kv.ts";

/**
 * Resolves when the store answers a read; rejects with the store's error
 * when it does not.
 *
 * @param deps the store
 * @returns nothing
 *
 * @example
 * ```ts
 * import { checkReady } from "./health.ts";
 * const kv = await Deno.openKv(":memory:");
 * await checkReady({ kv });
 * kv.close();
 * ```
 */
export async function checkReady(deps: { kv: Deno.Kv }): Promise<void> {
  await pingKv(deps.kv);
}
