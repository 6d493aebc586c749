/**
 * Applying change requests: at once, at a time (Deno KV's durable queue),
 * or step by step (a progressive rollout).
 *
 * An apply commits the request's files through the one commit path
 * (lib/services/commits.ts) with the request's approvals, so protected
 * environments pass exactly when the approvals they need today were given;
 * the request is marked `applied` (with the version) and audited
 * `change_request.applied` in the same atomic commit as the version, whose
 * `manifest.pushed` entry names the request. When the head moved since the
 * request's base, the apply rebases: every path the request changes must
 * still hold on the head what it held on the base (or already what the
 * request proposes); the other paths keep the head's content. Otherwise
 * 409 `change_conflict` names the files and the request stays as it was.
 *
 * A schedule is a queue message `{kind: "change.apply", tenant, namespace,
 * id, schedule_id}` enqueued in the commit that marks the request
 * `scheduled`. Delivery is at least once and any process may take it: the
 * apply's commit checks the request is still scheduled under that
 * `schedule_id`, so a second delivery, a cancelled schedule or a race
 * between two processes commits nothing more. A scheduled apply that can
 * no longer commit (a conflict, an invalid manifest, approvals now
 * missing) ends `failed` with the reason, audited `change_request.failed`.
 *
 * A rollout request carries a plan: weights of one rollout rule of one
 * flag in one environment, step after step. Its approval (or its opening,
 * when no approval is needed) schedules the first step at once; each step
 * is a version, audited `change_request.rollout_step`, that schedules the
 * next in its own commit; the last marks the request applied. Cancelling
 * the schedule stops the remaining steps (the request goes back to
 * `approved`, and applying it again resumes); a step that cannot commit
 * fails the request.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { principalId } from "../auth/principal.ts";
import {
  CfgtoolError,
  ConflictError,
  ForbiddenError,
  InvalidRequestError,
  PreconditionFailedError,
  ProblemsError,
} from "../errors.ts";
import { applyQuickChange, rulesAsWritten } from "../flags/quick_change.ts";
import { instantOf } from "../protocol/time_text.ts";
import {
  applyMessage,
  type ChangeRequestRecord,
  findChangeRequest,
  getChangeRequest,
  type RolloutPlan,
  scheduled,
  updateChangeRequest,
} from "../store/change_requests.ts";
import type { QueueMessage } from "../store/queue.ts";
import { enqueueOn } from "../store/queue.ts";
import { readProtection } from "../store/protection.ts";
import { ulid } from "../store/ulid.ts";
import {
  getHead,
  type Head,
  readFiles,
  readTree,
  readTreeFiles,
  treeIds,
  type VersionMeta,
} from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { changeAudit, mustBeIn, openChangeRequest, readableChange, stepOn } from "./changes.ts";
import { checkAndCommit } from "./commits.ts";
import { clockOf, type ServiceDeps } from "./deps.ts";
import { ApprovalRequiredError, protectedImpact } from "./protection.ts";
import { flagPath, manifestTarget, type NamespaceRef, refAttributes } from "./versions.ts";

/** The furthest ahead an apply may be scheduled: a year. */
export const MAX_SCHEDULE_AHEAD_MS = 366 * 24 * 60 * 60 * 1000;

/** The most steps a rollout plan may have. */
export const MAX_ROLLOUT_STEPS = 20;

/** The shortest time between two rollout steps: a minute. */
export const MIN_ROLLOUT_EVERY_MS = 60_000;

/** The paths an apply could not rebase: another version changed them since the request's base. */
export class ChangeConflictError extends CfgtoolError {
  /** The paths in conflict. */
  readonly files: string[];

  /**
   * @param id the request
   * @param files the paths changed on the head since the request's base
   * @param head the head version
   */
  constructor(id: string, files: string[], head: number) {
    super(
      "change_conflict",
      `Change request ${id} cannot be applied on version ${head}: ` +
        `${files.join(", ")} changed since its base. Update the request on the current head`,
      { status: 409, details: { files, head } },
    );
    this.name = "ChangeConflictError";
    this.files = files;
  }
}

