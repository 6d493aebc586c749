/**
 * The sweep of scheduled change requests: one process of the installation
 * (a leased task) looks, every interval, for requests still `scheduled`
 * well past their time and puts their apply on the queue again. The queue
 * delivers each message at least once but drops one whose handler kept
 * failing; a request whose message was lost would otherwise stay
 * scheduled for ever. The apply is idempotent per schedule, so a message
 * sent twice does nothing more.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import { applyMessage, type ChangeRequestRecord } from "./change_requests.ts";
import { allChangeRequestsPrefix, scheduleSweepLeaseKey } from "./keys.ts";
import { type LeasedTask, startLeasedTask } from "./leased_task.ts";
import { enqueueOn } from "./queue.ts";

/** How long past its time a scheduled request waits before the sweep sends it again, ms. */
export const OVERDUE_MS = 5 * 60_000;

/**
 * Puts the apply of every request scheduled more than {@linkcode OVERDUE_MS}
 * ago on the queue again (due at once).
 *
 * @param kv the store
 * @param now the time now
 * @param signal ends the sweep between two requests
 * @returns how many were sent again
 *
 * @example
 * ```ts
 * import { resendOverdue } from "./schedule_sweep.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await resendOverdue(kv, new Date()) !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function resendOverdue(
  kv: Deno.Kv,
  now: Date,
  signal?: AbortSignal,
): Promise<number> {
  let sent = 0;
  for await (const e of kv.list<ChangeRequestRecord>({ prefix: allChangeRequestsPrefix() })) {
    if (signal?.aborted) break;
    const r = e.value;
    if (r.status !== "scheduled" || r.scheduled_at === null || r.schedule_id === null) continue;
    if (Date.parse(r.scheduled_at) > now.getTime() - OVERDUE_MS) continue;
    await enqueueOn(kv.atomic(), applyMessage(r, now), now.getTime()).commit();
    sent++;
  }
  return sent;
}

/**
 * Starts the sweep (the first run one interval after the start).
 *
 * @param kv the store
 * @param options interval, log, clock
 * @returns the task (stop it at shutdown)
 *
 * @example
 * ```ts
 * import { startScheduleSweep } from "./schedule_sweep.ts";
 * const kv = await Deno.openKv(":memory:");
 * const sweep = startScheduleSweep(kv, { intervalMs: 60_000, log: () => {} });
 * if (await sweep.runOnce() !== 0) throw new Error();
 * await sweep.stop();
 * kv.close();
 * ```
 */
export function startScheduleSweep(
  kv: Deno.Kv,
  options: { intervalMs: number; log: Logger; now?: () => Date },
): LeasedTask<number> {
  return startLeasedTask(kv, {
    name: "schedule sweep",
    leaseKey: scheduleSweepLeaseKey(),
    intervalMs: options.intervalMs,
    log: options.log,
    ...(options.now === undefined ? {} : { now: options.now }),
    run: ({ signal, now }) => resendOverdue(kv, now, signal),
  });
}
