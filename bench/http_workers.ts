/**
 * Scaling of `cfgtool serve --workers N` on one host: wrk against
 * `GET /healthz` and `POST …/evaluate` (namespace-read and namespace-client
 * tokens) with `--workers 1` and `--workers 2` on the same KV file, next to
 * a bare `Deno.serve` hello-world (bench/hello_server.ts) and two hello-world
 * processes sharing a port with `SO_REUSEPORT` (the ceiling of what a
 * second process can add), all in the same run.
 *
 * ```sh
 * deno run -A bench/http_workers.ts [--duration 8] [--connections 64] [--threads 1]
 *   [--repeat 1] [--warmup 2] [--max-other 0.25] [--cases hello,healthz,evaluate,evaluate-client]
 * ```
 *
 * Setup: a temp-dir KV with a bootstrapped superadmin, tenant `bench`,
 * namespace `web` holding the realistic namespace of
 * bench/fixtures/realistic_namespace.ts (`staging` public), a
 * namespace-read and a namespace-client token; `--client-rate-limit` high
 * enough not to refuse (the shared limiter then leases blocks so large that
 * it never touches the KV during a run). Each server's JSON access log goes
 * to a file. Besides requests/s and latency, each run reports the CPU the
 * server processes, wrk and everything else on the machine used (from /proc
 * and the shell's `times`), in cores: on a 2-core machine wrk shares the
 * cores with the servers, so that split is what limits the scaling, and
 * "other" shows when someone else's work skews a run (`--max-other` runs
 * such a run again). Only 127.0.0.1 is contacted; each wrk
 * run is killed if it outlives its duration by 30 s. Prints a markdown table.
 *
 * @module
 */
import {
  FLAG_KEYS,
  makeContexts,
  realisticNamespaceFiles,
} from "./fixtures/realistic_namespace.ts";
import { api, bootstrapSuperadmin } from "./bootstrap.ts";
import { startChild, stopChild } from "./processes.ts";
import { readWrkReport } from "./wrk_report.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const HELLO = `${ROOT}bench/hello_server.ts`;
const LUA = `${ROOT}bench/wrk/request.lua`;
/** Two of these on one port: hello-world with SO_REUSEPORT. */
const HELLO_REUSE = `const port = Number(Deno.args[0]);
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
Deno.serve({ hostname: "127.0.0.1", port, reusePort: true,
  onListen: ({ port }) => console.log("hello listening on http://127.0.0.1:" + port) },
  () => new Response("Hello, world!\\n"));`;
const CLOCK_TICKS = 100; // USER_HZ on Linux

interface Options {
  duration: number;
  connections: number;
  threads: number;
  repeat: number;
  warmup: number;
  /** A run during which other work used more cores than this is run again (at most 4 × repeat runs). */
  maxOther: number;
  /** The cases to run (`hello` covers both hello-world rows). */
  cases: Set<string>;
}

interface Target {
  id: string;
  label: string;
  /** Pids whose CPU counts as the server's. */
  pids: number[];
  children: Deno.ChildProcess[];
  url: string;
}

interface Case {
  id: string;
  path: string;
  method: string;
  body: string | null;
  headers: string[];
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  /** Cores the server processes used on average. */
  serverCores: number;
  /** Cores wrk used on average. */
  wrkCores: number;
  /** Cores everything else on the machine used on average (other people's work, the kernel). */
  otherCores: number;
}

function parseArgs(args: string[]): Options {
  const o: Options = {
    duration: 8,
    connections: 64,
    threads: 1,
    repeat: 1,
    warmup: 2,
    maxOther: Infinity,
    cases: new Set(["hello", "healthz", "evaluate", "evaluate-client"]),
  };
  for (let i = 0; i < args.length; i += 2) {
    if (args[i] === "--cases") {
      o.cases = new Set((args[i + 1] ?? "").split(","));
      continue;
    }
    const name = args[i]!.replace(/^--/, "").replace(
      /-([a-z])/g,
      (_, c: string) => c.toUpperCase(),
    ) as Exclude<keyof Options, "cases">;
    const value = Number(args[i + 1]);
    if (!(name in o) || name === ("cases" as string) || !Number.isFinite(value) || value < 0) {
      throw new Error(`bad option ${args[i]} ${args[i + 1]}`);
    }
    o[name] = value;
  }
  return o;
}

/** A `cfgtool serve` with its log in `logFile`; for a group, the workers' pids come from it. */
async function startCfgtool(kv: string, workers: number, logFile: string): Promise<Target> {
  const { child, url } = await startChild("sh", [
    "-c",
    `exec "$0" "$@" 2>"${logFile}"`,
    Deno.execPath(),
    "run",
    "-A",
    "--unstable-kv",
    CLI,
    "serve",
    "--port",
    "0",
    "--kv",
    kv,
    "--workers",
    String(workers),
    "--client-rate-limit",
    "1000000000",
  ], /listening on (http:\/\/\S+)/);
  let pids = [child.pid];
  if (workers > 1) {
    const line = (await Deno.readTextFile(logFile)).split("\n")
      .find((l) => l.includes('"msg":"workers listening"'));
    if (!line) throw new Error(`no "workers listening" line in ${logFile}`);
    pids = JSON.parse(line).pids;
  }
  return {
    id: `cfgtool-${workers}`,
    label: `cfgtool --workers ${workers}`,
    pids,
    children: [child],
    url,
  };
}

