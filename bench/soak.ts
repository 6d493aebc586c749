/**
 * Soak: a real `cfgtool serve` under mixed load on loopback for a long
 * while, with the server's RSS and open file descriptors sampled, to show
 * that neither grows without bound (docs/performance.md, "Soak").
 *
 * ```sh
 * deno run -A bench/soak.ts [--minutes 30] [--sample-seconds 10] [--rate 1]
 *   [--out /tmp/cfgtool-soak] [--root <checkout>] [--prune-interval-ms 60000]
 * ```
 *
 * Setup: a temp-dir KV with a superadmin made by the real
 * `cfgtool admin bootstrap`, then `cfgtool serve --port 0` from source
 * (`deno run -A cli.ts serve`, 127.0.0.1 only; `--root` serves another
 * checkout's cli.ts, e.g. a `git archive` of a commit) with
 * `--prune-interval-ms 60000` (so retention runs during the soak; the
 * option of the same name changes it) and
 * `--max-connections-per-token 64`. Tenant `soak` holds `web` (the
 * realistic namespace of bench/fixtures, `staging` public) and `churn`; a
 * namespace-read token for `web`, a namespace-write token for `churn`, a
 * namespace-client token for `web`/`staging` and a tenant-admin token.
 *
 * The load, all at fixed rates (`--rate` scales every rate but the streams';
 * 1 keeps the server between a third and half of a core on the 2-core
 * development machine):
 *
 * - **evaluations**, 160/s: our `evaluate` (one flag, `web`) and `evaluate/all`
 *   (`churn`, whose flags change with every push), OFREP single-flag and
 *   bulk with the read token (bulk half the time with the last `ETag`, so
 *   200 and 304), and OFREP bulk with the client token (4/s, well under its
 *   600/min rate limit); contexts from a seeded generator;
 * - **pushes**, two a second to `churn` with a different file set each time
 *   (10 to 120 flags of a pool, descriptions changed), every 5th one a
 *   one-flag change to `web` (an inline event to every stream), every 10th
 *   a stale `If-Match` (412 expected) and an invalid manifest (422
 *   expected), and every 15 s a push of 1,000 flag files to `bulk` (the
 *   off-thread path of large uploads);
 * - **event streams**: 12 slots of `/api/v1/events?ns=web:*&ns=churn:*`
 *   (tenant-admin) and 6 of the OFREP event stream (client token); each
 *   slot connects, reads for 2 to 20 s (one in five drops right after the
 *   headers, one in five resumes with `since`), aborts, waits up to 1 s and
 *   connects again;
 * - **tokens**, every 1.25 s: issue a namespace-read token, evaluate with it
 *   (200), revoke it, evaluate again (401);
 * - **namespaces**, every 15 s: create `tmp-<n>`, push to it, evaluate it,
 *   subscribe to it for a second, delete it.
 *
 * Every `--sample-seconds` it records the server's VmRSS and threads
 * (/proc/<pid>/status), its V8 heap (from its own `/metrics`, when it has
 * prom-client's `nodejs_heap_*`), its open descriptors by kind (/proc/<pid>/fd), its
 * CPU (/proc/<pid>/stat), the requests and errors so far, open streams,
 * events received and the KV file's size. After `--minutes` it stops the
 * load, waits 35 s (the server closes idle keep-alive connections after
 * 30 s) and samples once more (the
 * descriptors must be back where they started), stops the server
 * (SIGTERM, SIGKILL after 60 s) and prints the summary: first, last and
 * max of RSS and descriptors, the least-squares slope over the second half
 * and the verdict of bench/soak_summary.ts. It writes `<out>.json` (every
 * sample), `<out>.md` (summary and a condensed table) and `<out>.server.log`
 * (the server's log lines but the access lines of plain requests). SIGINT ends the
 * run early with the same report. An unexpected status counts as an error
 * (the first few are printed); the server's `warn` and `error` log lines are
 * counted and the first few kept.
 *
 * @module
 */
import { createParser } from "sse-parser";
import { makeContexts, realisticNamespaceFiles } from "./fixtures/realistic_namespace.ts";
import { api } from "./bootstrap.ts";
import {
  clock,
  condense,
  fdVerdict,
  mib,
  rssVerdict,
  sampleTable,
  type SeriesSummary,
  type SoakSample,
  summarise,
} from "./soak_summary.ts";

const TENANT = "soak";
const CLOCK_TICKS = 100; // USER_HZ on Linux

