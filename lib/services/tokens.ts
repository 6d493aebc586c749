/**
 * The service-token operations behind `/api/v1/tokens` and the console's
 * token pages (`/ui/t/:tenant/tokens`): each takes the deps, the
 * authenticated principal and the input, checks permission
 * (lib/auth/permissions.ts), reads and changes the store, writes the audit
 * entry, tells the runtime what changed, and throws typed errors (400,
 * 403, 404 `token_not_found`, 409). The HTTP layer and the console only
 * map requests and render what these return.
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
import { getNamespaceEntry, listNamespaces } from "../store/namespaces.ts";
import type { Page } from "../store/page.ts";
import {
  effectiveStatus,
  getTokenEntry,
  listTokenRecords,
  markRotatedOps,
  type PublicToken,
  publicToken,
  revokeTokenRecord,
  TOKEN_TYPES,
  type TokenQuery,
  type TokenRecord,
  type TokenStatus,
  type TokenType,
} from "../store/tokens.ts";
import { findTenant, getTenantEntry, tenantsAdministeredBy } from "../store/tenants.ts";
import { getHead } from "../store/versions.ts";
import { type AuthDeps, clock, type RequestContext } from "../auth/deps.ts";
import {
  type CreateTokenInput,
  parseExpiry,
  parseTokenName,
  type TokenSpec,
  validateCreateInput,
} from "../auth/issuance.ts";
import { type IssuedToken as IssuedSecret, type Minted, tryMint } from "../auth/mint.ts";
import {
  authorize,
  authorizeIssue,
  authorizeTokenAction,
  can,
  type TokenAction,
} from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import type { TokenWarning } from "../protocol/responses.ts";
import { authDepsOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

/** Something to know about a token just issued ({@linkcode issuanceWarnings}). */
export type { TokenWarning };

/**
 * What {@linkcode createToken} and {@linkcode rotateToken} return: the
 * token's metadata, its one-time secret, and `warnings` when there is
 * something to know about it.
 */
export interface IssuedToken extends IssuedSecret {
  /** Present, and not empty, when the token will not work as it may seem to. */
  warnings?: TokenWarning[];
}

/** A token as every operation shows it: its record without the digest. */
export type { PublicToken };

/** The token types, in order (what a `type` filter may name). */
export { TOKEN_TYPES };

/**
 * What the token operations are given: the server's {@linkcode ServiceDeps}
 * (its runtime is told of each change: the credential cache of a rotated
 * or revoked token, the open streams of a revoked one), or bare auth deps
 * (library use, tests), with nothing to tell.
 */
export type TokenDeps = ServiceDeps | AuthDeps;

/** The auth/ deps of a call: with the runtime's caches when the server made it. */
function authOf(deps: TokenDeps): AuthDeps {
  return "runtime" in deps ? authDepsOf(deps) : deps;
}

/**
 * A token named by its id, or by its id within a tenant, as the console's
 * pages of a tenant name it: then a caller who may not read the tenant is
 * refused (403) whatever the id, and a token of any other tenant answers
 * as an unknown id (404 `token_not_found`).
 */
export type TokenRef = string | { tenant: string; id: string };

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
  deps: TokenDeps,
  principal: Principal,
  input: CreateTokenInput,
  ctx: RequestContext,
): Promise<IssuedToken> {
  const now = clock(deps);
  const spec = validateCreateInput(input, now);
  await authorizeIssue(deps.kv, principal, spec, { memo: memoOf(deps) });
  while (true) {
    const checks = await bindingEntries(deps.kv, spec);
    const minted = await tryMint(deps.kv, deps.key, spec, {
      createdBy: principalId(principal),
      now,
      actor: actorOf(principal, ctx.requestId),
      auditType: "token.created",
      extra: (op) => checks.forEach((e) => op.check(e)),
    });
    if (minted !== null) return await issued(deps.kv, minted);
  }
}

