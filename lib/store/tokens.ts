/**
 * Service-token records and their indexes (the token record of
 * docs/api.md, "Tokens"). This module stores and transitions records; who may do what is
 * decided in lib/auth/. Records live at `["token", id]`; the indexes
 * `token_by_digest`, `token_by_tenant`, `token_by_namespace` and
 * `token_by_name` hold only the id.
 *
 * The name index holds a name for one token of a scope at a time: a revoked
 * or expired token frees its name, and a rotation that keeps the name moves
 * the index to the replacement (the old token, still active, keeps the name
 * in its record).
 *
 * @module
 */
import { bumpCredentialEpoch } from "./credential_epoch.ts";
import { NotFoundError } from "../errors.ts";
import { addAudit, type AuditActor, type AuditEntry, tokenAuditEntry } from "./audit.ts";
import {
  bootstrapCountKey,
  sessionKey,
  tokenByDigestKey,
  tokenByNameKey,
  tokenByNamespaceKey,
  tokenByNamespacePrefix,
  tokenByTenantKey,
  tokenByTenantPrefix,
  tokenKey,
  tokenPrefix,
} from "./keys.ts";
import { checkLength, checkOrigins, MAX_DESCRIPTION_LENGTH } from "../protocol/limits.ts";
import { getManyChunked } from "./kv_batch.ts";
import type { TokenQuery as WireTokenQuery } from "../protocol/requests.ts";
import { type Page, pageLimit } from "./page.ts";

/** The service-token types of schema 1.0. */
export const TOKEN_TYPES = [
  "namespace-read",
  "namespace-write",
  "namespace-client",
  "tenant-admin",
  "superadmin",
] as const;

/** A service-token type. */
export type TokenType = typeof TOKEN_TYPES[number];

/** Lifecycle state of a token. */
export type TokenStatus = "active" | "revoked" | "expired";

/** The stored token record: every field of the spec plus the digest. */
export interface TokenRecord {
  /** `tok_<ulid>`. */
  id: string;
  type: TokenType;
  /** Unique within the bound scope. */
  name: string;
  description: string | null;
  /** Null only for superadmin. */
  tenant_slug: string | null;
  /** Set for namespace tokens. */
  namespace_slug: string | null;
  /** Set for namespace-client only. */
  environment_slug: string | null;
  /** Origin allowlist; `[]` except for namespace-client. */
  allowed_origins: string[];
  /** Reserved; always `[]` in schema 1.0. */
  scopes: string[];
  /** First 14 characters of the token. */
  prefix: string;
  /** Hex HMAC-SHA-256 of the full token under the server key (not secret on its own). */
  digest: string;
  /** User id or token id of the creator. */
  created_by: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip_hash: string | null;
  status: TokenStatus;
  revoked_at: string | null;
  revoked_by: string | null;
  rotated_from_token_id: string | null;
  rotated_to_token_id: string | null;
}

/** Token metadata as shown to callers: the record without its digest. */
export type PublicToken = Omit<TokenRecord, "digest">;

/**
 * Strips the digest from a record, for responses.
 *
 * @param t a token record
 * @returns its public metadata
 *
 * @example
 * ```ts
 * import { publicToken, type TokenRecord } from "./tokens.ts";
 * const record = { id: "tok_1", prefix: "svc_read_AbCdE", digest: "9f2c" } as TokenRecord;
 * const shown = publicToken(record);
 * if ("digest" in shown || shown.prefix !== "svc_read_AbCdE") throw new Error();
 * ```
 */
export function publicToken(t: TokenRecord): PublicToken {
  const { digest: _digest, ...rest } = t;
  return rest;
}

/**
 * The status a token has at `now`: an active token past `expires_at` is
 * expired even before the change is persisted.
 *
 * @param t a token record
 * @param now the current time
 * @returns the effective status
 *
 * @example
 * ```ts
 * import { effectiveStatus, type TokenRecord } from "./tokens.ts";
 * const past = { status: "active", expires_at: "2000-01-01T00:00:00.000Z" } as TokenRecord;
 * if (effectiveStatus(past, new Date()) !== "expired") throw new Error();
 * ```
 */
