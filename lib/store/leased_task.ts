/**
 * A periodic job that one process of an installation runs at a time:
 * every process sharing the KV starts the task, and the process that holds
 * the job's KV lease runs it. Written once for the retention jobs
 * (lib/store/retention.ts, lib/store/audit_retention.ts).
 *
 * The lease is a record `{holder, until}` at the job's key: a process may
 * take it when it is free, expired (`until` passed) or already its own,
 * in a commit checked against the record as read, so of two processes
 * racing for it one wins. It lasts a bit less than the interval (by
 * default 90% of it), so the next tick of any process may run the job
 * after a crash; the holder renews it while a run goes on (every third of
 * its length), so a run longer than the lease keeps it, and ends the run at
 * its next step when a renewal finds the lease taken by another process,
 * or when it could not renew it and less than a third of it is left. (A
 * step that outlasts that third can still overlap a run of another
 * process: steps must be short next to the lease.) After a run the lease is kept until
 * it expires (one run per interval, whichever process's tick comes first);
 * {@linkcode LeasedTask.stop} gives it back, so another process may take
 * over at its next tick.
 *
 * A run works in bounded steps and looks at its `signal` between two of
 * them: the signal is aborted when the task stops (a shutdown, reason
 * `"shutdown"`) or the lease is lost (reason `"a lost lease"`), and the
 * run returns at its next step. A run that throws is logged (`error`,
 * `<name> run failed`) unless the task was stopping, and counts as no run.
 *
 * @module
 */
import type { Logger } from "../log.ts";

/** What a run of a {@linkcode LeasedTask} is given. */
export interface LeasedRun {
  /** Aborted when the task stops (reason `"shutdown"`) or the lease is lost (reason `"a lost lease"`): return at the next step. */
  signal: AbortSignal;
  /** The task's clock when the lease was taken. */
  now: Date;
}

/** Options of {@linkcode startLeasedTask}. */
export interface LeasedTaskOptions<R> {
  /** Names the job in the failure line (`<name> run failed`). */
  name: string;
  /** Key of the job's lease record, the same in every process of the installation. */
  leaseKey: Deno.KvKey;
  /** Interval between runs, ms (the first run comes one interval after the start). */
  intervalMs: number;
  /** One run, in bounded steps, checking `signal` between two. */
  run: (ctx: LeasedRun) => Promise<R>;
  /** Where failures go. */
  log: Logger;
  /** Clock, for tests (default: the system clock). */
  now?: () => Date;
  /** How long a lease lasts, ms (default 90% of the interval). */
  leaseMs?: number;
  /** Delay before the next timed run, from the last one's result (null: no run); default the interval. */
  nextRunInMs?: (result: R | null) => number;
}

/** A started leased task. */
export interface LeasedTask<R> {
  /**
   * Runs the job now when this process holds or takes the lease (else
   * resolves to null; also null when the run failed). While a run is in
   * progress, returns that run.
   */
  runOnce(): Promise<R | null>;
  /**
   * Stops the timer, ends a run in progress at its next step (waiting for
   * that step) and gives the lease back.
   */
  stop(): Promise<void>;
}

/** The stored lease of a job. */
interface LeaseRecord {
  holder: string;
  until: number;
}

/** The reason a run's signal is aborted with when the task stops. */
const SHUTDOWN = "shutdown";
/** The reason a run's signal is aborted with when its lease was lost. */
const LOST = "a lost lease";

/**
 * Starts a periodic job that one process of the installation runs at a
 * time (see the module documentation for the lease and the steps).
 *
 * @param kv the store shared by the processes
 * @param options the job, its lease key, interval, logger and clock
 * @returns the task
 *
 * @example
 * ```ts
 * import { startLeasedTask } from "./leased_task.ts";
 * const kv = await Deno.openKv(":memory:");
 * const options = {
 *   name: "example",
 *   leaseKey: ["example_lease"],
 *   intervalMs: 60_000,
 *   log: () => {},
 *   run: async ({ signal }: { signal: AbortSignal }) => {
 *     let steps = 0;
 *     while (steps < 3 && !signal.aborted) {
 *       await kv.set(["example_step"], ++steps); // one bounded step
 *     }
 *     return steps;
 *   },
 * };
 * const task = startLeasedTask(kv, options);
 * if (await task.runOnce() !== 3) throw new Error("this process takes the lease and runs");
 * // a second process on the same store waits for the lease: no run
 * const other = startLeasedTask(kv, options);
 * if (await other.runOnce() !== null) throw new Error("the lease is held");
 * await other.stop();
 * // stopping gives the lease back: the other process may run now
 * await task.stop();
 * const again = startLeasedTask(kv, options);
 * if (await again.runOnce() !== 3) throw new Error("the lease was given back");
 * await again.stop();
 * kv.close();
 * ```
 */
