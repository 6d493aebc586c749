/**
 * The one-time backfill of the people index (lib/store/people.ts) on a
 * store that had sign-ins before the index existed. Sign-ins write their
 * people record themselves; what came before is read from two sources:
 *
 * 1. every stored session admitted to a tenant (`["session", id]`, in id
 *    order), as its sign-in;
 * 2. then, tenant by tenant in slug order, the `login.succeeded` entries of
 *    the tenant's audit log made since the current tenant of that slug was
 *    created (`["audit", t, id]`, oldest first).
 *
 * Each sign-in is merged into the person's record ({@linkcode recordSignIn}:
 * the earliest first sign-in, the latest last one), so reading one twice
 * changes nothing: the backfill is idempotent, and a sign-in made while it
 * runs is never undone. It goes in bounded steps of at most
 * {@linkcode BACKFILL_BATCH} records read; after each step its progress
 * (the source and the last key read) is saved at `["people_backfill"]`,
 * so a run cut short (a shutdown, a crash) resumes where it stopped. When
 * both sources are read the record becomes `{state: "done", …}` with the
 * counts, and that completion is logged once (`people index backfilled`,
 * `info` when anything was read, `debug` on a store without sign-ins).
 *
 * Every server process starts the task at start-up
 * ({@linkcode startPeopleBackfill}); one process of the installation at a
 * time runs it (a KV lease, lib/store/leased_task.ts), and once the record
 * says `done` a run reads that one record and stops.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { AuditEntry } from "./audit.ts";
import {
  auditPrefix,
  peopleBackfillKey,
  peopleBackfillLeaseKey,
  sessionPrefix,
  tenantKey,
  tenantPrefix,
} from "./keys.ts";
import { type LeasedTask, startLeasedTask } from "./leased_task.ts";
import { recordSignIn, type SignInFact } from "./people.ts";
import {
  normalizeSession,
  type SessionLoginMethod,
  type SessionRecord,
  signInOf,
} from "./sessions.ts";
import type { TenantRecord } from "./tenants.ts";
import { ulidFloor } from "./ulid.ts";

/** Records read per step (sessions or audit entries). */
export const BACKFILL_BATCH = 200;

/** The progress of the backfill, as stored at `["people_backfill"]`. */
export interface BackfillProgress {
  /** `running` until both sources are read, then `done`. */
  state: "running" | "done";
  /** The source being read: the sessions, then the tenants' audit logs. */
  phase: "sessions" | "audit";
  /** The last session id read (sessions phase). */
  session_after: string | null;
  /** The tenant whose audit log is being read (audit phase; null: not started). */
  tenant: string | null;
  /** The last audit entry id read in that tenant's log. */
  entry_after: string | null;
  /** Sessions admitted to a tenant and `login.succeeded` entries read, people records written. */
  counts: { sessions: number; entries: number; written: number };
  started_at: string;
  finished_at: string | null;
}

/** What one {@linkcode backfillStep} did. */
export interface BackfillStepResult {
  /** The progress after the step. */
  progress: BackfillProgress;
  /** True only for the step that finished the backfill (its completion is logged once). */
  finished: boolean;
}

/** The methods of a sign-in to a tenant, as `login.succeeded` entries name them. */
const SIGN_IN_METHODS: readonly SessionLoginMethod[] = ["oidc", "saml", "email"];

/**
 * The sign-in a `login.succeeded` entry of a tenant's audit log records,
 * or null for any other entry (another type, a failure, no tenant, not a
 * user, an unknown method). Audit entries carry no groups.
 *
 * @param entry an audit entry
 * @returns the sign-in, or null
 *
 * @example
 * ```ts
 * import { signInFromAudit } from "./people_backfill.ts";
 * import { eventAuditEntry } from "./audit.ts";
 * const actor = { id: "usr_1", principal_type: "user" as const, request_id: "r1" };
 * const e = eventAuditEntry("login.succeeded", actor, new Date(), { tenant_slug: "acme", details: { method: "saml", client: "cli" } });
 * if (signInFromAudit(e)?.client !== "cli" || signInFromAudit({ ...e, type: "login.failed" }) !== null) throw new Error();
 * ```
 */
export function signInFromAudit(entry: AuditEntry): SignInFact | null {
  if (
    entry.type !== "login.succeeded" || entry.result !== "success" ||
    entry.principal_type !== "user" || !entry.actor_id.startsWith("usr_") ||
    entry.tenant_slug === null
  ) {
    return null;
  }
  const method = SIGN_IN_METHODS.find((m) => m === entry.details.method);
  if (method === undefined) return null;
  return {
    user_id: entry.actor_id,
    at: entry.timestamp,
    method,
    client: entry.details.client === "cli" ? "cli" : "browser",
    groups: [],
  };
}

