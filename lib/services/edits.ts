/**
 * Edits made in the console: a person's edit of one or more manifest
 * files (a flag, its rules, a segment, an environment; a quick change is
 * one too), made as text edits on the version their form was built from,
 * previewed, then committed or proposed. One flow for every kind of edit:
 *
 * 1. authorise `manifest.write` and read the head once (403, 404);
 * 2. read the request against the base version (the form's `base`): a
 *    message is required; the edit is made on that version's files
 *    (refused with the person's field named when it cannot be);
 * 3. preview: the file diff, the problems of the whole manifest, and when
 *    it is valid what changes value by value, the environments it affects
 *    and which of them are protected (compared off the event loop when
 *    large);
 * 4. commit with `If-Match: base` through the one commit path
 *    (lib/services/commits.ts), or open a change request when asked to
 *    propose; a commit into a protected environment comes back as
 *    `approval_required` with what it would have committed.
 *
 * A base that is no longer the head is a conflict: the versions committed
 * since, and the edit made again on the head (a new preview, or why it no
 * longer applies), with nothing committed.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import type { Principal } from "../auth/principal.ts";
import {
  CfgtoolError,
  InvalidRequestError,
  NotFoundError,
  type Problem,
  ProblemsError,
} from "../errors.ts";
import type { ValueChange } from "../flags/value_changes.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { readProtection } from "../store/protection.ts";
import { type Head, listVersions, type VersionMeta } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { type ChangeRequestRecord, openChangeRequest } from "./changes.ts";
import { pushFiles } from "./commits.ts";
import { type Deferred, resolveInput } from "./deps.ts";
import { ApprovalRequiredError, protectedImpact } from "./protection.ts";
import {
  currentHead,
  fileText,
  manifestTarget,
  type NamespaceRef,
  type NamespaceView,
  refAttributes,
  type ViewDeps,
} from "./versions.ts";

/** What an edit writes: path → the file's new text, or null to delete it. */
export type FileEdits = ReadonlyMap<string, string | null>;

/** An edit as the person entered it, read once they may change the namespace. */
export interface AskedEdit {
  /** The new version's message: required, at most {@linkcode MAX_MESSAGE_LENGTH} characters. */
  message: string;
  /** Open a change request with the edit instead of committing it. */
  propose?: boolean | undefined;
  /**
   * Makes the edit on a version: the files it writes. Throws an
   * {@linkcode InvalidRequestError} to refuse (a field named in
   * `details.field`), a {@linkcode NotFoundError} when what it edits is
   * not in that version.
   */
  make(view: NamespaceView): FileEdits;
}

/** What an edit asks for, read once the caller may change the namespace. */
export interface EditRequest {
  /** The version the form was built from (the commit's `If-Match`). */
  base: number;
  /**
   * Reads the edit against the base version (a 400 or 404 it throws is the
   * request's), or null when the person only asks for the form again.
   */
  read(view: NamespaceView): AskedEdit | null;
}

/** One file of an edit: its text before (`""`: new) and after (null: deleted). */
export interface FileEdit {
  path: string;
  before: string;
  after: string | null;
}

/** An edit made on a version, and what it does. */
export interface MadeEdit {
  /** The files it changes, in path order. */
  edits: FileEdit[];
  /** The whole manifest after the edit. */
  files: ReadonlyMap<string, Uint8Array>;
  /** What is wrong with that manifest (empty: it can be committed). */
  problems: Problem[];
  /** What changes, value by value (null when the manifest is not valid). */
  changes: ValueChange[] | null;
  /** The environments whose evaluation changes (null when not valid). */
  impact: string[] | null;
  /** Which of them are protected now, and the approvals they need (0: none). */
  protection: { environments: string[]; required: number };
}

/** The edit made again on the head that was committed after the base. */
export type EditAgain =
  /** It cannot be made there (what it edits is gone, or its input no longer fits). */
  | { kind: "refused"; error: CfgtoolError }
  /** The head has what it asks for already. */
  | { kind: "unchanged" }
  /** A new preview, on the head. */
  | ({ kind: "preview" } & MadeEdit);