// ---------------------------------------------------------------- options

const opts = {
  minutes: "30",
  "sample-seconds": "10",
  rate: "1",
  out: "",
  root: "",
  "prune-interval-ms": "60000",
};
for (let i = 0; i < Deno.args.length; i++) {
  const arg = Deno.args[i]!;
  if (arg === "--help" || arg === "-h") {
    console.log(
      "Usage: deno run -A bench/soak.ts [--minutes 30] [--sample-seconds 10] [--rate 1]\n" +
        "  [--out <prefix>] [--root <checkout whose cli.ts to serve>] [--prune-interval-ms 60000]",
    );
    Deno.exit(0);
  }
  const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
  if (!m || !(m[1]! in opts)) throw new Error(`unknown argument ${arg}`);
  const value = m[2] ?? Deno.args[++i];
  if (value === undefined) throw new Error(`${arg} needs a value`);
  opts[m[1] as keyof typeof opts] = value;
}
const MINUTES = Number(opts.minutes);
const SAMPLE_S = Number(opts["sample-seconds"]);
const RATE = Number(opts.rate);
if (!(MINUTES > 0) || !(SAMPLE_S > 0) || !(RATE > 0)) {
  throw new Error("--minutes, --sample-seconds and --rate must be positive numbers");
}
const ROOT = opts.root
  ? `${opts.root.replace(/\/$/, "")}/`
  : new URL("../", import.meta.url).pathname;
const CLI = `${ROOT}cli.ts`;
const OUT = opts.out ||
  `/tmp/cfgtool-soak-${new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19)}`;

// ---------------------------------------------------------------- counters

/** Per operation: answers as expected, errors, statuses seen. */
interface OpStats {
  ok: number;
  errors: number;
  statuses: Record<string, number>;
}
const stats = new Map<string, OpStats>();
const firstErrors: string[] = [];
let openStreams = 0;
/** Open streams: when each was opened (performance.now()) and how long it was meant to stay. */
const openSince = new Map<symbol, { at: number; ms: number }>();
let streamConnects = 0;
let events = 0;
let stopping = false;

function count(op: string, status: number | string, ok: boolean, detail = "") {
  let s = stats.get(op);
  if (!s) stats.set(op, s = { ok: 0, errors: 0, statuses: {} });
  s.statuses[status] = (s.statuses[status] ?? 0) + 1;
  if (ok) s.ok++;
  else {
    s.errors++;
    if (firstErrors.length < 20) {
      const line = `${new Date().toISOString()} ${op}: ${status} ${detail}`.slice(0, 400);
      firstErrors.push(line);
      console.error(`unexpected: ${line}`);
    }
  }
}

function totals(): { ok: number; errors: number } {
  let ok = 0, errors = 0;
  for (const s of stats.values()) {
    ok += s.ok;
    errors += s.errors;
  }
  return { ok, errors };
}

/**
 * One request: reads the whole answer, counts it under `op` as expected
 * when its status is in `expect`; returns the response and its text (or
 * null after a network error, which counts as an error unless stopping).
 */
async function call(
  op: string,
  url: string,
  init: RequestInit,
  expect: number[],
): Promise<{ res: Response; text: string } | null> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    count(op, res.status, expect.includes(res.status), text.slice(0, 200));
    return { res, text };
  } catch (err) {
    if (!stopping) count(op, "network", false, String(err));
    return null;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Calls `fn` every `periodMs` (after the previous call ended, when it runs late) until stop. */
async function every(periodMs: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = performance.now();
  for (let i = 0; !stopping; i++) {
    await fn(i);
    next += periodMs;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    else next = performance.now();
  }
}

// ---------------------------------------------------------------- server

const dec = new TextDecoder();
const dir = await Deno.makeTempDir({ prefix: "cfgtool-soak-" });
const kvPath = `${dir}/kv.sqlite3`;
const boot = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--unstable-kv", CLI, "admin", "bootstrap", "--kv", kvPath],
  cwd: ROOT,
  stdout: "piped",
  stderr: "piped",
}).output();
if (!boot.success) throw new Error(`bootstrap failed:\n${dec.decode(boot.stderr)}`);
const admin = dec.decode(boot.stdout).trim().split("\n").at(-1)!.trim();
const serveArgs = [
  "serve",
  "--port",
  "0",
  "--hostname",
  "127.0.0.1",
  "--kv",
  kvPath,
  "--max-connections-per-token",
  "64",
  "--prune-interval-ms",
  opts["prune-interval-ms"],
];
const server = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--unstable-kv", CLI, ...serveArgs],
  cwd: ROOT,
  stdin: "null",
  stdout: "piped",
  stderr: "piped",
  env: { NO_COLOR: "1" },
}).spawn();
const pid = server.pid;

