/**
 * Change requests: `["change_request", t, ns, id]` holds one request (a
 * proposed file set, stored content-addressed like a version's: the tree
 * blob id), its state and its approvals; `["change_comment", t, ns, id,
 * ulid]` its comments (kept apart, so a long discussion never outgrows one
 * value). Every change is a compare-and-set on the record's versionstamp
 * with its audit entry in the same commit; callers decide what may change
 * (lib/services/changes.ts).
 *
 * @module
 */
import { ConflictError, NotFoundError } from "../errors.ts";
import type {
  ApprovalInfo,
  ChangeRequestInfo,
  ChangeStatus,
  RolloutPlanInfo,
} from "../protocol/changes.ts";
import { addAudit, type AuditEntry } from "./audit.ts";
import {
  allChangeRequestsPrefix,
  changeCommentKey,
  changeCommentPrefix,
  changeRequestKey,
  changeRequestPrefix,
  namespaceKey,
} from "./keys.ts";
import { enqueueOn, type QueueMessage } from "./queue.ts";
import { ulid } from "./ulid.ts";

export type { ChangeStatus };

/** One approval (the wire shape is the stored one). */
export type Approval = ApprovalInfo;

/** One rejection (the request is closed by it). */
export type Rejection = NonNullable<ChangeRequestInfo["rejection"]>;

/** A progressive rollout: the weights of one flag's rollout in one environment, step by step. */
export type RolloutPlan = RolloutPlanInfo;

/**
 * A change request as stored: what the API shows (lib/protocol/changes.ts)
 * but `approvals_missing`, which is computed, and the store's own ids.
 */
export interface ChangeRequestRecord extends Omit<ChangeRequestInfo, "approvals_missing"> {
  /** The tree blob id of the proposed files (lib/store/versions.ts `writeTree`). */
  tree: string;
  /**
   * The tree blob id of the base version, kept as long as the request (so
   * an apply on a later head can tell whether another change touched the
   * same files, and a reviewer sees the base, after the version is pruned).
   */
  base_tree: string;
  /** Blob id of what the files change against the base, value by value (JSON `ValueChange[]`). */
  changes_blob: string;
  /** Names the current schedule: a message of another schedule does nothing. */
  schedule_id: string | null;
}

/** The queue message kind of a scheduled apply (and of a rollout's steps). */
export const APPLY_MESSAGE = "change.apply";

/**
 * A request as scheduled at `at` (a new `schedule_id`, so the messages of
 * an earlier schedule do nothing), with the queue message that runs it.
 *
 * @param r the request
 * @param at when
 * @param now the time now
 * @returns the record and its message
 *
 * @example
 * ```ts
 * import { scheduled } from "./change_requests.ts";
 * const r = { id: "cr_1", tenant_slug: "acme", namespace_slug: "web" } as Parameters<typeof scheduled>[0];
 * const { record, message } = scheduled(r, new Date(5000), new Date(1000));
 * if (record.status !== "scheduled" || message.at !== 5000 || message.schedule_id !== record.schedule_id) {
 *   throw new Error();
 * }
 * ```
 */
export function scheduled(
  r: ChangeRequestRecord,
  at: Date,
  now: Date,
): { record: ChangeRequestRecord; message: QueueMessage } {
  const scheduleId = ulid(now.getTime());
  const record: ChangeRequestRecord = {
    ...r,
    status: "scheduled",
    scheduled_at: at.toISOString(),
    schedule_id: scheduleId,
    failure: null,
    updated_at: now.toISOString(),
  };
  return { record, message: applyMessage(record, at) };
}

/**
 * The queue message that runs a scheduled request's apply at `at`.
 *
 * @param r the request, scheduled (its `schedule_id` set)
 * @param at when
 * @returns the message
 *
 * @example
 * ```ts
 * import { APPLY_MESSAGE, applyMessage } from "./change_requests.ts";
 * const r = { id: "cr_1", tenant_slug: "acme", namespace_slug: "web", schedule_id: "s1" } as Parameters<typeof applyMessage>[0];
 * if (applyMessage(r, new Date(9)).kind !== APPLY_MESSAGE) throw new Error();
 * ```
 */
export function applyMessage(r: ChangeRequestRecord, at: Date): QueueMessage {
  return {
    kind: APPLY_MESSAGE,
    at: at.getTime(),
    tenant: r.tenant_slug,
    namespace: r.namespace_slug,
    id: r.id,
    schedule_id: r.schedule_id,
  };
}

/** The most comments one request holds. */
export const MAX_COMMENTS = 200;

/** One comment. */
export interface ChangeComment {
  id: string;
  author_id: string;
  author_email: string | null;
  at: string;
  text: string;
}