/** What became of an edit ({@linkcode previewEdit}, {@linkcode commitEdit}). */
export type EditOutcome =
  /** Only the form was asked for. */
  | { kind: "form"; view: NamespaceView }
  /** The message or the edit was refused (400, 404): the form again, with the refusal. */
  | { kind: "refused"; view: NamespaceView; error: CfgtoolError }
  /** The edit changes nothing; nothing was committed. */
  | { kind: "unchanged"; view: NamespaceView }
  /** The preview. */
  | ({ kind: "preview"; view: NamespaceView } & MadeEdit)
  /** The commit was refused: the manifest would not be valid (422). */
  | ({ kind: "invalid"; view: NamespaceView } & MadeEdit)
  /** The head is no longer the base (412): the versions since and the edit made again. */
  | {
    kind: "conflict";
    view: NamespaceView;
    head: NamespaceView;
    theirs: VersionMeta[];
    again: EditAgain;
  }
  /** It affects a protected environment (409): nothing committed; propose it instead. */
  | ({ kind: "approval_required"; view: NamespaceView } & MadeEdit)
  /** The change request it opened (asked to propose). */
  | { kind: "proposed"; view: NamespaceView; change_request: ChangeRequestRecord }
  /** The new version. */
  | { kind: "committed"; view: NamespaceView; version: VersionMeta };

/**
 * Previews an edit (see the module documentation); nothing is written.
 *
 * @param deps store, runtime and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the base and the edit, read only once authorised
 * @returns the outcome to show
 *
 * @example
 * ```ts ignore
 * const shown = await previewEdit(deps, person, ref, { base: 3, read: () => ({ message: "m", make: () => new Map([["flags/x.toml", text]]) }) });
 * ```
 */
export function previewEdit(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<EditRequest>,
): Promise<EditOutcome> {
  return withSpan(
    "cfgtool.service.preview_edit",
    refAttributes(ref),
    () => runEdit(deps, principal, ref, request, undefined),
  );
}

/**
 * Commits an edit, or proposes it (see the module documentation).
 *
 * @param deps store, runtime, clock and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the base and the edit, read only once authorised
 * @param ctx the request (its id goes into the audit entry)
 * @returns the outcome to show
 *
 * @example
 * ```ts ignore
 * const done = await commitEdit(deps, person, ref, request, ctx);
 * if (done.kind === "committed") redirect(done.version.version);
 * ```
 */
export function commitEdit(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<EditRequest>,
  ctx: RequestContext,
): Promise<EditOutcome> {
  return withSpan(
    "cfgtool.service.commit_edit",
    refAttributes(ref),
    () => runEdit(deps, principal, ref, request, ctx),
  );
}

/**
 * The flow itself, without a span of its own: a preview when `ctx` is
 * undefined, else a commit or a proposal. For services that shape an edit
 * of their own (the quick changes of lib/services/manifests.ts).
 *
 * @param deps store, runtime, clock and parsed versions
 * @param principal the caller
 * @param ref the namespace
 * @param request the base and the edit, read only once authorised
 * @param ctx the request, for a commit
 * @returns the outcome
 *
 * @example
 * ```ts ignore
 * const outcome = await runEdit(deps, person, ref, request, undefined); // a preview
 * ```
 */
export async function runEdit(
  deps: ViewDeps,
  principal: Principal,
  ref: NamespaceRef,
  request: Deferred<EditRequest>,
  ctx: RequestContext | undefined,
): Promise<EditOutcome> {
  const head = await manifestTarget(deps, principal, ref, "manifest.write");
  const { base, read } = await resolveInput(request);
  const view = await deps.views.view(deps, ref, head, base);
  const asked = read(view);
  if (asked === null) return { kind: "form", view };
  const refusal = messageRefusal(asked.message);
  if (refusal !== undefined) return { kind: "refused", view, error: refusal };
  // A preview on an old version is already a conflict; a commit finds out from the store.
  if (ctx === undefined && head.version !== base) {
    return await conflict(deps, view, asked, head);
  }
  const edits = editsOn(view, asked);
  if (edits instanceof CfgtoolError) return { kind: "refused", view, error: edits };
  if (edits.length === 0) return { kind: "unchanged", view };
  const files = filesAfter(view.files, edits);
  if (ctx === undefined) return { kind: "preview", view, ...await made(deps, view, edits, files) };
  if (asked.propose === true) {
    try {
      const change_request = await openChangeRequest(deps, principal, ref, {
        files,
        message: asked.message,
        base_version: base,
      }, ctx);
      return { kind: "proposed", view, change_request };
    } catch (err) {
      if (err instanceof ProblemsError) {
        return { kind: "invalid", view, ...await made(deps, view, edits, files) };
      }
      throw err;
    }
  }
  try {
    const result = await pushFiles(deps, principal, ref, files, {
      message: asked.message,
      ifMatch: base,
    }, ctx);
    if (!result.changed) return { kind: "unchanged", view };
    return { kind: "committed", view, version: result.version };
  } catch (err) {
    if (err instanceof CfgtoolError && err.code === "precondition_failed") {
      return await conflict(deps, view, asked, await currentHead(deps, ref));
    }
    if (err instanceof ProblemsError) {
      return { kind: "invalid", view, ...await made(deps, view, edits, files) };
    }
    if (err instanceof ApprovalRequiredError) {
      return { kind: "approval_required", view, ...await made(deps, view, edits, files) };
    }
    throw err;
  }
}

