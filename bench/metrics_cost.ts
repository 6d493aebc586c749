/**
 * What the metrics cost on the evaluation path (docs/operations.md,
 * "Metrics"): the same in-process server (`createServer`) with metrics on
 * (every request counted and timed, every evaluated flag counted, the KV
 * measured through lib/telemetry/instrumented_kv.ts) and off
 * (`metrics: false`), both over one `:memory:` KV holding the realistic
 * namespace of bench/fixtures (50 flags, 20 segments), answering the same
 * requests through `server.fetch` — no sockets, so the share is the worst
 * case: over HTTP the same cost is a smaller part of each request. Tracing
 * is off, as it is unless `OTEL_DENO=true`.
 *
 * The two run in alternating batches (off, on, on, off, …); each time is
 * the median over the batches and each ratio the median of the rounds'
 * on/off ratios, so load from other processes on the machine falls on both
 * alike. CPU time (of this process) is the steadier figure on a shared
 * machine. Also measured the same way: one KV `get`,
 * raw and measured; and the recording calls alone.
 *
 * ```sh
 * deno run -A bench/metrics_cost.ts [--rounds 101] [--batch 100]
 * ```
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { createServer, type FlagServer } from "../lib/server/create.ts";
import { randomTokenKey } from "../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../lib/auth/bootstrap.ts";
import { instrumentKv } from "../lib/telemetry/instrumented_kv.ts";
import { ServiceMetrics } from "../lib/metrics/service_metrics.ts";
import {
  FLAG_KEYS,
  makeContexts,
  realisticNamespaceFiles,
} from "./fixtures/realistic_namespace.ts";

const args = Deno.args;
const opt = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const ROUNDS = opt("rounds", 101);
const BATCH = opt("batch", 100);

const kv = await Deno.openKv(":memory:");
const key = await randomTokenKey();
const { secret } = await bootstrapSuperadmin(kv, key);
const on = createServer({ kv, key, log: () => {} });
const off = createServer({ kv, key, log: () => {}, metrics: false });
const LOCAL = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
} as Deno.ServeHandlerInfo;

async function send(
  server: FlagServer,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  const res = await server.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
    LOCAL,
  );
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

const dec = new TextDecoder();
await send(on, "POST", "/api/v1/tenants", { slug: "bench" });
await send(on, "POST", "/api/v1/tenants/bench/namespaces", { slug: "web" });
await send(on, "PUT", "/api/v1/tenants/bench/namespaces/web/manifest", {
  files: Object.fromEntries([...realisticNamespaceFiles()].map(([p, b]) => [p, dec.decode(b)])),
});

const EVAL = "/api/v1/tenants/bench/namespaces/web/environments/production/evaluate";
const contexts = makeContexts(256, 20240601).map((context) => ({ context }));
const single = contexts.map((c, i) => JSON.stringify({ ...c, flag: FLAG_KEYS[i % 50] }));
const bulk = contexts.map((c) => JSON.stringify(c));
const OFREP_HEADERS = {
  "x-cfgtool-tenant": "bench",
  "x-cfgtool-namespace": "web",
  "x-cfgtool-environment": "production",
};
// warm both servers' model caches past their settle time
for (const s of [on, off]) await send(s, "POST", EVAL, single[0]!);
await new Promise((r) => setTimeout(r, 700));

let n = 0;
const cases: [string, (s: FlagServer) => Promise<void>][] = [
  ["POST …/evaluate (one flag)", (s) => send(s, "POST", EVAL, single[n++ & 255]!)],
  ["POST …/evaluate/all (50 flags)", (s) => send(s, "POST", `${EVAL}/all`, bulk[n++ & 255]!)],
  [
    "POST /ofrep/v1/evaluate/flags (50 flags)",
    (s) => send(s, "POST", "/ofrep/v1/evaluate/flags", bulk[n++ & 255]!, OFREP_HEADERS),
  ],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** A batch's cost per call, µs: wall-clock time, and CPU time of this process. */
interface Cost {
  wall: number;
  cpu: number;
}

/**
 * Median cost per call of `a` and `b`, run in alternating batches. CPU
 * time is the steadier figure on a shared machine: time the process spends
 * waiting for a core does not count.
 */
async function compare(a: () => Promise<unknown>, b: () => Promise<unknown>) {
  const ta: Cost[] = [];
  const tb: Cost[] = [];
  for (let i = 0; i < BATCH; i++) await a(), await b(); // warm-up
  const batch = async (fn: () => Promise<unknown>, out: Cost[]) => {
    const c0 = cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < BATCH; i++) await fn();
    const wall = ((performance.now() - t0) * 1000) / BATCH;
    const c = cpuUsage(c0);
    out.push({ wall, cpu: (c.user + c.system) / BATCH });
  };
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      await batch(a, ta);
      await batch(b, tb);
    } else {
      await batch(b, tb);
      await batch(a, ta);
    }
  }
  const med = (xs: Cost[]): Cost => ({
    wall: median(xs.map((x) => x.wall)),
    cpu: median(xs.map((x) => x.cpu)),
  });
  // the ratio of each round's pair, then their median: a burst of load
  // elsewhere falls on both batches of a round
  const ratio = (k: keyof Cost) => median(ta.map((x, i) => tb[i]![k] / x[k]));
  return [med(ta), med(tb), { cpu: ratio("cpu"), wall: ratio("wall") }] as const;
}

const rows: string[] = [];
const row = (what: string, [x, y, r]: readonly [Cost, Cost, Cost]) =>
  rows.push(
    `| ${what} | ${x.cpu.toFixed(1)} | ${y.cpu.toFixed(1)} | ${r.cpu.toFixed(3)} | ${
      x.wall.toFixed(1)
    } | ${y.wall.toFixed(1)} | ${r.wall.toFixed(3)} |`,
  );
for (const [what, run] of cases) row(what, await compare(() => run(off), () => run(on)));

const raw = await Deno.openKv(":memory:");
await raw.set(["k"], "v");
const kvMetrics = new ServiceMetrics();
const measured = instrumentKv(raw, (op, s, o) => kvMetrics.observeKv(op, s, o));
row(
  "`kv.get` of one key (raw / measured)",
  await compare(() => raw.get(["k"]), () => measured.get(["k"])),
);

const metrics = new ServiceMetrics();
const ROUTE = "/api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate";
const CALLS = 200_000;
let t0 = performance.now();
for (let i = 0; i < CALLS; i++) {
  metrics.evaluations("cfgtool", "bench", "web").add(FLAG_KEYS[i % 50]!, "on", "SPLIT");
}
const perEval = ((performance.now() - t0) * 1e6) / CALLS;
t0 = performance.now();
for (let i = 0; i < CALLS; i++) metrics.observeRequest("POST", ROUTE, 200, 0.0004);
const perRequest = ((performance.now() - t0) * 1e6) / CALLS;

console.log(
  `Deno ${Deno.version.deno}, ${ROUNDS} rounds of a batch of ${BATCH} calls each way; ` +
    "medians of the batches, ratio: median of the rounds' on/off ratios",
);
console.log("");
console.log(
  "| per call (in-process) | CPU µs, off | CPU µs, on | ratio | wall µs, off | wall µs, on | ratio |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(r);
console.log("");
console.log(
  `recording one evaluated flag: ${perEval.toFixed(0)} ns; one request: ${
    perRequest.toFixed(0)
  } ns`,
);

await on.close();
await off.close();
kv.close();
raw.close();
