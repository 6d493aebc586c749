/**
 * Change requests: a proposed file set for a namespace that people review
 * before it lands. Who may do what:
 *
 * | step | who |
 * |---|---|
 * | open, comment | anyone who may propose (`change.propose`: admins, admitted members, namespace-write and tenant-admin tokens) |
 * | read, list | anyone who may read the namespace (`change.read`) |
 * | update, withdraw | the author |
 * | approve, reject | a person with `change.review` (tenant or namespace admin), never the author, never a service token, never an admin the author appointed |
 * | apply, schedule, cancel a schedule | the author, or anyone with `change.apply` |
 *
 * A request records the head version it was made on (`base_version`),
 * the content ids of its changed paths there (so it can rebase after the
 * base is pruned), the environments its files behave differently in than
 * the base (lib/flags/impact.ts) and the approvals that impact needs under
 * the namespace's protection. Statuses: `open` → `approved` (enough
 * approvals; at once when none is needed) → `scheduled` → `applied`, or
 * `rejected`, `withdrawn`, `failed` (a scheduled apply that could not
 * commit). Every step is audited `change_request.<step>` in the commit that
 * makes it. Applying is lib/services/change_apply.ts.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { hashFileSet } from "../closure/hash.ts";
import {
  CfgtoolError,
  ConflictError,
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  ProblemsError,
} from "../errors.ts";
import type { ValueChange } from "../flags/value_changes.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { eventAuditEntry } from "../store/audit.ts";
import {
  addChangeComment,
  type Approval,
  type ChangeComment,
  type ChangeRequestRecord,
  type ChangeRequestStep,
  type ChangeStatus,
  createChangeRequest,
  getChangeRequest,
  listChangeComments,
  listChangeRequests,
  liveRequestsOf,
  type RolloutPlan,
  scheduled,
  stepChangeRequest,
} from "../store/change_requests.ts";
import { listNamespaceAdmins } from "../store/namespaces.ts";
import { readProtection } from "../store/protection.ts";
import { listTenantAdmins } from "../store/tenants.ts";
import { ulid } from "../store/ulid.ts";
import { getTokenEntry } from "../store/tokens.ts";
import { findUser } from "../store/users.ts";
import { getBlob, getBlobs, putBlob } from "../store/blobs.ts";
import { getVersion, readFiles, treeIds, writeTree } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import { protectedImpact } from "./protection.ts";
import { manifestTarget, type NamespaceRef, refAttributes } from "./versions.ts";

export type {
  Approval,
  ChangeComment,
  ChangeRequestRecord,
  ChangeStatus,
  RolloutPlan,
  ValueChange,
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The most files one change request may change (its record stays one KV value). */
export const MAX_CHANGED_PATHS = 300;

/** The most approvals one request holds. */
export const MAX_APPROVALS = 10;

/** The most live requests (open, approved, scheduled, failed) one author has in a namespace. */
export const MAX_LIVE_REQUESTS = 20;

/** Statuses from which a request can still change. */
const LIVE: readonly ChangeStatus[] = ["open", "approved", "scheduled", "failed"];

/** A proposal: the whole file set, a message, and the version it was made on. */
export interface Proposal {
  /** Every file of the proposed manifest: path → bytes. */
  files: ReadonlyMap<string, Uint8Array>;
  message: string;
  /** The version the files were made on (default: the head). */
  base_version?: number | undefined;
  /** A progressive rollout the request stands for (lib/services/change_apply.ts). */
  plan?: RolloutPlan | undefined;
}

/** A change request as the API shows it. */
export interface ChangeRequestView
  extends Omit<ChangeRequestRecord, "tree" | "base_tree" | "changes_blob" | "schedule_id"> {
  /** Approvals still needed. */
  approvals_missing: number;
}

/**
 * The request as the API shows it (without its tree, base content ids and
 * schedule id, which are the store's).
 *
 * @param r the record
 * @returns the view
 *
 * @example
 * ```ts ignore
 * return c.json({ change_request: changeView(record) });
 * ```
 */
export function changeView(r: ChangeRequestRecord): ChangeRequestView {
  const { tree: _t, base_tree: _b, changes_blob: _c, schedule_id: _s, ...rest } = r;
  return { ...rest, approvals_missing: Math.max(0, r.required_approvals - r.approvals.length) };
}

