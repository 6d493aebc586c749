/**
 * Reading the audit log: `GET /api/v1/audit` ({@linkcode readAudit}) and
 * the console's page of a tenant's log ({@linkcode tenantAuditLog}), which
 * adds two filters the API's query does not have: the actor and a time
 * window. Both are authorised once by the same rule
 * (lib/auth/audit_access.ts: `audit.read`, a tenant admin on its own
 * tenant); the API's own filters (type, namespace, cursor) are applied by
 * the store, the actor and the window here, newest first, reading on in
 * batches until the page is full, the window's start is passed, or
 * {@linkcode AUDIT_SCAN_LIMIT} entries were read. The cursor of the next
 * page is always the last entry read, so paging never skips or repeats an
 * entry, however many entries a filter passes over. Entries never hold a
 * secret.
 *
 * @module
 */
import { auditReadScope } from "../auth/audit_access.ts";
import { can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { AUDIT_EVENT_TYPES, type AuditEntry, type AuditQuery, listAudit } from "../store/audit.ts";
import { listNamespaces } from "../store/namespaces.ts";
import { MAX_PAGE_LIMIT, type Page } from "../store/page.ts";
import { findUser } from "../store/users.ts";
import type { ServiceDeps } from "./deps.ts";

/** One audit entry, as every read returns it. */
export type { AuditEntry };

/** Every event type the audit log holds, control-plane changes first. */
export { AUDIT_EVENT_TYPES };

/** Most entries one page reads when the actor or the window filters them. */
export const AUDIT_SCAN_LIMIT = 5000;

/** An actor id no entry has: an email that names no user filters everything out. */
const NOBODY = "-";

/**
 * Lists audit entries newest first (`GET /api/v1/audit`), filtered and
 * paged, after checking `audit.read` (403): a tenant-admin token reads its
 * own tenant when none is named; a human reads the one tenant they
 * administer (400 when they administer several and name none).
 *
 * @param deps the store
 * @param principal the caller
 * @param query filters and pagination
 * @returns a page of entries
 *
 * @example
 * ```ts
 * import { readAudit } from "./audit.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = { kind: "token" as const, token: { ...boot.token, digest: "" } };
 * const page = await readAudit({ kv }, admin);
 * if (page.items[0]?.type !== "token.created" || page.items[0].token_id !== boot.token.id) {
 *   throw new Error(JSON.stringify(page.items));
 * }
 * kv.close();
 * ```
 */
export async function readAudit(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  query: AuditQuery = {},
): Promise<Page<AuditEntry>> {
  return await listAudit(deps.kv, await auditReadScope(deps.kv, principal, query));
}

/** What {@linkcode readAuditWindow} reads. */
export interface AuditWindowQuery {
  tenant: string;
  type?: string;
  namespace?: string;
  /** Only entries whose `actor_id` is this. */
  actorId?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Only entries older than this entry id. */
  after?: string;
  /** Page size. */
  limit: number;
}

/** One page of a tenant's log, as the console pages it. */
export interface AuditWindowPage {
  /** Matching entries, newest first. */
  entries: AuditEntry[];
  /** Cursor of the next page, or null when no older entry can match. */
  next: string | null;
  /** True when the page stopped at {@linkcode AUDIT_SCAN_LIMIT} before it was full. */
  searchedOnly: boolean;
  /** How many entries were read. */
  read: number;
}

/**
 * Reads one page of a tenant's audit log with the actor and window
 * filters (see the module comment), after checking `audit.read` on the
 * tenant (403) as {@linkcode readAudit} does.
 *
 * @param deps the store
 * @param principal the caller
 * @param q the tenant, filters, cursor and page size
 * @param scanLimit most entries to read (default {@linkcode AUDIT_SCAN_LIMIT})
 * @returns the page
 *
 * @example
 * ```ts
 * import { readAuditWindow } from "./audit.ts";
 * import { eventAuditEntry, writeAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const admin = { kind: "token" as const, token: { type: "superadmin" } } as never;
 * const actor = (id: string) => ({ id, principal_type: "user" as const, request_id: null });
 * for (const [id, at] of [["usr_a", 1000], ["usr_b", 2000], ["usr_a", 3000]] as const) {
 *   await writeAudit(kv, eventAuditEntry("login.succeeded", actor(id), new Date(at), { tenant_slug: "acme" }));
 * }
 * const page = await readAuditWindow({ kv }, admin, { tenant: "acme", actorId: "usr_a", to: 3000, limit: 10 });
 * if (page.entries.length !== 1 || page.entries[0]!.timestamp !== new Date(1000).toISOString()) throw new Error();
 * if (page.next !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function readAuditWindow(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  q: AuditWindowQuery,
  scanLimit: number = AUDIT_SCAN_LIMIT,
): Promise<AuditWindowPage> {
  await auditReadScope(deps.kv, principal, { tenant: q.tenant });
  return await scanAudit(deps.kv, q, scanLimit);
}

/** The page of {@linkcode readAuditWindow}, the caller already authorised. */
async function scanAudit(
  kv: Deno.Kv,
  q: AuditWindowQuery,
  scanLimit: number,
): Promise<AuditWindowPage> {
  const base: AuditQuery = { tenant: q.tenant };
  if (q.type !== undefined) base.type = q.type;
  if (q.namespace !== undefined) base.namespace = q.namespace;
  const filtered = q.actorId !== undefined || q.from !== undefined || q.to !== undefined;
  if (!filtered) {
    const page = await listAudit(kv, withCursor({ ...base, limit: q.limit }, q.after));
    return { entries: page.items, next: page.next, searchedOnly: false, read: page.items.length };
  }
  const entries: AuditEntry[] = [];
  let cursor = q.after;
  let read = 0;
  let batch = q.limit + 1;
  while (true) {
    batch = Math.max(1, Math.min(batch, MAX_PAGE_LIMIT, scanLimit - read));
    const page = await listAudit(kv, withCursor({ ...base, limit: batch }, cursor));
    for (let i = 0; i < page.items.length; i++) {
      const e = page.items[i]!;
      read++;
      cursor = e.id;
      const at = Date.parse(e.timestamp);
      if (q.from !== undefined && at < q.from) {
        return { entries, next: null, searchedOnly: false, read }; // older ones are older still
      }
      if (!matches(e, q, at)) continue;
      if (entries.length === q.limit) {
        // one more matches: the next page starts after the last one shown
        return { entries, next: entries.at(-1)!.id, searchedOnly: false, read };
      }
      entries.push(e);
    }
    if (page.next === null) return { entries, next: null, searchedOnly: false, read };
    if (entries.length === q.limit) {
      return { entries, next: entries.at(-1)!.id, searchedOnly: false, read };
    }
    if (read >= scanLimit) return { entries, next: cursor!, searchedOnly: true, read };
    batch *= 2; // a sparse filter reads on in larger batches
  }
}

function matches(e: AuditEntry, q: AuditWindowQuery, at: number): boolean {
  if (q.to !== undefined && at >= q.to) return false;
  return q.actorId === undefined || e.actor_id === q.actorId;
}

function withCursor(query: AuditQuery, after: string | undefined): AuditQuery {
  return after === undefined ? query : { ...query, after };
}

/** The filters of the console's audit page, once checked (lib/console/audit_filters.ts). */
export interface AuditLogFilter {
  /** Only this event type. */
  type?: string;
  /** Only this actor: a user id, token id, `anonymous`, `system`, or an email to resolve. */
  actor?: string;
  /** Only entries of this namespace. */
  namespace?: string;
  /** Only entries at or after this instant (epoch ms). */
  from?: number;
  /** Only entries before this instant (epoch ms, exclusive). */
  to?: number;
  /** Cursor: only entries older than this entry id. */
  after?: string;
  /** Page size. */
  limit: number;
}

/** A page of a tenant's log with what its filter form offers. */
export interface AuditLog {
  /** The tenant's namespaces the caller may read (the namespace filter's choices). */
  namespaces: string[];
  /** The entries. */
  page: AuditWindowPage;
}

/**
 * A tenant's audit log as its console page shows it: needs `audit.read`
 * on the tenant (403), then reads one page as {@linkcode readAuditWindow}
 * does, an email as actor standing for the user it names (one that names
 * no user matches nothing, like a person who never acted here), with the
 * tenant's namespaces the caller may read. Without a filter (the page's
 * filters were refused) no entry is read.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant tenant slug
 * @param filter the checked filters, or null to read no entry
 * @returns the page and the namespaces
 *
 * @example
 * ```ts
 * import { tenantAuditLog } from "./audit.ts";
 * import { eventAuditEntry, writeAudit } from "../store/audit.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const admin = { kind: "token" as const, token: { type: "superadmin" } } as never;
 * const ana = await createUser(kv, { email: "ana@example.com" });
 * for (const id of [ana.id, "usr_other"]) {
 *   const actor = { id, principal_type: "user" as const, request_id: null };
 *   await writeAudit(kv, eventAuditEntry("login.succeeded", actor, new Date(), { tenant_slug: "acme" }));
 * }
 * const log = await tenantAuditLog({ kv }, admin, "acme", { actor: "ana@example.com", limit: 10 });
 * if (log.page.entries.length !== 1 || log.page.entries[0]!.actor_id !== ana.id) throw new Error();
 * const nobody = await tenantAuditLog({ kv }, admin, "acme", { actor: "bo@example.com", limit: 10 });
 * if (nobody.page.entries.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function tenantAuditLog(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
  filter: AuditLogFilter | null,
): Promise<AuditLog> {
  const { kv } = deps;
  await auditReadScope(kv, principal, { tenant });
  let actorId: string | undefined;
  if (filter?.actor !== undefined) {
    actorId = filter.actor.includes("@")
      ? (await findUser(kv, filter.actor))?.id ?? NOBODY
      : filter.actor;
  }
  const namespaces: string[] = [];
  for (const ns of await listNamespaces(kv, tenant)) {
    if (
      await can(kv, principal, "namespace.read", { tenant, namespace: ns.slug }, {
        memo: memoOf(deps),
      })
    ) {
      namespaces.push(ns.slug);
    }
  }
  if (filter === null) {
    return { namespaces, page: { entries: [], next: null, searchedOnly: false, read: 0 } };
  }
  const page = await scanAudit(kv, {
    tenant,
    limit: filter.limit,
    ...(filter.type === undefined ? {} : { type: filter.type }),
    ...(filter.namespace === undefined ? {} : { namespace: filter.namespace }),
    ...(actorId === undefined ? {} : { actorId }),
    ...(filter.from === undefined ? {} : { from: filter.from }),
    ...(filter.to === undefined ? {} : { to: filter.to }),
    ...(filter.after === undefined ? {} : { after: filter.after }),
  }, AUDIT_SCAN_LIMIT);
  return { namespaces, page };
}
