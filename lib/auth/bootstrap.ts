/**
 * Bootstrap and break-glass: `cfgtool admin bootstrap` on the server host
 * creates a superadmin token without any other credential. It works on an
 * empty KV and on a running installation, and each run creates a new token
 * (default name `bootstrap-<n>`).
 *
 * @module
 */
import type { AuditActor } from "../store/audit.ts";
import {
  bootstrapCountOps,
  getBootstrapCount,
  getNameHolder,
  publicToken,
} from "../store/tokens.ts";
import { parseTokenName, type TokenSpec } from "./issuance.ts";
import { type IssuedToken, tryMint } from "./mint.ts";

const BOOTSTRAP_ACTOR: AuditActor = {
  id: "bootstrap",
  principal_type: "system",
  request_id: null,
};

/**
 * Creates a superadmin token and returns its secret once. Without a name,
 * picks the next free `bootstrap-<n>`; a given name that is taken gives
 * 409 `conflict`. Audits `token.created` with actor `bootstrap`.
 *
 * @param kv the store
 * @param key the token HMAC key
 * @param options optional name, clock
 * @returns the token metadata and secret
 *
 * @example
 * ```ts
 * import { bootstrapSuperadmin } from "./bootstrap.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const { token, secret } = await bootstrapSuperadmin(kv, await randomTokenKey());
 * if (token.name !== "bootstrap-1" || !secret.startsWith("svc_admin_")) throw new Error();
 * kv.close();
 * ```
 */
export async function bootstrapSuperadmin(
  kv: Deno.Kv,
  key: CryptoKey,
  options: { name?: string; now?: () => Date } = {},
): Promise<IssuedToken> {
  const now = options.now?.() ?? new Date();
  const given = options.name === undefined ? null : parseTokenName(options.name);
  while (true) {
    const counter = await getBootstrapCount(kv);
    let n = counter.count + 1;
    let name = given;
    while (name === null) {
      const candidate = `bootstrap-${n}`;
      if ((await getNameHolder(kv, null, null, candidate)).value === null) {
        name = candidate;
      } else {
        n++;
      }
    }
    const spec: TokenSpec = {
      type: "superadmin",
      name,
      description: null,
      tenant_slug: null,
      namespace_slug: null,
      environment_slug: null,
      allowed_origins: [],
      scopes: [],
      expires_at: null,
    };
    const minted = await tryMint(kv, key, spec, {
      createdBy: "bootstrap",
      now,
      actor: BOOTSTRAP_ACTOR,
      auditType: "token.created",
      extra: (op) => {
        bootstrapCountOps(op, counter, given === null ? n : null);
      },
    });
    if (minted !== null) {
      return { token: publicToken(minted.record), secret: minted.secret };
    }
  }
}