export function startLeasedTask<R>(kv: Deno.Kv, options: LeasedTaskOptions<R>): LeasedTask<R> {
  const holder = crypto.randomUUID();
  const key = options.leaseKey;
  const now = () => options.now?.() ?? new Date();
  const leaseMs = Math.max(1, Math.floor(options.leaseMs ?? options.intervalMs * 0.9));
  const beatMs = Math.max(1, Math.floor(leaseMs / 3));
  const halt = new AbortController();
  let running: Promise<R | null> | null = null;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** Versionstamp of the lease this process wrote last (null: it holds none). */
  let held: string | null = null;

  async function takeLease(): Promise<boolean> {
    const lease = await kv.get<LeaseRecord>(key);
    const t = now().getTime();
    if (lease.value !== null && lease.value.until > t && lease.value.holder !== holder) {
      held = null;
      return false;
    }
    const record: LeaseRecord = { holder, until: t + leaseMs };
    const res = await kv.atomic().check(lease).set(key, record).commit();
    held = res.ok ? res.versionstamp : null;
    return res.ok;
  }

  /**
   * Renews the lease every beat while a run goes on. The run is told to
   * stop (`lose`) when another process took the lease, or when less than a
   * beat of it is left without a renewal (the KV is slow or failing): it
   * ends at its next step, before the lease lapses.
   */
  function keepLease(until: number, lose: () => void): () => Promise<void> {
    let renewing: Promise<void> = Promise.resolve();
    let busy = false;
    let lost = false;
    const loseOnce = () => {
      if (lost) return;
      lost = true;
      lose();
    };
    const renew = async (stamp: string) => {
      const record: LeaseRecord = { holder, until: now().getTime() + leaseMs };
      try {
        const res = await kv.atomic().check({ key, versionstamp: stamp }).set(key, record)
          .commit();
        if (!res.ok) {
          held = null; // another process took it after it lapsed
          return loseOnce();
        }
        held = res.versionstamp;
        until = record.until;
      } catch {
        // failed this once: the next beat tries again, unless the lease is about to lapse
      }
    };
    const beat = setInterval(() => {
      if (lost) return;
      if (until - now().getTime() < beatMs) return loseOnce();
      if (busy || held === null) return;
      busy = true;
      renewing = renew(held).finally(() => (busy = false));
    }, beatMs);
    Deno.unrefTimer(beat);
    return async () => {
      clearInterval(beat);
      await renewing;
    };
  }

  async function run(): Promise<R | null> {
    if (!await takeLease()) return null;
    const taken = now();
    // the run's own signal: the task's shutdown, or this run's lost lease
    const cut = new AbortController();
    const onHalt = () => cut.abort(SHUTDOWN);
    if (halt.signal.aborted) onHalt();
    else halt.signal.addEventListener("abort", onHalt, { once: true });
    const release = keepLease(taken.getTime() + leaseMs, () => cut.abort(LOST));
    try {
      return await options.run({ signal: cut.signal, now: taken });
    } finally {
      halt.signal.removeEventListener("abort", onHalt);
      await release();
    }
  }

  function runOnce(): Promise<R | null> {
    if (running !== null) return running;
    running = run().catch((err) => {
      if (!stopped) {
        options.log("error", `${options.name} run failed`, {
          error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        });
      }
      return null;
    }).finally(() => {
      running = null;
    });
    return running;
  }

  function schedule(ms: number): void {
    if (stopped) return;
    const handle = setTimeout(async () => {
      const result = await runOnce();
      schedule(options.nextRunInMs?.(result) ?? options.intervalMs);
    }, ms);
    Deno.unrefTimer(handle);
    timer = handle;
  }

  /** Gives the lease back when this process still holds the version it wrote. */
  async function giveBack(): Promise<void> {
    if (held === null) return;
    const stamp = held;
    held = null;
    try {
      await kv.atomic().check({ key, versionstamp: stamp }).delete(key).commit();
    } catch {
      // the KV is closing: the lease expires on its own
    }
  }

  schedule(options.intervalMs);
  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      halt.abort(SHUTDOWN);
      if (running !== null) await running;
      await giveBack();
    },
  };
}