/** What an apply did: the version it committed (none when only scheduled) and the request. */
export interface ApplyOutcome {
  change_request: ChangeRequestRecord;
  version: VersionMeta | null;
}

/**
 * The files of the request rebased on the head: the head's files with the
 * request's changed paths set to what it proposes (or removed), or the
 * paths in conflict: those whose head content is neither the base's nor
 * the proposal's.
 *
 * @param changedPaths the paths the request changes
 * @param base the base's content ids
 * @param proposal the proposed files and their content ids
 * @param head the head's files and content ids
 * @returns the files to commit, or the conflicts
 *
 * @example
 * ```ts
 * import { rebaseFiles } from "./change_apply.ts";
 * const bytes = (s: string) => new TextEncoder().encode(s);
 * const base = new Map([["a", "1"], ["b", "b1"]]);
 * const proposal = { files: new Map([["a", bytes("A2")], ["b", bytes("B1")]]), ids: new Map([["a", "2"], ["b", "b1"]]) };
 * // b moved on the head: not the request's path, so the head's b stays
 * const head = { files: new Map([["a", bytes("A1")], ["b", bytes("B2")]]), ids: new Map([["a", "1"], ["b", "b2"]]) };
 * const ok = rebaseFiles(["a"], base, proposal, head);
 * if (!("files" in ok) || new TextDecoder().decode(ok.files.get("b")) !== "B2") throw new Error();
 * // a moved on the head: a conflict
 * const moved = { ...head, ids: new Map([["a", "3"], ["b", "b2"]]) };
 * const bad = rebaseFiles(["a"], base, proposal, moved);
 * if (!("conflicts" in bad) || bad.conflicts.join() !== "a") throw new Error();
 * ```
 */
export function rebaseFiles(
  changedPaths: readonly string[],
  base: ReadonlyMap<string, string>,
  proposal: { files: ReadonlyMap<string, Uint8Array>; ids: ReadonlyMap<string, string> },
  head: { files: ReadonlyMap<string, Uint8Array>; ids: ReadonlyMap<string, string> },
): { files: Map<string, Uint8Array> } | { conflicts: string[] } {
  const conflicts: string[] = [];
  const files = new Map(head.files);
  for (const path of changedPaths) {
    const now = head.ids.get(path) ?? null;
    const wanted = proposal.ids.get(path) ?? null;
    if (now !== (base.get(path) ?? null) && now !== wanted) conflicts.push(path);
    const bytes = proposal.files.get(path);
    if (bytes === undefined) files.delete(path);
    else files.set(path, bytes);
  }
  return conflicts.length > 0 ? { conflicts } : { files };
}

/**
 * Applies a request now, or schedules it (`at`, RFC 3339, in the future
 * and within a year: 202 in the API). The author (with `change.propose`)
 * or anyone with `change.apply`; the request must be approved (or
 * failed, or scheduled: applying now replaces the schedule) with the
 * approvals it needs (409 `approval_required`). A rollout request starts
 * (or resumes) its plan instead: its first remaining step at once, or at
 * `at`.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param id the request
 * @param at when to apply (absent: now)
 * @param ctx the request
 * @returns the version committed (null when scheduled) and the request
 *
 * @example
 * ```ts ignore
 * const { version } = await applyChange(deps, admin, ref, id, undefined, ctx);
 * ```
 */
export function applyChange(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  at: string | undefined,
  ctx: RequestContext,
): Promise<ApplyOutcome> {
  return withSpan("cfgtool.service.apply_change_request", refAttributes(ref), async () => {
    const first = await readableChange(deps, principal, ref, id);
    await mustApply(deps, principal, ref, first);
    const when = at === undefined ? undefined : scheduleTime(at, clockOf(deps)());
    mustBeIn(first, ["approved", "failed", "scheduled"], "applied");
    await mustHaveApprovals(deps, first);
    if (when !== undefined || first.plan !== null) {
      const record = await schedule(deps, principal, ref, id, when, ctx);
      return { change_request: record, version: null };
    }
    return await applyNow(deps, principal, ref, id, null, ctx);
  });
}