/**
 * Opens a change request: `change.propose` (403, nothing written), the
 * namespace (404), then the proposal: a valid manifest (422 with every
 * problem, as a push), a base version that exists (404), a message of
 * 1–4096 characters (400), and a change (400 when the files equal the
 * base). Audited `change_request.opened`.
 *
 * @param deps store, runtime, clock
 * @param principal the author
 * @param ref the namespace
 * @param proposal the files, message and base, read once authorised
 * @param ctx the request
 * @returns the new request
 *
 * @example
 * ```ts ignore
 * const cr = await openChangeRequest(deps, writer, ref, { files, message: "raise to 50%" }, ctx);
 * ```
 */
export function openChangeRequest(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  proposal: Deferred<Proposal>,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.open_change_request", refAttributes(ref), async () => {
    const head = await manifestTarget(deps, principal, ref, "change.propose");
    const input = await resolveInput(proposal);
    const message = checkedMessage(input.message);
    const base = input.base_version ?? head.version;
    if (!Number.isInteger(base) || base < 0 || base > head.version) {
      throw new NotFoundError(
        "version_not_found",
        `No version ${base} of ${ref.tenant}/${ref.namespace}: the head is ${head.version}`,
      );
    }
    const author = await authorOf(deps, principal);
    const live = await liveRequestsOf(deps.kv, ref.tenant, ref.namespace, author.author_id);
    if (live >= MAX_LIVE_REQUESTS) {
      throw new ConflictError(
        `You have ${live} change requests in ${ref.tenant}/${ref.namespace} still open: ` +
          `withdraw or finish some first (at most ${MAX_LIVE_REQUESTS})`,
      );
    }
    const facts = await proposalFacts(deps, ref, base, input.files);
    const now = clockOf(deps)();
    const record: ChangeRequestRecord = {
      id: `cr_${ulid(now.getTime())}`,
      tenant_slug: ref.tenant,
      namespace_slug: ref.namespace,
      base_version: base,
      ...facts,
      revision: 1,
      message,
      ...author,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      approvals: [],
      rejection: null,
      status: facts.required_approvals === 0 ? "approved" : "open",
      scheduled_at: null,
      schedule_id: null,
      applied_version: null,
      failure: null,
      plan: input.plan ?? null,
    };
    await createChangeRequest(
      deps.kv,
      record,
      changeAudit("change_request.opened", principal, ctx, now, record, {
        base_version: base,
        impact: record.impact,
        required_approvals: record.required_approvals,
        message,
        ...(record.plan === null ? {} : { rollout: record.plan }),
      }),
    );
    return record;
  });
}

/**
 * What a proposal's files say against the base: tree, changed paths,
 * impact, approvals needed, and the value changes (stored once, as a
 * blob). Validation and comparison run off the event loop when large.
 */