/** Server log lines by level, and the first warn/error lines. */
const logLevels: Record<string, number> = {};
const logProblems: string[] = [];
let logLines = 0;
/** `<out>.server.log`: every server log line but the access lines of plain requests. */
const serverLog = await Deno.open(`${OUT}.server.log`, {
  write: true,
  create: true,
  truncate: true,
});
const enc = new TextEncoder();
const keptLog = (line: string) =>
  !line.includes('"msg":"request"') ||
  /"path":"\/(api\/v1\/events|ofrep\/v1\/event-stream)"/.test(line);
void (async () => {
  let buf = "";
  for await (const chunk of server.stderr.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      logLines++;
      if (keptLog(line)) await serverLog.write(enc.encode(line + "\n"));
      const level = /"level":"(\w+)"/.exec(line)?.[1] ?? "other";
      logLevels[level] = (logLevels[level] ?? 0) + 1;
      if ((level === "warn" || level === "error" || level === "other") && logProblems.length < 20) {
        logProblems.push(line.slice(0, 500));
      }
    }
  }
})();
const listening = new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("the server did not start in 60 s")), 60_000);
  void (async () => {
    let out = "";
    for await (const chunk of server.stdout.pipeThrough(new TextDecoderStream())) {
      out += chunk;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    }
    clearTimeout(timer);
    reject(new Error(`the server exited before listening:\n${out}`));
  })();
});
let serverExited = false;
const serverStatus = server.status.then((s) => {
  serverExited = true;
  if (!stopping) console.error(`the server exited during the soak: ${JSON.stringify(s)}`);
  return s;
});

// ---------------------------------------------------------------- data

function filesOf(map: Map<string, Uint8Array>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of map) out[k] = dec.decode(v);
  return out;
}
const NAMESPACE_TOML = 'schema_version = 1\n[namespace]\ndescription = "Soak"\n' +
  "[namespace.environments.production]\n[namespace.environments.staging]\npublic_evaluate = true\n";
const webFiles = filesOf(realisticNamespaceFiles(50));
webFiles["namespace.toml"] = NAMESPACE_TOML;
const pool = filesOf(realisticNamespaceFiles(120));
pool["namespace.toml"] = NAMESPACE_TOML;
const poolFlags = Object.keys(pool).filter((k) => k.startsWith("flags/"));
const segments = Object.fromEntries(Object.entries(pool).filter(([k]) => !k.startsWith("flags/")));
const bulkFiles = filesOf(realisticNamespaceFiles(1000));
const contexts = makeContexts(500, 7);
const webFlags = Object.keys(webFiles).filter((k) => k.startsWith("flags/"))
  .map((k) => k.slice(6, -5));