/**
 * Reads the backfill's progress record (null before its first step).
 *
 * @param kv the store
 * @returns the progress, or null
 *
 * @example
 * ```ts
 * import { backfillProgress } from "./people_backfill.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await backfillProgress(kv) !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function backfillProgress(kv: Deno.Kv): Promise<BackfillProgress | null> {
  return (await kv.get<BackfillProgress>(peopleBackfillKey())).value;
}

/**
 * One bounded step of the backfill: reads at most `batch` records of the
 * current source from where the last step stopped, records the sign-ins
 * among them and saves the progress (in a commit checked against the
 * progress as read: of two processes stepping at once, one step counts;
 * the other's records were idempotent merges). Does nothing once done.
 *
 * @param kv the store
 * @param now the time (for `started_at` and `finished_at`)
 * @param batch records read at most
 * @returns the progress after the step, and whether this step finished it
 *
 * @example
 * ```ts
 * import { backfillStep } from "./people_backfill.ts";
 * const kv = await Deno.openKv(":memory:");
 * let step = await backfillStep(kv, new Date());
 * while (step.progress.state !== "done") step = await backfillStep(kv, new Date());
 * if (!step.finished || (await backfillStep(kv, new Date())).finished) throw new Error();
 * kv.close();
 * ```
 */
export async function backfillStep(
  kv: Deno.Kv,
  now: Date,
  batch: number = BACKFILL_BATCH,
): Promise<BackfillStepResult> {
  const entry = await kv.get<BackfillProgress>(peopleBackfillKey());
  const progress = entry.value ?? {
    state: "running",
    phase: "sessions",
    session_after: null,
    tenant: null,
    entry_after: null,
    counts: { sessions: 0, entries: 0, written: 0 },
    started_at: now.toISOString(),
    finished_at: null,
  };
  if (progress.state === "done") return { progress, finished: false };
  const next = progress.phase === "sessions"
    ? await sessionsStep(kv, progress, batch)
    : await auditStep(kv, progress, batch);
  if (next.state === "done") next.finished_at = now.toISOString();
  const res = await kv.atomic().check(entry).set(peopleBackfillKey(), next).commit();
  if (!res.ok) return { progress: (await backfillProgress(kv)) ?? next, finished: false };
  return { progress: next, finished: next.state === "done" };
}

/** Reads up to `batch` sessions after the last one read. */
async function sessionsStep(
  kv: Deno.Kv,
  p: BackfillProgress,
  batch: number,
): Promise<BackfillProgress> {
  const counts = { ...p.counts };
  const prefix = sessionPrefix();
  const after = p.session_after;
  const selector = after === null ? { prefix } : { prefix, start: [...prefix, after] };
  let last = after;
  let read = 0;
  let more = false;
  for await (const e of kv.list<SessionRecord>(selector, { limit: batch + 2 })) {
    const id = String(e.key[1]);
    if (id === after) continue; // the start key is inclusive
    if (read === batch) {
      more = true;
      break;
    }
    read++;
    last = id;
    const s = normalizeSession(e.value);
    if (s.tenants.length === 0) continue; // made on the server host: no sign-in
    counts.sessions++;
    for (const t of s.tenants) if (await recordSignIn(kv, t, signInOf(s))) counts.written++;
  }
  return more
    ? { ...p, session_after: last, counts }
    : { ...p, phase: "audit", tenant: null, entry_after: null, counts };
}

/** Reads up to `batch` audit entries of the current tenant, or moves on to the next tenant. */
async function auditStep(
  kv: Deno.Kv,
  p: BackfillProgress,
  batch: number,
): Promise<BackfillProgress> {
  const counts = { ...p.counts };
  const tenant = p.tenant ?? await tenantAfter(kv, null);
  if (tenant === null) return { ...p, state: "done", counts };
  const record = (await kv.get<TenantRecord>(tenantKey(tenant))).value;
  const moveOn = async (): Promise<BackfillProgress> => {
    const next = await tenantAfter(kv, tenant);
    return next === null
      ? { ...p, state: "done", tenant, entry_after: null, counts }
      : { ...p, tenant: next, entry_after: null, counts };
  };
  if (record === null) return await moveOn(); // deleted meanwhile
  // Only the current tenant's log: a deleted tenant of the same slug admitted no one here.
  const floor = ulidFloor(Date.parse(record.created_at));
  const after = p.entry_after;
  const prefix = auditPrefix(tenant);
  const from = after !== null && after > floor ? after : floor;
  let last = after;
  let read = 0;
  let more = false;
  for await (
    const e of kv.list<AuditEntry>({ prefix, start: [...prefix, from] }, { limit: batch + 2 })
  ) {
    if (e.value.id === after) continue; // the start key is inclusive
    if (read === batch) {
      more = true;
      break;
    }
    read++;
    last = e.value.id;
    const fact = signInFromAudit(e.value);
    if (fact === null || fact.at < record.created_at) continue;
    counts.entries++;
    if (await recordSignIn(kv, tenant, fact)) counts.written++;
  }
  return more ? { ...p, tenant, entry_after: last, counts } : await moveOn();
}