async function proposalFacts(
  deps: ServiceDeps,
  ref: NamespaceRef,
  base: number,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<
  Pick<
    ChangeRequestRecord,
    "tree" | "changed_paths" | "base_tree" | "changes_blob" | "impact" | "required_approvals"
  >
> {
  const [check, hashed] = await Promise.all([
    deps.runtime.workers.check(files),
    hashFileSet(files),
  ]);
  if (check.problemCount > 0) {
    throw new ProblemsError(check.problems, undefined, undefined, check.problemCount);
  }
  const baseMeta = await getVersion(deps.kv, ref.tenant, ref.namespace, base);
  const baseIds = await treeIds(deps.kv, baseMeta.tree, `version ${base}`);
  const changed = changedPaths(baseIds, hashed.blobIds);
  if (changed.length === 0) {
    throw new InvalidRequestError(
      `The proposed files equal version ${base}: there is nothing to review`,
      { details: { field: "files" } },
    );
  }
  if (changed.length > MAX_CHANGED_PATHS) {
    throw new InvalidRequestError(
      `The proposal changes ${changed.length} files; a change request changes at most ` +
        `${MAX_CHANGED_PATHS}: split it into several requests`,
      { details: { field: "files" } },
    );
  }
  const before = await readFiles(deps.kv, ref.tenant, ref.namespace, base);
  const { impact, changes } = await deps.runtime.workers.compare(before, files, true);
  const { record: protection } = await readProtection(deps.kv, ref.tenant, ref.namespace);
  const [tree, changesBlob] = await Promise.all([
    writeTree(deps.kv, files, hashed.blobIds),
    putBlob(deps.kv, encoder.encode(JSON.stringify(changes ?? []))),
  ]);
  return {
    tree,
    changed_paths: changed,
    base_tree: baseMeta.tree,
    changes_blob: changesBlob,
    impact,
    required_approvals: protectedImpact(protection.environments, impact).required,
  };
}

/**
 * The paths whose content differs between two trees (added, changed or
 * removed), sorted.
 *
 * @param before path → content id
 * @param after path → content id
 * @returns the changed paths
 *
 * @example
 * ```ts
 * import { changedPaths } from "./changes.ts";
 * const a = new Map([["x", "1"], ["y", "2"]]);
 * const b = new Map([["x", "1"], ["y", "3"], ["z", "4"]]);
 * if (changedPaths(a, b).join() !== "y,z") throw new Error();
 * ```
 */
export function changedPaths(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((p) => before.get(p) !== after.get(p)).sort();
}

/**
 * Replaces a request's files (the author only; while it is open,
 * approved or failed): the same checks as opening, against its base;
 * approvals are voided (they were given to other files), impact and
 * approvals needed are computed again, a schedule is cancelled. Audited
 * `change_request.updated`.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param id the request
 * @param proposal the new files and, optionally, message
 * @param ctx the request
 * @returns the updated request
 *
 * @example
 * ```ts ignore
 * await updateChange(deps, author, ref, id, { files, message: "50% instead" }, ctx);
 * ```
 */
export function updateChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  proposal: Deferred<
    {
      files: ReadonlyMap<string, Uint8Array>;
      message?: string | undefined;
      base_version?: number | undefined;
    }
  >,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.update_change_request", refAttributes(ref), async () => {
    const head = await manifestTarget(deps, principal, ref, "change.propose");
    const { value: first } = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
    mustBeAuthor(principal, first, "update");
    mustBeIn(first, ["open", "approved", "failed"], "updated");
    if (first.plan !== null) {
      throw new InvalidRequestError(
        "A rollout's files follow its plan: withdraw it and open another rollout",
      );
    }
    const input = await resolveInput(proposal);
    const message = input.message === undefined ? undefined : checkedMessage(input.message);
    // made again on the head (or the base given): the files it changes are checked from there
    const base = input.base_version ?? head.version;
    if (!Number.isInteger(base) || base < 0 || base > head.version) {
      throw new NotFoundError(
        "version_not_found",
        `No version ${base} of ${ref.tenant}/${ref.namespace}: the head is ${head.version}`,
      );
    }
    const facts = await proposalFacts(deps, ref, base, input.files);
    return await stepOn(deps, ref, id, (r, now) => {
      mustBeIn(r, ["open", "approved", "failed"], "updated");
      const next: ChangeRequestRecord = {
        ...r,
        ...facts,
        base_version: base,
        revision: r.revision + 1,
        ...(message === undefined ? {} : { message }),
        approvals: [],
        status: facts.required_approvals === 0 ? "approved" : "open",
        failure: null,
        updated_at: now.toISOString(),
      };
      const audit = changeAudit("change_request.updated", principal, ctx, now, next, {
        impact: next.impact,
        required_approvals: next.required_approvals,
        approvals_voided: r.approvals.length,
      });
      return { next, audit: [audit] };
    });
  });
}

/**
 * Approves a request: a person with `change.review` on the namespace
 * (403 for a token, the author, or an admin the author appointed), once
 * each, while it is open or approved; enough approvals make it
 * `approved` (a rollout: `scheduled`, its first step at once). Audited
 * `change_request.approved`.
 *
 * @param deps store, runtime, clock
 * @param principal the reviewer
 * @param ref the namespace
 * @param id the request
 * @param comment an optional comment
 * @param ctx the request
 * @returns the request
 *
 * @example
 * ```ts ignore
 * await approveChange(deps, reviewer, ref, id, "looks right", ctx);
 * ```
 */