/**
 * Someone committed after the base: the head, the versions since the base
 * (newest first, at most 20) and the edit made again on the head.
 */
async function conflict(
  deps: ViewDeps,
  view: NamespaceView,
  asked: AskedEdit,
  head: Head,
): Promise<EditOutcome> {
  const ref = { tenant: view.tenant, namespace: view.namespace };
  const now = await deps.views.view(deps, ref, head);
  const { items } = await listVersions(deps.kv, ref.tenant, ref.namespace, {
    limit: 20,
    after: head.version + 1,
  });
  const theirs = items.filter((v) => v.version > view.meta.version && v.version <= head.version);
  const conflicted = { kind: "conflict" as const, view, head: now, theirs };
  const edits = editsOn(now, asked);
  if (edits instanceof CfgtoolError) {
    return { ...conflicted, again: { kind: "refused", error: edits } };
  }
  if (edits.length === 0) return { ...conflicted, again: { kind: "unchanged" } };
  const again = await made(deps, now, edits, filesAfter(now.files, edits));
  return { ...conflicted, again: { kind: "preview", ...again } };
}

/** The files an edit changes on a version (only those it really changes), or its refusal. */
function editsOn(view: NamespaceView, asked: AskedEdit): FileEdit[] | CfgtoolError {
  let wanted: FileEdits;
  try {
    wanted = asked.make(view);
  } catch (err) {
    if (err instanceof InvalidRequestError || err instanceof NotFoundError) return err;
    throw err;
  }
  const out: FileEdit[] = [];
  for (const [path, after] of [...wanted].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    const exists = view.files.has(path);
    const before = fileText(view, path);
    if (after === null ? !exists : exists && after === before) continue;
    out.push({ path, before, after });
  }
  return out;
}

const encoder = new TextEncoder();

/** A version's files with the edits made. */
function filesAfter(
  files: ReadonlyMap<string, Uint8Array>,
  edits: readonly FileEdit[],
): Map<string, Uint8Array> {
  const out = new Map(files);
  for (const { path, after } of edits) {
    if (after === null) out.delete(path);
    else out.set(path, encoder.encode(after));
  }
  return out;
}

/** What an edit does: problems, and when valid the value changes, impact and protection. */
async function made(
  deps: ViewDeps,
  view: NamespaceView,
  edits: FileEdit[],
  files: ReadonlyMap<string, Uint8Array>,
): Promise<MadeEdit> {
  const { problems } = await deps.runtime.workers.check(files);
  if (problems.length > 0) {
    return {
      edits,
      files,
      problems,
      changes: null,
      impact: null,
      protection: { environments: [], required: 0 },
    };
  }
  const [{ impact, changes }, { record }] = await Promise.all([
    deps.runtime.workers.compare(view.files, files, true),
    readProtection(deps.kv, view.tenant, view.namespace),
  ]);
  return {
    edits,
    files,
    problems,
    changes,
    impact,
    protection: protectedImpact(record.environments, impact),
  };
}

/**
 * Why a message cannot be a version's, if it cannot: missing, or over
 * {@linkcode MAX_MESSAGE_LENGTH} characters.
 *
 * @param message the message
 * @returns the refusal, or undefined
 *
 * @example
 * ```ts
 * import { messageRefusal } from "./edits.ts";
 * if (messageRefusal(" ")?.code !== "invalid_request" || messageRefusal("why") !== undefined) {
 *   throw new Error();
 * }
 * ```
 */
export function messageRefusal(message: string): InvalidRequestError | undefined {
  if (message.trim() === "") {
    return new InvalidRequestError(
      "Write a message: it says in the version history why this changed",
      { details: { field: "message" } },
    );
  }
  if (message.length > MAX_MESSAGE_LENGTH) {
    return new InvalidRequestError(
      `The message is ${message.length} characters; at most ${MAX_MESSAGE_LENGTH}`,
      { details: { field: "message" } },
    );
  }
  return undefined;
}