/**
 * Reads a change request with its entry (for a compare-and-set); 404
 * `change_request_not_found` when there is none.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param id the request id
 * @returns the entry
 *
 * @example
 * ```ts
 * import { getChangeRequest } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getChangeRequest(kv, "acme", "web", "cr_1"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "change_request_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getChangeRequest(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  id: string,
): Promise<Deno.KvEntry<ChangeRequestRecord>> {
  const entry = await kv.get<ChangeRequestRecord>(changeRequestKey(tenant, namespace, id));
  if (entry.value === null) {
    throw new NotFoundError(
      "change_request_not_found",
      `No change request ${id} in ${tenant}/${namespace}`,
    );
  }
  return entry as Deno.KvEntry<ChangeRequestRecord>;
}

/**
 * Reads a change request with its entry, or an entry with a null value
 * when there is none (a queued apply whose request was deleted).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param id the request id
 * @returns the entry, its value null when absent
 *
 * @example
 * ```ts
 * import { findChangeRequest } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await findChangeRequest(kv, "acme", "web", "cr_1")).value !== null) throw new Error();
 * kv.close();
 * ```
 */
export function findChangeRequest(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  id: string,
): Promise<Deno.KvEntryMaybe<ChangeRequestRecord>> {
  return kv.get<ChangeRequestRecord>(changeRequestKey(tenant, namespace, id));
}

/**
 * Stores a new change request with its audit entry, in one commit checked
 * against the namespace record (404 when it is gone).
 *
 * @param kv the store
 * @param record the request
 * @param audit its `change_request.opened` entry
 * @returns nothing
 *
 * @example
 * ```ts ignore
 * await createChangeRequest(kv, record, eventAuditEntry("change_request.opened", actor, now));
 * ```
 */
export async function createChangeRequest(
  kv: Deno.Kv,
  record: ChangeRequestRecord,
  audit: AuditEntry,
): Promise<void> {
  const { tenant_slug: t, namespace_slug: ns, id } = record;
  const namespace = await kv.get(namespaceKey(t, ns));
  if (namespace.value === null) {
    throw new NotFoundError("namespace_not_found", `No namespace ${t}/${ns}`);
  }
  const op = kv.atomic()
    .check(namespace)
    .check({ key: changeRequestKey(t, ns, id), versionstamp: null })
    .set(changeRequestKey(t, ns, id), record);
  if (!(await addAudit(op, audit).commit()).ok) {
    throw new ConflictError(`The namespace ${t}/${ns} changed meanwhile; try again`);
  }
}

/**
 * Replaces a change request read as `entry`, with its audit entry and,
 * optionally, a queue message, in one commit; false when the request
 * changed since it was read (the caller reads again and decides again).
 *
 * @param kv the store
 * @param entry the request as read
 * @param next the new record
 * @param audit the audit entries of the step
 * @param message a queue message to enqueue with it (a scheduled apply), and the time now
 * @returns whether it committed
 *
 * @example
 * ```ts ignore
 * if (!await updateChangeRequest(kv, entry, { ...entry.value, status: "withdrawn" }, [audit])) continue;
 * ```
 */
export async function updateChangeRequest(
  kv: Deno.Kv,
  entry: Deno.KvEntry<ChangeRequestRecord>,
  next: ChangeRequestRecord,
  audit: AuditEntry[],
  message?: { message: QueueMessage; now: number },
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(entry.key, next);
  for (const a of audit) addAudit(op, a);
  if (message !== undefined) enqueueOn(op, message.message, message.now);
  return (await op.commit()).ok;
}

/** What one step makes of a request: the new record, its audit entries, a queue message. */
export interface ChangeRequestStep {
  next: ChangeRequestRecord;
  audit: AuditEntry[];
  message?: QueueMessage;
}

/**
 * Takes one step on a request as a compare-and-set: reads it (404 when
 * there is none), asks `decide` what the step makes of it (`decide` throws
 * to refuse: a wrong status, a rule of the caller's), and commits the new
 * record with its audit entries and queue message, checked against the
 * record read; a request changed meanwhile is read and decided again.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param id the request
 * @param decide the step, given the request as read and the time now (epoch ms)
 * @param now the clock
 * @returns the request after the step
 *
 * @example
 * ```ts ignore
 * await stepChangeRequest(kv, "acme", "web", id, (r) => ({ next: { ...r, status: "withdrawn" }, audit: [] }));
 * ```
 */
export async function stepChangeRequest(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  id: string,
  decide: (r: ChangeRequestRecord) => ChangeRequestStep | Promise<ChangeRequestStep>,
  now: () => number = Date.now,
): Promise<ChangeRequestRecord> {
  for (let attempt = 0; attempt < 16; attempt++) {
    const entry = await getChangeRequest(kv, tenant, namespace, id);
    const step = await decide(entry.value);
    const queued = step.message === undefined ? undefined : { message: step.message, now: now() };
    if (await updateChangeRequest(kv, entry, step.next, step.audit, queued)) return step.next;
  }
  throw new ConflictError(`The change request ${id} keeps changing; try again`);
}

/**
 * The writes that mark a request as applied in the commit of its version
 * (lib/store/versions.ts `commitVersion`'s guard): the request must still
 * be the one read (`entry`, checked by the caller's commit).
 *
 * @param op the version's commit
 * @param entry the request as read
 * @param next the request as applied
 * @returns the same operation
 *
 * @example
 * ```ts ignore
 * guard: () => ({ checks: [entry], write: (op) => markApplied(op, entry, applied) })
 * ```
 */
