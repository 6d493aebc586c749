/**
 * The service-token operations behind `/api/v1/tokens`: each takes the
 * deps, the authenticated principal and the input, checks permission
 * (lib/auth/permissions.ts), changes the store, writes the audit entry,
 * and throws typed errors (400, 403, 404 `token_not_found`, 409). The HTTP
 * layer only maps requests and responses.
 *
 * A token id tells the caller nothing it may not know: a token bound
 * outside every tenant the caller may read (another tenant's, a
 * superadmin token) answers exactly as an id that names no token (404
 * `token_not_found`), and a namespace-bound token is refused (403) for any
 * id but its own before anything is looked up ({@linkcode tokenFor}).
 *
 * @module
 */
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError } from "../errors.ts";
import { getNamespaceEntry } from "../store/namespaces.ts";
import type { Page } from "../store/page.ts";
import {
  effectiveStatus,
  getTokenEntry,
  listTokenRecords,
  markRotatedOps,
  type PublicToken,
  publicToken,
  revokeTokenRecord,
  type TokenQuery,
  type TokenRecord,
} from "../store/tokens.ts";
import { getTenantEntry, tenantsAdministeredBy } from "../store/tenants.ts";
import { getHead } from "../store/versions.ts";
import { type AuthDeps, clock, type RequestContext } from "../auth/deps.ts";
import {
  type CreateTokenInput,
  parseExpiry,
  parseTokenName,
  type TokenSpec,
  validateCreateInput,
} from "../auth/issuance.ts";
import { type IssuedToken, type Minted, tryMint } from "../auth/mint.ts";
import {
  authorizeIssue,
  authorizeTokenAction,
  can,
  type TokenAction,
} from "../auth/permissions.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";

/** What {@linkcode createToken} and {@linkcode rotateToken} return. */
export type { IssuedToken };

/**
 * Reads the tenant and namespace a spec binds to (404 when missing) and,
 * for `namespace-client`, checks that the environment exists in the
 * current manifest (400). Returns the entries to re-check in the commit.
 */
async function bindingEntries(
  kv: Deno.Kv,
  spec: TokenSpec,
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const out: Deno.KvEntryMaybe<unknown>[] = [];
  if (spec.tenant_slug === null) return out;
  const tenant = await getTenantEntry(kv, spec.tenant_slug);
  if (tenant.value === null) {
    throw new NotFoundError("tenant_not_found", `No tenant ${spec.tenant_slug}`);
  }
  out.push(tenant);
  if (spec.namespace_slug === null) return out;
  const ns = await getNamespaceEntry(kv, spec.tenant_slug, spec.namespace_slug);
  if (ns.value === null) {
    throw new NotFoundError(
      "namespace_not_found",
      `No namespace ${spec.namespace_slug} in tenant ${spec.tenant_slug}`,
    );
  }
  out.push(ns);
  if (spec.environment_slug !== null) {
    const head = await getHead(kv, spec.tenant_slug, spec.namespace_slug);
    if (head?.environments[spec.environment_slug] === undefined) {
      throw new InvalidRequestError(
        `Cannot bind to environment ${spec.environment_slug}: it is not in the current manifest of ${spec.tenant_slug}/${spec.namespace_slug}`,
        { details: { field: "environment_slug" } },
      );
    }
  }
  return out;
}

/**
 * Creates a service token (`POST /api/v1/tokens`): validates the body
 * (400), checks the issuance rules (403), the binding's existence (404)
 * and the name's uniqueness in its scope (409), stores the digest, audits
 * `token.created`, and returns the secret once.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param input the request body
 * @param ctx the request
 * @returns the token metadata and its secret
 *
 * @example
 * ```ts
 * import { createToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const made = await createToken({ kv, key }, admin, { type: "superadmin", name: "ops" }, { requestId: "r1" });
 * if (!made.secret.startsWith("svc_admin_")) throw new Error();
 * kv.close();
 * ```
 */