async function issued(kv: Deno.Kv, m: Minted): Promise<IssuedToken> {
  const token = publicToken(m.record);
  const warnings = await issuanceWarnings(kv, token);
  return { token, secret: m.secret, ...(warnings.length === 0 ? {} : { warnings }) };
}

/**
 * What to tell whoever issues `token`: a `namespace-client` token evaluates
 * only while its environment is public (`public_evaluate = true` in the
 * namespace's current manifest), so one bound to an environment that is not
 * gets `environment_not_public`: it is issued, and refused (403) until the
 * environment is made public. Other tokens get no warning.
 *
 * @param kv the store
 * @param token the token just issued
 * @returns the warnings, often none
 *
 * @example
 * ```ts
 * import { issuanceWarnings } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const token = {
 *   type: "namespace-client" as const, tenant_slug: "acme", namespace_slug: "checkout",
 *   environment_slug: "production",
 * };
 * // no manifest, so no public environment
 * const [w] = await issuanceWarnings(kv, token);
 * if (w?.code !== "environment_not_public") throw new Error(JSON.stringify(w));
 * if (!w.message.startsWith("Environment production of acme/checkout is not public")) {
 *   throw new Error(w.message);
 * }
 * const read = { ...token, type: "namespace-read" as const, environment_slug: null };
 * if ((await issuanceWarnings(kv, read)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function issuanceWarnings(
  kv: Deno.Kv,
  token: Pick<PublicToken, "type" | "tenant_slug" | "namespace_slug" | "environment_slug">,
): Promise<TokenWarning[]> {
  const { type, tenant_slug: tenant, namespace_slug: ns, environment_slug: env } = token;
  if (type !== "namespace-client" || tenant === null || ns === null || env === null) return [];
  const head = await getHead(kv, tenant, ns);
  if (head?.environments[env]?.public_evaluate === true) return [];
  return [{
    code: "environment_not_public",
    message: `Environment ${env} of ${tenant}/${ns} is not public: this namespace-client token ` +
      `gets 403 until namespace.toml sets public_evaluate = true for ${env}`,
  }];
}

/**
 * Reads one token's metadata (`GET /api/v1/tokens/{id}`); 404
 * `token_not_found` (also for a token outside the caller's tenants), 403
 * without `token.read` ({@linkcode tokenFor}). The status shown is the
 * effective one (an active token past its expiry shows `expired`). Named
 * within a tenant ({@linkcode TokenRef}), it needs `tenant.read` there
 * first, and a token of another tenant is 404 too.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param ref the token id, or the tenant and the id
 * @returns the metadata
 *
 * @example
 * ```ts
 * import { getToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const shown = await getToken({ kv, key }, admin, boot.token.id);
 * if (shown.name !== "bootstrap-1" || shown.status !== "active" || "digest" in shown) {
 *   throw new Error();
 * }
 * // the superadmin token belongs to no tenant: not found in acme
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const inAcme = await getToken({ kv, key }, admin, { tenant: "acme", id: boot.token.id })
 *   .catch((e: Error) => e.message);
 * if (inAcme !== `No token ${boot.token.id} in tenant acme`) throw new Error(String(inAcme));
 * kv.close();
 * ```
 */
export async function getToken(
  deps: TokenDeps,
  principal: Principal,
  ref: TokenRef,
): Promise<PublicToken> {
  if (typeof ref !== "string") return await tokenInTenant(deps, principal, ref);
  const record = await tokenFor(deps, principal, "token.read", ref);
  return publicToken({ ...record, status: effectiveStatus(record, clock(deps)) });
}

/**
 * The token `ref.id` read as the caller, in tenant `ref.tenant`: a caller
 * who may not read the tenant is refused (403) whatever the id, as the
 * tenant's list is; a token of the tenant they may not read is 403
 * ({@linkcode getToken}); an unknown id and a token of any other tenant
 * get the same 404.
 */