export function effectiveStatus(t: TokenRecord, now: Date): TokenStatus {
  if (
    t.status === "active" && t.expires_at !== null &&
    Date.parse(t.expires_at) <= now.getTime()
  ) {
    return "expired";
  }
  return t.status;
}

/**
 * Adds the writes that insert a new token (record, digest, tenant,
 * namespace and name indexes) to an atomic operation, with checks that the
 * id, digest and name are free. The commit fails (`ok: false`) when the
 * name is taken. Throws 400 `invalid_request` when the description or
 * `allowed_origins` exceed the limits of lib/protocol/limits.ts.
 *
 * @param op the atomic operation
 * @param t the new record
 * @param nameHolder the versionstamp of the name index entry the new token
 *   takes over (rotation keeping the name), or null for a free name
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { getNameHolder, insertTokenOps, type TokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", type: "tenant-admin", name: "ci", description: null, tenant_slug: "acme",
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], digest: "9f2c",
 * } as unknown as TokenRecord;
 * if (!(await insertTokenOps(kv.atomic(), t).commit()).ok) throw new Error();
 * if ((await getNameHolder(kv, "acme", null, "ci")).value !== "tok_1") throw new Error();
 * // a second token named ci in acme: the commit fails
 * const twin = { ...t, id: "tok_2", digest: "77ab" };
 * if ((await insertTokenOps(kv.atomic(), twin).commit()).ok) throw new Error("name taken");
 * kv.close();
 * ```
 */
export function insertTokenOps(
  op: Deno.AtomicOperation,
  t: TokenRecord,
  nameHolder: string | null = null,
): Deno.AtomicOperation {
  checkLength("description", t.description, MAX_DESCRIPTION_LENGTH);
  checkOrigins(t.allowed_origins);
  const nameKey = tokenByNameKey(t.tenant_slug, t.namespace_slug, t.name);
  op.check({ key: tokenKey(t.id), versionstamp: null })
    .check({ key: tokenByDigestKey(t.digest), versionstamp: null })
    .check({ key: nameKey, versionstamp: nameHolder })
    .set(tokenKey(t.id), t)
    .set(tokenByDigestKey(t.digest), t.id)
    .set(nameKey, t.id);
  if (t.tenant_slug !== null) {
    op.set(tokenByTenantKey(t.tenant_slug, t.id), t.id);
    if (t.namespace_slug !== null) {
      op.set(tokenByNamespaceKey(t.tenant_slug, t.namespace_slug, t.id), t.id);
    }
  }
  return op;
}

/**
 * A new atomic operation that inserts a token (see {@linkcode insertTokenOps}),
 * for the caller to add its own writes to and commit.
 *
 * @param kv the store
 * @param t the record
 * @param nameHolder the versionstamp of the name index entry read before (null: none)
 * @returns the operation
 *
 * @example
 * ```ts
 * import { beginTokenInsert, getTokenEntry, type TokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", name: "ci", digest: "d1", type: "superadmin", tenant_slug: null,
 *   namespace_slug: null, description: null, allowed_origins: [],
 * } as unknown as TokenRecord;
 * if (!(await beginTokenInsert(kv, t, null).commit()).ok) throw new Error();
 * if ((await getTokenEntry(kv, "tok_1")).value?.name !== "ci") throw new Error();
 * kv.close();
 * ```
 */
export function beginTokenInsert(
  kv: Deno.Kv,
  t: TokenRecord,
  nameHolder: string | null,
): Deno.AtomicOperation {
  return insertTokenOps(kv.atomic(), t, nameHolder);
}