export async function createToken(
  deps: AuthDeps,
  principal: Principal,
  input: CreateTokenInput,
  ctx: RequestContext,
): Promise<IssuedToken> {
  const now = clock(deps);
  const spec = validateCreateInput(input, now);
  await authorizeIssue(deps.kv, principal, spec);
  while (true) {
    const checks = await bindingEntries(deps.kv, spec);
    const minted = await tryMint(deps.kv, deps.key, spec, {
      createdBy: principalId(principal),
      now,
      actor: actorOf(principal, ctx.requestId),
      auditType: "token.created",
      extra: (op) => checks.forEach((e) => op.check(e)),
    });
    if (minted !== null) return issued(minted);
  }
}

function issued(m: Minted): IssuedToken {
  return { token: publicToken(m.record), secret: m.secret };
}

/**
 * Reads one token's metadata (`GET /api/v1/tokens/{id}`); 404
 * `token_not_found` (also for a token outside the caller's tenants), 403
 * without `token.read` ({@linkcode tokenFor}). The status shown is the
 * effective one (an active token past its expiry shows `expired`).
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param id the token id
 * @returns the metadata
 *
 * @example
 * ```ts
 * import { getToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const shown = await getToken({ kv, key }, admin, boot.token.id);
 * if (shown.name !== "bootstrap-1" || shown.status !== "active" || "digest" in shown) {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export async function getToken(
  deps: AuthDeps,
  principal: Principal,
  id: string,
): Promise<PublicToken> {
  const record = await tokenFor(deps, principal, "token.read", id);
  return publicToken({ ...record, status: effectiveStatus(record, clock(deps)) });
}

/** Types of the tokens that may act on other tokens. */
const MANAGING_TYPES: readonly TokenRecord["type"][] = ["superadmin", "tenant-admin"];

/**
 * The token `id` when the caller may do `action` on it, else the refusal,
 * decided so that the answer says nothing about tokens the caller may not
 * see: a namespace-bound token acting on any id but its own is refused
 * (403) before the lookup, so every id gets the same answer; an unknown id
 * is 404 `token_not_found`, and so, with the same message, is a token the
 * caller may not act on and that lies outside every tenant the caller may
 * read (another tenant's, a superadmin token). A token of a tenant the
 * caller reads but may not act on is a 403 with the reason.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param action what the caller wants to do
 * @param id the token id
 * @returns the token's record
 *
 * @example
 * ```ts
 * import { createToken, tokenFor } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const root = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * for (const slug of ["acme", "other"]) await createTenant(kv, { slug, created_by: "ops" });
 * const acme = await createToken({ kv, key }, root, { type: "tenant-admin", name: "a", tenant_slug: "acme" }, { requestId: "r1" });
 * const other = await createToken({ kv, key }, root, { type: "tenant-admin", name: "o", tenant_slug: "other" }, { requestId: "r1" });
 * const caller = { kind: "token" as const, token: { ...acme.token, digest: "" } };
 * const answer = async (id: string) => {
 *   try { await tokenFor({ kv, key }, caller, "token.read", id); return "ok"; }
 *   catch (e) { return (e as Error).message.replace(id, "<id>"); }
 * };
 * if (await answer(other.token.id) !== await answer("tok_01JQ0000000000000000000000")) throw new Error();
 * kv.close();
 * ```
 */
export async function tokenFor(
  deps: AuthDeps,
  principal: Principal,
  action: TokenAction,
  id: string,
): Promise<TokenRecord> {
  if (
    principal.kind === "token" && principal.token.id !== id &&
    !MANAGING_TYPES.includes(principal.token.type)
  ) {
    // Refused whatever the record: decided on a stand-in that differs from the caller only by id.
    await authorizeTokenAction(deps.kv, principal, action, { ...principal.token, id });
  }
  const record = (await getTokenEntry(deps.kv, id)).value;
  if (record === null) throw noSuchToken(id);
  try {
    await authorizeTokenAction(deps.kv, principal, action, record);
  } catch (err) {
    if (err instanceof ForbiddenError && !await inSight(deps.kv, principal, record)) {
      throw noSuchToken(id);
    }
    throw err;
  }
  return record;
}

