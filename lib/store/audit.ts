/**
 * The audit log. Entries live at `["audit", tenant, ulid]` (tenant
 * `_installation` for installation-level events) and, for installation-wide
 * reads, at `["audit_by_time", ulid]`; both hold the same immutable entry.
 * Entries never hold a secret or a digest: only token ids and the public
 * 14-character prefixes. A change and its entry are written in one atomic
 * commit ({@linkcode addAudit}), so no change exists without its entry;
 * lib/store/audit_retention.ts deletes entries older than the
 * installation's audit-retention period. A tenant's entries stay under its
 * slug after it is deleted; a tenant-scoped read lists only the entries
 * made since the current tenant of that slug was created.
 *
 * @module
 */
import type { AuditQuery } from "../protocol/requests.ts";
import { auditByTimeKey, auditByTimePrefix, auditKey, auditPrefix, tenantKey } from "./keys.ts";
import { type Page, pageLimit } from "./page.ts";
import { ulid, ulidFloor } from "./ulid.ts";

/** Who acted: a human user, a service token, a `namespace-client` token, or the system (bootstrap CLI, expiry). */
export type PrincipalType = "user" | "service" | "client" | "system";

/** The actor of an audited change and the request it belongs to. */
export interface AuditActor {
  /** User id, token id, or `system`/`bootstrap`. */
  id: string;
  /** Kind of actor. */
  principal_type: PrincipalType;
  /** Request id, or null outside a request (CLI). */
  request_id: string | null;
}

/** One audit entry. */
export interface AuditEntry {
  /** ULID; entries sort by it. */
  id: string;
  /** Event type: one of {@linkcode AUDIT_EVENT_TYPES}. */
  type: string;
  /** RFC 3339 time of the event. */
  timestamp: string;
  /** Request id, or null outside a request. */
  request_id: string | null;
  /** Outcome of the request the event belongs to. */
  result: "success" | "failure";
  /** Kind of actor. */
  principal_type: PrincipalType;
  /** User id, token id or `system`. */
  actor_id: string;
  /** Token the event is about (null for non-token events). */
  token_id: string | null;
  /** Its 14-character public prefix. */
  token_prefix: string | null;
  /** Its type. */
  token_type: string | null;
  /** Tenant binding (null for installation-level). */
  tenant_slug: string | null;
  /** Namespace binding. */
  namespace_slug: string | null;
  /** Environment binding (`namespace-client`). */
  environment_slug: string | null;
  /** Extra facts (never secrets). */
  details: Record<string, unknown>;
}

/**
 * Every event type the audit log holds (docs/api.md, "Audit"): token
 * lifecycle, sign-in and sessions, and the control-plane changes.
 */
export const AUDIT_EVENT_TYPES: readonly string[] = Object.freeze([
  "tenant.created",
  "tenant.deleted",
  "namespace.created",
  "namespace.deleted",
  "manifest.pushed",
  "manifest.rolled_back",
  "manifest.protection_bypassed",
  "namespace.protection_changed",
  "change_request.opened",
  "change_request.updated",
  "change_request.approved",
  "change_request.rejected",
  "change_request.commented",
  "change_request.withdrawn",
  "change_request.scheduled",
  "change_request.schedule_cancelled",
  "change_request.rollout_step",
  "change_request.applied",
  "change_request.failed",
  "webhook.created",
  "webhook.deleted",
  "admin.added",
  "admin.removed",
  "tenant.login_policy_changed",
  "login.succeeded",
  "login.failed",
  "session.revoked",
  "token.created",
  "token.rotated",
  "token.revoked",
  "token.expired",
  "token.authenticated",
  "store.migration_started",
  "store.migration_finished",
]);

/** The installation's own events: never a tenant's, so no webhook names them. */
export const INSTALLATION_EVENT_TYPES: readonly string[] = Object.freeze([
  "store.migration_started",
  "store.migration_finished",
]);

/**
 * The actor of a change made outside a request (host tools, tests) that
 * names only who made it: a user id (`usr_…`) is a user, a token id
 * (`tok_…`) a service token, anything else the system.
 *
 * @param id the creator's id (`created_by`, `added_by`)
 * @returns the actor, without a request id
 *
 * @example
 * ```ts
 * import { actorFromId } from "./audit.ts";
 * if (actorFromId("tok_1").principal_type !== "service") throw new Error();
 * if (actorFromId("ops").principal_type !== "system" || actorFromId("ops").request_id !== null) {
 *   throw new Error();
 * }
 * ```
 */
export function actorFromId(id: string): AuditActor {
  const principal_type: PrincipalType = id.startsWith("usr_")
    ? "user"
    : id.startsWith("tok_")
    ? "service"
    : "system";
  return { id, principal_type, request_id: null };
}

/** The token fields an audit entry copies. */
export interface AuditedToken {
  id: string;
  prefix: string;
  type: string;
  tenant_slug: string | null;
  namespace_slug: string | null;
  environment_slug: string | null;
}