async function tokenInTenant(
  deps: TokenDeps,
  principal: Principal,
  ref: { tenant: string; id: string },
): Promise<PublicToken> {
  const { tenant, id } = ref;
  await authorize(deps.kv, principal, "tenant.read", { tenant }, { memo: memoOf(deps) });
  const token = await getToken(deps, principal, id).catch((err) => {
    if (err instanceof NotFoundError) return null;
    throw err;
  });
  if (token === null || token.tenant_slug !== tenant) {
    throw new NotFoundError("token_not_found", `No token ${id} in tenant ${tenant}`);
  }
  return token;
}

/** The id of a {@linkcode TokenRef}, once a tenant's token is found there as the caller. */
async function idOf(deps: TokenDeps, principal: Principal, ref: TokenRef): Promise<string> {
  return typeof ref === "string" ? ref : (await tokenInTenant(deps, principal, ref)).id;
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
    await authorizeTokenAction(deps.kv, principal, action, { ...principal.token, id }, {
      memo: memoOf(deps),
    });
  }
  const record = (await getTokenEntry(deps.kv, id)).value;
  if (record === null) throw noSuchToken(id);
  try {
    await authorizeTokenAction(deps.kv, principal, action, record, { memo: memoOf(deps) });
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
  deps: TokenDeps,
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
      await authorizeTokenAction(deps.kv, principal, "token.read", record, { memo: memoOf(deps) });
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
 * @param deps store, key, clock (and the runtime, told that the old token changed)
 * @param principal the caller
 * @param ref the token to rotate: its id, or the tenant and the id ({@linkcode TokenRef})
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
  deps: TokenDeps,
  principal: Principal,
  ref: TokenRef,
  input: { name?: string; expires_at?: string | null },
  ctx: RequestContext,
): Promise<IssuedToken> {
  const now = clock(deps);
  const id = await idOf(deps, principal, ref);
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
      authOf(deps).credentials?.changed(); // the old token's record changed
      return await issued(deps.kv, minted);
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
 * changes nothing and returns it as it is. Given the runtime, it is told
 * at once: the credential cache refuses the token from the very next
 * request, and this process's streams opened with it end before this
 * returns.
 *
 * @param deps store, key, clock (and the runtime)
 * @param principal the caller
 * @param ref the token to revoke: its id, or the tenant and the id ({@linkcode TokenRef})
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
  deps: TokenDeps,
  principal: Principal,
  ref: TokenRef,
  ctx: RequestContext,
): Promise<PublicToken> {
  const id = await idOf(deps, principal, ref);
  await tokenFor(deps, principal, "token.revoke", id);
  const r = await revokeTokenRecord(
    deps.kv,
    id,
    actorOf(principal, ctx.requestId),
    clock(deps),
  );
  if (r.changed) authOf(deps).credentials?.changed(); // refused from the very next request
  if ("runtime" in deps) await deps.runtime.guard.recheck(); // this process's streams of it end now
  return publicToken(r.after);
}

/** Whether a check passes (false on 403; other errors still throw). */
async function allowed(check: () => Promise<void>): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (err) {
    if (err instanceof ForbiddenError) return false;
    throw err;
  }
}

/** A namespace the caller may issue tokens for, with its declared environments. */
export interface IssuableNamespace {
  /** The namespace's slug. */
  slug: string;
  /** The environments its current manifest declares. */
  environments: string[];
}

/** What a caller may issue in a tenant: what the creation form offers. */
export interface TokenFormChoices {
  /** The token types (the namespace types only when some namespace is issuable). */
  types: TokenType[];
  /** The namespaces the caller may issue namespace tokens for. */
  namespaces: IssuableNamespace[];
}