export function approveChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  comment: string | undefined,
  ctx: RequestContext,
  revision?: number,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.approve_change_request", refAttributes(ref), async () => {
    const reviewer = await mustReview(deps, principal, ref, id);
    const text = comment === undefined ? undefined : checkedComment(comment, false, 500);
    return await stepOn(deps, ref, id, async (r, now) => {
      await mustNotBeAppointedBy(deps, reviewer.user_id, ref, r);
      mustBeIn(r, ["open", "approved"], "approved");
      mustBeRevision(r, revision);
      if (r.approvals.length >= MAX_APPROVALS) {
        throw new InvalidRequestError(
          `Change request ${id} has ${MAX_APPROVALS} approvals already`,
        );
      }
      if (r.approvals.some((a) => a.user_id === reviewer.user_id)) {
        throw new InvalidRequestError("You approved this change request already");
      }
      const approval: Approval = {
        user_id: reviewer.user_id,
        email: reviewer.email,
        at: now.toISOString(),
        ...(text === undefined || text === "" ? {} : { comment: text }),
      };
      const approvals = [...r.approvals, approval];
      const approved: ChangeRequestRecord = {
        ...r,
        approvals,
        status: approvals.length >= r.required_approvals ? "approved" : "open",
        updated_at: now.toISOString(),
      };
      const audit = [
        changeAudit("change_request.approved", principal, ctx, now, approved, {
          approvals: approvals.length,
          required_approvals: r.required_approvals,
          ...(text === undefined || text === "" ? {} : { comment: text }),
        }),
      ];
      // the approval that makes a rollout approved starts its plan, in the same commit (a
      // rollout stopped since stays stopped: applying it again resumes it)
      const start = approved.plan !== null && r.status === "open" && approved.status === "approved"
        ? scheduled(approved, now, now)
        : null;
      if (start !== null) {
        audit.push(
          changeAudit("change_request.scheduled", principal, ctx, now, start.record, {
            scheduled_at: start.record.scheduled_at,
            rollout: start.record.plan,
          }),
        );
      }
      if (start === null) return { next: approved, audit };
      return { next: start.record, audit, message: start.message };
    });
  });
}

/**
 * Rejects a request, with a reason: as for approving (a person, never the
 * author); the request is closed. Audited `change_request.rejected`.
 *
 * @param deps store, runtime, clock
 * @param principal the reviewer
 * @param ref the namespace
 * @param id the request
 * @param comment why (required)
 * @param ctx the request
 * @returns the request
 *
 * @example
 * ```ts ignore
 * await rejectChange(deps, reviewer, ref, id, "not this week", ctx);
 * ```
 */
export function rejectChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  comment: string,
  ctx: RequestContext,
  revision?: number,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.reject_change_request", refAttributes(ref), async () => {
    const reviewer = await mustReview(deps, principal, ref, id);
    const text = checkedComment(comment, true, 1000);
    return await stepOn(deps, ref, id, async (r, now) => {
      await mustNotBeAppointedBy(deps, reviewer.user_id, ref, r);
      mustBeIn(r, ["open", "approved", "scheduled", "failed"], "rejected");
      mustBeRevision(r, revision);
      const next: ChangeRequestRecord = {
        ...r,
        status: "rejected",
        rejection: {
          user_id: reviewer.user_id,
          email: reviewer.email,
          at: now.toISOString(),
          comment: text,
        },
        schedule_id: null,
        scheduled_at: null,
        updated_at: now.toISOString(),
      };
      const audit = changeAudit("change_request.rejected", principal, ctx, now, next, {
        comment: text,
      });
      return { next, audit: [audit] };
    });
  });
}

/**
 * Withdraws a request (the author; while it is live): closed, a schedule
 * cancelled. Audited `change_request.withdrawn`.
 *
 * @param deps store, runtime, clock
 * @param principal the author
 * @param ref the namespace
 * @param id the request
 * @param ctx the request
 * @returns the request
 *
 * @example
 * ```ts ignore
 * await withdrawChange(deps, author, ref, id, ctx);
 * ```
 */