/**
 * Reads the records of several credentials at once (service tokens
 * `tok_…` and sessions `ssn_…`), in `getMany` batches one after another
 * ({@linkcode getManyChunked}): what a stream guard re-checks.
 *
 * @param kv the store
 * @param ids token and session ids
 * @returns one value per id, in order; null for a record that is gone
 *
 * @example
 * ```ts
 * import { readCredentialRecords } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const [a, b] = await readCredentialRecords(kv, ["tok_1", "ssn_1"]);
 * if (a !== null || b !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function readCredentialRecords(
  kv: Deno.Kv,
  ids: readonly string[],
): Promise<unknown[]> {
  const keys = ids.map((id) => id.startsWith("ssn_") ? sessionKey(id) : tokenKey(id));
  return (await getManyChunked(kv, keys)).map((e) => e.value);
}

/**
 * Reads the name index entry of a scope: which token holds a name.
 *
 * @param kv the store
 * @param tenant bound tenant or null
 * @param namespace bound namespace or null
 * @param name the token name
 * @returns the entry (value: token id, or null when the name is free)
 *
 * @example
 * ```ts
 * import { getNameHolder } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const e = await getNameHolder(kv, "acme", null, "ci");
 * if (e.value !== null) throw new Error();
 * kv.close();
 * ```
 */
export function getNameHolder(
  kv: Deno.Kv,
  tenant: string | null,
  namespace: string | null,
  name: string,
): Promise<Deno.KvEntryMaybe<string>> {
  return kv.get<string>(tokenByNameKey(tenant, namespace, name));
}

/**
 * Reads a token record by id.
 *
 * @param kv the store
 * @param id the token id
 * @returns the entry (value null when unknown)
 *
 * @example
 * ```ts
 * import { getTokenEntry } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await getTokenEntry(kv, "tok_x")).value !== null) throw new Error();
 * kv.close();
 * ```
 */
export function getTokenEntry(
  kv: Deno.Kv,
  id: string,
): Promise<Deno.KvEntryMaybe<TokenRecord>> {
  return kv.get<TokenRecord>(tokenKey(id));
}

/**
 * Reads a token record by id, or throws 404 `token_not_found`.
 *
 * @param kv the store
 * @param id the token id
 * @returns the record
 *
 * @example
 * ```ts
 * import { getTokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getTokenRecord(kv, "tok_x"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "token_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getTokenRecord(
  kv: Deno.Kv,
  id: string,
): Promise<TokenRecord> {
  const entry = await getTokenEntry(kv, id);
  if (entry.value === null) {
    throw new NotFoundError("token_not_found", `No token ${id}`);
  }
  return entry.value;
}

/**
 * The id of the token whose digest is `digest` (the digest index), or null.
 *
 * @param kv the store
 * @param digest hex HMAC of a presented token
 * @returns the token id, or null when no token has that digest
 *
 * @example
 * ```ts
 * import { findTokenIdByDigest } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findTokenIdByDigest(kv, "00") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findTokenIdByDigest(kv: Deno.Kv, digest: string): Promise<string | null> {
  return (await kv.get<string>(tokenByDigestKey(digest))).value;
}

/**
 * Finds the token whose digest is `digest`, reading the digest index and
 * the record (a server's runtime caches both: lib/auth/credential_cache.ts).
 *
 * @param kv the store
 * @param digest hex HMAC of the presented token
 * @returns the record entry, or null when no token has that digest
 *
 * @example
 * ```ts
 * import { findTokenByDigest } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findTokenByDigest(kv, "00") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findTokenByDigest(
  kv: Deno.Kv,
  digest: string,
): Promise<Deno.KvEntry<TokenRecord> | null> {
  const id = await findTokenIdByDigest(kv, digest);
  if (id === null) return null;
  const entry = await getTokenEntry(kv, id);
  return entry.value === null ? null : entry;
}

/**
 * Filters and pagination of {@linkcode listTokenRecords}: the query of
 * `GET /api/v1/tokens` (lib/protocol/requests.ts) and a permission filter.
 */
export interface TokenQuery extends WireTokenQuery {
  /** Extra filter applied before counting (permission checks). */
  visible?: (t: TokenRecord) => boolean | Promise<boolean>;
}