/**
 * Who may apply a request, now or at a time: anyone with `change.apply`
 * (admins), or its author when they may also change the manifest
 * (`manifest.write`): a member's own request needs an admin to land it,
 * protected or not. 403 otherwise.
 */
async function mustApply(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  r: ChangeRequestRecord,
): Promise<void> {
  const target = { tenant: ref.tenant, namespace: ref.namespace };
  if (await can(deps.kv, principal, "change.apply", target, { memo: memoOf(deps) })) return;
  if (principalId(principal) === r.author_id) {
    if (await can(deps.kv, principal, "manifest.write", target, { memo: memoOf(deps) })) return;
    throw new ForbiddenError(
      "You may propose changes but not make them: an admin of the namespace applies your request",
    );
  }
  await authorize(deps.kv, principal, "change.apply", target, { memo: memoOf(deps) }); // the refusal, with its reason
}

/**
 * Cancels a request's schedule (as for applying, or its author): a scheduled apply goes
 * back to `approved`; a rollout stops after the steps it took. Audited
 * `change_request.schedule_cancelled`.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param id the request
 * @param ctx the request
 * @returns the request
 *
 * @example
 * ```ts ignore
 * await cancelSchedule(deps, admin, ref, id, ctx);
 * ```
 */
export function cancelSchedule(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.cancel_change_schedule", refAttributes(ref), async () => {
    const first = await readableChange(deps, principal, ref, id);
    const author = principalId(principal) === first.author_id;
    await manifestTarget(deps, principal, ref, author ? "change.propose" : "change.apply");
    return await stepOn(deps, ref, id, (r, now) => {
      mustBeIn(r, ["scheduled"], "unscheduled");
      const next: ChangeRequestRecord = {
        ...r,
        status: "approved",
        scheduled_at: null,
        schedule_id: null,
        updated_at: now.toISOString(),
      };
      const audit = changeAudit("change_request.schedule_cancelled", principal, ctx, now, next, {
        was_scheduled_at: r.scheduled_at,
        ...(next.plan === null ? {} : { steps_done: next.plan.done }),
      });
      return { next, audit: [audit] };
    });
  });
}

/** Marks the request scheduled and enqueues its apply in the same commit. */
function schedule(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  id: string,
  when: Date | undefined,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return stepOn(deps, ref, id, async (r, now) => {
    mustBeIn(r, ["approved", "failed", "scheduled"], "scheduled");
    await mustHaveApprovals(deps, r);
    const { record, message } = scheduled(r, when ?? now, now);
    const audit = changeAudit("change_request.scheduled", principal, ctx, now, record, {
      scheduled_at: record.scheduled_at,
      ...(record.plan === null ? {} : { rollout: record.plan }),
    });
    return { next: record, audit: [audit], message };
  });
}

/**
 * Runs a scheduled apply from the queue: nothing when the request is gone,
 * no longer scheduled, or scheduled again since (another `schedule_id`);
 * otherwise the apply (or the rollout's next step), or the request marked
 * `failed` with the reason. Errors of the store are thrown, so the queue
 * delivers the message again.
 *
 * @param deps store, runtime, clock
 * @param message the queue message
 * @returns nothing
 *
 * @example
 * ```ts ignore
 * runtime.queue.on(APPLY_MESSAGE, (m) => runScheduledApply(deps, m));
 * ```
 */
export async function runScheduledApply(deps: ServiceDeps, message: QueueMessage): Promise<void> {
  const { tenant, namespace, id, schedule_id: scheduleId } = message;
  if (
    typeof tenant !== "string" || typeof namespace !== "string" || typeof id !== "string" ||
    typeof scheduleId !== "string"
  ) return;
  const ref = { tenant, namespace };
  const current = await findChangeRequest(deps.kv, tenant, namespace, id);
  if (!isDue(current.value, scheduleId)) return;
  try {
    await applyNow(deps, null, ref, id, scheduleId, { requestId: `schedule-${scheduleId}` });
  } catch (err) {
    if (err instanceof NotDue) return;
    if (!(err instanceof CfgtoolError) || err.status >= 500) throw err;
    await markFailed(deps, ref, id, scheduleId, err);
  }
}