let seed = 12345;
/** mulberry32: a seeded generator in 32-bit integer arithmetic. */
function rand(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

/** A different file set each call: 10 to 120 pool flags, descriptions changed. */
function churnFiles(n: number): Record<string, string> {
  const files: Record<string, string> = { ...segments };
  const k = 10 + Math.floor(rand() * (poolFlags.length - 10));
  const chosen = [...poolFlags].sort(() => rand() - 0.5).slice(0, k);
  for (const path of chosen) {
    files[path] = pool[path]!.replace(/description = "[^"]*"/, `description = "push ${n}"`);
  }
  return files;
}

const json = (token: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

// ---------------------------------------------------------------- setup

/** A failure before the load: stop the server, remove the temp dir, exit 1. */
async function failSetup(err: unknown): Promise<never> {
  stopping = true;
  console.error(`setup failed: ${err instanceof Error ? err.message : err}`);
  await sleep(200); // the server's last log lines
  for (const line of logProblems) console.error(`server: ${line}`);
  try {
    server.kill("SIGKILL");
  } catch {
    // gone
  }
  await server.status;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  Deno.exit(1);
}

const NS = `/api/v1/tenants/${TENANT}/namespaces`;

/** Tenant, namespaces, first pushes and the tokens of the load. */
async function setup() {
  const base = await listening;
  await api(base, admin, "POST", "/api/v1/tenants", { slug: TENANT });
  for (const slug of ["web", "churn", "bulk"]) {
    await api(base, admin, "POST", `/api/v1/tenants/${TENANT}/namespaces`, { slug });
  }
  await api(base, admin, "PUT", `${NS}/web/manifest`, { files: webFiles, message: "soak" });
  await api(base, admin, "PUT", `${NS}/churn/manifest`, { files: churnFiles(0) });
  const token = async (type: string, name: string, extra: Record<string, unknown> = {}) =>
    (await api(base, admin, "POST", "/api/v1/tokens", {
      type,
      name,
      tenant_slug: TENANT,
      ...extra,
    })).secret as string;
  return {
    base,
    read: await token("namespace-read", "soak-read", { namespace_slug: "web" }),
    write: await token("namespace-write", "soak-write", { namespace_slug: "churn" }),
    client: await token("namespace-client", "soak-client", {
      namespace_slug: "web",
      environment_slug: "staging",
    }),
    tenantAdmin: await token("tenant-admin", "soak-tenant"),
  };
}
const { base, read, write, client, tenantAdmin } = await setup().catch(failSetup);
console.log(`server pid ${pid} on ${base}, KV ${kvPath}`);
const ofrepHeaders = {
  "x-cfgtool-tenant": TENANT,
  "x-cfgtool-namespace": "web",
  "x-cfgtool-environment": "production",
};

// ---------------------------------------------------------------- load

async function evaluations(i: number): Promise<void> {
  const context = contexts[i % contexts.length]!;
  const flag = pick(webFlags);
  switch (i % 10) {
    case 0:
    case 1:
    case 2:
      await call(
        "evaluate",
        `${base}${NS}/web/environments/production/evaluate`,
        json(read, { flag, context }),
        [200],
      );
      break;
    case 3:
      await call(
        "evaluate-all",
        `${base}${NS}/churn/environments/${pick(["production", "staging"])}/evaluate/all`,
        json(tenantAdmin, { context }),
        [200],
      );
      break;
    case 4:
    case 5:
      await call(
        "ofrep-flag",
        `${base}/ofrep/v1/evaluate/flags/${flag}`,
        json(read, { context: { ...context, targetingKey: context.targeting_key } }, ofrepHeaders),
        [200],
      );
      break;
    case 6:
    case 7:
    case 8: {
      const r = await call(
        "ofrep-bulk",
        `${base}/ofrep/v1/evaluate/flags`,
        json(read, { context: { targetingKey: `u-${i % 7}` } }, {
          ...ofrepHeaders,
          ...(i % 2 === 0 && lastEtag ? { "if-none-match": lastEtag } : {}),
        }),
        [200, 304],
      );
      if (r?.res.status === 200) lastEtag = r.res.headers.get("etag") ?? "";
      break;
    }
    case 9:
      // the client token's rate limit is 600/min per Origin: at most 4/s whatever --rate says
      if (performance.now() - lastClientCall < 250) return evaluations(i + 3);
      lastClientCall = performance.now();
      await call(
        "ofrep-bulk-client",
        `${base}/ofrep/v1/evaluate/flags`,
        json(client, { context: { targetingKey: String(context.targeting_key) } }),
        [200],
      );
      break;
  }
}
let lastEtag = "";
let lastClientCall = 0;

let webPush = 0;
async function pushes(i: number): Promise<void> {
  const put = (op: string, ns: string, tok: string, files: unknown, expect: number[], h = {}) =>
    call(op, `${base}${NS}/${ns}/manifest`, {
      method: "PUT",
      headers: { authorization: `Bearer ${tok}`, "content-type": "application/json", ...h },
      body: JSON.stringify({ files, message: `soak ${i}` }),
    }, expect);
  await put("push", "churn", write, churnFiles(i), [200, 201]);
  if (i % 5 === 0) {
    webPush++;
    const files = { ...webFiles };
    files["flags/flag-07.toml"] = files["flags/flag-07.toml"]!.replace(
      /description = "[^"]*"/,
      `description = "web ${webPush}"`,
    );
    await put("push-web", "web", admin, files, [201]);
  }
  if (i % 10 === 3) {
    await put("push-stale", "churn", write, churnFiles(i + 0.5), [412], { "if-match": '"v1"' });
    await put("push-invalid", "churn", write, { "flags/Bad Key.toml": "x = " }, [422]);
  }
}

async function bulkPushes(i: number): Promise<void> {
  const files: Record<string, string> = { ...bulkFiles };
  files["flags/flag-000.toml"] = files["flags/flag-000.toml"]!.replace(
    /description = "[^"]*"/,
    `description = "bulk ${i}"`,
  );
  await call("push-bulk", `${base}${NS}/bulk/manifest`, {
    ...json(admin, { files }),
    method: "PUT",
  }, [
    201,
  ]);
}