/**
 * The types and namespaces the caller may issue tokens for in `tenant`
 * (the console's creation form): the namespaces where a namespace token
 * may be issued, each with the environments of its current manifest (for
 * `namespace-client`), the three namespace types when there is one, and
 * `tenant-admin` when the caller may issue it. Refuses nothing: a caller
 * who may issue nothing gets empty lists.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @returns the types and namespaces
 *
 * @example
 * ```ts
 * import { tokenFormChoices } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * import { createNamespace } from "../store/namespaces.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const none = await tokenFormChoices({ kv, key }, admin, "acme");
 * if (none.types.join() !== "tenant-admin" || none.namespaces.length !== 0) throw new Error();
 * await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "ops" });
 * const some = await tokenFormChoices({ kv, key }, admin, "acme");
 * if (some.types.length !== 4 || some.namespaces[0]?.slug !== "web") throw new Error();
 * kv.close();
 * ```
 */
export async function tokenFormChoices(
  deps: TokenDeps,
  principal: Principal,
  tenant: string,
): Promise<TokenFormChoices> {
  const { kv } = deps;
  const types: TokenType[] = [];
  const namespaces: IssuableNamespace[] = [];
  for (const ns of await listNamespaces(kv, tenant)) {
    const b = { type: "namespace-read" as const, tenant_slug: tenant, namespace_slug: ns.slug };
    if (!await allowed(() => authorizeIssue(kv, principal, b, { memo: memoOf(deps) }))) continue;
    const head = await getHead(kv, tenant, ns.slug);
    namespaces.push({ slug: ns.slug, environments: Object.keys(head?.environments ?? {}) });
  }
  if (namespaces.length > 0) types.push("namespace-read", "namespace-write", "namespace-client");
  const admin = { type: "tenant-admin" as const, tenant_slug: tenant, namespace_slug: null };
  if (await allowed(() => authorizeIssue(kv, principal, admin, { memo: memoOf(deps) }))) {
    types.push("tenant-admin");
  }
  return { types, namespaces };
}

/** The filters of a tenant's token list ({@linkcode tenantTokens}). */
export interface TenantTokenFilter {
  /** Effective status. */
  status: TokenStatus;
  /** Only this type. */
  type?: TokenType;
  /** Only tokens of this namespace; one the tenant does not have is no filter. */
  namespace?: string;
  /** Page size. */
  limit: number;
  /** Cursor: the `next` of the previous page. */
  after?: string;
}

/** A page of a tenant's tokens, with what the list page offers around it. */
export interface TenantTokens {
  /** Every namespace of the tenant (the namespace filter's choices). */
  namespaces: string[];
  /** The filters applied (without a namespace the tenant does not have). */
  filter: TenantTokenFilter;
  /** The tokens the caller may read, newest first. */
  page: Page<PublicToken>;
  /** What the caller may issue here ({@linkcode tokenFormChoices}). */
  choices: TokenFormChoices;
}

/**
 * A tenant's tokens as its console page lists them: needs `tenant.read`
 * (403) and the tenant (404 `tenant_not_found`), then lists the tokens
 * the caller may read as {@linkcode listTokens} does, with the tenant's
 * namespaces and what the caller may issue.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param filter status, type, namespace and paging
 * @returns the page, the namespaces, the filter applied and the choices
 *
 * @example
 * ```ts
 * import { createToken, tenantTokens } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * await createToken({ kv, key }, admin, { type: "tenant-admin", name: "ops", tenant_slug: "acme" }, { requestId: "r1" });
 * const list = await tenantTokens({ kv, key }, admin, "acme", { status: "active", namespace: "nope", limit: 25 });
 * if (list.page.items[0]?.name !== "ops" || list.filter.namespace !== undefined) throw new Error();
 * kv.close();
 * ```
 */
export async function tenantTokens(
  deps: TokenDeps,
  principal: Principal,
  tenant: string,
  filter: TenantTokenFilter,
): Promise<TenantTokens> {
  await authorize(deps.kv, principal, "tenant.read", { tenant }, { memo: memoOf(deps) });
  if (await findTenant(deps.kv, tenant) === null) {
    throw new NotFoundError("tenant_not_found", `No tenant ${tenant}`);
  }
  const namespaces = (await listNamespaces(deps.kv, tenant)).map((n) => n.slug);
  const { namespace, ...rest } = filter;
  const applied: TenantTokenFilter = namespace !== undefined && namespaces.includes(namespace)
    ? { ...rest, namespace }
    : rest;
  const page = await listTokens(deps, principal, { tenant, ...applied });
  const choices = await tokenFormChoices(deps, principal, tenant);
  return { namespaces, filter: applied, page, choices };
}