export function markApplied(
  op: Deno.AtomicOperation,
  entry: Deno.KvEntry<ChangeRequestRecord>,
  next: ChangeRequestRecord,
): Deno.AtomicOperation {
  return op.set(entry.key, next);
}

/**
 * A namespace's change requests, newest first, optionally of some
 * statuses only, one page at a time (`after`: the last id of the previous
 * page).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param query statuses, page size and cursor
 * @returns the page and the cursor of the next, if any
 *
 * @example
 * ```ts
 * import { listChangeRequests } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listChangeRequests(kv, "acme", "web", {})).items.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listChangeRequests(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  query: { statuses?: readonly ChangeStatus[]; limit?: number; after?: string },
): Promise<{ items: ChangeRequestRecord[]; next: string | null }> {
  const limit = query.limit ?? 50;
  const prefix = changeRequestPrefix(tenant, namespace);
  const items: ChangeRequestRecord[] = [];
  const iter = kv.list<ChangeRequestRecord>(
    query.after === undefined ? { prefix } : { prefix, end: [...prefix, query.after] },
    { reverse: true },
  );
  for await (const e of iter) {
    if (query.statuses !== undefined && !query.statuses.includes(e.value.status)) continue;
    items.push(e.value);
    if (items.length > limit) break;
  }
  const more = items.length > limit;
  if (more) items.length = limit;
  return { items, next: more ? items[limit - 1]!.id : null };
}

/**
 * How many requests of a namespace an author has that are still live
 * (open, approved, scheduled or failed).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param authorId the author
 * @returns the count
 *
 * @example
 * ```ts
 * import { liveRequestsOf } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await liveRequestsOf(kv, "acme", "web", "usr_1") !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function liveRequestsOf(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  authorId: string,
): Promise<number> {
  let n = 0;
  for await (
    const e of kv.list<ChangeRequestRecord>({ prefix: changeRequestPrefix(tenant, namespace) })
  ) {
    const live = ["open", "approved", "scheduled", "failed"].includes(e.value.status);
    if (live && e.value.author_id === authorId) n++;
  }
  return n;
}

/**
 * Every change request of the installation in a status (the scheduled ones
 * a starting server makes sure are queued).
 *
 * @param kv the store
 * @param status the status
 * @returns the requests
 *
 * @example
 * ```ts
 * import { changeRequestsIn } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await changeRequestsIn(kv, "scheduled")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function changeRequestsIn(
  kv: Deno.Kv,
  status: ChangeStatus,
): Promise<ChangeRequestRecord[]> {
  const out: ChangeRequestRecord[] = [];
  for await (const e of kv.list<ChangeRequestRecord>({ prefix: allChangeRequestsPrefix() })) {
    if (e.value.status === status) out.push(e.value);
  }
  return out;
}

/**
 * Adds a comment with its audit entry.
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param requestId the request
 * @param comment the comment
 * @param audit its `change_request.commented` entry
 * @returns nothing
 *
 * @example
 * ```ts ignore
 * await addChangeComment(kv, "acme", "web", id, comment, audit);
 * ```
 */
export async function addChangeComment(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  requestId: string,
  comment: ChangeComment,
  audit: AuditEntry,
): Promise<void> {
  for (let attempt = 0; attempt < 8; attempt++) {
    // checked against the request, so a comment never outlives a deleted one;
    // an approval meanwhile only means reading it again
    const request = await getChangeRequest(kv, tenant, namespace, requestId);
    const count = await countComments(kv, tenant, namespace, requestId);
    if (count >= MAX_COMMENTS) {
      throw new ConflictError(
        `Change request ${requestId} has ${MAX_COMMENTS} comments, the most it holds: ` +
          "open a new request to go on",
      );
    }
    const op = kv.atomic()
      .check(request)
      .set(changeCommentKey(tenant, namespace, requestId, comment.id), comment);
    if ((await addAudit(op, audit).commit()).ok) return;
  }
  throw new ConflictError(`The change request ${requestId} keeps changing; try again`);
}

/** How many comments a request has (at most {@linkcode MAX_COMMENTS} + 1 are counted). */
async function countComments(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  requestId: string,
): Promise<number> {
  let n = 0;
  const prefix = changeCommentPrefix(tenant, namespace, requestId);
  for await (const _ of kv.list({ prefix }, { limit: MAX_COMMENTS + 1 })) n++;
  return n;
}

/**
 * A request's comments, oldest first (at most `limit`).
 *
 * @param kv the store
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param requestId the request
 * @param limit how many at most
 * @returns the comments
 *
 * @example
 * ```ts
 * import { listChangeComments } from "./change_requests.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listChangeComments(kv, "acme", "web", "cr_1")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listChangeComments(
  kv: Deno.Kv,
  tenant: string,
  namespace: string,
  requestId: string,
  limit = MAX_COMMENTS,
): Promise<ChangeComment[]> {
  const out: ChangeComment[] = [];
  const prefix = changeCommentPrefix(tenant, namespace, requestId);
  for await (const e of kv.list<ChangeComment>({ prefix }, { limit })) out.push(e.value);
  return out;
}