/** Reads an event stream until `ms` passed or stop; counts its events. */
async function holdStream(op: string, url: string, headers: Record<string, string>, ms: number) {
  const ac = new AbortController();
  const timer = ms > 0 ? setTimeout(() => ac.abort(), ms) : undefined;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: ac.signal });
  } catch (err) {
    clearTimeout(timer);
    if (!stopping && !ac.signal.aborted) count(op, "network", false, String(err));
    return;
  }
  if (res.status !== 200) {
    clearTimeout(timer);
    count(op, res.status, false, (await res.text()).slice(0, 200));
    return;
  }
  count(op, 200, true);
  openStreams++;
  streamConnects++;
  const id = Symbol(op);
  openSince.set(id, { at: performance.now(), ms });
  let sawEvent = false;
  const parser = createParser({
    onEvent() {
      events++;
      sawEvent = true;
    },
  });
  // Aborting the request alone is not enough: after a minute or so of this load, Deno's
  // fetch went on delivering the body of an aborted request (signal.aborted true, chunks
  // still arriving), so the drop cancels the body itself.
  const reader = res.body!.getReader();
  const drop = () => void reader.cancel().catch(() => {});
  ac.signal.addEventListener("abort", drop, { once: true });
  let ended = false;
  try {
    const td = new TextDecoder();
    while (ms > 0 && !stopping && !ac.signal.aborted) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      parser.feed(td.decode(value, { stream: true }));
    }
    if (ended && !ac.signal.aborted && !stopping) count(`${op}-ended-early`, "eof", false);
  } catch {
    // cancelled: the planned drop
  } finally {
    clearTimeout(timer);
    openStreams--;
    openSince.delete(id);
    ac.abort();
    await reader.cancel().catch(() => {});
    if (ms >= 2000 && !sawEvent && !stopping) count(`${op}-no-event`, "none", false);
  }
}

async function streamSlot(kind: "ours" | "ofrep", slot: number): Promise<void> {
  await sleep(slot * 150);
  for (let n = 0; !stopping; n++) {
    const r = rand();
    const ms = r < 0.2 ? 0 : 2000 + Math.floor(rand() * 18_000);
    if (kind === "ours") {
      const since = r > 0.8 ? `&since=web:1,churn:1` : "";
      await holdStream(
        "events",
        `${base}/api/v1/events?ns=web:*&ns=churn:*${since}`,
        { authorization: `Bearer ${tenantAdmin}` },
        ms,
      );
    } else {
      await holdStream(
        "ofrep-events",
        `${base}/ofrep/v1/event-stream?token=${client}`,
        {},
        ms,
      );
    }
    await sleep(Math.floor(rand() * 1000));
  }
}

async function tokens(i: number): Promise<void> {
  const made = await call(
    "token-issue",
    `${base}/api/v1/tokens`,
    json(admin, {
      type: "namespace-read",
      name: `churn-${i}`,
      tenant_slug: TENANT,
      namespace_slug: "web",
    }),
    [201],
  );
  if (!made) return;
  const { token: record, secret } = JSON.parse(made.text);
  const evaluate = `${base}${NS}/web/environments/production/evaluate`;
  await call("token-use", evaluate, json(secret, { flag: webFlags[0] }), [200]);
  await call("token-revoke", `${base}/api/v1/tokens/${record.id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${admin}` },
  }, [200]);
  await call("token-revoked-use", evaluate, json(secret, { flag: webFlags[0] }), [401]);
}

async function namespaces(i: number): Promise<void> {
  const slug = `tmp-${i}`;
  const made = await call(
    "namespace-create",
    `${base}${NS}`,
    json(tenantAdmin, { slug }),
    [201],
  );
  if (!made) return;
  await call("namespace-push", `${base}${NS}/${slug}/manifest`, {
    method: "PUT",
    headers: { authorization: `Bearer ${tenantAdmin}`, "content-type": "application/json" },
    body: JSON.stringify({ files: churnFiles(i) }),
  }, [201]);
  await call(
    "namespace-evaluate",
    `${base}${NS}/${slug}/environments/production/evaluate/all`,
    json(tenantAdmin, {}),
    [200],
  );
  await holdStream(
    "namespace-events",
    `${base}/api/v1/events?ns=${slug}:*`,
    { authorization: `Bearer ${tenantAdmin}` },
    1000,
  );
  await call("namespace-delete", `${base}${NS}/${slug}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${tenantAdmin}` },
  }, [200]);
}