/** The answer to a token id that names no token the caller may know of. */
function noSuchToken(id: string): NotFoundError {
  return new NotFoundError("token_not_found", `No token ${id}`);
}

/**
 * Whether the caller may know that a token exists: its own, or one bound
 * to a tenant the caller may read.
 */
async function inSight(kv: Deno.Kv, p: Principal, token: TokenRecord): Promise<boolean> {
  if (p.kind === "token" && p.token.id === token.id) return true;
  if (token.tenant_slug === null) return false;
  return await can(kv, p, "tenant.read", { tenant: token.tenant_slug });
}

/**
 * Query of {@linkcode listTokens}: the filters and pagination of
 * {@linkcode TokenQuery}; visibility comes from the caller's permissions.
 */
export type ListTokensQuery = Omit<TokenQuery, "visible">;

/**
 * Lists the tokens the caller may read (`GET /api/v1/tokens`), newest
 * first. Namespace-bound tokens cannot list (403). A tenant-admin token
 * lists its tenant; a human must name the tenant when they administer
 * several (400); a superadmin may list everything.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param query filters and pagination
 * @returns a page of metadata
 *
 * @example
 * ```ts
 * import { createToken, listTokens } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * await createToken({ kv, key }, admin, { type: "superadmin", name: "ops" }, { requestId: "r1" });
 * const page = await listTokens({ kv, key }, admin);
 * const names = page.items.map((t) => t.name).join(",");
 * if (names !== "ops,bootstrap-1" || page.next !== null) throw new Error(names);
 * kv.close();
 * ```
 */
export async function listTokens(
  deps: AuthDeps,
  principal: Principal,
  query: ListTokensQuery = {},
): Promise<Page<PublicToken>> {
  const q = { ...query };
  if (principal.kind === "token") {
    const t = principal.token;
    if (t.type !== "superadmin" && t.type !== "tenant-admin") {
      throw new ForbiddenError("A namespace-bound token cannot list tokens");
    }
    if (t.type === "tenant-admin") {
      if (q.tenant !== undefined && q.tenant !== t.tenant_slug) {
        throw new ForbiddenError(
          `Token ${t.id} is bound to tenant ${t.tenant_slug}, not ${q.tenant}`,
        );
      }
      q.tenant = t.tenant_slug!;
    }
  } else if (q.tenant === undefined) {
    const tenants = await tenantsAdministeredBy(deps.kv, principal.user_id);
    if (tenants.length > 1) {
      throw new InvalidRequestError("Name the tenant: you administer several", {
        details: { field: "tenant" },
      });
    }
    if (tenants.length === 0) {
      throw new ForbiddenError("Name the tenant whose tokens to list");
    }
    q.tenant = tenants[0]!;
  }
  // Checked once the caller's own tenant is filled in: a caller that sees
  // one tenant may filter by namespace without naming it.
  if (q.namespace !== undefined && q.tenant === undefined) {
    throw new InvalidRequestError("Cannot filter by namespace without tenant", {
      details: { field: "namespace" },
    });
  }
  const visible = async (record: TokenRecord) => {
    try {
      await authorizeTokenAction(deps.kv, principal, "token.read", record);
      return true;
    } catch (err) {
      if (err instanceof ForbiddenError) return false;
      throw err;
    }
  };
  const page = await listTokenRecords(deps.kv, { ...q, visible }, clock(deps));
  return { items: page.items.map(publicToken), next: page.next };
}