/** User + system CPU of processes so far, in clock ticks. */
async function cpuTicks(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // fields after the command name "(…)": state is field 3; utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    total += Number(fields[11]) + Number(fields[12]);
  }
  return total;
}

/** Busy CPU time of the whole machine so far (all cores), in clock ticks. */
async function machineBusyTicks(): Promise<number> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0]!;
  // cpu user nice system idle iowait irq softirq steal …
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(
    Number,
  );
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** `times` prints "0m1.234s 0m0.567s" for the shell's children (user, system) on its 2nd line. */
function wrkCpuSeconds(timesOutput: string): number {
  const lines = timesOutput.trim().split("\n");
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines.at(-1) ?? "");
  if (!m) return NaN;
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
}

async function runWrk(
  target: Target,
  c: Case,
  o: Options,
  duration: number,
  tmp: string,
): Promise<Result> {
  let bodyFile = "-";
  if (c.body !== null) {
    bodyFile = `${tmp}/${c.id}.json`;
    await Deno.writeTextFile(bodyFile, c.body);
  }
  const quote = (s: string) => `'${s.replaceAll("'", `'"'"'`)}'`;
  const wrk = [
    "wrk",
    "--threads",
    String(o.threads),
    "--connections",
    String(o.connections),
    "--duration",
    `${duration}s`,
    "--latency",
    "-s",
    LUA,
    `${target.url}${c.path}`,
    "--",
    c.method,
    bodyFile,
    "static",
    ...c.headers,
  ].map(quote).join(" ");
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), (duration + 30) * 1000);
  try {
    const before = await cpuTicks(target.pids);
    const busyBefore = await machineBusyTicks();
    const started = performance.now();
    const out = await new Deno.Command("bash", {
      args: ["-c", `${wrk} && echo '--times--' && times`],
      stdout: "piped",
      stderr: "piped",
      signal: ac.signal,
    }).output();
    const wallS = (performance.now() - started) / 1000;
    const serverS = (await cpuTicks(target.pids) - before) / CLOCK_TICKS;
    const busyS = (await machineBusyTicks() - busyBefore) / CLOCK_TICKS;
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
    const [report, times] = text.split("--times--");
    const { rps, p50, p99, non2xx, socketErrors } = readWrkReport(report!);
    if (non2xx > 0 || socketErrors !== null) {
      throw new Error(`${target.id} ${c.id}: ${non2xx} non-2xx, socket errors ${socketErrors}`);
    }
    const wrkS = wrkCpuSeconds(times ?? "");
    return {
      rps,
      p50,
      p99,
      serverCores: serverS / wallS,
      wrkCores: wrkS / wallS,
      otherCores: Math.max(0, busyS - serverS - wrkS) / wallS,
    };
  } finally {
    clearTimeout(timer);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Tenant `bench`, namespace `web` (staging public), and two tokens. */
async function setUp(base: string, admin: string) {
  await api(base, admin, "POST", "/api/v1/tenants", { slug: "bench" });
  await api(base, admin, "POST", "/api/v1/tenants/bench/namespaces", { slug: "web" });
  const files: Record<string, string> = {};
  const dec = new TextDecoder();
  for (const [path, bytes] of realisticNamespaceFiles()) files[path] = dec.decode(bytes);
  let ns = files["namespace.toml"]!.replace(
    /(\[namespace\.environments\.staging\][^[]*?)public_evaluate\s*=\s*false/,
    "$1public_evaluate = true",
  );
  if (!/environments\.staging\][^[]*public_evaluate = true/.test(ns)) {
    ns = ns.replace(
      "[namespace.environments.staging]",
      "[namespace.environments.staging]\npublic_evaluate = true",
    );
  }
  files["namespace.toml"] = ns;
  await api(base, admin, "PUT", "/api/v1/tenants/bench/namespaces/web/manifest", { files });
  const token = async (body: Record<string, unknown>) =>
    (await api(base, admin, "POST", "/api/v1/tokens", body)).secret as string;
  const read = await token({
    type: "namespace-read",
    name: "bench-read",
    tenant_slug: "bench",
    namespace_slug: "web",
  });
  const client = await token({
    type: "namespace-client",
    name: "bench-client",
    tenant_slug: "bench",
    namespace_slug: "web",
    environment_slug: "staging",
  });
  return { read, client };
}

async function main(): Promise<number> {
  const o = parseArgs(Deno.args);
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
  } catch {
    console.error("wrk is not installed: apt-get install -y wrk (Debian/Ubuntu), brew install wrk");
    return 1;
  }
  const tmp = await Deno.makeTempDir({ prefix: "cfgtool-bench-workers-" });
  const live: Deno.ChildProcess[] = [];
  try {
    const kv = `${tmp}/kv.sqlite3`;
    const admin = await bootstrapSuperadmin(kv);
    const setup = await startCfgtool(kv, 1, `${tmp}/setup.log`);
    const { read, client } = await setUp(setup.url, admin);
    await stopChild(setup.children[0]!);

    const context = makeContexts(1, 7)[0]!;
    const evalPath = "/api/v1/tenants/bench/namespaces/web/environments/staging/evaluate";
    const evalBody = JSON.stringify({ flag: FLAG_KEYS[0], context });
    const json = "Content-Type: application/json";
    const cfgCases: Case[] = [
      { id: "healthz", path: "/healthz", method: "GET", body: null, headers: [] },
      {
        id: "evaluate",
        path: evalPath,
        method: "POST",
        body: evalBody,
        headers: [`Authorization: Bearer ${read}`, json],
      },
      {
        id: "evaluate-client",
        path: evalPath,
        method: "POST",
        body: evalBody,
        headers: [`Authorization: Bearer ${client}`, json, "Origin: https://app.example"],
      },
    ];
    const helloCase: Case = { id: "hello", path: "/", method: "GET", body: null, headers: [] };
    const wanted = cfgCases.filter((c) => o.cases.has(c.id));

    const rows: { target: string; c: Case; results: Result[] }[] = [];
    const measure = async (target: Target, cases: Case[]) => {
      for (const c of cases) {
        if (o.warmup > 0) await runWrk(target, c, o, o.warmup, tmp);
        const results: Result[] = [];
        let quietest: Result | undefined;
        for (let run = 0; results.length < o.repeat && run < 4 * o.repeat; run++) {
          const res = await runWrk(target, c, o, o.duration, tmp);
          const skipped = res.otherCores > o.maxOther;
          if (quietest === undefined || res.otherCores < quietest.otherCores) quietest = res;
          console.error(
            `${target.label} ${c.id}: ${Math.round(res.rps)} req/s, p99 ${
              res.p99.toFixed(2)
            } ms, ` +
              `server ${res.serverCores.toFixed(2)} cores, wrk ${res.wrkCores.toFixed(2)} cores, ` +
              `other ${res.otherCores.toFixed(2)} cores${
                skipped ? " (skipped: busy machine)" : ""
              }`,
          );
          if (!skipped) results.push(res);
        }
        if (results.length === 0) results.push(quietest!); // the machine stayed busy: the least busy run
        rows.push({ target: target.label, c, results });
      }
    };

    console.error(
      `wrk: ${o.threads} thread(s), ${o.connections} connections, ${o.duration} s per run, ` +
        `${o.repeat} round(s), ${o.warmup} s warm-up; ${navigator.hardwareConcurrency} cores`,
    );
    /** Hello-world: one process, then two sharing a port. */
    const measureHello = async () => {
      const hello = await startChild(
        Deno.execPath(),
        ["run", "--allow-net", HELLO, "0"],
        /hello listening on (http:\/\/\S+)/,
      );
      live.push(hello.child);
      await measure({
        id: "hello",
        label: "hello-world, 1 process",
        pids: [hello.child.pid],
        children: [],
        url: hello.url,
      }, [helloCase]);
      await stopChild(hello.child);

      const port = (() => {
        const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
        const p = l.addr.port;
        l.close();
        return p;
      })();
      const hellos = [];
      for (let i = 0; i < 2; i++) {
        const h = await startChild(
          Deno.execPath(),
          ["eval", "--unstable-net", HELLO_REUSE, String(port)],
          /hello listening on (http:\/\/\S+)/,
        );
        live.push(h.child);
        hellos.push(h);
      }
      await measure({
        id: "hello-2",
        label: "hello-world, 2 processes (SO_REUSEPORT)",
        pids: hellos.map((h) => h.child.pid),
        children: [],
        url: hellos[0]!.url,
      }, [helloCase]);
      for (const h of hellos) await stopChild(h.child);
    };
    if (o.cases.has("hello")) await measureHello();
    for (const workers of wanted.length > 0 ? [1, 2] : []) {
      const target = await startCfgtool(kv, workers, `${tmp}/access-${workers}.log`);
      live.push(...target.children);
      await measure(target, wanted);
      await stopChild(target.children[0]!);
    }

    const base = new Map<string, number>();
    console.log(
      "| server | request | requests/s | p50 | p99 | server CPU | wrk CPU | other CPU | × 1 process |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const row of rows) {
      const rps = median(row.results.map((x) => x.rps));
      const key = row.c.id;
      if (!base.has(key)) base.set(key, rps);
      console.log(
        `| ${row.target} | ${row.c.id} | ${Math.round(rps).toLocaleString("en-US")} | ` +
          `${median(row.results.map((x) => x.p50)).toFixed(2)} ms | ` +
          `${median(row.results.map((x) => x.p99)).toFixed(2)} ms | ` +
          `${median(row.results.map((x) => x.serverCores)).toFixed(2)} cores | ` +
          `${median(row.results.map((x) => x.wrkCores)).toFixed(2)} cores | ` +
          `${median(row.results.map((x) => x.otherCores)).toFixed(2)} cores | ` +
          `${(rps / base.get(key)!).toFixed(2)} |`,
      );
    }
    return 0;
  } finally {
    for (const c of live.reverse()) await stopChild(c);
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