/**
 * Lists token records newest first. Status filtering uses the effective
 * status at `now` (an active token past its expiry is listed as expired,
 * and its returned record says so).
 *
 * @param kv the store
 * @param query filters and pagination
 * @param now the current time
 * @returns a page of records
 *
 * @example
 * ```ts
 * import { listTokenRecords } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const page = await listTokenRecords(kv, { tenant: "acme" }, new Date());
 * if (page.items.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listTokenRecords(
  kv: Deno.Kv,
  query: TokenQuery,
  now: Date,
): Promise<Page<TokenRecord>> {
  const limit = pageLimit(query.limit);
  const status = query.status ?? "active";
  const prefix = query.tenant === undefined
    ? tokenPrefix()
    : query.namespace === undefined
    ? tokenByTenantPrefix(query.tenant)
    : tokenByNamespacePrefix(query.tenant, query.namespace);
  const selector: Deno.KvListSelector = query.after === undefined
    ? { prefix }
    : { prefix, end: [...prefix, query.after] };
  const items: TokenRecord[] = [];
  for await (const entry of kv.list<unknown>(selector, { reverse: true })) {
    const record = query.tenant === undefined
      ? entry.value as TokenRecord
      : (await getTokenEntry(kv, entry.value as string)).value;
    if (record === null) continue;
    const shown = { ...record, status: effectiveStatus(record, now) };
    if (shown.status !== status) continue;
    if (query.type !== undefined && shown.type !== query.type) continue;
    if (query.visible !== undefined && !(await query.visible(shown))) continue;
    if (items.length === limit) {
      return { items, next: items[items.length - 1]!.id };
    }
    items.push(shown);
  }
  return { items, next: null };
}

/** What {@linkcode transitionToken} did. */
export interface Transition {
  /** The record before. */
  before: TokenRecord;
  /** The record after (equal to `before` when nothing changed). */
  after: TokenRecord;
  /** Whether a change was committed. */
  changed: boolean;
}

/**
 * Changes a token record with check-and-set, retrying on contention.
 * `change` gets the current record and returns the next one, or null to
 * leave it alone; `extra` adds writes (audit entries) to the same atomic
 * commit. When the status leaves `active`, the token frees its name.
 *
 * @param kv the store
 * @param id the token id
 * @param change computes the next record from the current one
 * @param extra adds more writes to the commit
 * @returns before/after and whether anything changed
 *
 * @example
 * ```ts
 * import { transitionToken } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await transitionToken(kv, "tok_x", () => null); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "token_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function transitionToken(
  kv: Deno.Kv,
  id: string,
  change: (current: TokenRecord) => TokenRecord | null,
  extra: (
    op: Deno.AtomicOperation,
    next: TokenRecord,
    before: TokenRecord,
  ) => void = () => {},
): Promise<Transition> {
  while (true) {
    const entry = await getTokenEntry(kv, id);
    if (entry.value === null) {
      throw new NotFoundError("token_not_found", `No token ${id}`);
    }
    const before = entry.value;
    const next = change(before);
    if (next === null) return { before, after: before, changed: false };
    const op = bumpCredentialEpoch(kv.atomic().check(entry).set(tokenKey(id), next));
    if (before.status === "active" && next.status !== "active") {
      const holder = await getNameHolder(
        kv,
        before.tenant_slug,
        before.namespace_slug,
        before.name,
      );
      if (holder.value === id) op.check(holder).delete(holder.key);
    }
    extra(op, next, before);
    if ((await op.commit()).ok) return { before, after: next, changed: true };
  }
}

/**
 * Revokes one active token: status `revoked`, `revoked_at`, `revoked_by`,
 * and a `token.revoked` audit entry in the same commit. A token that is
 * already revoked or expired is left alone (`changed: false`).
 *
 * @param kv the store
 * @param id the token id
 * @param actor who revokes, in which request
 * @param now the time of revocation
 * @param details extra audit details (`{reason: "namespace deleted"}`)
 * @returns before/after
 *
 * @example
 * ```ts
 * import { insertTokenOps, revokeTokenRecord, type TokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", type: "tenant-admin", name: "ci", description: null, tenant_slug: "acme",
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], digest: "9f2c",
 *   status: "active",
 * } as unknown as TokenRecord;
 * await insertTokenOps(kv.atomic(), t).commit();
 * const system = { id: "system", principal_type: "system" as const, request_id: null };
 * const r = await revokeTokenRecord(kv, "tok_1", system, new Date());
 * if (!r.changed || r.after.status !== "revoked" || r.after.revoked_by !== "system") {
 *   throw new Error();
 * }
 * // already revoked: left alone
 * if ((await revokeTokenRecord(kv, "tok_1", system, new Date())).changed) throw new Error();
 * kv.close();
 * ```
 */
