/**
 * Evaluation HTTP benchmark: a real `cfgtool serve` process on loopback,
 * loaded with wrk against `…/evaluate`, `…/evaluate/all` and OFREP bulk,
 * next to a bare `Deno.serve` hello-world (bench/hello_server.ts) measured
 * in the same run.
 *
 * ```sh
 * deno run -A bench/http_evaluate.ts [--duration 8] [--connections 32] [--threads 1]
 *   [--repeat 1] [--warmup 2] [--baseline <dir>]
 * ```
 *
 * `--baseline <dir>`: another checkout of cfgtool (`git worktree add /tmp/before <commit>`),
 * set up the same way and measured in the same rounds, case by case, so the table shows
 * before and after from one run.
 *
 * Setup: a temp-dir KV with a bootstrapped superadmin, tenant `bench`,
 * namespace `web` holding the realistic namespace of
 * bench/fixtures/realistic_namespace.ts (50 flags, 20 segments, nested
 * references, rollouts; `staging` made public), a namespace-read token and
 * a namespace-client token. The server runs with `--client-rate-limit`
 * high enough not to refuse, and its JSON access log goes to a file in the
 * temp dir. Each case sends the same request (one realistic context) with
 * wrk's static mode (bench/wrk/request.lua); every response status is
 * checked after the run. Only 127.0.0.1 is contacted; each wrk run is
 * killed if it outlives its duration by 30 s. Each run also reads the server
 * process's CPU time (Linux `/proc`), so a request's cost shows apart from
 * wrk's share of the same cores. Prints a markdown table:
 * requests/s, p50, p99 (median over the rounds) and the share of the
 * hello-world figure.
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
import { readWrkReport, type WrkReport } from "./wrk_report.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const HELLO = `${ROOT}bench/hello_server.ts`;
const LUA = `${ROOT}bench/wrk/request.lua`;

interface Options {
  duration: number;
  connections: number;
  threads: number;
  repeat: number;
  warmup: number;
  /** Root of a second checkout measured alongside, or null. */
  baseline: string | null;
}

interface Case {
  id: string;
  label: string;
  url: string;
  method: string;
  body: string | null;
  headers: string[];
  expect: number;
  /** The server process, whose CPU time each run reads (Linux `/proc`). */
  pid: number;
}

/** wrk's figures, and the server's CPU time per request (µs; NaN where `/proc` is missing). */
type Result = WrkReport & { cpuUs: number };