/** Thrown inside an apply's commit when another delivery or a cancellation got there first. */
class NotDue extends Error {}

function isDue(r: ChangeRequestRecord | null, scheduleId: string): r is ChangeRequestRecord {
  return r !== null && r.status === "scheduled" && r.schedule_id === scheduleId;
}

/**
 * Commits the request's files (or its rollout's next step) on the head,
 * marking it in the same commit. `scheduleId` set: the scheduler runs it,
 * and the commit checks the request is still scheduled under that id.
 */
async function applyNow(
  deps: ServiceDeps,
  principal: Principal | null,
  ref: NamespaceRef,
  id: string,
  scheduleId: string | null,
  ctx: RequestContext,
): Promise<ApplyOutcome> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const read = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
    const r = read.value;
    if (scheduleId !== null && !isDue(r, scheduleId)) throw new NotDue();
    if (scheduleId === null) mustBeIn(r, ["approved", "failed", "scheduled"], "applied");
    await mustHaveApprovals(deps, r);
    const head = await getHead(deps.kv, ref.tenant, ref.namespace);
    if (head === null) throw new ConflictError(`The namespace ${ref.namespace} was deleted`);
    const files = r.plan === null
      ? await rebased(deps, ref, r, head)
      : await stepFiles(deps, ref, r.plan, head);
    const step = r.plan === null ? null : r.plan.done + 1;
    const last = r.plan === null || step === r.plan.steps.length;
    const message = r.plan === null
      ? `${r.message} (${r.id})`
      : `${r.message} (${r.id}, step ${step} of ${r.plan.steps.length}: ${
        r.plan.steps[r.plan.done]
      }%)`;
    let marked: ChangeRequestRecord | null = null;
    try {
      const result = await checkAndCommit(deps, principal, ref, files, {
        message: message.slice(0, 4096),
        ifMatch: head.version,
        createdBy: r.author_id,
        guards: {
          approvals: r.approvals.length,
          more: async () => {
            const entry = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
            if (scheduleId !== null && !isDue(entry.value, scheduleId)) throw new NotDue();
            if (entry.versionstamp !== read.versionstamp) {
              // approved, updated or stepped since its files were made: make them again
              throw new PreconditionFailedError("The change request changed meanwhile");
            }
            const now = clockOf(deps)();
            return {
              checks: [entry],
              details: { change_request_id: id },
              write: (op, version) => {
                marked = afterStep(entry.value, version, now);
                op.set(entry.key, marked);
                if (marked.status === "scheduled") {
                  enqueueOn(
                    op,
                    applyMessage(marked, new Date(marked.scheduled_at!)),
                    now.getTime(),
                  );
                }
              },
              audit: (version) => [
                changeAudit(
                  last ? "change_request.applied" : "change_request.rollout_step",
                  principal,
                  principal === null ? null : ctx,
                  now,
                  afterStep(entry.value, version, now),
                  {
                    version,
                    ...(r.plan === null
                      ? {}
                      : { step, of: r.plan.steps.length, weight: r.plan.steps[r.plan.done] }),
                  },
                ),
              ],
            };
          },
        },
      }, ctx);
      if (result.changed && marked !== null) {
        return { change_request: marked, version: result.version };
      }
      // the head holds these files already: the request is applied on it
      const done = await markUnchanged(deps, principal, ref, id, scheduleId, result.version, ctx);
      if (done !== null) return done;
    } catch (err) {
      if (err instanceof PreconditionFailedError) continue; // the head or the request moved: again
      throw err;
    }
  }
  throw new ConflictError(`The namespace ${ref.namespace} keeps changing; try again`);
}

