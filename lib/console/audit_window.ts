/**
 * One page of a tenant's audit log for the console, with the two filters
 * the API's query does not have: the actor and a time window. Entries are
 * read through `readAudit` (lib/auth/audit_access.ts), so the caller is
 * authorised exactly as `GET /api/v1/audit?tenant=…` authorises them, and
 * the API's own filters (type, namespace, cursor) are applied by the
 * store; the actor and the window are applied here, newest first, reading
 * on in batches until the page is full, the window's start is passed, or
 * {@linkcode AUDIT_SCAN_LIMIT} entries were read. The cursor of the next
 * page is always the last entry read, so paging never skips or repeats an
 * entry, however many entries a filter passes over.
 *
 * @module
 */
import { readAudit } from "../auth/audit_access.ts";
import type { AuthDeps } from "../auth/deps.ts";
import type { Principal } from "../auth/principal.ts";
import type { AuditEntry, AuditQuery } from "../store/audit.ts";
import { MAX_PAGE_LIMIT } from "../store/page.ts";

/** Most entries one page reads when the actor or the window filters them. */
export const AUDIT_SCAN_LIMIT = 5000;

/** What to read. */
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

/** One page. */
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
 * Reads one page of a tenant's audit log (see the module comment): 403
 * as `readAudit` refuses.
 *
 * @param deps store, key, clock
 * @param principal the caller
 * @param q the tenant, filters, cursor and page size
 * @param scanLimit most entries to read (default {@linkcode AUDIT_SCAN_LIMIT})
 * @returns the page
 *
 * @example
 * ```ts
 * import { readAuditWindow } from "./audit_window.ts";
 * import { eventAuditEntry, writeAudit } from "../store/audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * const admin = { kind: "token" as const, token: { type: "superadmin" } } as never;
 * const actor = (id: string) => ({ id, principal_type: "user" as const, request_id: null });
 * for (const [id, at] of [["usr_a", 1000], ["usr_b", 2000], ["usr_a", 3000]] as const) {
 *   await writeAudit(kv, eventAuditEntry("login.succeeded", actor(id), new Date(at), { tenant_slug: "acme" }));
 * }
 * const page = await readAuditWindow({ kv } as never, admin, { tenant: "acme", actorId: "usr_a", to: 3000, limit: 10 });
 * if (page.entries.length !== 1 || page.entries[0]!.timestamp !== new Date(1000).toISOString()) throw new Error();
 * if (page.next !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function readAuditWindow(
  deps: AuthDeps,
  principal: Principal,
  q: AuditWindowQuery,
  scanLimit: number = AUDIT_SCAN_LIMIT,
): Promise<AuditWindowPage> {
  const base: AuditQuery = { tenant: q.tenant };
  if (q.type !== undefined) base.type = q.type;
  if (q.namespace !== undefined) base.namespace = q.namespace;
  const filtered = q.actorId !== undefined || q.from !== undefined || q.to !== undefined;
  if (!filtered) {
    const page = await readAudit(deps, principal, withCursor({ ...base, limit: q.limit }, q.after));
    return { entries: page.items, next: page.next, searchedOnly: false, read: page.items.length };
  }
  const entries: AuditEntry[] = [];
  let cursor = q.after;
  let read = 0;
  let batch = q.limit + 1;
  while (true) {
    batch = Math.max(1, Math.min(batch, MAX_PAGE_LIMIT, scanLimit - read));
    const page = await readAudit(deps, principal, withCursor({ ...base, limit: batch }, cursor));
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