export function withdrawChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.withdraw_change_request", refAttributes(ref), async () => {
    const first = await readableChange(deps, principal, ref, id);
    mustBeAuthor(principal, first, "withdraw");
    return await stepOn(deps, ref, id, (r, now) => {
      mustBeIn(r, LIVE, "withdrawn");
      const next: ChangeRequestRecord = {
        ...r,
        status: "withdrawn",
        schedule_id: null,
        scheduled_at: null,
        updated_at: now.toISOString(),
      };
      const audit = changeAudit("change_request.withdrawn", principal, ctx, now, next, {});
      return { next, audit: [audit] };
    });
  });
}

/**
 * Comments on a request (`change.propose`; 1–4096 characters). Audited
 * `change_request.commented`.
 *
 * @param deps store, runtime, clock
 * @param principal the commenter
 * @param ref the namespace
 * @param id the request
 * @param text the comment
 * @param ctx the request
 * @returns the comment
 *
 * @example
 * ```ts ignore
 * await commentOnChange(deps, person, ref, id, "can we wait for Monday?", ctx);
 * ```
 */
export function commentOnChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  text: string,
  ctx: RequestContext,
): Promise<ChangeComment> {
  return withSpan("cfgtool.service.comment_change_request", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "change.propose");
    const body = checkedComment(text, true);
    const { value: request } = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
    const now = clockOf(deps)();
    const author = await authorOf(deps, principal);
    const comment: ChangeComment = {
      id: ulid(now.getTime()),
      author_id: author.author_id,
      author_email: author.author_email,
      at: now.toISOString(),
      text: body,
    };
    await addChangeComment(
      deps.kv,
      ref.tenant,
      ref.namespace,
      id,
      comment,
      changeAudit("change_request.commented", principal, ctx, now, request, {
        comment: body.length > 200 ? `${body.slice(0, 200)}…` : body,
      }),
    );
    return comment;
  });
}

/** A page of a namespace's change requests. */
export interface ChangeRequestPage {
  items: ChangeRequestView[];
  next: string | null;
}

/**
 * A namespace's change requests, newest first (`change.read`), filtered
 * by status, one page at a time.
 *
 * @param deps store, runtime
 * @param principal the reader
 * @param ref the namespace
 * @param query statuses, page size (default 50, at most 500), cursor
 * @returns the page
 *
 * @example
 * ```ts ignore
 * const { items } = await listChanges(deps, reader, ref, { statuses: ["open"] });
 * ```
 */
export function listChanges(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  query: { statuses?: readonly ChangeStatus[]; limit?: number; after?: string },
): Promise<ChangeRequestPage> {
  return withSpan("cfgtool.service.list_change_requests", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "change.read");
    // as every list of the API: default 50, larger values capped at 500, 0 refused
    const limit = Math.min(query.limit ?? 50, 500);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new InvalidRequestError("limit must be a whole number of 1 or more", {
        details: { field: "limit" },
      });
    }
    const page = await listChangeRequests(deps.kv, ref.tenant, ref.namespace, {
      ...query,
      limit,
    });
    return { items: page.items.map(changeView), next: page.next };
  });
}

/** One request with what its reader needs: comments, files, and the steps they may take. */
export interface ChangeDetails {
  request: ChangeRequestRecord;
  comments: ChangeComment[];
  /** The proposed content of each changed path (a path it removes is absent). */
  files: ReadonlyMap<string, Uint8Array>;
  /** Each changed path's content at the base (null: the path is new); null if unreadable. */
  base: ReadonlyMap<string, Uint8Array | null> | null;
  /** What the proposal changes, value by value, against its base (computed when it was made). */
  changes: ValueChange[] | null;
  /** What the reader may do now. */
  may: {
    approve: boolean;
    reject: boolean;
    apply: boolean;
    /** Cancel a scheduled apply, or stop a rollout. */
    cancel: boolean;
    update: boolean;
    withdraw: boolean;
    comment: boolean;
  };
}

/**
 * One request with its comments, its files and the base's content of the
 * paths it changes, and the steps the reader may take (`change.read`;
 * 404 for an unknown id).
 *
 * @param deps store, runtime
 * @param principal the reader
 * @param ref the namespace
 * @param id the request
 * @returns the details
 *
 * @example
 * ```ts ignore
 * const { request, may } = await changeDetails(deps, reader, ref, id);
 * ```
 */