// ---------------------------------------------------------------- sampling

/** VmRSS (KiB) and Threads of the server, from /proc/<pid>/status. */
function memory(): { rssKiB: number; threads: number } {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return {
    rssKiB: Number(/VmRSS:\s+(\d+)/.exec(status)![1]),
    threads: Number(/Threads:\s+(\d+)/.exec(status)![1]),
  };
}

function fdKinds(): { fds: number; kinds: Record<string, number> } {
  const kinds: Record<string, number> = {};
  let fds = 0;
  for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
    fds++;
    let kind = "file";
    try {
      const target = Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`);
      kind = target.startsWith("socket:")
        ? "socket"
        : target.startsWith("pipe:")
        ? "pipe"
        : target.startsWith("anon_inode:")
        ? "anon"
        : "file";
    } catch {
      // closed meanwhile
    }
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return { fds, kinds };
}

function cpuSeconds(p: number): number {
  const stat = Deno.readTextFileSync(`/proc/${p}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Size of a file in KiB (0 when it is missing). */
function sizeKiB(path: string): number {
  try {
    return Deno.statSync(path).size / 1024;
  } catch {
    return 0;
  }
}

/** The KV file and its write-ahead log, KiB. */
function kvKiB(): number {
  return sizeKiB(kvPath) + sizeKiB(`${kvPath}-wal`);
}

const samples: SoakSample[] = [];
let t0 = performance.now();
let lastCpu = { at: performance.now(), server: cpuSeconds(pid), self: cpuSeconds(Deno.pid) };
let selfCpuTotal = 0;
let serverCpuTotal = 0;

/**
 * V8 heap figures of the server from its /metrics (prom-client's nodejs_*), KiB, and how many
 * series /metrics holds; null without them.
 */
async function heap(): Promise<
  { heapUsedKiB: number; heapTotalKiB: number; metricsSeries: number } | null
> {
  try {
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) }))
      .text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    const used = value("nodejs_heap_size_used_bytes");
    const total = value("nodejs_heap_size_total_bytes");
    return Number.isFinite(used) && Number.isFinite(total)
      ? {
        heapUsedKiB: used / 1024,
        heapTotalKiB: total / 1024,
        metricsSeries: text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length,
      }
      : null;
  } catch {
    return null;
  }
}

async function sample(): Promise<SoakSample> {
  const h = await heap();
  const now = performance.now();
  const server = cpuSeconds(pid), self = cpuSeconds(Deno.pid);
  const wall = (now - lastCpu.at) / 1000;
  serverCpuTotal += server - lastCpu.server;
  selfCpuTotal += self - lastCpu.self;
  const cpu = wall > 0 ? (server - lastCpu.server) / wall : 0;
  lastCpu = { at: now, server, self };
  const { fds, kinds } = fdKinds();
  const { ok, errors } = totals();
  return {
    t: (now - t0) / 1000,
    ...memory(),
    fds,
    fdKinds: kinds,
    cpu,
    ok,
    errors,
    openStreams,
    streamConnects,
    overdueStreams: [...openSince.values()].filter((o) => now - o.at > o.ms + 5000).length,
    events,
    kvKiB: kvKiB(),
    heapUsedKiB: h?.heapUsedKiB ?? null,
    heapTotalKiB: h?.heapTotalKiB ?? null,
    metricsSeries: h?.metricsSeries ?? null,
  };
}

// ---------------------------------------------------------------- run