/** The request after a step (or the whole apply) committed `version`. */
function afterStep(r: ChangeRequestRecord, version: number, now: Date): ChangeRequestRecord {
  const base = { ...r, failure: null, updated_at: now.toISOString() };
  if (r.plan === null || r.plan.done + 1 >= r.plan.steps.length) {
    return {
      ...base,
      ...(r.plan === null ? {} : { plan: { ...r.plan, done: r.plan.steps.length } }),
      status: "applied",
      applied_version: version,
      scheduled_at: null,
      schedule_id: null,
    };
  }
  const at = new Date(now.getTime() + r.plan.every_ms);
  return {
    ...base,
    plan: { ...r.plan, done: r.plan.done + 1 },
    applied_version: version,
    status: "scheduled",
    scheduled_at: at.toISOString(),
    schedule_id: ulid(now.getTime()),
  };
}

/** The step or apply changed nothing (the head has these files): mark it on the head's version. */
async function markUnchanged(
  deps: ServiceDeps,
  principal: Principal | null,
  ref: NamespaceRef,
  id: string,
  scheduleId: string | null,
  version: VersionMeta,
  ctx: RequestContext,
): Promise<ApplyOutcome | null> {
  const entry = await getChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
  if (scheduleId !== null && !isDue(entry.value, scheduleId)) throw new NotDue();
  if (scheduleId === null) mustBeIn(entry.value, ["approved", "failed", "scheduled"], "applied");
  const now = clockOf(deps)();
  const next = afterStep(entry.value, version.version, now);
  const audit = changeAudit(
    next.status === "applied" ? "change_request.applied" : "change_request.rollout_step",
    principal,
    principal === null ? null : ctx,
    now,
    next,
    { version: version.version, unchanged: true },
  );
  const queued = next.status === "scheduled"
    ? { message: applyMessage(next, new Date(next.scheduled_at!)), now: now.getTime() }
    : undefined;
  if (!(await updateChangeRequest(deps.kv, entry, next, [audit], queued))) return null;
  return { change_request: next, version };
}

/** The request's files rebased on the head (409 `change_conflict` when they cannot be). */
async function rebased(
  deps: ServiceDeps,
  ref: NamespaceRef,
  r: ChangeRequestRecord,
  head: Head,
): Promise<Map<string, Uint8Array>> {
  const [proposalFiles, proposalIds] = await Promise.all([
    readTreeFiles(deps.kv, r.tree),
    treeIds(deps.kv, r.tree, `change request ${r.id}`),
  ]);
  if (head.version === r.base_version) return proposalFiles;
  const [headFiles, headIds, baseIds] = await Promise.all([
    readFiles(deps.kv, ref.tenant, ref.namespace, head.version),
    readTree(deps.kv, ref.tenant, ref.namespace, head.version),
    treeIds(deps.kv, r.base_tree, `the base of ${r.id}`),
  ]);
  const out = rebaseFiles(r.changed_paths, baseIds, { files: proposalFiles, ids: proposalIds }, {
    files: headFiles,
    ids: headIds,
  });
  if ("conflicts" in out) throw new ChangeConflictError(r.id, out.conflicts, head.version);
  return out.files;
}

/** The head's files with the rollout's next weights (400 when the flag no longer has that rollout). */
async function stepFiles(
  deps: ServiceDeps,
  ref: NamespaceRef,
  plan: RolloutPlan,
  head: Head,
): Promise<Map<string, Uint8Array>> {
  const files = await readFiles(deps.kv, ref.tenant, ref.namespace, head.version);
  const path = flagPath(plan.flag);
  const bytes = files.get(path);
  if (bytes === undefined) {
    throw new InvalidRequestError(`The flag ${plan.flag} is no longer in the namespace`);
  }
  const weight = plan.steps[plan.done]!;
  const text = new TextDecoder().decode(bytes);
  const weights = rolloutWeights(text, plan, weight);
  const next = applyQuickChange(text, {
    kind: "weights",
    environment: plan.environment,
    rule: plan.rule,
    weights,
  });
  const out = new Map(files);
  out.set(path, new TextEncoder().encode(next));
  return out;
}