export function changeDetails(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
): Promise<ChangeDetails> {
  return withSpan("cfgtool.service.change_request", refAttributes(ref), async () => {
    const request = await readableChange(deps, principal, ref, id);
    const [comments, proposed, based, changes] = await Promise.all([
      listChangeComments(deps.kv, ref.tenant, ref.namespace, id),
      filesOfPaths(deps, request.tree, request.changed_paths),
      filesOfPaths(deps, request.base_tree, request.changed_paths),
      readChanges(deps, request.changes_blob),
    ]);
    const files = new Map<string, Uint8Array>();
    for (const [path, bytes] of proposed ?? []) if (bytes !== null) files.set(path, bytes);
    const base = based;
    const may = await mayDo(deps, principal, ref, request);
    return { request, comments, files, base, changes, may };
  });
}

/** The content of some paths of a tree (null: absent), or null when the tree is gone. */
async function filesOfPaths(
  deps: ServiceDeps,
  tree: string,
  paths: readonly string[],
): Promise<Map<string, Uint8Array | null> | null> {
  const ids = await treeIds(deps.kv, tree, `tree ${tree}`).catch(() => null);
  if (ids === null) return null;
  const wanted = paths.flatMap((p) => ids.has(p) ? [ids.get(p)!] : []);
  const blobs = await getBlobs(deps.kv, wanted);
  return new Map(paths.map((p) => [p, ids.has(p) ? blobs.get(ids.get(p)!) ?? null : null]));
}

/** The value changes stored with a request (null when the blob is gone). */
async function readChanges(deps: ServiceDeps, blob: string): Promise<ValueChange[] | null> {
  const bytes = await getBlob(deps.kv, blob);
  return bytes === null ? null : JSON.parse(decoder.decode(bytes)) as ValueChange[];
}

/** The steps `principal` may take on `request` now. */
async function mayDo(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  r: ChangeRequestRecord,
): Promise<ChangeDetails["may"]> {
  const target = { tenant: ref.tenant, namespace: ref.namespace };
  const author = principalId(principal) === r.author_id;
  const person = principal.kind === "session";
  const review = person && !author &&
    await can(deps.kv, principal, "change.review", target, { memo: memoOf(deps) }) &&
    !(await behind(deps, r.author_id)).has(principalId(principal)) &&
    !(await appointedByAuthor(deps, principalId(principal), ref, r));
  const propose = await can(deps.kv, principal, "change.propose", target, { memo: memoOf(deps) });
  const applier = await can(deps.kv, principal, "change.apply", target, { memo: memoOf(deps) }) ||
    (author && await can(deps.kv, principal, "manifest.write", target, { memo: memoOf(deps) }));
  const approvedBy = r.approvals.some((a) => a.user_id === principalId(principal));
  return {
    approve: review && ["open", "approved"].includes(r.status) && !approvedBy,
    reject: review && LIVE.includes(r.status),
    apply: applier && ["approved", "failed", "scheduled"].includes(r.status) &&
      r.approvals.length >= r.required_approvals,
    cancel: (applier || (author && propose)) && r.status === "scheduled",
    update: author && propose && r.plan === null &&
      ["open", "approved", "failed"].includes(r.status),
    withdraw: author && LIVE.includes(r.status),
    comment: propose,
  };
}

/** The reviewer: a person with `change.review`, not the author (403 otherwise). */
async function mustReview(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
): Promise<{ user_id: string; email: string | null }> {
  await manifestTarget(deps, principal, ref, "change.review");
  if (principal.kind !== "session") {
    throw new ForbiddenError("A service token cannot review changes: approvals are people's");
  }
  const { value } = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
  if (value.author_id === principal.user_id) {
    throw new ForbiddenError("The author of a change request cannot review it");
  }
  if ((await behind(deps, value.author_id)).has(principal.user_id)) {
    throw new ForbiddenError(
      "You made the token that opened this change request: its review is someone else's",
    );
  }
  const user = await findUser(deps.kv, principal.user_id);
  return { user_id: principal.user_id, email: user?.email ?? null };
}

