/**
 * lib/store/leased_task.ts: one process of the installation runs the job
 * (the lease), a run longer than its lease keeps it, a run ends at its next
 * step on shutdown or when the lease is lost, failures are logged, the
 * timer runs the job every interval (or sooner when asked), and two real
 * processes on one KV file never run the job at the same time.
 */
import { assert, assertEquals } from "../assert.ts";
import type { LogLevel } from "../../lib/log.ts";
import {
  type LeasedRun,
  type LeasedTaskOptions,
  startLeasedTask,
} from "../../lib/store/leased_task.ts";
import { withKv } from "./world.ts";

const LEASE: Deno.KvKey = ["test_job_lease"];
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `cond` holds, up to `ms`. */
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await tick(5);
  }
}

/** Options of a job that counts its runs and returns the count. */
function counting(over: Partial<LeasedTaskOptions<number>> = {}): {
  options: LeasedTaskOptions<number>;
  runs: () => number;
} {
  let runs = 0;
  return {
    options: {
      name: "test job",
      leaseKey: LEASE,
      intervalMs: 60_000,
      log: () => {},
      run: () => Promise.resolve(++runs),
      ...over,
    },
    runs: () => runs,
  };
}

/** A job whose steps each wait for the test to let them go. */
function stepped() {
  const started: number[] = [];
  const gates: (() => void)[] = [];
  let reason: unknown = undefined;
  const run = async ({ signal }: LeasedRun) => {
    let steps = 0;
    while (steps < 10 && !signal.aborted) {
      started.push(steps);
      await new Promise<void>((r) => gates.push(r));
      steps++;
    }
    reason = signal.reason;
    return steps;
  };
  const release = () => gates.shift()?.();
  return { run, started, release, reason: () => reason };
}

Deno.test("one process runs the job; another on the same store waits for the lease until the first gives it back", async () => {
  await withKv(async (kv) => {
    const job = counting();
    const a = startLeasedTask(kv, job.options);
    const b = startLeasedTask(kv, job.options);
    try {
      assertEquals(await a.runOnce(), 1);
      assertEquals(await b.runOnce(), null, "a holds the lease");
      assertEquals(await a.runOnce(), 2, "a runs again under its own lease");
      assertEquals(await b.runOnce(), null);
      const lease = (await kv.get<{ holder: string; until: number }>(LEASE)).value;
      assert(lease !== null && lease.until > Date.now(), "the lease is kept after a run");
      await a.stop();
      assertEquals((await kv.get(LEASE)).value, null, "stopping gives it back");
      assertEquals(await b.runOnce(), 3);
    } finally {
      await a.stop();
      await b.stop();
    }
    assertEquals(job.runs(), 3);
  });
});

Deno.test("an expired lease of another process is taken over; a live one is not", async () => {
  await withKv(async (kv) => {
    let clock = 1_000_000;
    const job = counting({ now: () => new Date(clock), leaseMs: 500 });
    await kv.set(LEASE, { holder: "crashed", until: clock + 100 });
    const task = startLeasedTask(kv, job.options);
    try {
      assertEquals(await task.runOnce(), null, "still the crashed process's");
      clock += 100;
      assertEquals(await task.runOnce(), 1, "expired: taken over");
      const lease = (await kv.get<{ holder: string; until: number }>(LEASE)).value!;
      assertEquals(lease.until, clock + 500);
      assert(lease.holder !== "crashed");
    } finally {
      await task.stop();
    }
  });
});

Deno.test("a job stops at its next step when the task stops, and stop() waits for that step", async () => {
  await withKv(async (kv) => {
    const job = stepped();
    const task = startLeasedTask(kv, { ...counting().options, run: job.run });
    const result = task.runOnce();
    await until(() => job.started.length === 1);
    job.release(); // step 0 done
    await until(() => job.started.length === 2); // step 1 in progress
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await tick(30);
    assertEquals(stopped, false, "stop() waits for the step in progress");
    job.release(); // step 1 done: the job sees the signal before step 2
    await stopping;
    assertEquals(await result, 2);
    assertEquals(job.started, [0, 1], "no step after the shutdown");
    assertEquals(job.reason(), "shutdown");
    assertEquals((await kv.get(LEASE)).value, null, "the lease was given back");
  });
});

