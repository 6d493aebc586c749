/**
 * Control-plane HTTP benchmark: a real `cfgtool serve` process on loopback,
 * loaded with wrk, next to a bare `Deno.serve` hello-world measured in the
 * same run.
 *
 * ```sh
 * deno run -A bench/http_control_plane.ts [--duration 10s] [--connections 32]
 *   [--threads 1] [--repeat 3] [--warmup 2s] [--cases hello,healthz,...]
 * ```
 *
 * What it does:
 *
 * 1. starts bench/hello_server.ts on a free loopback port;
 * 2. bootstraps a superadmin in a temp-dir KV (`cfgtool admin bootstrap`) and
 *    starts `cfgtool serve --port 0` on it (its JSON access log goes to a file
 *    in the temp dir, as it would go to a log collector);
 * 3. creates tenant `bench` with namespaces `web`, `push-new` and `push-same`,
 *    a namespace-read token for `web` and namespace-write tokens for the push
 *    namespaces, and pushes examples/flags to `web` and `push-same`;
 * 4. runs wrk (bench/wrk/request.lua, `--latency`) against each case, round
 *    after round, and prints requests/s, p50 and p99 as a markdown table
 *    (median of the rounds, with the min–max of the rounds);
 * 5. stops every process it started and removes the temp dir.
 *
 * Only 127.0.0.1 is contacted. Each wrk run is killed if it outlives its
 * duration by 30 s. Without wrk on the PATH it says how to install it and
 * exits 1.
 *
 * @module
 */
const ROOT = new URL("../", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const HELLO = `${ROOT}bench/hello_server.ts`;
const LUA = `${ROOT}bench/wrk/request.lua`;
const EXAMPLE = `${ROOT}examples/flags`;
const HOST = "127.0.0.1";

/** One measured request shape. */
interface Case {
  id: string;
  label: string;
  server: "hello" | "cfgtool";
  path: string;
  method: string;
  /** Body file in the temp dir, or "-" for none. */
  body: string;
  mode: "static" | "same" | "unique";
  headers: string[];
}

/** What one wrk run reported. */
interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: string[];
  statuses: Record<string, number>;
  /** CPU seconds the server process used during the run (Linux only). */
  serverCpu: number | null;
}

/** A child process with its output collected. */
interface Child {
  name: string;
  process: Deno.ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<Deno.CommandStatus>;
}

const children = new Set<Child>();

function usage(): string {
  return [
    "Usage: deno run -A bench/http_control_plane.ts [options]",
    "  --duration <T>     wrk duration per run, e.g. 10s (default 10s)",
    "  --connections <N>  open connections (default 32)",
    "  --threads <N>      wrk threads (default 1: the machine has few cores)",
    "  --repeat <N>       rounds over every case; the table shows the median (default 3)",
    "  --warmup <T>       one unmeasured run per case before the first round (default 2s, 0 = none)",
    "  --cases <list>     comma-separated subset of: " + CASE_IDS.join(", "),
  ].join("\n");
}

const CASE_IDS = ["hello", "healthz", "manifest-304", "manifest-200", "push-same", "push-new"];