/**
 * An approval must not come from an admin the request's author appointed
 * (directly, or through a token the author made or that made the
 * author): a token (or person) that adds its holder as an admin could
 * otherwise approve its own change.
 */
async function mustNotBeAppointedBy(
  deps: ServiceDeps,
  reviewer: string,
  ref: NamespaceRef,
  r: ChangeRequestRecord,
): Promise<void> {
  if (await appointedByAuthor(deps, reviewer, ref, r)) {
    throw new ForbiddenError(
      "You were made an admin by the author of this change request: your approval would be theirs",
    );
  }
}

/** Whether the author of `r` put `reviewer` on the tenant's or the namespace's admin list. */
async function appointedByAuthor(
  deps: ServiceDeps,
  reviewer: string,
  ref: NamespaceRef,
  r: ChangeRequestRecord,
): Promise<boolean> {
  const lists = await Promise.all([
    listTenantAdmins(deps.kv, ref.tenant),
    listNamespaceAdmins(deps.kv, ref.tenant, ref.namespace),
  ]);
  const mine = lists.flat().filter((m) => m.user_id === reviewer);
  if (mine.length === 0) return false;
  const author = await behind(deps, r.author_id);
  for (const m of mine) {
    for (const id of await behind(deps, m.added_by)) if (author.has(id)) return true;
  }
  return false;
}

/**
 * Who stands behind an actor: the actor, and for a token the token or
 * person that made it, and so on up to a person (or the bootstrap), at
 * most eight steps. A person who made the token that opened a request,
 * or that made them an admin, stands behind it.
 *
 * @param deps the store
 * @param id a user or token id
 * @returns the ids
 *
 * @example
 * ```ts ignore
 * (await behind(deps, "tok_…")).has("usr_…"); // the person who made the token
 * ```
 */
async function behind(deps: ServiceDeps, id: string): Promise<Set<string>> {
  const out = new Set([id]);
  let current = id;
  for (let step = 0; step < 8 && current.startsWith("tok_"); step++) {
    const token = (await getTokenEntry(deps.kv, current)).value;
    if (token === null || out.has(token.created_by)) break;
    current = token.created_by;
    out.add(current);
  }
  return out;
}

/**
 * A request as one who may read the namespace's requests sees it
 * (`change.read`; 404 when there is no such request), before the step they
 * ask for checks what it needs.
 *
 * @param deps store
 * @param principal the caller
 * @param ref the namespace
 * @param id the request
 * @returns the request as stored now
 *
 * @example
 * ```ts ignore
 * const request = await readableChange(deps, reader, ref, id);
 * ```
 */
export async function readableChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
): Promise<ChangeRequestRecord> {
  await manifestTarget(deps, principal, ref, "change.read");
  return (await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id)).value;
}

function mustBeAuthor(principal: Principal, r: ChangeRequestRecord, what: string): void {
  if (principalId(principal) !== r.author_id) {
    throw new ForbiddenError(`Only the author of a change request may ${what} it`);
  }
}

/**
 * One step on a request as a compare-and-set (lib/store/change_requests.ts
 * `stepChangeRequest`), with the service's clock: `decide` gets the
 * request as read and the time now, and throws to refuse.
 *
 * @param deps store and clock
 * @param ref the namespace
 * @param id the request
 * @param decide the step
 * @returns the request after the step
 *
 * @example
 * ```ts ignore
 * await stepOn(deps, ref, id, (r, now) => ({ next: { ...r, status: "withdrawn" }, audit: [] }));
 * ```
 */
export function stepOn(
  deps: ServiceDeps,
  ref: NamespaceRef,
  id: string,
  decide: (r: ChangeRequestRecord, now: Date) => ChangeRequestStep | Promise<ChangeRequestStep>,
): Promise<ChangeRequestRecord> {
  const clock = clockOf(deps);
  return stepChangeRequest(
    deps.kv,
    ref.tenant,
    ref.namespace,
    id,
    (r) => decide(r, clock()),
    () => clock().getTime(),
  );
}

