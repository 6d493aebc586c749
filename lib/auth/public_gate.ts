/**
 * The `namespace-client` environment gate: a client token works only while
 * its bound environment exists in the namespace's current head with
 * `public_evaluate = true`. Failing the gate is 403 and never changes the
 * token record.
 *
 * @module
 */
import { ForbiddenError } from "../errors.ts";
import type { TokenRecord } from "../store/tokens.ts";
import { getHead, type Head } from "../store/versions.ts";

/**
 * Throws 403 unless the token's environment currently allows public
 * evaluation.
 *
 * @param kv the store
 * @param token a `namespace-client` token record
 * @param headOf where the current head is read (default: the KV)
 * @returns nothing
 *
 * @example
 * ```ts
 * import { assertPublicEvaluate } from "./public_gate.ts";
 * import type { TokenRecord } from "../store/tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const client = {
 *   id: "tok_1", type: "namespace-client",
 *   tenant_slug: "acme", namespace_slug: "web", environment_slug: "production",
 * } as TokenRecord;
 * // acme/web has no manifest declaring production public here: 403
 * let code = "";
 * try { await assertPublicEvaluate(kv, client); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export async function assertPublicEvaluate(
  kv: Deno.Kv,
  token: TokenRecord,
  headOf: (tenant: string, namespace: string) => Promise<Head | null> = (t, ns) =>
    getHead(kv, t, ns),
): Promise<void> {
  const { tenant_slug: t, namespace_slug: ns, environment_slug: env } = token;
  if (t === null || ns === null || env === null) {
    throw new ForbiddenError(`Token ${token.id} has no environment binding`);
  }
  const head = await headOf(t, ns);
  if (head?.environments[env]?.public_evaluate !== true) {
    throw new ForbiddenError(
      `Environment ${env} of ${t}/${ns} does not allow public evaluation`,
      { details: { tenant: t, namespace: ns, environment: env } },
    );
  }
}