/** The weights of a rollout of two variations with `weight` percent on the plan's variation. */
function rolloutWeights(text: string, plan: RolloutPlan, weight: number): Record<string, number> {
  const rule = rulesAsWritten(text, plan.environment)[plan.rule];
  const entries = rule?.rollout;
  if (
    entries === undefined || entries.length !== 2 ||
    !entries.some((e) => e.variation === plan.variation)
  ) {
    throw new InvalidRequestError(
      `Rule ${plan.rule + 1} of ${plan.flag} in ${plan.environment} is no longer a rollout of ` +
        `${plan.variation} and one other variation`,
    );
  }
  const other = entries.find((e) => e.variation !== plan.variation)!.variation;
  return { [plan.variation]: weight, [other]: 100 - weight };
}

/** The request marked `failed` with the reason of its scheduled apply (audited, so notified). */
async function markFailed(
  deps: ServiceDeps,
  ref: NamespaceRef,
  id: string,
  scheduleId: string,
  err: CfgtoolError,
): Promise<void> {
  const reason = err instanceof ProblemsError
    ? `${err.message}: ${err.problems.slice(0, 3).map((p) => p.message).join("; ")}`
    : err.message;
  for (let attempt = 0; attempt < 8; attempt++) {
    const entry = await findChangeRequest(deps.kv, ref.tenant, ref.namespace, id);
    if (!isDue(entry.value, scheduleId)) return;
    const now = clockOf(deps)();
    const next: ChangeRequestRecord = {
      ...entry.value,
      status: "failed",
      failure: reason.slice(0, 2000),
      scheduled_at: null,
      schedule_id: null,
      updated_at: now.toISOString(),
    };
    const audit = changeAudit("change_request.failed", null, null, now, next, {
      code: err.code,
      reason: next.failure,
      ...(err.details === undefined ? {} : { problem: err.details }),
    });
    if (
      await updateChangeRequest(
        deps.kv,
        entry as Deno.KvEntry<ChangeRequestRecord>,
        next,
        [audit],
      )
    ) return;
  }
}

/**
 * 409 `approval_required` when the request has fewer approvals than it
 * needs, naming the protected environments its impact reaches now.
 */
async function mustHaveApprovals(deps: ServiceDeps, r: ChangeRequestRecord): Promise<void> {
  if (r.approvals.length >= r.required_approvals) return;
  const { record } = await readProtection(deps.kv, r.tenant_slug, r.namespace_slug);
  const hit = protectedImpact(record.environments, r.impact);
  throw new ApprovalRequiredError(
    hit.environments.length > 0 ? hit.environments : r.impact,
    r.required_approvals,
  );
}

/** An RFC 3339 time in the future and within a year (400 otherwise). */
function scheduleTime(at: string, now: Date): Date {
  const when = instantOf(at);
  if (when === null) {
    throw new InvalidRequestError(
      `at must be a time with its zone, like 2026-12-24T09:00:00Z, not ${
        JSON.stringify(String(at).slice(0, 40))
      }`,
      { details: { field: "at" } },
    );
  }
  if (when.getTime() <= now.getTime()) {
    throw new InvalidRequestError(`at (${at}) is in the past: apply now, or pick a later time`, {
      details: { field: "at" },
    });
  }
  if (when.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) {
    throw new InvalidRequestError(`at (${at}) is more than a year ahead`, {
      details: { field: "at" },
    });
  }
  return when;
}

/** What a rollout request asks for. */
export interface RolloutAsk {
  flag: string;
  environment: string;
  /** The variation rolled out (default: the rollout's first entry). */
  variation?: string | undefined;
  /** Percentages, increasing, each 1–100. */
  steps: number[];
  /** Time between steps, ms. */
  every_ms: number;
  message: string;
}

/**
 * Opens a progressive rollout request: the plan is checked (1–20
 * increasing percentages of 0–100, at least a minute apart), the flag must
 * have a rollout of two variations among the rules in force in the
 * environment (the first such rule is the one stepped), and the request's
 * files are the head's with the last step's weights (so its impact and
 * the approvals it needs are the whole plan's). Approving it schedules
 * the first step at once.
 *
 * @param deps store, runtime, clock
 * @param principal the author
 * @param ref the namespace
 * @param ask the flag, environment, variation, steps, interval and message
 * @param ctx the request
 * @returns the request
 *
 * @example
 * ```ts ignore
 * await openRollout(deps, writer, ref, { flag: "checkout", environment: "production", steps: [5, 25, 50, 100], every_ms: 86_400_000, message: "new checkout" }, ctx);
 * ```
 */