Deno.test("a run longer than its lease keeps it; a run whose lease another process took ends at its next step", async () => {
  await withKv(async (kv) => {
    const job = stepped();
    const options = { ...counting().options, leaseMs: 90, run: job.run };
    const a = startLeasedTask(kv, options);
    const b = startLeasedTask(kv, counting({ leaseMs: 90 }).options);
    try {
      const result = a.runOnce();
      await until(() => job.started.length === 1);
      // three lease lengths later a still holds it: renewed while it runs
      for (let i = 0; i < 9; i++) {
        await tick(30);
        assertEquals(await b.runOnce(), null, `b ran at ${i * 30} ms`);
      }
      const lease = (await kv.get<{ holder: string; until: number }>(LEASE)).value!;
      assert(lease.until > Date.now(), "renewed");
      // another process takes the lease (as after a lapse): a's next renewal finds out
      await kv.set(LEASE, { holder: "other", until: Date.now() + 60_000 });
      await tick(100);
      job.release();
      assertEquals(await result, 1);
      assertEquals(job.reason(), "a lost lease");
      assertEquals(job.started, [0]);
      const after = (await kv.get<{ holder: string }>(LEASE)).value!;
      assertEquals(after.holder, "other", "a does not take it back");
      await a.stop();
      assertEquals(
        (await kv.get<{ holder: string }>(LEASE)).value?.holder,
        "other",
        "nor delete it",
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

Deno.test("a run that throws is logged and counts as no run; one that throws while stopping is not logged", async () => {
  await withKv(async (kv) => {
    const lines: { level: LogLevel; msg: string; fields?: Record<string, unknown> }[] = [];
    let stopping = false;
    const task = startLeasedTask(kv, {
      ...counting().options,
      log: (level, msg, fields) =>
        void lines.push({ level, msg, ...(fields === undefined ? {} : { fields }) }),
      run: ({ signal }) => {
        if (stopping || signal.aborted) return Promise.reject(new Error("closing"));
        return Promise.reject(new TypeError("boom"));
      },
    });
    assertEquals(await task.runOnce(), null);
    assertEquals(lines, [{
      level: "error",
      msg: "test job run failed",
      fields: { error: "TypeError: boom" },
    }]);
    stopping = true;
    const last = task.runOnce();
    await task.stop();
    assertEquals(await last, null);
    assertEquals(lines.length, 1, "nothing logged for a run failing in a shutdown");
  });
});

Deno.test("the timer runs the job every interval, or after nextRunInMs, until stopped", async () => {
  await withKv(async (kv) => {
    const delays: (number | null)[] = [];
    const job = counting({
      intervalMs: 40,
      nextRunInMs: (result) => {
        delays.push(result);
        return result !== null && result < 3 ? 5 : 40;
      },
    });
    const task = startLeasedTask(kv, job.options);
    try {
      assertEquals(job.runs(), 0, "the first run comes one interval after the start");
      await until(() => job.runs() >= 4);
      assertEquals(delays.slice(0, 3), [1, 2, 3]);
    } finally {
      await task.stop();
    }
    const runs = job.runs();
    await tick(100);
    assertEquals(job.runs(), runs, "no run after stop()");
  });
});

/**
 * A child process: runs the job on the KV file for `ms`, asking for the
 * lease every few ms while another holds it, and waiting longer than the
 * lease after a run of its own (so the other process gets a turn: the
 * holder may always run again under its own lease). Prints each run's
 * [start, end, why it ended early].
 */
const CHILD = `
import { startLeasedTask } from ${
  JSON.stringify(new URL("../../lib/store/leased_task.ts", import.meta.url).href)
};
import { openKv } from ${JSON.stringify(new URL("../../lib/store/kv.ts", import.meta.url).href)};
const [path, ms] = Deno.args;
const kv = await openKv(path);
const tick = (ms) => new Promise((r) => setTimeout(r, ms));
const runs = [];
const task = startLeasedTask(kv, {
  name: "child", leaseKey: ["shared_job_lease"], intervalMs: 60_000, leaseMs: 600, log: () => {},
  run: async ({ signal }) => {
    const start = Date.now();
    // 40 steps of 20 ms: longer than the lease, so only its renewals keep it
    for (let i = 0; i < 40 && !signal.aborted; i++) await tick(20);
    runs.push([start, Date.now(), signal.reason ?? null]);
    return true;
  },
});
const end = Date.now() + Number(ms);
while (Date.now() < end) {
  const ran = await task.runOnce();
  await tick(ran === null ? 5 + Math.random() * 20 : 650 + Math.random() * 100);
}
await task.stop();
kv.close();
console.log(JSON.stringify(runs));
`;

Deno.test("two processes on one KV file never run the job at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-leased-" });
  try {
    const script = `${dir}/child.ts`;
    await Deno.writeTextFile(script, CHILD);
    const path = `${dir}/kv.sqlite3`;
    const child = () =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", "--no-config", "--no-lock", script, path, "5000"],
        stdout: "piped",
        stderr: "piped",
      }).output();
    const outputs = await Promise.all([child(), child()]);
    const runs = outputs.map((o) => {
      assert(o.success, new TextDecoder().decode(o.stderr));
      return JSON.parse(new TextDecoder().decode(o.stdout)) as [number, number, string | null][];
    });
    const [a, b] = runs as [typeof runs[0], typeof runs[0]];
    assert(a.length + b.length >= 3, `only ${a.length} + ${b.length} runs`);
    for (const [aStart, aEnd] of a) {
      for (const [bStart, bEnd] of b) {
        assert(
          aEnd <= bStart || bEnd <= aStart,
          `runs overlap: [${aStart}, ${aEnd}] and [${bStart}, ${bEnd}]`,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
