/**
 * Holds many idle event-stream subscribers on one `cfgtool serve` process:
 * how many it takes, what they cost, whether they all stay open through
 * keepalive rounds, and one push to all of them at the end.
 *
 * ```sh
 * deno run -A bench/stream_hold.ts [--n 50000] [--clients 5] [--transport h2] [--hold 60]
 *   [--keepalive-ms 10000] [--kv-dir /dev/shm] [--limit-s 1200]
 * ```
 *
 * `--transport h1` opens one TCP connection per subscriber, so the server
 * needs a file descriptor per subscriber: N is refused above its
 * descriptor limit (`ulimit -n`; lib/net/fd_limit.ts raises the soft limit
 * to the hard one, which only a privileged process can raise). `h2` carries
 * up to 190 subscribers per connection as HTTP/2 streams (cleartext, prior
 * knowledge, as `Deno.serve` accepts them; 200 concurrent streams per
 * connection is the runtime's limit), which is how a single process holds
 * more subscribers than it may open descriptors. Every subscriber follows
 * `acme/web:*` of the realistic namespace with the superadmin token
 * (`--max-connections-per-token` is set above N).
 *
 * Steps: start the server (its KV in a temp dir under `--kv-dir`, default
 * the system's), probe its memory, open N subscribers from `--clients`
 * processes (bench/stream_clients.ts), probe again, hold them `--hold`
 * seconds with `--keepalive-ms` (so several keepalive rounds sweep every
 * stream), check that none was closed, push one change and time it at the
 * clients, stop everything. The run stops by itself after `--limit-s`
 * seconds whatever happens. Loopback only.
 *
 * @module
 */
import { openClients, quantile, sleep, startInstallation } from "./stream_harness.ts";

const opts = {
  n: "50000",
  clients: "5",
  transport: "h2",
  hold: "60",
  "keepalive-ms": "10000",
  "kv-dir": "",
  "limit-s": "1200",
};
for (let i = 0; i < Deno.args.length; i += 2) {
  const k = Deno.args[i]!.replace(/^--/, "") as keyof typeof opts;
  if (!(k in opts)) throw new Error(`unknown option ${Deno.args[i]}`);
  opts[k] = Deno.args[i + 1]!;
}
const N = Number(opts.n);
const transport = opts.transport === "h1" ? "h1" : "h2";

/** Soft and hard RLIMIT_NOFILE of a process. */
function descriptorLimits(pid: number): { soft: string; hard: string } {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(Deno.readTextFileSync(`/proc/${pid}/limits`));
  return { soft: m?.[1] ?? "?", hard: m?.[2] ?? "?" };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const deadline = setTimeout(() => {
  console.error(`stopped: the run took longer than ${opts["limit-s"]} s`);
  Deno.exit(2);
}, Number(opts["limit-s"]) * 1000);

const inst = await startInstallation(
  { maxConnectionsPerToken: N + 100, keepaliveMs: Number(opts["keepalive-ms"]) },
  (line) => {
    if (/"level":"(warn|error)"/.test(line)) console.error(`  server: ${line}`);
  },
  opts["kv-dir"] || undefined,
);
try {
  const limits = descriptorLimits(inst.server.proc.child.pid);
  console.log(
    `server descriptor limit: soft ${limits.soft}, hard ${limits.hard}; transport ${transport}`,
  );
  if (transport === "h1" && Number(limits.soft) - 100 < N) {
    throw new Error(
      `${N} subscribers over HTTP/1.1 need ${N} descriptors in the server, its limit is ` +
        `${limits.soft}: use --transport h2, or a larger limit (hard ${limits.hard})`,
    );
  }
  const before = await inst.server.probe();
  const t0 = performance.now();
  const clients = await openClients(
    inst.server.port,
    N,
    Number(opts.clients),
    "/api/v1/events?ns=acme/web:*",
    inst.admin,
    transport,
  );
  const openS = (performance.now() - t0) / 1000;
  console.log(
    `opened ${clients.ready} of ${N} subscribers in ${openS.toFixed(0)} s ` +
      `(${(clients.ready / openS).toFixed(0)}/s)` +
      (clients.failed
        ? `; ${clients.failed} failed: ${clients.errors.slice(0, 3).join("; ")}`
        : ""),
  );
  await sleep(3000);
  const after = await inst.server.probe();
  const per = (k: "rss" | "heapUsed") => kib((after[k] - before[k]) / Math.max(1, clients.ready));
  console.log(
    `server RSS ${mib(before.rss)} → ${mib(after.rss)} (${per("rss")} per subscriber), ` +
      `heap ${mib(before.heapUsed)} → ${mib(after.heapUsed)} (${per("heapUsed")} per subscriber)`,
  );
  console.log(`holding for ${opts.hold} s (keepalive every ${opts["keepalive-ms"]} ms)…`);
  await sleep(Number(opts.hold) * 1000);
  const stats = await Promise.all(clients.procs.map(async (p) => {
    await p.send("stats");
    return await p.next("open") as { open: number; closed: number; keepalives: number };
  }));
  const open = stats.reduce((a, s) => a + s.open, 0);
  const closed = stats.reduce((a, s) => a + s.closed, 0);
  const keepalives = stats.reduce((a, s) => a + s.keepalives, 0);
  console.log(
    `after the hold: ${open} open, ${closed} closed by the server; ` +
      `${(keepalives / Math.max(1, open)).toFixed(1)} keepalives per subscriber`,
  );
  const start = Date.now();
  const version = await inst.pushChange(`hold push at ${start}`);
  const { times, missing } = await clients.arrivals(`web:${version}`);
  const lat = times.map((t) => t - start).sort((a, b) => a - b);
  console.log(
    `one push to ${times.length} subscribers: first ${lat[0]} ms, p50 ${quantile(lat, 0.5)} ms, ` +
      `p99 ${quantile(lat, 0.99)} ms, last ${lat.at(-1)} ms` +
      (missing ? `; ${missing} did not get it` : ""),
  );
  await clients.stop();
} finally {
  await inst.close();
  clearTimeout(deadline);
}
