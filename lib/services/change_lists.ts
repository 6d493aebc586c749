/**
 * Change requests as the console's pages read them, each page in one call
 * that authorises once (`change.read`, through `manifestTarget`): a
 * namespace's Changes page (its requests, newest first, filtered by status
 * and by the flag they change, with the namespace's protected environments
 * and what the reader may do there), one request's page (its details from
 * lib/services/changes.ts with the protection of the environments it
 * affects, and whether the reader may cancel its schedule), and the
 * pending requests of each flag, for the badges of the flags page (one
 * list read for the whole page).
 *
 * @module
 */
import { can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { InvalidRequestError } from "../errors.ts";
import {
  type ChangeRequestRecord,
  type ChangeStatus,
  listChangeRequests,
} from "../store/change_requests.ts";
import { type EnvironmentProtection, readProtection } from "../store/protection.ts";
import { readTree } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import {
  type ChangeDetails,
  changeDetails,
  type ChangeRequestView,
  changeView,
} from "./changes.ts";
import type { ServiceDeps } from "./deps.ts";
import {
  flagPath,
  type Head,
  manifestTarget,
  type NamespaceRef,
  refAttributes,
} from "./versions.ts";

/** The statuses of a request that may still land: a flag with one has a change pending. */
export const PENDING_STATUSES: readonly ChangeStatus[] = ["open", "approved", "scheduled"];

/**
 * How many of a namespace's newest requests the flags page looks at for
 * pending ones: one bounded list read per page, however long the
 * namespace's history (a request still pending behind this many newer ones
 * gets no badge; the Changes page lists it).
 */
export const MAX_PENDING_READ = 200;

/** What the Changes page lists. */
export interface ChangeListQuery {
  /** Only requests in these statuses (default: all). */
  statuses?: readonly ChangeStatus[] | undefined;
  /** Only requests that change this flag's file. */
  flag?: string | undefined;
  /** Page size, 1–100 (default 50). */
  limit?: number | undefined;
  /** The last id of the previous page. */
  after?: string | undefined;
}

/** A namespace's Changes page: its requests, its protection, and what the reader may do. */
export interface ChangesOverview {
  /** The namespace's head. */
  head: Head;
  /** The page of requests, newest first. */
  items: ChangeRequestView[];
  /** The cursor of the next page, or null. */
  next: string | null;
  /** The protected environments and the approvals each needs. */
  protection: Readonly<Record<string, EnvironmentProtection>>;
  /** The environments the head declares. */
  environments: string[];
  /** The flags of the head (their keys, sorted). */
  flags: string[];
  /** Whether the reader may set the protection, and open requests (a rollout). */
  may: { protect: boolean; propose: boolean };
}

/**
 * A namespace's Changes page (`change.read`: 403, then 404 for the
 * namespace): a page of its requests newest first, filtered by status and
 * by the flag whose file they change, with its protected environments, the
 * head's environments and flags, and whether the reader may set the
 * protection (`namespace.protect`) and propose (`change.propose`).
 *
 * @param deps store, runtime
 * @param principal the reader
 * @param ref the namespace
 * @param query statuses, flag, page size, cursor
 * @returns the page's model
 *
 * @example
 * ```ts ignore
 * const { items, may } = await changesOverview(deps, person, ref, { statuses: ["open"] });
 * ```
 */
export function changesOverview(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  query: ChangeListQuery,
): Promise<ChangesOverview> {
  return withSpan("cfgtool.service.changes_overview", refAttributes(ref), async () => {
    const head = await manifestTarget(deps, principal, ref, "change.read");
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new InvalidRequestError("limit must be a whole number from 1 to 100", {
        details: { field: "limit" },
      });
    }
    const target = { tenant: ref.tenant, namespace: ref.namespace };
    const [page, protection, tree, protect, propose] = await Promise.all([
      requestPage(deps.kv, ref, query, limit),
      readProtection(deps.kv, ref.tenant, ref.namespace),
      readTree(deps.kv, ref.tenant, ref.namespace, head.version),
      can(deps.kv, principal, "namespace.protect", target, { memo: memoOf(deps) }),
      can(deps.kv, principal, "change.propose", target, { memo: memoOf(deps) }),
    ]);
    return {
      head,
      items: page.items.map(changeView),
      next: page.next,
      protection: protection.record.environments,
      environments: Object.keys(head.environments),
      flags: flagKeys(tree.keys()),
      may: { protect, propose },
    };
  });
}