export function openRollout(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  ask: RolloutAsk,
  ctx: RequestContext,
): Promise<ChangeRequestRecord> {
  return withSpan("cfgtool.service.open_rollout", refAttributes(ref), async () => {
    const head = await manifestTarget(deps, principal, ref, "change.propose");
    const steps = checkedSteps(ask.steps);
    if (!Number.isInteger(ask.every_ms) || ask.every_ms < MIN_ROLLOUT_EVERY_MS) {
      throw new InvalidRequestError("every must be at least a minute", {
        details: { field: "every" },
      });
    }
    if (ask.every_ms * steps.length > MAX_SCHEDULE_AHEAD_MS) {
      throw new InvalidRequestError("The whole plan must end within a year", {
        details: { field: "every" },
      });
    }
    const files = await readFiles(deps.kv, ref.tenant, ref.namespace, head.version);
    const path = flagPath(ask.flag);
    const bytes = files.get(path);
    if (bytes === undefined) {
      throw new InvalidRequestError(`There is no flag ${ask.flag} (no ${path})`, {
        details: { field: "flag" },
      });
    }
    const text = new TextDecoder().decode(bytes);
    const rules = rulesAsWritten(text, ask.environment);
    const rule = rules.find((r) => r.rollout?.length === 2);
    if (rule === undefined) {
      throw new InvalidRequestError(
        `${ask.flag} has no rollout of two variations in ${ask.environment}: ` +
          `add a rule with rollout = [{ variation = "on", weight = 0 }, { variation = "off", weight = 100 }] first`,
        { details: { field: "flag" } },
      );
    }
    const variation = ask.variation ?? rule.rollout![0]!.variation;
    if (!rule.rollout!.some((e) => e.variation === variation)) {
      throw new InvalidRequestError(
        `The rollout of ${ask.flag} in ${ask.environment} has no entry for ${
          JSON.stringify(variation)
        }`,
        { details: { field: "variation" } },
      );
    }
    const plan: RolloutPlan = {
      flag: ask.flag,
      environment: ask.environment,
      rule: rule.index,
      variation,
      steps,
      every_ms: ask.every_ms,
      done: 0,
    };
    const end = new Map(files);
    end.set(
      path,
      new TextEncoder().encode(
        applyQuickChange(text, {
          kind: "weights",
          environment: ask.environment,
          rule: rule.index,
          weights: rolloutWeights(text, plan, steps.at(-1)!),
        }),
      ),
    );
    const opened = await openChangeRequest(deps, principal, ref, {
      files: end,
      message: ask.message,
      base_version: head.version,
      plan,
    }, ctx);
    if (opened.status !== "approved") return opened;
    // no approval needed: it starts at once when its author may apply it (else an admin applies it)
    const target = { tenant: ref.tenant, namespace: ref.namespace };
    const applier = await can(deps.kv, principal, "change.apply", target, { memo: memoOf(deps) }) ||
      await can(deps.kv, principal, "manifest.write", target, { memo: memoOf(deps) });
    if (!applier) return opened;
    return await schedule(deps, principal, ref, opened.id, undefined, ctx);
  });
}

function checkedSteps(steps: unknown): number[] {
  const ok = Array.isArray(steps) && steps.length >= 1 && steps.length <= MAX_ROLLOUT_STEPS &&
    steps.every((s, i) =>
      Number.isInteger(s) && s >= 0 && s <= 100 && (i === 0 || s > (steps[i - 1] as number))
    );
  if (!ok) {
    throw new InvalidRequestError(
      `steps must be 1 to ${MAX_ROLLOUT_STEPS} increasing whole percentages from 0 to 100, like 5,25,50,100`,
      { details: { field: "steps" } },
    );
  }
  return steps as number[];
}