/**
 * Creates a token of a tenant from its console page: refused (403) to a
 * caller who may issue nothing there ({@linkcode tokenFormChoices})
 * before the input is read, then as {@linkcode createToken}.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param input the body, or the function reading it once the caller may issue
 * @param ctx the request
 * @returns the token metadata and its secret
 *
 * @example
 * ```ts
 * import { issueTenantToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const input = () => ({ type: "tenant-admin" as const, name: "ops", tenant_slug: "acme" });
 * const made = await issueTenantToken({ kv, key }, admin, "acme", input, { requestId: "r1" });
 * if (made.token.tenant_slug !== "acme" || !made.secret.startsWith("svc_tenant_")) throw new Error();
 * kv.close();
 * ```
 */
export async function issueTenantToken(
  deps: TokenDeps,
  principal: Principal,
  tenant: string,
  input: Deferred<CreateTokenInput>,
  ctx: RequestContext,
): Promise<IssuedToken> {
  const choices = await tokenFormChoices(deps, principal, tenant);
  if (choices.types.length === 0) {
    throw new ForbiddenError(`Not allowed to issue tokens in ${tenant}`);
  }
  return await createToken(deps, principal, await resolveInput(input), ctx);
}

/** One token of a tenant as its console page shows it. */
export interface TenantToken {
  /** The token's metadata (its effective status). */
  token: PublicToken;
  /** What the page offers: rotating an active token not yet rotated, revoking an active one, each when the caller may. */
  may: { rotate: boolean; revoke: boolean };
}

/**
 * One token of a tenant as its console page shows it: read as
 * {@linkcode getToken} reads a {@linkcode TokenRef} within a tenant (403
 * without `tenant.read`, 404 outside the tenant), with what the caller
 * may do to it. With `needs`, the caller must also be allowed that
 * action on it (403), whatever its state: the page that refuses an
 * unconfirmed rotation or revocation is only for who may make it.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param tenant tenant slug
 * @param id token id
 * @param needs the action the caller must be allowed, if any
 * @returns the token and what the caller may do
 *
 * @example
 * ```ts
 * import { createToken, revokeToken, tenantToken } from "./tokens.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const made = await createToken({ kv, key }, admin, { type: "tenant-admin", name: "ops", tenant_slug: "acme" }, { requestId: "r1" });
 * const shown = await tenantToken({ kv, key }, admin, "acme", made.token.id);
 * if (!shown.may.rotate || !shown.may.revoke) throw new Error();
 * await revokeToken({ kv, key }, admin, { tenant: "acme", id: made.token.id }, { requestId: "r2" });
 * const revoked = await tenantToken({ kv, key }, admin, "acme", made.token.id, "token.revoke");
 * if (revoked.token.status !== "revoked" || revoked.may.rotate || revoked.may.revoke) throw new Error();
 * kv.close();
 * ```
 */
export async function tenantToken(
  deps: TokenDeps,
  principal: Principal,
  tenant: string,
  id: string,
  needs?: "token.rotate" | "token.revoke",
): Promise<TenantToken> {
  const token = await tokenInTenant(deps, principal, { tenant, id });
  const record: TokenRecord = { ...token, digest: "" };
  if (needs !== undefined) {
    await authorizeTokenAction(deps.kv, principal, needs, record, { memo: memoOf(deps) });
  }
  const may = (action: TokenAction) =>
    allowed(() => authorizeTokenAction(deps.kv, principal, action, record, { memo: memoOf(deps) }));
  const active = token.status === "active";
  const rotate = active && token.rotated_to_token_id === null && await may("token.rotate");
  const revoke = active && await may("token.revoke");
  return { token, may: { rotate, revoke } };
}
