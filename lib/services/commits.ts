/**
 * The one commit path of a manifest version: a file set is validated (off
 * the event loop when large: 422 `invalid_manifest` with every problem),
 * digested, and committed as the next version with its audit entry (the
 * caller as actor, the request's id), under the guard of the namespace's
 * protected environments (lib/services/protection.ts) and whatever the
 * caller adds to the same commit (a change request marked applied); the
 * runtime is told when the content changed. Push, rollback, the console's
 * changes and change requests all commit through here.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { hashFileSet } from "../closure/hash.ts";
import { ProblemsError } from "../errors.ts";
import type { Environment } from "../flags/model.ts";
import type { AuditActor } from "../store/audit.ts";
import {
  type CommitAdditions,
  type CommitResult,
  commitVersion,
  type FileSetHashes,
  type Head,
} from "../store/versions.ts";
import { clockOf, type ServiceDeps } from "./deps.ts";
import { type GuardOptions, protectionGuard } from "./protection.ts";
import type { NamespaceRef } from "./versions.ts";

/** How a commit passes protected environments, and what it adds to the commit. */
export interface CommitGuards extends GuardOptions {
  /** More checks and writes of the same commit, given the head it replaces. */
  more?: (head: Head) => CommitAdditions | undefined | Promise<CommitAdditions | undefined>;
}

/** What a commit stores besides the files: their digests, environments, message and guards. */
export interface CheckedFiles {
  files: ReadonlyMap<string, Uint8Array>;
  hashed: FileSetHashes;
  environments: Record<string, Environment>;
  message: string | null;
  /** `If-Match`: another head gives 412. */
  ifMatch?: number | undefined;
  /** The version whose files these are, for a rollback. */
  rolledBackTo?: number | undefined;
  /** Protected environments' guard options and further additions. */
  guards?: CommitGuards | undefined;
  /** The version's author when it is not the caller (an applied change request's). */
  createdBy?: string | undefined;
}

/** The actor of what the queue does on its own: a scheduled apply. */
export const SCHEDULER_ACTOR: AuditActor = {
  id: "scheduler",
  principal_type: "system",
  request_id: null,
};

/**
 * The one commit path: a validated, digested file set becomes the next
 * version with its audit entry (the caller as actor, the request's id),
 * under the protected environments' guard and the caller's additions, and
 * the runtime is told when the content changed.
 *
 * @param deps store, runtime, clock
 * @param principal the caller (null: the scheduler)
 * @param ref the namespace
 * @param input the checked files, message, `If-Match`, guards, author
 * @param ctx the request
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts ignore
 * await commitChecked(deps, principal, ref, { files, hashed, environments, message: null }, ctx);
 * ```
 */
export async function commitChecked(
  deps: ServiceDeps,
  principal: Principal | null,
  ref: NamespaceRef,
  input: CheckedFiles,
  ctx: RequestContext,
): Promise<CommitResult> {
  const { ifMatch, rolledBackTo } = input;
  const guards = input.guards ?? {};
  const protection = protectionGuard(deps, ref, input.files, guards);
  const result = await commitVersion(deps.kv, {
    guard: async (head) => merge(await protection(head), await guards.more?.(head)),
    ...ref,
    files: input.files,
    hashed: input.hashed,
    environments: input.environments,
    created_by: input.createdBy ??
      (principal === null ? SCHEDULER_ACTOR.id : principalId(principal)),
    actor: principal === null ? SCHEDULER_ACTOR : actorOf(principal, ctx.requestId),
    message: input.message,
    now: clockOf(deps),
    ...(ifMatch === undefined ? {} : { ifMatch }),
    ...(rolledBackTo === undefined ? {} : { rolledBackTo }),
  });
  if (result.changed) deps.runtime.namespaceChanged(ref.tenant, ref.namespace);
  return result;
}

/**
 * Validates a file set off the event loop when it is large (422
 * `invalid_manifest` with every problem), digests it and commits it
 * ({@linkcode commitChecked}).
 *
 * @param deps store, runtime, clock
 * @param principal the caller (null: the scheduler)
 * @param ref the namespace
 * @param files the manifest's files
 * @param options message, `If-Match`, rollback, guards, author
 * @param ctx the request
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts ignore
 * await checkAndCommit(deps, principal, ref, files, { message: "m" }, ctx);
 * ```
 */
export async function checkAndCommit(
  deps: ServiceDeps,
  principal: Principal | null,
  ref: NamespaceRef,
  files: ReadonlyMap<string, Uint8Array>,
  options: Pick<CheckedFiles, "message" | "ifMatch" | "rolledBackTo" | "guards" | "createdBy">,
  ctx: RequestContext,
): Promise<CommitResult> {
  const [check, hashed] = await Promise.all([
    deps.runtime.workers.check(files),
    hashFileSet(files),
  ]);
  if (check.problemCount > 0) {
    throw new ProblemsError(check.problems, undefined, undefined, check.problemCount);
  }
  return await commitChecked(
    deps,
    principal,
    ref,
    { files, hashed, environments: check.environments, ...options },
    ctx,
  );
}

/**
 * Commits a file set as a push ({@linkcode checkAndCommit}) and counts it
 * with its size.
 *
 * @param deps store, runtime, clock
 * @param principal the author
 * @param ref the namespace
 * @param files the manifest's files
 * @param options message, `If-Match`, guards
 * @param ctx the request
 * @returns the new version (or the head when unchanged) and whether it changed
 *
 * @example
 * ```ts ignore
 * await pushFiles(deps, person, ref, files, { message: "m", ifMatch: 3 }, ctx);
 * ```
 */
export async function pushFiles(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  files: ReadonlyMap<string, Uint8Array>,
  options: Pick<CheckedFiles, "message" | "ifMatch" | "guards">,
  ctx: RequestContext,
): Promise<CommitResult> {
  const result = await checkAndCommit(deps, principal, ref, files, options, ctx);
  let size = 0;
  for (const bytes of files.values()) size += bytes.length;
  deps.runtime.metrics.pushed(size, result.changed);
  return result;
}

/** Two guards' additions as one. */
function merge(a: CommitAdditions, b: CommitAdditions | undefined): CommitAdditions {
  if (b === undefined) return a;
  return {
    checks: [...(a.checks ?? []), ...(b.checks ?? [])],
    write: (op, version) => {
      a.write?.(op, version);
      b.write?.(op, version);
    },
    audit: (version) => [...(a.audit?.(version) ?? []), ...(b.audit?.(version) ?? [])],
    details: { ...a.details, ...b.details },
  };
}