await sleep(1000);
const before = await sample();
console.log(
  `before the load: RSS ${mib(before.rssKiB)} MiB, ${before.fds} fds ${
    JSON.stringify(before.fdKinds)
  }`,
);
t0 = performance.now();
lastCpu = { at: t0, server: cpuSeconds(pid), self: cpuSeconds(Deno.pid) };
serverCpuTotal = 0;
selfCpuTotal = 0;
const endAt = Date.now() + MINUTES * 60_000;
const stop = () => {
  if (!stopping) console.log("stopping the load");
  stopping = true;
};
Deno.addSignalListener("SIGINT", stop);
const evalPeriod = 1000 / (80 * RATE); // two loops: 160/s at rate 1
const loops = [
  every(evalPeriod, (i) => evaluations(2 * i)),
  every(evalPeriod, (i) => evaluations(2 * i + 1)),
  every(500 / RATE, pushes),
  every(15_000 / RATE, async (i) => {
    if (i > 0) await bulkPushes(i); // not at the very start
  }),
  every(1250 / RATE, tokens),
  every(15_000 / RATE, async (i) => {
    await sleep(7_000 / RATE); // off the bulk push's beat
    if (!stopping) await namespaces(i);
  }),
  ...Array.from({ length: 12 }, (_, s) => streamSlot("ours", s)),
  ...Array.from({ length: 6 }, (_, s) => streamSlot("ofrep", s)),
];
const sampler = (async () => {
  while (!stopping) {
    await sleep(Math.min(SAMPLE_S * 1000, Math.max(0, endAt - Date.now())));
    if (serverExited) {
      stop();
      break;
    }
    let s: SoakSample;
    try {
      s = await sample();
    } catch (err) {
      console.error(`cannot sample the server: ${err}`);
      stop();
      break;
    }
    samples.push(s);
    console.log(
      `${clock(s.t)} RSS ${mib(s.rssKiB)} MiB, fds ${s.fds} ${JSON.stringify(s.fdKinds)}, ` +
        `heap ${s.heapUsedKiB === null ? "?" : mib(s.heapUsedKiB)} MiB, ` +
        `metrics series ${s.metricsSeries ?? "?"}, threads ${s.threads}, CPU ${
          s.cpu.toFixed(2)
        }, ok ${s.ok}, errors ${s.errors}, ` +
        `streams ${s.openStreams} (${s.overdueStreams} overdue, ${s.streamConnects} connects), ` +
        `events ${s.events}, KV ${mib(s.kvKiB)} MiB`,
    );
    if (Date.now() >= endAt) stop();
  }
})();
await sampler;
await Promise.race([Promise.all(loops), sleep(40_000)]);
const loadSeconds = (performance.now() - t0) / 1000;

// idle: once the server's keep-alive timeout (30 s) has closed the connections fetch keeps
// in its pool, no connection of ours is open; then one more sample
await sleep(35_000);
const after = serverExited ? null : await sample();
if (after) {
  console.log(
    `after the load: RSS ${mib(after.rssKiB)} MiB, ${after.fds} fds ${
      JSON.stringify(after.fdKinds)
    }`,
  );
}

// stop the server (the store's size first: closing it checkpoints the WAL)
const storeAtStop = {
  kvKiB: Math.round(sizeKiB(kvPath)),
  walKiB: Math.round(sizeKiB(`${kvPath}-wal`)),
};
const stopStart = performance.now();
let status: Deno.CommandStatus;
if (!serverExited) {
  server.kill("SIGTERM");
  const killer = setTimeout(() => {
    try {
      server.kill("SIGKILL");
    } catch {
      // gone
    }
  }, 60_000);
  status = await serverStatus;
  clearTimeout(killer);
} else {
  status = await serverStatus;
}
const stopMs = performance.now() - stopStart;
Deno.removeSignalListener("SIGINT", stop);

// ---------------------------------------------------------------- report

const rss = summarise(samples, (s) => s.rssKiB);
const withHeap = samples.filter((s) => s.heapUsedKiB !== null);
const heapUsed = withHeap.length > 0 ? summarise(withHeap, (s) => s.heapUsedKiB!) : null;
const fds = summarise(samples, (s) => s.fds);
const end = samples.at(-1)?.t ?? 0;
const firstHalfMaxFd = Math.max(0, ...samples.filter((s) => s.t < end / 2).map((s) => s.fds));
const secondHalfMaxFd = Math.max(0, ...samples.filter((s) => s.t >= end / 2).map((s) => s.fds));
const rssV = rssVerdict(rss);
const fdV = fdVerdict(firstHalfMaxFd, secondHalfMaxFd, before.fds, after?.fds ?? Infinity);
const { ok, errors } = totals();
const ops = Object.fromEntries([...stats].sort(([a], [b]) => a < b ? -1 : 1));
const result = {
  started: new Date(Date.now() - loadSeconds * 1000).toISOString(),
  machine: `${navigator.hardwareConcurrency} CPUs, Deno ${Deno.version.deno}, ${Deno.build.os}`,
  options: { minutes: MINUTES, sampleSeconds: SAMPLE_S, rate: RATE },
  server: { args: serveArgs, exit: status, stopMs: Math.round(stopMs), storeAtStop },
  loadSeconds,
  cpu: {
    serverCores: serverCpuTotal / loadSeconds,
    loadCores: selfCpuTotal / loadSeconds,
  },
  requests: { ok, errors, perSecond: (ok + errors) / loadSeconds, byOperation: ops },
  streams: {
    opened: streamConnects,
    maxOverdue: Math.max(0, ...samples.map((s) => s.overdueStreams)),
  },
  firstErrors,
  events,
  serverLog: { lines: logLines, byLevel: logLevels, problems: logProblems },
  before,
  after,
  summary: { rss, heapUsed, fds, firstHalfMaxFd, secondHalfMaxFd },
  verdict: { rss: rssV, fds: fdV },
  samples,
};