/**
 * Builds the audit entry for an event about a token.
 *
 * @param type event type (`token.revoked`, …)
 * @param token the token the event is about
 * @param actor who acted, in which request
 * @param now event time
 * @param extra result (default `success`) and details
 * @returns a new entry with a fresh ULID
 *
 * @example
 * ```ts
 * import { tokenAuditEntry } from "./audit.ts";
 * const e = tokenAuditEntry("token.revoked", {
 *   id: "tok_1", prefix: "svc_read_abcde", type: "namespace-read",
 *   tenant_slug: "acme", namespace_slug: "web", environment_slug: null,
 * }, { id: "usr_1", principal_type: "user", request_id: "r1" }, new Date());
 * if (e.token_id !== "tok_1" || e.result !== "success") throw new Error();
 * ```
 */
export function tokenAuditEntry(
  type: string,
  token: AuditedToken,
  actor: AuditActor,
  now: Date,
  extra: {
    result?: "success" | "failure";
    details?: Record<string, unknown>;
  } = {},
): AuditEntry {
  return {
    ...eventAuditEntry(type, actor, now, {
      ...extra,
      tenant_slug: token.tenant_slug,
      namespace_slug: token.namespace_slug,
    }),
    token_id: token.id,
    token_prefix: token.prefix,
    token_type: token.type,
    environment_slug: token.environment_slug,
  };
}

/**
 * Builds the audit entry for an event about no token: a sign-in, a session,
 * a tenant's login policy. Token fields are null.
 *
 * @param type event type (`login.succeeded`, `session.revoked`, …)
 * @param actor who acted, in which request
 * @param now event time
 * @param extra tenant, namespace, result (default `success`) and details
 * @returns a new entry with a fresh ULID
 *
 * @example
 * ```ts
 * import { eventAuditEntry } from "./audit.ts";
 * const e = eventAuditEntry("login.failed", { id: "anonymous", principal_type: "user", request_id: "r1" },
 *   new Date(), { tenant_slug: "acme", result: "failure", details: { reason: "state" } });
 * if (e.token_id !== null || e.tenant_slug !== "acme" || e.result !== "failure") throw new Error();
 * ```
 */
export function eventAuditEntry(
  type: string,
  actor: AuditActor,
  now: Date,
  extra: {
    tenant_slug?: string | null;
    namespace_slug?: string | null;
    result?: "success" | "failure";
    details?: Record<string, unknown>;
  } = {},
): AuditEntry {
  return {
    id: ulid(now.getTime()),
    type,
    timestamp: now.toISOString(),
    request_id: actor.request_id,
    result: extra.result ?? "success",
    principal_type: actor.principal_type,
    actor_id: actor.id,
    token_id: null,
    token_prefix: null,
    token_type: null,
    tenant_slug: extra.tenant_slug ?? null,
    namespace_slug: extra.namespace_slug ?? null,
    environment_slug: null,
    details: extra.details ?? {},
  };
}

/**
 * Stores one audit entry on its own (events that change nothing else,
 * such as a refused sign-in).
 *
 * @param kv the store
 * @param entry the entry
 * @returns nothing
 *
 * @example
 * ```ts
 * import { eventAuditEntry, listAudit, writeAudit } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await writeAudit(kv, eventAuditEntry("login.failed", { id: "anonymous", principal_type: "user", request_id: null }, new Date(), { tenant_slug: "acme" }));
 * if ((await listAudit(kv, { tenant: "acme" })).items.length !== 1) throw new Error();
 * kv.close();
 * ```
 */
export async function writeAudit(kv: Deno.Kv, entry: AuditEntry): Promise<void> {
  await addAudit(kv.atomic(), entry).commit();
}

/**
 * Adds the writes of an audit entry to an atomic operation, so the entry
 * commits together with the change it records, and, for a tenant's entry,
 * the message that tells the tenant's webhooks ({@linkcode notifies}).
 *
 * @param op the atomic operation
 * @param entry the entry
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { addAudit, listAudit, tokenAuditEntry } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const e = tokenAuditEntry("token.created", {
 *   id: "tok_1", prefix: "svc_tenant_abc", type: "tenant-admin",
 *   tenant_slug: "acme", namespace_slug: null, environment_slug: null,
 * }, { id: "system", principal_type: "system", request_id: null }, new Date());
 * await addAudit(kv.atomic().set(["something"], "changed"), e).commit();
 * // listed installation-wide and under its tenant
 * const all = await listAudit(kv);
 * const acme = await listAudit(kv, { tenant: "acme" });
 * if (all.items[0]?.id !== e.id || acme.items[0]?.id !== e.id) throw new Error();
 * kv.close();
 * ```
 */
export function addAudit(
  op: Deno.AtomicOperation,
  entry: AuditEntry,
): Deno.AtomicOperation {
  op.set(auditKey(entry.tenant_slug, entry.id), entry).set(auditByTimeKey(entry.id), entry);
  // The tenant's webhooks hear of it: queued in this very commit, so a
  // change never loses its notification.
  if (notifies(entry)) op.enqueue({ kind: AUDIT_MESSAGE, entry });
  return op;
}