/** A process's user + system CPU time so far, seconds (NaN without `/proc`). */
function cpuSeconds(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

function parseArgs(args: string[]): Options {
  const o: Options = {
    duration: 8,
    connections: 32,
    threads: 1,
    repeat: 1,
    warmup: 2,
    baseline: null,
  };
  for (let i = 0; i < args.length; i += 2) {
    if (args[i] === "--baseline") {
      o.baseline = args[i + 1]!.replace(/\/+$/, "") + "/";
      continue;
    }
    const name = args[i]!.replace(/^--/, "") as Exclude<keyof Options, "baseline">;
    const value = Number(args[i + 1]);
    if (!(name in o) || !Number.isFinite(value) || value < 0) {
      throw new Error(`bad option ${args[i]} ${args[i + 1]}`);
    }
    o[name] = value;
  }
  return o;
}

async function runWrk(c: Case, o: Options, duration: number, tmp: string): Promise<WrkReport> {
  let bodyFile = "-";
  if (c.body !== null) {
    bodyFile = `${tmp}/${c.id}.json`;
    await Deno.writeTextFile(bodyFile, c.body);
  }
  const args = [
    "--threads",
    String(o.threads),
    "--connections",
    String(o.connections),
    "--duration",
    `${duration}s`,
    "--latency",
    "-s",
    LUA,
    c.url,
    "--",
    c.method,
    bodyFile,
    "static",
    ...c.headers,
  ];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), (duration + 30) * 1000);
  try {
    const out = await new Deno.Command("wrk", {
      args,
      stdout: "piped",
      stderr: "piped",
      signal: ac.signal,
    })
      .output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
    return readWrkReport(text);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts `serve` from the checkout at `root` on a fresh KV (tag names its
 * files), sets up the bench tenant, namespace and tokens, and returns its
 * cases (labels prefixed with `label`).
 */
async function startCfgtool(
  root: string,
  tmp: string,
  tag: string,
  children: Deno.ChildProcess[],
): Promise<Case[]> {
  const file = tag.replace(/\W/g, "");
  const kv = `${tmp}/kv${file}.sqlite3`;
  const admin = await bootstrapSuperadmin(kv);
  const server = await startChild("sh", [
    "-c",
    `exec "$0" "$@" 2>"${tmp}/access${file}.log"`,
    Deno.execPath(),
    "run",
    "-A",
    "--unstable-kv",
    `${root}cli.ts`,
    "serve",
    "--port",
    "0",
    "--kv",
    kv,
    "--client-rate-limit",
    "1000000000",
  ], /listening on (http:\/\/\S+)/);
  children.push(server.child);
  const pid = server.child.pid;
  const base = server.url;

  await api(base, admin, "POST", "/api/v1/tenants", { slug: "bench" });
  await api(base, admin, "POST", "/api/v1/tenants/bench/namespaces", { slug: "web" });
  const files: Record<string, string> = {};
  const dec = new TextDecoder();
  for (const [path, bytes] of realisticNamespaceFiles()) files[path] = dec.decode(bytes);
  files["namespace.toml"] = files["namespace.toml"]!.replace(
    /(\[namespace\.environments\.staging\][^[]*?)public_evaluate\s*=\s*false/,
    "$1public_evaluate = true",
  );
  if (!/environments\.staging\][^[]*public_evaluate = true/.test(files["namespace.toml"]!)) {
    files["namespace.toml"] = files["namespace.toml"]!.replace(
      "[namespace.environments.staging]",
      "[namespace.environments.staging]\npublic_evaluate = true",
    );
  }
  await api(base, admin, "PUT", "/api/v1/tenants/bench/namespaces/web/manifest", { files });
  const read = (await api(base, admin, "POST", "/api/v1/tokens", {
    type: "namespace-read",
    name: "bench-read",
    tenant_slug: "bench",
    namespace_slug: "web",
  })).secret as string;
  const client = (await api(base, admin, "POST", "/api/v1/tokens", {
    type: "namespace-client",
    name: "bench-client",
    tenant_slug: "bench",
    namespace_slug: "web",
    environment_slug: "staging",
  })).secret as string;

  const context = makeContexts(1, 7)[0]!;
  const evalUrl = `${base}/api/v1/tenants/bench/namespaces/web/environments/staging/evaluate`;
  const ofrepUrl = `${base}/ofrep/v1/evaluate/flags`;
  const json = "Content-Type: application/json";
  const etag = (await fetch(ofrepUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${client}`, "content-type": "application/json" },
    body: JSON.stringify({ context }),
  }).then(async (r) => {
    await r.body?.cancel();
    return r.headers.get("etag");
  }))!;
  return [
    {
      id: `${tag}healthz`,
      label: "cfgtool `GET /healthz` (no auth, no KV: the framework floor)",
      url: `${base}/healthz`,
      method: "GET",
      body: null,
      headers: [],
      expect: 200,
      pid,
    },
    {
      id: `${tag}evaluate`,
      label: "`POST …/evaluate` (one flag, namespace-read token)",
      url: evalUrl,
      method: "POST",
      body: JSON.stringify({ flag: FLAG_KEYS[0], context }),
      headers: [`Authorization: Bearer ${read}`, json],
      expect: 200,
      pid,
    },
    {
      id: `${tag}evaluate-client`,
      label: "`POST …/evaluate` (one flag, namespace-client token)",
      url: evalUrl,
      method: "POST",
      body: JSON.stringify({ flag: FLAG_KEYS[0], context }),
      headers: [`Authorization: Bearer ${client}`, json, "Origin: https://app.example"],
      expect: 200,
      pid,
    },
    {
      id: `${tag}evaluate-all`,
      label: "`POST …/evaluate/all` (50 flags, namespace-read token)",
      url: `${evalUrl}/all`,
      method: "POST",
      body: JSON.stringify({ context }),
      headers: [`Authorization: Bearer ${read}`, json],
      expect: 200,
      pid,
    },
    {
      id: `${tag}ofrep-bulk`,
      label: "OFREP bulk (50 flags, namespace-client token), 200",
      url: ofrepUrl,
      method: "POST",
      body: JSON.stringify({ context }),
      headers: [`Authorization: Bearer ${client}`, json],
      expect: 200,
      pid,
    },
    {
      id: `${tag}ofrep-bulk-304`,
      label: "OFREP bulk with `If-None-Match`, 304",
      url: ofrepUrl,
      method: "POST",
      body: JSON.stringify({ context }),
      headers: [`Authorization: Bearer ${client}`, json, `If-None-Match: ${etag}`],
      expect: 304,
      pid,
    },
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<number> {
  const o = parseArgs(Deno.args);
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
  } catch {
    console.error(
      "wrk is not installed: apt-get install -y wrk (Debian/Ubuntu), brew install wrk (macOS)",
    );
    return 1;
  }
  const tmp = await Deno.makeTempDir({ prefix: "cfgtool-bench-eval-" });
  const children: Deno.ChildProcess[] = [];
  try {
    const hello = await startChild(
      Deno.execPath(),
      ["run", "--allow-net", HELLO, "0"],
      /hello listening on (http:\/\/\S+)/,
    );
    children.push(hello.child);
    const cases: Case[] = [
      {
        id: "hello",
        label: "bare `Deno.serve` hello-world",
        url: `${hello.url}/`,
        method: "GET",
        body: null,
        headers: [],
        expect: 200,
        pid: hello.child.pid,
      },
    ];
    cases.push(...await startCfgtool(ROOT, tmp, "", children));
    if (o.baseline !== null) {
      const before = await startCfgtool(o.baseline, tmp, "before:", children);
      for (const c of before) c.label = `before: ${c.label}`;
      cases.push(...before);
    }
    for (const c of cases) {
      const res = await fetch(c.url, {
        method: c.method,
        headers: Object.fromEntries(c.headers.map((h) => h.split(/:\s*/, 2) as [string, string])),
        ...(c.body === null ? {} : { body: c.body }),
      });
      await res.body?.cancel();
      if (res.status !== c.expect) throw new Error(`${c.id}: ${res.status}, expected ${c.expect}`);
    }
    console.error(
      `wrk: ${o.threads} thread(s), ${o.connections} connections, ${o.duration} s per run, ` +
        `${o.repeat} round(s), ${o.warmup} s warm-up`,
    );
    if (o.warmup > 0) { for (const c of cases) await runWrk(c, o, o.warmup, tmp); }
    const runs = new Map<string, Result[]>();
    for (let r = 0; r < o.repeat; r++) {
      for (const c of cases) {
        const cpuBefore = cpuSeconds(c.pid);
        const res: Result = { ...await runWrk(c, o, o.duration, tmp), cpuUs: NaN };
        res.cpuUs = (cpuSeconds(c.pid) - cpuBefore) * 1e6 / (res.rps * o.duration);
        // wrk counts 304 as "Non-2xx or 3xx"; only a 304 case may have them
        if ((res.non2xx > 0 && c.expect === 200) || res.socketErrors !== null) {
          throw new Error(
            `${c.id}: ${res.non2xx} unexpected statuses, socket errors ${res.socketErrors}`,
          );
        }
        console.error(
          `${c.id}: ${Math.round(res.rps)} req/s, p99 ${res.p99.toFixed(2)} ms, ` +
            `server CPU ${res.cpuUs.toFixed(1)} µs/request`,
        );
        runs.set(c.id, [...(runs.get(c.id) ?? []), res]);
      }
    }
    const helloRps = median(runs.get("hello")!.map((x) => x.rps));
    const helloCpu = median(runs.get("hello")!.map((x) => x.cpuUs));
    const before = o.baseline !== null;
    console.log(
      `| request | requests/s | p50 | p99 | share of hello-world | server CPU per request | CPU share |${
        before ? " before: requests/s | before: p99 | before: share | before: CPU share |" : ""
      }`,
    );
    console.log(
      `| --- | --- | --- | --- | --- | --- | --- |${before ? " --- | --- | --- | --- |" : ""}`,
    );
    const cell = (id: string) => {
      const rs = runs.get(id);
      if (rs === undefined) return null;
      const rps = median(rs.map((x) => x.rps));
      return {
        rps: Math.round(rps).toLocaleString("en-US"),
        p50: `${median(rs.map((x) => x.p50)).toFixed(2)} ms`,
        p99: `${median(rs.map((x) => x.p99)).toFixed(2)} ms`,
        share: `${Math.round((100 * rps) / helloRps)} %`,
        cpu: `${median(rs.map((x) => x.cpuUs)).toFixed(1)} µs`,
        // hello-world's server CPU per request ÷ this one's: the share without wrk's part
        cpuShare: `${Math.round((100 * helloCpu) / median(rs.map((x) => x.cpuUs)))} %`,
      };
    };
    for (const c of cases) {
      if (c.id.startsWith("before:")) continue;
      const now = cell(c.id)!;
      const then = cell(`before:${c.id}`);
      console.log(
        `| ${c.label} | ${now.rps} | ${now.p50} | ${now.p99} | ${now.share} | ${now.cpu} | ` +
          `${now.cpuShare} |` +
          (before
            ? (then
              ? ` ${then.rps} | ${then.p99} | ${then.share} | ${then.cpuShare} |`
              : " | | | |")
            : ""),
      );
    }
    return 0;
  } finally {
    for (const c of children.reverse()) await stopChild(c);
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
