/**
 * Server memory per idle event-stream subscriber, next to its yardsticks.
 *
 * ```sh
 * deno run -A bench/stream_memory.ts [--n 2000,10000] [--clients 4]
 *   [--modes bare,bounded,cfgtool] [--repeat 1]
 * ```
 *
 * For each mode and N, a fresh server process (bench/stream_server.ts):
 *
 * - `cfgtool`: the real service holding the realistic namespace (50 flags,
 *   20 segments), subscribers to `acme/web:*`;
 * - `bare`: `Deno.serve` holding as many open `text/event-stream`
 *   responses (a `ReadableStream` with one opening frame, then nothing):
 *   what the runtime itself costs per open streaming response, the floor;
 * - `bounded`: that handler behind cfgtool's accept loop
 *   (lib/net/bounded_server.ts, one `serveHttpOnConnection` per
 *   connection): the floor of any server built on that loop;
 * - `cfgtool@<dir>`: `cfgtool` served from another checkout of the
 *   repository (its lib/ and bench/stream_server.ts), for a before/after.
 *
 * 200 subscribers are opened and closed first (warm-up), the server is
 * probed (after two forced garbage collections), N/2 idle subscribers are
 * opened from `--clients` separate processes (bench/stream_clients.ts: raw
 * HTTP/1.1 over TCP, each waits for its first event), the server is probed,
 * N/2 more, probed again. Printed per subscriber: RSS and V8 heap (`heapUsed`)
 * growth over all N and over the second half alone (the marginal cost,
 * without the one-time growth of the first connections: the young
 * generation, allocator arenas), heap total, and after the clients leave,
 * the RSS not given back (the allocator keeps it for the next ones). Each
 * subscriber is one descriptor in the server, so its limit (`ulimit -n`)
 * bounds N.
 *
 * @module
 */
import {
  openClients,
  parseMode,
  type Probe,
  sleep,
  startBenchServer,
  startInstallation,
} from "./stream_harness.ts";

const opts = { n: "2000,10000", clients: "4", modes: "bare,bounded,cfgtool", repeat: "1" };
for (let i = 0; i < Deno.args.length; i += 2) {
  const k = Deno.args[i]!.replace(/^--/, "") as keyof typeof opts;
  if (!(k in opts)) throw new Error(`unknown option ${Deno.args[i]}`);
  opts[k] = Deno.args[i + 1]!;
}
const sizes = opts.n.split(",").map(Number);
const modes = opts.modes.split(",");
const clientProcs = Number(opts.clients);
const WARMUP = 200;

const kib = (bytes: number) => (bytes / 1024).toFixed(1);

interface Row {
  mode: string;
  n: number;
  ready: number;
  before: Probe;
  half: Probe;
  halfReady: number;
  after: Probe;
  released: Probe;
}

async function measure(mode: string, n: number): Promise<Row> {
  const inst = parseMode(mode).kind === "cfgtool"
    ? await startInstallation(
      { maxConnectionsPerToken: n + WARMUP + 100 },
      () => {},
      undefined,
      mode,
    )
    : null;
  const server = inst?.server ?? await startBenchServer(mode);
  const path = inst ? "/api/v1/events?ns=acme/web:*" : "/events";
  const token = inst?.admin;
  const open = async (count: number) => {
    const group = await openClients(server.port, count, clientProcs, path, token);
    if (group.failed > 0) {
      console.error(`  ${group.failed} subscribers failed: ${group.errors.join("; ")}`);
    }
    await sleep(3000);
    return group;
  };
  try {
    const warm = await openClients(server.port, WARMUP, 1, path, token);
    await warm.stop();
    await sleep(1000);
    const before = await server.probe();
    const first = await open(Math.floor(n / 2));
    const half = await server.probe();
    const second = await open(n - Math.floor(n / 2));
    const after = await server.probe();
    await Promise.all([first.stop(), second.stop()]);
    await sleep(2000);
    const released = await server.probe();
    return {
      mode,
      n,
      ready: first.ready + second.ready,
      halfReady: first.ready,
      before,
      half,
      after,
      released,
    };
  } finally {
    if (inst) await inst.close();
    else await server.proc.stop();
  }
}

const header = [
  "mode",
  "N",
  "reached",
  "RSS before → after",
  "RSS / sub",
  "RSS / sub, 2nd half",
  "heap used / sub",
  "heap used / sub, 2nd half",
  "heap total / sub",
  "RSS kept after close / sub",
];
console.log(`| ${header.join(" | ")} |`);
console.log(`| --- | ${header.slice(1).map(() => "--:").join(" | ")} |`);
for (let r = 0; r < Number(opts.repeat); r++) {
  for (const n of sizes) {
    for (const mode of modes) {
      const row = await measure(mode, n);
      const per = (k: keyof Probe, from: Probe, to: Probe, subs: number) =>
        `${kib((to[k] - from[k]) / Math.max(1, subs))} KiB`;
      const second = row.ready - row.halfReady;
      console.log(`| ${
        [
          mode,
          n,
          row.ready,
          `${(row.before.rss / 2 ** 20).toFixed(0)} → ${(row.after.rss / 2 ** 20).toFixed(0)} MiB`,
          per("rss", row.before, row.after, row.ready),
          per("rss", row.half, row.after, second),
          per("heapUsed", row.before, row.after, row.ready),
          per("heapUsed", row.half, row.after, second),
          per("heapTotal", row.before, row.after, row.ready),
          per("rss", row.before, row.released, row.ready),
        ].join(" | ")
      } |`);
    }
  }
}