/** The queue message kind that carries an audit entry to the tenant's webhooks. */
export const AUDIT_MESSAGE = "audit";

/** Mutations {@linkcode addAudit} adds to a commit at most (two writes, one message). */
export const AUDIT_MUTATIONS = 3;

/**
 * Whether an entry is announced to its tenant's webhooks: every entry of a
 * tenant, except `token.authenticated` (sampled bookkeeping of every
 * request, not a change).
 *
 * @param entry the audit entry
 * @returns whether it is queued for the webhooks
 *
 * @example
 * ```ts
 * import { notifies } from "./audit.ts";
 * const e = { type: "manifest.pushed", tenant_slug: "acme" };
 * if (!notifies(e) || notifies({ ...e, tenant_slug: null })) throw new Error();
 * if (notifies({ ...e, type: "token.authenticated" })) throw new Error();
 * ```
 */
export function notifies(entry: Pick<AuditEntry, "type" | "tenant_slug">): boolean {
  return entry.tenant_slug !== null && entry.type !== "token.authenticated";
}

/** Filters and pagination of {@linkcode listAudit}: the query of `GET /api/v1/audit`. */
export type { AuditQuery };

/**
 * Lists audit entries newest first, filtered, one page at a time. `after`
 * (the `next` of the previous page) pages back to older entries; `since`
 * (an entry id) keeps only entries newer than that one, so a follower
 * asks for what appeared after the last entry it saw, paging back with
 * `after` within that range. With `tenant`, only entries made since the
 * current tenant of that slug was created are listed: a new tenant reusing
 * a deleted one's slug never reads the old tenant's log (the
 * installation-wide listing, without `tenant`, keeps them).
 *
 * @param kv the store
 * @param query filters and pagination
 * @returns a page of entries; `next` is the cursor of the following page
 *
 * @example
 * ```ts
 * import { eventAuditEntry, listAudit, writeAudit } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const page = await listAudit(kv, { tenant: "acme" });
 * if (page.items.length !== 0 || page.next !== null) throw new Error();
 * const actor = { id: "system", principal_type: "system" as const, request_id: null };
 * const first = eventAuditEntry("tenant.created", actor, new Date(), { tenant_slug: "acme" });
 * const second = eventAuditEntry("namespace.created", actor, new Date(), { tenant_slug: "acme" });
 * await writeAudit(kv, first);
 * await writeAudit(kv, second);
 * const newer = await listAudit(kv, { since: first.id });
 * if (newer.items.length !== 1 || newer.items[0]!.id !== second.id) throw new Error();
 * kv.close();
 * ```
 */
export async function listAudit(
  kv: Deno.Kv,
  query: AuditQuery = {},
): Promise<Page<AuditEntry>> {
  const limit = pageLimit(query.limit);
  const prefix = query.tenant === undefined ? auditByTimePrefix() : auditPrefix(query.tenant);
  const { since, after } = query;
  // A tenant's log starts at its creation: a deleted tenant of the same slug stays private.
  const floor = query.tenant === undefined ? undefined : await tenantFloor(kv, query.tenant);
  const start = floor !== undefined && (since === undefined || since < floor) ? floor : since;
  if (start !== undefined && after !== undefined && start >= after) {
    return { items: [], next: null };
  }
  const selector: Deno.KvListSelector = start !== undefined && after !== undefined
    ? { start: [...prefix, start], end: [...prefix, after] }
    : start !== undefined
    ? { prefix, start: [...prefix, start] }
    : after !== undefined
    ? { prefix, end: [...prefix, after] }
    : { prefix };
  const items: AuditEntry[] = [];
  for await (
    const entry of kv.list<AuditEntry>(selector, { reverse: true })
  ) {
    const e = entry.value;
    if (e.id === since) continue; // the start key is inclusive: `since` itself is not newer
    if (query.namespace !== undefined && e.namespace_slug !== query.namespace) {
      continue;
    }
    if (query.token_id !== undefined && e.token_id !== query.token_id) continue;
    if (query.type !== undefined && e.type !== query.type) continue;
    if (items.length === limit) {
      return { items, next: items[items.length - 1]!.id };
    }
    items.push(e);
  }
  return { items, next: null };
}

/**
 * The smallest entry id of the current tenant `slug`: the ULID of its
 * creation millisecond with a zero random part (every entry made since,
 * its `tenant.created` first, has an id at least this; ids take the later
 * of the clock and the last id made). Undefined when no tenant of that
 * slug exists: its whole log stays readable to whoever may read it.
 */
async function tenantFloor(kv: Deno.Kv, slug: string): Promise<string | undefined> {
  const tenant = await kv.get<{ created_at?: string }>(tenantKey(slug));
  const ms = Date.parse(tenant.value?.created_at ?? "");
  return Number.isNaN(ms) ? undefined : ulidFloor(ms);
}