/**
 * Rotates a token (`POST /api/v1/tokens/{id}/rotate`): needs
 * `token.rotate` and permission to issue the replacement type. The
 * replacement inherits type, binding, scopes, allowed origins, description
 * and expiry policy (the same lifetime from now), unless `name` or
 * `expires_at` are given; the old token stays active, gets
 * `rotated_to_token_id`, and hands its name over. Audits `token.rotated`.
 * A token that is not active or was already rotated gives 409; unknown and
 * unseen ids are 404 as in {@linkcode tokenFor}.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param id the token to rotate
 * @param input optional `name` and `expires_at` (null: no expiry)
 * @param ctx the request
 * @returns the replacement's metadata and its secret
 *
 * @example
 * ```ts
 * import { rotateToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const next = await rotateToken({ kv, key }, admin, boot.token.id, {}, { requestId: "r1" });
 * if (next.token.name !== "bootstrap-1" || next.token.id === boot.token.id) throw new Error();
 * if (next.token.rotated_from_token_id !== boot.token.id || next.secret === boot.secret) {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export async function rotateToken(
  deps: AuthDeps,
  principal: Principal,
  id: string,
  input: { name?: string; expires_at?: string | null },
  ctx: RequestContext,
): Promise<IssuedToken> {
  const now = clock(deps);
  const first = await tokenFor(deps, principal, "token.rotate", id);
  const name = input.name === undefined ? first.name : parseTokenName(input.name);
  const expires_at = input.expires_at === undefined
    ? inheritedExpiry(first, now)
    : parseExpiry(input.expires_at, now);
  const spec: TokenSpec = {
    type: first.type,
    name,
    description: first.description,
    tenant_slug: first.tenant_slug,
    namespace_slug: first.namespace_slug,
    environment_slug: first.environment_slug,
    allowed_origins: [...first.allowed_origins],
    scopes: [...first.scopes],
    expires_at,
  };
  while (true) {
    const old = await getTokenEntry(deps.kv, id);
    if (old.value === null) throw noSuchToken(id);
    const status = effectiveStatus(old.value, now);
    if (status !== "active") {
      throw new ConflictError(`Cannot rotate token ${id}: it is ${status}`);
    }
    if (old.value.rotated_to_token_id !== null) {
      throw new ConflictError(
        `Cannot rotate token ${id}: it was already rotated to ${old.value.rotated_to_token_id}`,
      );
    }
    const checks = await bindingEntries(deps.kv, spec);
    const current = old as Deno.KvEntry<TokenRecord>;
    const minted = await tryMint(deps.kv, deps.key, spec, {
      createdBy: principalId(principal),
      now,
      actor: actorOf(principal, ctx.requestId),
      auditType: "token.rotated",
      rotatedFrom: id,
      extra: (op, record) => {
        checks.forEach((e) => op.check(e));
        markRotatedOps(op, current, record.id);
      },
    });
    if (minted !== null) {
      deps.credentials?.changed(); // the old token's record changed
      return issued(minted);
    }
  }
}

/** Same lifetime as the old token, counted from now; null stays null. */
function inheritedExpiry(old: TokenRecord, now: Date): string | null {
  if (old.expires_at === null) return null;
  const lifetime = Date.parse(old.expires_at) - Date.parse(old.created_at);
  return new Date(now.getTime() + lifetime).toISOString();
}

/**
 * Revokes a token at once (`DELETE /api/v1/tokens/{id}`): needs
 * `token.revoke` on it, or to be the token itself (unknown and unseen ids
 * are 404 as in {@linkcode tokenFor}). Sets `revoked_at` and `revoked_by`
 * and audits `token.revoked`. Revoking a token that is no longer active
 * changes nothing and returns it as it is.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param id the token to revoke
 * @param ctx the request
 * @returns the token's metadata after revocation
 *
 * @example
 * ```ts
 * import { revokeToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const gone = await revokeToken({ kv, key }, admin, boot.token.id, { requestId: "r1" });
 * if (gone.status !== "revoked" || gone.revoked_by !== boot.token.id) throw new Error();
 * kv.close();
 * ```
 */
export async function revokeToken(
  deps: AuthDeps,
  principal: Principal,
  id: string,
  ctx: RequestContext,
): Promise<PublicToken> {
  await tokenFor(deps, principal, "token.revoke", id);
  const r = await revokeTokenRecord(
    deps.kv,
    id,
    actorOf(principal, ctx.requestId),
    clock(deps),
  );
  if (r.changed) deps.credentials?.changed(); // refused from the very next request
  return publicToken(r.after);
}