/**
 * Refuses a step the request's status does not allow: 409
 * `change_request_state`, naming the status.
 *
 * @param r the request
 * @param allowed the statuses that allow the step
 * @param step the step, as a past participle ("approved")
 * @returns nothing
 *
 * @example
 * ```ts
 * import { mustBeIn } from "./changes.ts";
 * const r = { id: "cr_1", status: "withdrawn" } as Parameters<typeof mustBeIn>[0];
 * let code = "";
 * try { mustBeIn(r, ["open"], "approved"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "change_request_state") throw new Error(code);
 * ```
 */
export function mustBeIn(
  r: Pick<ChangeRequestRecord, "id" | "status">,
  allowed: readonly ChangeStatus[],
  step: string,
): void {
  if (allowed.includes(r.status)) return;
  throw new ChangeStateError(r.id, r.status, step);
}

/**
 * A review names the revision of the files it was given (`revision`): a
 * request updated since is 409 `change_request_state` (read it again).
 */
function mustBeRevision(r: ChangeRequestRecord, revision: number | undefined): void {
  if (revision === undefined || revision === r.revision) return;
  throw new CfgtoolError(
    "change_request_state",
    `Change request ${r.id} was updated since you read it (revision ${revision}, now ` +
      `${r.revision}): read it again before you review it`,
    { status: 409, details: { status: r.status, revision: r.revision } },
  );
}

/** 409 `change_request_state`: the request's status does not allow the step. */
export class ChangeStateError extends CfgtoolError {
  /**
   * @param id the request
   * @param status its status
   * @param step the step refused
   */
  constructor(id: string, status: ChangeStatus, step: string) {
    super("change_request_state", `Change request ${id} is ${status}: it cannot be ${step}`, {
      status: 409,
      details: { status },
    });
    this.name = "ChangeStateError";
  }
}

function checkedMessage(message: unknown): string {
  if (typeof message !== "string" || message.trim() === "") {
    throw new InvalidRequestError("message is required: say what the change does and why", {
      details: { field: "message" },
    });
  }
  if (message.length > MAX_MESSAGE_LENGTH) {
    throw new InvalidRequestError(`message is over ${MAX_MESSAGE_LENGTH} characters`, {
      details: { field: "message" },
    });
  }
  return message.trim();
}

function checkedComment(text: unknown, required: boolean, max = MAX_MESSAGE_LENGTH): string {
  if (typeof text !== "string" || (required && text.trim() === "")) {
    throw new InvalidRequestError(
      required ? "A comment is required (text)" : "comment must be text",
      { details: { field: "comment" } },
    );
  }
  if (text.length > max) {
    throw new InvalidRequestError(`The comment is over ${max} characters`, {
      details: { field: "comment" },
    });
  }
  return text.trim();
}

/** Who opens or comments: the id, whether a person or a token, and a person's email. */
async function authorOf(
  deps: ServiceDeps,
  principal: Principal,
): Promise<Pick<ChangeRequestRecord, "author_id" | "author_kind" | "author_email">> {
  if (principal.kind === "token") {
    return { author_id: principal.token.id, author_kind: "token", author_email: null };
  }
  const user = await findUser(deps.kv, principal.user_id);
  return { author_id: principal.user_id, author_kind: "user", author_email: user?.email ?? null };
}

/**
 * The audit entry of a step on a request: its type, the actor, the
 * namespace, and in `details` the request id, status and the step's own
 * facts.
 *
 * @param type `change_request.<step>`
 * @param principal the actor (null: the scheduler)
 * @param ctx the request (null: the scheduler)
 * @param now when
 * @param r the request after the step
 * @param details the step's facts
 * @returns the entry
 *
 * @example
 * ```ts ignore
 * const audit = changeAudit("change_request.withdrawn", author, ctx, now, next, {});
 * ```
 */
export function changeAudit(
  type: string,
  principal: Principal | null,
  ctx: RequestContext | null,
  now: Date,
  r: ChangeRequestRecord,
  details: Record<string, unknown>,
) {
  const actor = principal === null
    ? { id: "scheduler", principal_type: "system" as const, request_id: null }
    : actorOf(principal, ctx?.requestId ?? null);
  return eventAuditEntry(type, actor, now, {
    tenant_slug: r.tenant_slug,
    namespace_slug: r.namespace_slug,
    details: { change_request_id: r.id, status: r.status, ...details },
  });
}