function seriesLine(name: string, s: SeriesSummary, unit: (n: number) => string): string {
  return `| ${name} | ${unit(s.first)} | ${unit(s.last)} | ${unit(s.min)} | ${unit(s.max)} | ${
    unit(s.secondHalfMean)
  } | ${unit(s.slopePerHour)} | ${unit(s.secondHalfGrowth)} |`;
}
const opRows = Object.entries(ops).map(([op, s]) =>
  `| ${op} | ${s.ok} | ${s.errors} | ${
    Object.entries(s.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")
  } |`
);
const markdown = [
  `# cfgtool soak, ${result.started}`,
  "",
  `${result.machine}; ${clock(loadSeconds)} of load at rate ${RATE}, a sample every ${SAMPLE_S} s.`,
  `Server CPU ${result.cpu.serverCores.toFixed(2)} cores on average, the load generator ${
    result.cpu.loadCores.toFixed(2)
  }. Requests: ${ok} as expected, ${errors} errors (${
    result.requests.perSecond.toFixed(1)
  }/s); ${streamConnects} event streams opened and dropped (at most ${
    Math.max(0, ...samples.map((s) => s.overdueStreams))
  } held past their time in a sample), ${events} stream events received.`,
  `Server log: ${logLines} lines ${JSON.stringify(logLevels)}. SIGTERM with the store at ${
    mib(storeAtStop.kvKiB)
  } MiB and its WAL at ${mib(storeAtStop.walKiB)} MiB: exit ${status.code}${
    status.signal ? ` (${status.signal}, after the 60 s grace)` : ""
  } in ${Math.round(stopMs)} ms.`,
  "",
  "| series | first | last | min | max | mean, 2nd half | slope, 2nd half (/h) | growth, 2nd half |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  seriesLine("RSS (MiB)", rss, mib),
  ...(heapUsed ? [seriesLine("V8 heap used (MiB)", heapUsed, mib)] : []),
  seriesLine("open fds", fds, (n) => n.toFixed(1)),
  "",
  `Before the load: RSS ${mib(before.rssKiB)} MiB, ${before.fds} fds ${
    JSON.stringify(before.fdKinds)
  }. After it (35 s idle): ${
    after
      ? `RSS ${mib(after.rssKiB)} MiB, ${after.fds} fds ${JSON.stringify(after.fdKinds)}`
      : "the server had exited"
  }.`,
  "",
  `- RSS: ${rssV.bounded ? "bounded" : "GROWS"}: ${rssV.reason}.`,
  `- fds: ${fdV.bounded ? "bounded" : "GROWS"}: ${fdV.reason}.`,
  "",
  sampleTable(condense(samples, 13)),
  "",
  "| operation | as expected | errors | statuses |",
  "| --- | ---: | ---: | --- |",
  ...opRows,
  ...(firstErrors.length ? ["", "First errors:", "", ...firstErrors.map((e) => `- ${e}`)] : []),
  ...(logProblems.length
    ? ["", "Server warn/error lines:", "", ...logProblems.map((l) => `- \`${l}\``)]
    : []),
  "",
].join("\n");
await Deno.writeTextFile(`${OUT}.json`, JSON.stringify(result, null, 2) + "\n");
await Deno.writeTextFile(`${OUT}.md`, markdown);
console.log("\n" + markdown);
console.log(`wrote ${OUT}.json and ${OUT}.md`);
await Deno.remove(dir, { recursive: true });
Deno.exit(rssV.bounded && fdV.bounded && errors === 0 ? 0 : 1);