export function revokeTokenRecord(
  kv: Deno.Kv,
  id: string,
  actor: AuditActor,
  now: Date,
  details: Record<string, unknown> = {},
): Promise<Transition> {
  return transitionToken(
    kv,
    id,
    (t) =>
      t.status !== "active" ? null : {
        ...t,
        status: "revoked",
        revoked_at: now.toISOString(),
        revoked_by: actor.id,
      },
    (op, next) => {
      addAudit(op, tokenAuditEntry("token.revoked", next, actor, now, { details }));
    },
  );
}

/**
 * Revokes every active token bound to a tenant (all its namespaces
 * included) or to one namespace. Used when the tenant or namespace is
 * deleted.
 *
 * @param kv the store
 * @param scope the tenant, and optionally one namespace
 * @param actor who deletes, in which request
 * @param now the time of revocation
 * @returns the ids of the tokens revoked
 *
 * @example
 * ```ts
 * import { revokeBoundTokens } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const ids = await revokeBoundTokens(kv, { tenant: "acme" }, { id: "system", principal_type: "system", request_id: null }, new Date());
 * if (ids.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function revokeBoundTokens(
  kv: Deno.Kv,
  scope: { tenant: string; namespace?: string },
  actor: AuditActor,
  now: Date,
): Promise<string[]> {
  const prefix = scope.namespace === undefined
    ? tokenByTenantPrefix(scope.tenant)
    : tokenByNamespacePrefix(scope.tenant, scope.namespace);
  const reason = scope.namespace === undefined ? "tenant deleted" : "namespace deleted";
  const revoked: string[] = [];
  for await (const entry of kv.list<string>({ prefix })) {
    const r = await revokeTokenRecord(kv, entry.value, actor, now, { reason });
    if (r.changed) revoked.push(entry.value);
  }
  return revoked;
}

/**
 * Every token record, of every type and status, in id order (creation
 * order). Records are read as the listing goes, so a caller may change the
 * record it is looking at (revoke it) before taking the next.
 *
 * @param kv the store
 * @returns the records, one at a time
 *
 * @example
 * ```ts
 * import { eachTokenRecord, insertTokenOps, type TokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", type: "tenant-admin", name: "ci", description: null, tenant_slug: "acme",
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], digest: "9f2c",
 * } as unknown as TokenRecord;
 * await insertTokenOps(kv.atomic(), t).commit();
 * const ids: string[] = [];
 * for await (const r of eachTokenRecord(kv)) ids.push(r.id);
 * if (ids.join() !== "tok_1") throw new Error(ids.join());
 * kv.close();
 * ```
 */
export async function* eachTokenRecord(kv: Deno.Kv): AsyncGenerator<TokenRecord> {
  for await (const e of kv.list<TokenRecord>({ prefix: tokenPrefix() })) yield e.value;
}

/**
 * Replaces a token record read before, only if it has not changed since
 * (check on the entry's versionstamp), together with an optional audit
 * entry in the same commit. Returns the new versionstamp, or null when
 * another writer changed the record first; nothing is written then.
 *
 * @param kv the store
 * @param entry the record as read ({@linkcode getTokenEntry}, {@linkcode findTokenByDigest})
 * @param next the new record (same id)
 * @param audit an audit entry to write in the same commit
 * @returns the versionstamp of the write, or null when refused
 *
 * @example
 * ```ts
 * import { getTokenEntry, insertTokenOps, type TokenRecord, updateTokenIfUnchanged } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", type: "tenant-admin", name: "ci", description: null, tenant_slug: "acme",
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], digest: "9f2c",
 *   last_used_at: null,
 * } as unknown as TokenRecord;
 * await insertTokenOps(kv.atomic(), t).commit();
 * const seen = await getTokenEntry(kv, "tok_1") as Deno.KvEntry<TokenRecord>;
 * const used = { ...t, last_used_at: "2030-01-01T00:00:00.000Z" };
 * if (await updateTokenIfUnchanged(kv, seen, used) === null) throw new Error();
 * // the same stale entry a second time: refused
 * if (await updateTokenIfUnchanged(kv, seen, used) !== null) throw new Error("stale write");
 * kv.close();
 * ```
 */