/** The first tenant slug after `slug` (after none: the first), or null. */
async function tenantAfter(kv: Deno.Kv, slug: string | null): Promise<string | null> {
  const prefix = tenantPrefix();
  const selector = slug === null ? { prefix } : { prefix, start: [...prefix, slug] };
  for await (const e of kv.list(selector, { limit: 2 })) {
    const found = String(e.key[1]);
    if (found !== slug) return found;
  }
  return null;
}

/** Options of {@linkcode runPeopleBackfill}. */
export interface BackfillRunOptions {
  /** Ends the run between two steps. */
  signal?: AbortSignal;
  /** Clock (default: now). */
  now?: Date;
  /** Records read per step (default {@linkcode BACKFILL_BATCH}). */
  batch?: number;
  /** Where the completion is logged. */
  log?: Logger;
}

/**
 * Runs backfill steps until the backfill is done or `signal` is aborted,
 * and logs the completion once (by the run whose step finished it).
 *
 * @param kv the store
 * @param options signal, clock, batch size, logger
 * @returns the progress when the run ended
 *
 * @example
 * ```ts
 * import { runPeopleBackfill } from "./people_backfill.ts";
 * const kv = await Deno.openKv(":memory:");
 * const lines: string[] = [];
 * const done = await runPeopleBackfill(kv, { log: (_level, msg) => lines.push(msg) });
 * if (done.state !== "done" || lines.join() !== "people index backfilled") throw new Error();
 * await runPeopleBackfill(kv, { log: (_level, msg) => lines.push(msg) });
 * if (lines.length !== 1) throw new Error("logged once");
 * kv.close();
 * ```
 */
export async function runPeopleBackfill(
  kv: Deno.Kv,
  options: BackfillRunOptions = {},
): Promise<BackfillProgress> {
  while (true) {
    const step = await backfillStep(kv, options.now ?? new Date(), options.batch);
    const p = step.progress;
    if (step.finished) {
      options.log?.(
        p.counts.sessions + p.counts.entries > 0 ? "info" : "debug",
        "people index backfilled",
        {
          sessions_read: p.counts.sessions,
          sign_in_entries_read: p.counts.entries,
          people_records_written: p.counts.written,
        },
      );
    }
    if (p.state === "done" || options.signal?.aborted) return p;
  }
}

/** How long a process waits before it tries again when another holds the lease or a run failed, ms. */
export const BACKFILL_RETRY_MS = 60_000;

/** The longest timer delay: after the backfill is done, the task waits this long between looks. */
const IDLE_MS = 2 ** 31 - 1;

/**
 * Starts the backfill at server start: a leased task
 * (lib/store/leased_task.ts) that runs at once, and again every
 * `intervalMs` until a run finds it done (another process may hold the
 * lease, or a run may have been cut short).
 *
 * @param kv the store
 * @param options logger, retry interval (default {@linkcode BACKFILL_RETRY_MS}), clock, batch size
 * @returns the task (stop it at shutdown)
 *
 * @example
 * ```ts
 * import { startPeopleBackfill } from "./people_backfill.ts";
 * const kv = await Deno.openKv(":memory:");
 * const task = startPeopleBackfill(kv, { log: () => {} });
 * if ((await task.runOnce())?.state !== "done") throw new Error();
 * await task.stop();
 * kv.close();
 * ```
 */
export function startPeopleBackfill(
  kv: Deno.Kv,
  options: { log: Logger; intervalMs?: number; now?: () => Date; batch?: number },
): LeasedTask<BackfillProgress> {
  const intervalMs = options.intervalMs ?? BACKFILL_RETRY_MS;
  const task = startLeasedTask<BackfillProgress>(kv, {
    name: "people backfill",
    leaseKey: peopleBackfillLeaseKey(),
    intervalMs,
    log: options.log,
    ...(options.now === undefined ? {} : { now: options.now }),
    nextRunInMs: (result) => result?.state === "done" ? IDLE_MS : intervalMs,
    run: ({ signal, now }) =>
      runPeopleBackfill(kv, {
        signal,
        now,
        log: options.log,
        ...(options.batch === undefined ? {} : { batch: options.batch }),
      }),
  });
  void task.runOnce();
  return task;
}