function parseSeconds(text: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (!m) throw new Error(`${name} must look like 10s, 500ms or 1m, not "${text}"`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
}

function positiveInt(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

/** Spawns a process and collects its stdout and stderr. */
function spawn(
  name: string,
  cmd: string,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Child {
  const process = new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      const text = dec.decode(chunk, { stream: true });
      if (isOut) out += text;
      else err += text;
    }
  };
  const pumps = Promise.all([pump(process.stdout, true), pump(process.stderr, false)]);
  const done = (async () => {
    const status = await process.status;
    await pumps;
    return status;
  })();
  const child: Child = { name, process, stdout: () => out, stderr: () => err, done };
  done.then(() => children.delete(child));
  children.add(child);
  return child;
}

/** Waits until a child prints `listening on http://…` and returns that URL. */
async function waitForUrl(child: Child, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.done.then(() => exited = true);
  while (Date.now() < deadline) {
    const m = child.stdout().match(/listening on (http:\/\/[^\s]+)/);
    if (m) {
      const url = new URL(m[1]!);
      if (url.hostname !== HOST) {
        throw new Error(`${child.name} listens on ${url.host}, not ${HOST}`);
      }
      return url.origin;
    }
    if (exited) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${child.name} did not start:\n${child.stdout()}\n${child.stderr()}`);
}

/** SIGTERM, then SIGKILL after 5 s. */
async function stop(child: Child): Promise<void> {
  try {
    child.process.kill("SIGTERM");
  } catch {
    // already gone
  }
  const timer = setTimeout(() => {
    try {
      child.process.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, 5_000);
  await child.done;
  clearTimeout(timer);
}

/** Runs a command to completion (bounded) and returns its output. */
async function run(name: string, cmd: string, args: string[], timeoutMs: number) {
  const child = spawn(name, cmd, args);
  const timer = setTimeout(() => {
    try {
      child.process.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, timeoutMs);
  const status = await child.done;
  clearTimeout(timer);
  return {
    code: status.code,
    signal: status.signal,
    stdout: child.stdout(),
    stderr: child.stderr(),
  };
}

/** The files of a manifest directory, path → text. */
async function readTree(dir: string, prefix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const entries = [];
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) entries.push(e);
  entries.sort((a, b) => a.name < b.name ? -1 : 1);
  for (const e of entries) {
    const rel = prefix === "" ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory) Object.assign(out, await readTree(dir, rel));
    else if (e.isFile) out[rel] = await Deno.readTextFile(`${dir}/${rel}`);
  }
  return out;
}

/** A JSON call to the service; throws unless the status is expected. */
async function api(
  base: string,
  method: string,
  path: string,
  token: string,
  body: unknown,
  expect: number[],
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) {
    throw new Error(`${method} ${path}: ${res.status} ${text}`);
  }
  const json = (res.headers.get("content-type") ?? "").includes("json") && text !== ""
    ? JSON.parse(text)
    : text;
  return { status: res.status, headers: res.headers, body: json };
}

/** wrk's duration text (e.g. `1.23ms`) in milliseconds. */
function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new Error(`cannot read wrk duration "${text}"`);
  const n = Number(m[1]);
  const scale: Record<string, number> = { us: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
  return n * scale[m[2]!]!;
}

/** Reads requests/s, p50, p99, errors and status counts from wrk's output. */
export function parseWrk(output: string): WrkResult {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  const p50 = /^\s+50%\s+(\S+)/m.exec(output);
  const p99 = /^\s+99%\s+(\S+)/m.exec(output);
  const requests = /^\s+(\d+) requests in /m.exec(output);
  if (!rps || !p50 || !p99 || !requests) throw new Error(`cannot read wrk output:\n${output}`);
  const errors: string[] = [];
  const socket = /Socket errors: (.*)$/m.exec(output);
  if (socket) errors.push(`socket errors: ${socket[1]}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  if (non2xx) errors.push(`${non2xx[1]} responses ≥ 400`);
  const statuses: Record<string, number> = {};
  const counts = /^status_counts (.*)$/m.exec(output);
  if (counts) {
    for (const part of counts[1]!.trim().split(/\s+/)) {
      const [code, n] = part.split("=");
      statuses[code!] = Number(n);
    }
  }
  return {
    rps: Number(rps[1]),
    p50: toMs(p50[1]!),
    p99: toMs(p99[1]!),
    requests: Number(requests[1]),
    errors,
    statuses,
    serverCpu: null,
  };
}

/** Clock ticks per second of /proc/<pid>/stat (Linux). */
let clockTicks: number | null = null;

/** User + system CPU seconds of a process so far, or null where /proc is missing. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Fields after "(comm)": state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / (clockTicks ?? 100);
  } catch {
    return null;
  }
}

async function runWrk(
  base: string,
  serverPid: number,
  c: Case,
  opts: { duration: number; connections: number; threads: number },
  tmp: string,
): Promise<WrkResult> {
  const args = [
    "--threads",
    String(opts.threads),
    "--connections",
    String(opts.connections),
    "--duration",
    `${opts.duration}s`,
    "--timeout",
    "10s",
    "--latency",
    "--script",
    LUA,
    `${base}${c.path}`,
    "--",
    c.method,
    c.body === "-" ? "-" : `${tmp}/${c.body}`,
    c.mode,
    ...c.headers,
  ];
  const cpuBefore = cpuSeconds(serverPid);
  const out = await run(`wrk ${c.id}`, "wrk", args, (opts.duration + 30) * 1000);
  const cpuAfter = cpuSeconds(serverPid);
  if (out.code !== 0) {
    throw new Error(`wrk ${c.id} failed (${out.code ?? out.signal}):\n${out.stdout}${out.stderr}`);
  }
  const result = parseWrk(out.stdout);
  if (cpuBefore !== null && cpuAfter !== null) result.serverCpu = cpuAfter - cpuBefore;
  return result;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function fmtRps(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Server CPU of a run: share of one core, and per request. */
function fmtCpu(r: WrkResult): string {
  const seconds = r.serverCpu!;
  return `${seconds.toFixed(1)} s (${Math.round(seconds / r.requests * 1e6)} µs/req)`;
}

function fmtMs(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

async function machine(): Promise<string[]> {
  let cpu = "unknown CPU";
  try {
    const info = await Deno.readTextFile("/proc/cpuinfo");
    cpu = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? cpu;
  } catch {
    // not Linux
  }
  const wrk = await run("wrk --version", "wrk", ["--version"], 10_000);
  const wrkVersion = /^(wrk .*?)\s+Copyright/m.exec(wrk.stdout)?.[1] ?? "wrk (version unknown)";
  let commit = "unknown";
  try {
    const git = await run("git describe", "git", ["describe", "--always", "--dirty"], 10_000);
    if (git.code === 0) commit = git.stdout.trim();
  } catch {
    // no git
  }
  try {
    const ticks = await run("getconf", "getconf", ["CLK_TCK"], 10_000);
    if (ticks.code === 0) clockTicks = Number(ticks.stdout.trim()) || null;
  } catch {
    // not POSIX
  }
  return [
    `CPUs: ${navigator.hardwareConcurrency} (${cpu})`,
    `Deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ${Deno.build.os} ${Deno.build.arch}`,
    wrkVersion,
    `cfgtool at ${commit}`,
  ];
}

async function hasWrk(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

async function main(): Promise<number> {
  const flags: Record<string, string> = {
    duration: "10s",
    connections: "32",
    threads: "1",
    repeat: "3",
    warmup: "2s",
    cases: CASE_IDS.join(","),
  };
  for (let i = 0; i < Deno.args.length; i++) {
    const arg = Deno.args[i]!;
    if (arg === "--help" || arg === "-h") {
      console.log(usage());
      return 0;
    }
    const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1]! in flags)) throw new Error(`unknown argument ${arg}\n${usage()}`);
    const value = m[2] ?? Deno.args[++i];
    if (value === undefined) throw new Error(`${arg} needs a value`);
    flags[m[1]!] = value;
  }
  const duration = parseSeconds(flags.duration!, "--duration");
  const warmup = parseSeconds(flags.warmup!, "--warmup");
  const connections = positiveInt(flags.connections!, "--connections");
  const threads = positiveInt(flags.threads!, "--threads");
  const repeat = positiveInt(flags.repeat!, "--repeat");
  const wanted = flags.cases!.split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const id of wanted) {
    if (!CASE_IDS.includes(id)) throw new Error(`unknown case ${id}\n${usage()}`);
  }
  if (duration < 1 || duration > 600) throw new Error("--duration must be 1s to 10m");
  if (connections < threads) throw new Error("--connections must be at least --threads");

  if (!await hasWrk()) {
    console.error(
      "wrk is not installed. Install it with your package manager, for example:\n" +
        "  sudo apt-get install -y wrk      # Debian, Ubuntu\n" +
        "  brew install wrk                # macOS\n" +
        "then run this benchmark again.",
    );
    return 1;
  }

  const info = await machine();
  for (const line of info) console.log(line);
  console.log(
    `wrk: ${threads} thread(s), ${connections} connections, ${duration} s per run, ` +
      `${repeat} round(s), warm-up ${warmup} s per case`,
  );

  const tmp = await Deno.makeTempDir({ prefix: "cfgtool-bench-http-" });
  const kvPath = `${tmp}/kv.sqlite3`;
  const logPath = `${tmp}/server.log`;
  try {
    // 1. the baseline
    const hello = spawn("hello server", Deno.execPath(), ["run", "--allow-net", HELLO, "0"]);
    const helloUrl = await waitForUrl(hello);

    // 2. a real installation
    const boot = await run(
      "bootstrap",
      Deno.execPath(),
      ["run", "-A", "--unstable-kv", CLI, "admin", "bootstrap", "--kv", kvPath],
      60_000,
    );
    if (boot.code !== 0) throw new Error(`bootstrap failed:\n${boot.stderr}`);
    const admin = boot.stdout.trim().split("\n").at(-1)!.trim();
    // The JSON access log goes to a file, as it would go to a collector; the
    // shell only sets up the redirection and then becomes the server (exec).
    const cfgtool = spawn("cfgtool serve", "sh", [
      "-c",
      'exec "$0" "$@" 2>"$CFGTOOL_BENCH_LOG"',
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-kv",
      CLI,
      "serve",
      "--hostname",
      HOST,
      "--port",
      "0",
      "--kv",
      kvPath,
    ], { env: { CFGTOOL_BENCH_LOG: logPath } });
    const base = await waitForUrl(cfgtool);

    // 3. tenant, namespaces, tokens, manifests
    const files = await readTree(EXAMPLE);
    await api(base, "POST", "/api/v1/tenants", admin, { slug: "bench" }, [201]);
    for (const slug of ["web", "push-new", "push-same"]) {
      await api(base, "POST", "/api/v1/tenants/bench/namespaces", admin, { slug }, [201]);
    }
    const mint = async (type: string, namespace: string) => {
      const res = await api(base, "POST", "/api/v1/tokens", admin, {
        type,
        name: `bench ${type} ${namespace}`,
        tenant_slug: "bench",
        namespace_slug: namespace,
      }, [201]);
      return { secret: res.body.secret as string, id: res.body.token.id as string };
    };
    const read = await mint("namespace-read", "web");
    const readToken = read.secret;
    const writeNew = (await mint("namespace-write", "push-new")).secret;
    const writeSame = (await mint("namespace-write", "push-same")).secret;
    const manifestPath = (ns: string) => `/api/v1/tenants/bench/namespaces/${ns}/manifest`;
    const sameBody = JSON.stringify({ files, message: "bench push" });
    await Deno.writeTextFile(`${tmp}/push-same.json`, sameBody);
    // Every request of push-new changes the namespace description, so every
    // push is different content: a new description blob, tree and version.
    const namespaceToml = files["namespace.toml"]!;
    if (!namespaceToml.includes('description = "Checkout service"')) {
      throw new Error("examples/flags/namespace.toml changed; update the push-new template");
    }
    const newBody = JSON.stringify({
      files: {
        ...files,
        "namespace.toml": namespaceToml.replace(
          'description = "Checkout service"',
          'description = "Checkout service (bench push @@N@@)"',
        ),
      },
      message: "bench push",
    });
    await Deno.writeTextFile(`${tmp}/push-new.json`, newBody);
    await api(base, "PUT", manifestPath("web"), admin, { files }, [201]);
    await api(base, "PUT", manifestPath("push-same"), writeSame, JSON.parse(sameBody), [201]);
    await api(base, "PUT", manifestPath("push-same"), writeSame, JSON.parse(sameBody), [200]);

    // the expected answers, checked once before loading
    const full = await fetch(`${base}${manifestPath("web")}`, {
      headers: { authorization: `Bearer ${readToken}` },
    });
    const archive = new Uint8Array(await full.arrayBuffer());
    const etag = full.headers.get("etag");
    if (full.status !== 200 || etag === null) throw new Error(`GET manifest: ${full.status}`);
    const cached = await fetch(`${base}${manifestPath("web")}`, {
      headers: { authorization: `Bearer ${readToken}`, "if-none-match": etag },
    });
    await cached.body?.cancel();
    if (cached.status !== 304) throw new Error(`GET manifest If-None-Match: ${cached.status}`);
    console.log(
      `manifest: examples/flags, ${Object.keys(files).length} files, ` +
        `${Object.values(files).reduce((n, t) => n + t.length, 0)} bytes of TOML; ` +
        `tar.gz ${archive.length} bytes; ETag ${etag}; push body ${newBody.length} bytes of JSON`,
    );

    const bearer = (t: string) => `Authorization: Bearer ${t}`;
    const all: Case[] = [
      {
        id: "hello",
        label: "bare `Deno.serve` hello-world",
        server: "hello",
        path: "/",
        method: "GET",
        body: "-",
        mode: "static",
        headers: [],
      },
      {
        id: "healthz",
        label: "cfgtool `GET /healthz` (no auth)",
        server: "cfgtool",
        path: "/healthz",
        method: "GET",
        body: "-",
        mode: "static",
        headers: [],
      },
      {
        id: "manifest-304",
        label: "`GET …/manifest` + `If-None-Match` → 304",
        server: "cfgtool",
        path: manifestPath("web"),
        method: "GET",
        body: "-",
        mode: "static",
        headers: [bearer(readToken), `If-None-Match: ${etag}`],
      },
      {
        id: "manifest-200",
        label: `\`GET …/manifest\` → 200 tar.gz (${archive.length} B)`,
        server: "cfgtool",
        path: manifestPath("web"),
        method: "GET",
        body: "-",
        mode: "static",
        headers: [bearer(readToken)],
      },
      {
        id: "push-same",
        label: "`PUT …/manifest`, identical content → 200 unchanged",
        server: "cfgtool",
        path: manifestPath("push-same"),
        method: "PUT",
        body: "push-same.json",
        mode: "same",
        headers: [bearer(writeSame), "Content-Type: application/json"],
      },
      {
        id: "push-new",
        label: "`PUT …/manifest`, new content → 201 new version",
        server: "cfgtool",
        path: manifestPath("push-new"),
        method: "PUT",
        body: "push-new.json",
        mode: "unique",
        headers: [bearer(writeNew), "Content-Type: application/json"],
      },
    ];
    const cases = all.filter((c) => wanted.includes(c.id));
    const urlOf = (c: Case) => c.server === "hello" ? helloUrl : base;
    const pidOf = (c: Case) => c.server === "hello" ? hello.process.pid : cfgtool.process.pid;
    const opts = { duration, connections, threads };

    if (warmup > 0) {
      console.log(`warm-up: ${warmup} s per case`);
      for (const c of cases) {
        await runWrk(
          urlOf(c),
          pidOf(c),
          c,
          { ...opts, duration: Math.max(1, Math.round(warmup)) },
          tmp,
        );
      }
    }

    const results = new Map<string, WrkResult[]>(cases.map((c) => [c.id, []]));
    for (let round = 1; round <= repeat; round++) {
      for (const c of cases) {
        await new Promise((r) => setTimeout(r, 1_000));
        const r = await runWrk(urlOf(c), pidOf(c), c, opts, tmp);
        results.get(c.id)!.push(r);
        const statuses = Object.entries(r.statuses).map(([k, v]) => `${k}×${v}`).join(" ");
        console.log(
          `round ${round} ${c.id.padEnd(13)} ${fmtRps(r.rps).padStart(7)} req/s  ` +
            `p50 ${fmtMs(r.p50)} ms  p99 ${fmtMs(r.p99)} ms` +
            (r.serverCpu === null ? "" : `  server CPU ${fmtCpu(r)}`) +
            (statuses ? `  [${statuses}]` : "") +
            (r.errors.length ? `  !! ${r.errors.join("; ")}` : ""),
        );
      }
    }

    // 4. the table
    const helloRps = results.has("hello") ? median(results.get("hello")!.map((r) => r.rps)) : NaN;
    const rows = cases.map((c) => {
      const rs = results.get(c.id)!;
      const rps = rs.map((r) => r.rps);
      const p99 = rs.map((r) => r.p99);
      const range = (xs: number[], f: (n: number) => string) =>
        xs.length > 1 ? ` (${f(Math.min(...xs))}–${f(Math.max(...xs))})` : "";
      return [
        c.label,
        `${fmtRps(median(rps))}${range(rps, fmtRps)}`,
        Number.isNaN(helloRps) ? "–" : `${(median(rps) / helloRps * 100).toFixed(1)} %`,
        fmtMs(median(rs.map((r) => r.p50))),
        `${fmtMs(median(p99))}${range(p99, fmtMs)}`,
        rs.every((r) => r.serverCpu !== null)
          ? `${Math.round(median(rs.map((r) => r.serverCpu! / duration * 100)))} % / ${
            Math.round(median(rs.map((r) => r.serverCpu! / r.requests * 1e6)))
          } µs`
          : "–",
      ];
    });
    const header = ["case", "req/s", "vs hello", "p50 ms", "p99 ms", "server CPU / per req"];
    console.log(
      `\nMedian of ${repeat} run(s) of ${duration} s, ${connections} connections, ` +
        `${threads} wrk thread(s); (min–max) over the runs. Server CPU: user + system time of\n` +
        `the server process during a run, as % of one core and per request (Linux /proc).\n`,
    );
    console.log(`| ${header.join(" | ")} |`);
    console.log(`| ${header.map(() => "---").join(" | ")} |`);
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);

    // 5. side effects on the store: versions created, throttled token writes
    const versions = await api(
      base,
      "GET",
      "/api/v1/tenants/bench/namespaces/push-new/versions?limit=1",
      admin,
      undefined,
      [200],
    );
    const created = Object.values(results.get("push-new") ?? [])
      .reduce((n, r) => n + (r.statuses["201"] ?? 0), 0);
    const head = versions.body.versions[0]?.version ?? 0;
    const audit = await api(
      base,
      "GET",
      `/api/v1/audit?type=token.authenticated&token_id=${read.id}&limit=500`,
      admin,
      undefined,
      [200],
    );
    const touches = (audit.body.entries as unknown[]).length;
    const readRequests = [
      ...(results.get("manifest-304") ?? []),
      ...(results.get("manifest-200") ?? []),
    ]
      .reduce((n, r) => n + r.requests, 0);
    const log = await Deno.stat(logPath);
    const kvSize = (await Deno.stat(kvPath)).size;
    console.log(
      `\npush-new: ${created} measured 201s; namespace head at version ${head} ` +
        `(includes warm-up pushes).`,
    );
    console.log(
      `read token: ${readRequests} measured GETs (plus warm-up), ${touches} ` +
        `token.authenticated audit entries (= last_used_at writes) over the whole run.`,
    );
    console.log(`server access log: ${log.size} bytes; KV file: ${kvSize} bytes.`);
    return 0;
  } finally {
    for (const child of [...children]) await stop(child);
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) {
  const onSignal = () => {
    for (const child of children) {
      try {
        child.process.kill("SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  let code = 1;
  try {
    code = await main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    code = 1;
  }
  Deno.exit(code);
}