export async function updateTokenIfUnchanged(
  kv: Deno.Kv,
  entry: Deno.KvEntry<TokenRecord>,
  next: TokenRecord,
  audit?: AuditEntry,
): Promise<string | null> {
  const op = kv.atomic().check(entry).set(tokenKey(entry.value.id), next);
  if (audit !== undefined) addAudit(op, audit);
  const res = await op.commit();
  return res.ok ? res.versionstamp : null;
}

/**
 * The counter numbering default `bootstrap-<n>` token names, as read: the
 * last number used (0 when none) and the versionstamp to check on commit.
 */
export interface BootstrapCount {
  /** The last number used, 0 before the first bootstrap. */
  count: number;
  /** Versionstamp of the counter entry, null when absent. */
  versionstamp: string | null;
}

/**
 * Reads the bootstrap counter.
 *
 * @param kv the store
 * @returns the count and its versionstamp
 *
 * @example
 * ```ts
 * import { getBootstrapCount } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const c = await getBootstrapCount(kv);
 * if (c.count !== 0 || c.versionstamp !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function getBootstrapCount(kv: Deno.Kv): Promise<BootstrapCount> {
  const e = await kv.get<Deno.KvU64>(bootstrapCountKey());
  return { count: Number(e.value?.value ?? 0n), versionstamp: e.versionstamp };
}

/**
 * Adds to an atomic operation a check that the bootstrap counter is still
 * as read and, when `next` is a number, the write of the new count. The
 * commit fails when another bootstrap moved the counter meanwhile.
 *
 * @param op the atomic operation
 * @param seen the counter as read by {@linkcode getBootstrapCount}
 * @param next the new count, or null to only check
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { bootstrapCountOps, getBootstrapCount } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const seen = await getBootstrapCount(kv);
 * if (!(await bootstrapCountOps(kv.atomic(), seen, 1).commit()).ok) throw new Error();
 * if ((await getBootstrapCount(kv)).count !== 1) throw new Error();
 * // the stale read: refused
 * if ((await bootstrapCountOps(kv.atomic(), seen, 2).commit()).ok) throw new Error("stale");
 * kv.close();
 * ```
 */
export function bootstrapCountOps(
  op: Deno.AtomicOperation,
  seen: BootstrapCount,
  next: number | null,
): Deno.AtomicOperation {
  op.check({ key: bootstrapCountKey(), versionstamp: seen.versionstamp });
  if (next !== null) op.set(bootstrapCountKey(), new Deno.KvU64(BigInt(next)));
  return op;
}

/**
 * Adds to an atomic operation the mark that a token was rotated to a new
 * one (`rotated_to_token_id`), checked against the record as read, so the
 * commit fails when the old token changed meanwhile.
 *
 * @param op the atomic operation (usually the one inserting the new token)
 * @param entry the old token as read
 * @param toId the new token's id
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { getTokenEntry, getTokenRecord, insertTokenOps, markRotatedOps, type TokenRecord } from "./tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const t = {
 *   id: "tok_1", type: "tenant-admin", name: "ci", description: null, tenant_slug: "acme",
 *   namespace_slug: null, environment_slug: null, allowed_origins: [], digest: "9f2c",
 *   rotated_to_token_id: null,
 * } as unknown as TokenRecord;
 * await insertTokenOps(kv.atomic(), t).commit();
 * const old = await getTokenEntry(kv, "tok_1") as Deno.KvEntry<TokenRecord>;
 * if (!(await markRotatedOps(kv.atomic(), old, "tok_2").commit()).ok) throw new Error();
 * if ((await getTokenRecord(kv, "tok_1")).rotated_to_token_id !== "tok_2") throw new Error();
 * kv.close();
 * ```
 */
export function markRotatedOps(
  op: Deno.AtomicOperation,
  entry: Deno.KvEntry<TokenRecord>,
  toId: string,
): Deno.AtomicOperation {
  return bumpCredentialEpoch(
    op.check(entry).set(tokenKey(entry.value.id), {
      ...entry.value,
      rotated_to_token_id: toId,
    }),
  );
}