/** A page of requests, filtered by status in the store and by the flag's file here. */
async function requestPage(
  kv: Deno.Kv,
  ref: NamespaceRef,
  query: ChangeListQuery,
  limit: number,
): Promise<{ items: ChangeRequestRecord[]; next: string | null }> {
  const statuses = query.statuses === undefined ? {} : { statuses: query.statuses };
  if (query.flag === undefined) {
    return await listChangeRequests(kv, ref.tenant, ref.namespace, {
      ...statuses,
      limit,
      ...(query.after === undefined ? {} : { after: query.after }),
    });
  }
  const path = flagPath(query.flag);
  const items: ChangeRequestRecord[] = [];
  let after = query.after;
  let more = false;
  while (!more) {
    const page = await listChangeRequests(kv, ref.tenant, ref.namespace, {
      ...statuses,
      limit: 100,
      ...(after === undefined ? {} : { after }),
    });
    for (const r of page.items) {
      if (!r.changed_paths.includes(path)) continue;
      if (items.length === limit) {
        more = true; // one more than the page holds: there is a next page
        break;
      }
      items.push(r);
    }
    if (page.next === null) break;
    after = page.next;
  }
  return { items, next: more ? items.at(-1)!.id : null };
}

/**
 * The flag keys among a version's paths (`flags/<key>.toml`), sorted.
 *
 * @param paths the version's paths
 * @returns the keys
 *
 * @example
 * ```ts
 * import { flagKeys } from "./change_lists.ts";
 * const keys = flagKeys(["namespace.toml", "flags/b.toml", "flags/a.toml", "segments/s.toml"]);
 * if (keys.join() !== "a,b") throw new Error(keys.join());
 * ```
 */
export function flagKeys(paths: Iterable<string>): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const m = /^flags\/([^/]+)\.toml$/.exec(p);
    if (m !== null) out.push(m[1]!);
  }
  return out.sort();
}

/** One request's page: its details, the protection of the environments, and who may do what. */
export interface ChangeRequestPage extends ChangeDetails {
  /** The namespace's protected environments (those the request affects are marked on its page). */
  protection: Readonly<Record<string, EnvironmentProtection>>;
}

/**
 * One request's page (`changeDetails` of lib/services/changes.ts: 403 for
 * who may not read the namespace, 404 for an unknown id), with the
 * namespace's protection.
 *
 * @param deps store, runtime
 * @param principal the reader
 * @param ref the namespace
 * @param id the request
 * @returns the page's model
 *
 * @example
 * ```ts ignore
 * const { request, may, protection } = await changeRequestPage(deps, person, ref, id);
 * ```
 */
export function changeRequestPage(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
): Promise<ChangeRequestPage> {
  return withSpan("cfgtool.service.change_request_page", refAttributes(ref), async () => {
    const details = await changeDetails(deps, principal, ref, id);
    const protection = await readProtection(deps.kv, ref.tenant, ref.namespace);
    return { ...details, protection: protection.record.environments };
  });
}

/**
 * The pending requests of each flag of a namespace (`change.read`): among
 * its newest {@linkcode MAX_PENDING_READ} requests (one bounded list
 * read), those open, approved or scheduled, by the flags whose files they
 * change.
 *
 * @param deps store, runtime
 * @param principal the reader
 * @param ref the namespace
 * @returns flag key → the ids of its pending requests, newest first
 *
 * @example
 * ```ts ignore
 * const pending = await pendingFlagChanges(deps, person, ref);
 * pending.get("new-checkout"); // ["cr_…"]
 * ```
 */
export function pendingFlagChanges(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
): Promise<Map<string, string[]>> {
  return withSpan("cfgtool.service.pending_flag_changes", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "change.read");
    const { items } = await listChangeRequests(deps.kv, ref.tenant, ref.namespace, {
      limit: MAX_PENDING_READ,
    });
    return pendingByFlag(items);
  });
}

/**
 * The pending requests among `requests` by the flags whose files they
 * change (`flags/<key>.toml`), in the order given.
 *
 * @param requests requests, newest first
 * @returns flag key → request ids
 *
 * @example
 * ```ts
 * import { pendingByFlag } from "./change_lists.ts";
 * const r = (id: string, status: string, changed_paths: string[]) =>
 *   ({ id, status, changed_paths }) as unknown as Parameters<typeof pendingByFlag>[0][number];
 * const pending = pendingByFlag([
 *   r("cr_2", "open", ["flags/a.toml", "segments/s.toml"]),
 *   r("cr_1", "applied", ["flags/b.toml"]),
 *   r("cr_0", "scheduled", ["flags/a.toml", "flags/b.toml"]),
 * ]);
 * if (pending.get("a")?.join() !== "cr_2,cr_0" || pending.get("b")?.join() !== "cr_0") {
 *   throw new Error(JSON.stringify([...pending]));
 * }
 * ```
 */
export function pendingByFlag(
  requests: readonly Pick<ChangeRequestRecord, "id" | "status" | "changed_paths">[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of requests) {
    if (!PENDING_STATUSES.includes(r.status)) continue;
    for (const key of flagKeys(r.changed_paths)) {
      const ids = out.get(key);
      if (ids === undefined) out.set(key, [r.id]);
      else ids.push(r.id);
    }
  }
  return out;
}
