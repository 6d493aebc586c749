/**
 * Event-stream fan-out: push → delivery at every subscriber, next to its
 * yardstick in the same run, with the subscribers spread over several
 * client processes.
 *
 * ```sh
 * deno run -A bench/stream_fanout.ts [--n 10000] [--clients 4] [--pushes 5]
 *   [--modes bare,cfgtool] [--slice 0]
 * STREAM_BENCH_CPU_PROF=<dir> deno run -A bench/stream_fanout.ts …  # a V8 CPU profile per server
 * ```
 *
 * Each mode gets its own server process (bench/stream_server.ts) and N idle
 * subscribers opened from `--clients` processes of its own
 * (bench/stream_clients.ts, raw HTTP/1.1 over TCP; every subscriber waits
 * for its first event). Then `--pushes` rounds: in each, every mode in turn
 * sends one version and each client process notes when each of its
 * subscribers read the frame (wall clock, ms). The modes alternate push by
 * push, so they see the same load on the machine.
 *
 * - `cfgtool`: the real service with the realistic namespace (50 flags, 20
 *   segments) and subscribers to `acme/web:*`; a push is a `PUT …/manifest`
 *   changing one flag's description, timed from just before the request.
 *   The inline event is 1.3 KB. The server's "event fan-out" log line
 *   gives its time from the head change to the last write (`ms`) and to
 *   the frame being ready (`delta_ms`).
 * - `bare`: `Deno.serve` writing one 1.3 KB frame to N open
 *   `ReadableStream` responses, timed from just before the write command:
 *   the runtime, the kernel and the clients, without cfgtool. `--slice`
 *   makes it write that many streams at a time with a turn of the event
 *   loop between slices, as the hub does (default 0: one loop).
 * - `bounded`: the same behind lib/net/bounded_server.ts.
 * - `cfgtool@<dir>`: `cfgtool` served from another checkout of the
 *   repository (its lib/ and bench/stream_server.ts), to set a change
 *   against the code before it in one run: `--modes bare,cfgtool@../before,cfgtool`.
 *
 * Printed per mode once its subscribers are open: how long that took
 * (from the first connection until every subscriber holds its first
 * event) and the CPU time the server process used meanwhile, all its
 * threads (less sensitive to other work on the machine than the time).
 * Printed per push: first, p50, p99 and the last subscriber, the server's
 * fan-out time; then the median of each over the pushes. The clients and
 * the servers share the machine's cores, so client-side reading is part of
 * every figure (the yardstick pays it too). Loopback only; every process
 * is stopped at the end.
 *
 * @module
 */
import {
  openClients,
  parseMode,
  quantile,
  sleep,
  startBenchServer,
  startInstallation,
} from "./stream_harness.ts";

const opts = { n: "10000", clients: "4", pushes: "5", modes: "bare,cfgtool", slice: "0" };
for (let i = 0; i < Deno.args.length; i += 2) {
  const k = Deno.args[i]!.replace(/^--/, "") as keyof typeof opts;
  if (!(k in opts)) throw new Error(`unknown option ${Deno.args[i]}`);
  opts[k] = Deno.args[i + 1]!;
}
const N = Number(opts.n);
const PUSHES = Number(opts.pushes);
const CLIENTS = Number(opts.clients);

interface PushResult {
  first: number;
  p50: number;
  p99: number;
  last: number;
  missing: number;
  serverMs: number | null;
}

/** One server with its subscribers, ready to push. */
interface Setup {
  mode: string;
  push(p: number): Promise<PushResult>;
  stop(): Promise<void>;
}

async function setUp(mode: string): Promise<Setup> {
  const fanoutMs = new Map<number, number>();
  const onLog = (line: string) => {
    if (!line.includes('"event fan-out"')) return;
    try {
      const l = JSON.parse(line);
      fanoutMs.set(l.version, l.ms);
    } catch {
      // not JSON
    }
  };
  const inst = parseMode(mode).kind === "cfgtool"
    ? await startInstallation({ maxConnectionsPerToken: N + 100 }, onLog, undefined, mode)
    : null;
  const server = inst?.server ?? await startBenchServer(mode);
  const path = inst ? "/api/v1/events?ns=acme/web:*" : "/events";
  const cpu0 = await server.cpuMs();
  const t0 = performance.now();
  const clients = await openClients(server.port, N, CLIENTS, path, inst?.admin);
  const storm = performance.now() - t0;
  const cpu = await server.cpuMs() - cpu0;
  console.log(
    `${mode}: ${clients.ready} of ${N} subscribers ready in ${
      (storm / 1000).toFixed(1)
    } s over ${CLIENTS} client processes, server CPU ${
      Number.isNaN(cpu) ? "n/a" : `${(cpu / 1000).toFixed(2)} s`
    }${clients.failed ? ` (${clients.failed} failed: ${clients.errors[0]})` : ""}`,
  );
  return {
    mode,
    async push(p) {
      const start = Date.now();
      let version: number;
      if (inst) version = await inst.pushChange(`push ${p} at ${start}`);
      else {
        version = p + 1;
        await server.push(version, Number(opts.slice));
      }
      const { times, missing } = await clients.arrivals(`web:${version}`);
      const lat = times.map((t) => t - start).sort((a, b) => a - b);
      await sleep(300); // the server's log line
      return {
        first: lat[0] ?? NaN,
        p50: quantile(lat, 0.5),
        p99: quantile(lat, 0.99),
        last: lat.at(-1) ?? NaN,
        missing,
        serverMs: fanoutMs.get(version) ?? null,
      };
    },
    async stop() {
      await clients.stop();
      if (inst) await inst.close();
      else await server.proc.stop();
    },
  };
}

const setups: Setup[] = [];
const results = new Map<string, PushResult[]>();
try {
  for (const mode of opts.modes.split(",")) {
    setups.push(await setUp(mode));
    results.set(mode, []);
  }
  await sleep(2000);
  // Pushes alternate between the servers, so both see the same machine load.
  for (let p = 0; p < PUSHES; p++) {
    for (const s of setups) {
      const r = await s.push(p);
      results.get(s.mode)!.push(r);
      console.log(
        `  ${s.mode} push ${p + 1}: first ${r.first} ms, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
          `last ${r.last} ms` + (r.serverMs !== null ? `; server fan-out ${r.serverMs} ms` : "") +
          (r.missing ? `; ${r.missing} subscribers missed it` : ""),
      );
      await sleep(700);
    }
  }
} finally {
  for (const s of setups) await s.stop();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `\nmedian over ${PUSHES} pushes (N = ${N}, ${CLIENTS} client processes per server):\n` +
    "| mode | first | p50 | p99 | last | server fan-out | missed |\n" +
    "| --- | --: | --: | --: | --: | --: | --: |",
);
for (const [mode, rs] of results) {
  const server = rs.filter((r) => r.serverMs !== null).map((r) => r.serverMs!);
  console.log(
    `| ${mode} | ${median(rs.map((r) => r.first))} ms | ${median(rs.map((r) => r.p50))} ms | ${
      median(rs.map((r) => r.p99))
    } ms | ${median(rs.map((r) => r.last))} ms | ${
      server.length ? `${median(server)} ms` : "–"
    } | ${rs.reduce((a, r) => a + r.missing, 0)} |`,
  );
}
