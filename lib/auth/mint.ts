/**
 * Minting a service token: a fresh secret, its digest and prefix, the
 * record and its indexes, and the audit entry, in one atomic commit. Only
 * the caller ever sees the secret, once.
 *
 * @module
 */
import { ConflictError } from "../errors.ts";
import { addAudit, type AuditActor, tokenAuditEntry } from "../store/audit.ts";
import {
  beginTokenInsert,
  getNameHolder,
  type PublicToken,
  type TokenRecord,
} from "../store/tokens.ts";
import { ulid } from "../store/ulid.ts";
import { hmacHex } from "./digest.ts";
import type { TokenSpec } from "./issuance.ts";
import { generateToken, tokenPrefix } from "./token_format.ts";

/** A created or rotated token: metadata plus the one-time secret. */
export interface IssuedToken {
  token: PublicToken;
  /** The plaintext token; returned only here, never again. */
  secret: string;
}

/** Options of {@linkcode tryMint}. */
export interface MintOptions {
  /** User id, token id or `bootstrap` recorded as `created_by`. */
  createdBy: string;
  now: Date;
  /** Actor of the audit entry. */
  actor: AuditActor;
  /** `token.created`, or `token.rotated` for a replacement. */
  auditType: "token.created" | "token.rotated";
  /** Id of the token being replaced; it may hand its name over. */
  rotatedFrom?: string;
  /** Extra writes and checks for the same commit. */
  extra?: (op: Deno.AtomicOperation, record: TokenRecord) => void;
}

/** A minted token: the record and the one-time plaintext secret. */
export interface Minted {
  record: TokenRecord;
  secret: string;
}

/**
 * Tries once to mint a token. Throws 409 `conflict` when another token of
 * the scope holds the name; returns null when the commit lost a race
 * (the caller re-reads and tries again).
 *
 * @param kv the store
 * @param key the HMAC key
 * @param spec the validated token specification
 * @param opts creator, clock, audit, rotation, extra writes
 * @returns the minted token, or null on a lost race
 *
 * @example
 * ```ts
 * import { tryMint } from "./mint.ts";
 * import { randomTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const minted = await tryMint(kv, await randomTokenKey(), {
 *   type: "superadmin", name: "ops", description: null, tenant_slug: null,
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], scopes: [],
 *   expires_at: null,
 * }, {
 *   createdBy: "bootstrap", now: new Date(), auditType: "token.created",
 *   actor: { id: "bootstrap", principal_type: "system", request_id: null },
 * });
 * if (!minted?.secret.startsWith("svc_admin_")) throw new Error();
 * kv.close();
 * ```
 */
export async function tryMint(
  kv: Deno.Kv,
  key: CryptoKey,
  spec: TokenSpec,
  opts: MintOptions,
): Promise<Minted | null> {
  const holder = await getNameHolder(kv, spec.tenant_slug, spec.namespace_slug, spec.name);
  if (holder.value !== null && holder.value !== opts.rotatedFrom) {
    throw new ConflictError(
      `A token named ${JSON.stringify(spec.name)} exists in this scope`,
      { details: { name: spec.name } },
    );
  }
  const secret = generateToken(spec.type);
  const record: TokenRecord = {
    id: `tok_${ulid(opts.now.getTime())}`,
    type: spec.type,
    name: spec.name,
    description: spec.description,
    tenant_slug: spec.tenant_slug,
    namespace_slug: spec.namespace_slug,
    environment_slug: spec.environment_slug,
    allowed_origins: spec.allowed_origins,
    scopes: spec.scopes,
    prefix: tokenPrefix(secret),
    digest: await hmacHex(key, secret),
    created_by: opts.createdBy,
    created_at: opts.now.toISOString(),
    expires_at: spec.expires_at,
    last_used_at: null,
    last_used_ip_hash: null,
    status: "active",
    revoked_at: null,
    revoked_by: null,
    rotated_from_token_id: opts.rotatedFrom ?? null,
    rotated_to_token_id: null,
  };
  const op = beginTokenInsert(kv, record, holder.versionstamp);
  opts.extra?.(op, record);
  const details = opts.rotatedFrom === undefined ? {} : { rotated_from_token_id: opts.rotatedFrom };
  addAudit(op, tokenAuditEntry(opts.auditType, record, opts.actor, opts.now, { details }));
  return (await op.commit()).ok ? { record, secret } : null;
}
