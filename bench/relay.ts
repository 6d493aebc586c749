/**
 * The read tier, measured (docs/performance.md, "Relays"): one primary
 * (`cfgtool serve`, a temp KV) and one relay (`cfgtool relay`) that follows
 * it, on loopback, in the same run:
 *
 * 1. push → event: the time from the start of a manifest push at the
 *    primary to the verified apply at a `FlagClient` subscribed to the
 *    primary itself, and at one subscribed to the relay (which follows the
 *    primary with the same client code, then computes and sends its own
 *    inline delta). p50/p99 over `--pushes` pushes, one at a time.
 * 2. throughput: wrk (`--threads`, `--connections`, `--duration` seconds
 *    per run) against `…/evaluate` and OFREP bulk, at the primary and at
 *    the relay.
 * 3. fan-out: a second relay starts, and `--subscribers` event streams
 *    (default 10,000) open, half at each relay, each a raw HTTP/1.1
 *    connection that counts the `version` events it reads. Measured: the
 *    event streams the primary holds (its own `/metrics`), each relay's
 *    resident memory before and with its subscribers, and the time from
 *    the start of one push to the moment every subscriber has read its
 *    event.
 *
 * Only 127.0.0.1 is contacted; every process and connection is closed at
 * the end, and every wait is bounded.
 *
 *   deno run -A --unstable-kv bench/relay.ts [--pushes 40] [--duration 5] [--threads 2] [--connections 32] [--subscribers 10000]
 *
 * @module
 */
import { manifestFiles, startFixture } from "../tests/e2e/evaluation_fixture.ts";
import { startRelay, until } from "../tests/relay/relay_process.ts";
import { themeToml } from "../tests/relay/theme_fixture.ts";
import { FlagClient } from "../lib/client/flag_client.ts";
import { readWrkReport, type WrkReport } from "./wrk_report.ts";

const LUA = new URL("./wrk/request.lua", import.meta.url).pathname;

/** `--name value` of the command line, as a number bounded by `max`. */
function arg(name: string, fallback: number, max: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  const n = i < 0 ? fallback : Number(Deno.args[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a positive integer`);
  return Math.min(max, n);
}
const pushes = arg("pushes", 40, 500);
const duration = arg("duration", 5, 60);
const threads = arg("threads", 2, 8);
const connections = arg("connections", 32, 256);
const subscribers = arg("subscribers", 10_000, 20_000);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function wrk(
  url: string,
  token: string,
  body: string,
  tmp: string,
  headers: readonly string[],
): Promise<WrkReport> {
  const file = `${tmp}/body-${crypto.randomUUID()}.json`;
  await Deno.writeTextFile(file, body);
  const out = await new Deno.Command("wrk", {
    args: [
      "--threads",
      String(threads),
      "--connections",
      String(connections),
      "--duration",
      `${duration}s`,
      "--latency",
      "-s",
      LUA,
      url,
      "--",
      "POST",
      file,
      "static",
      `Authorization: Bearer ${token}`,
      "Content-Type: application/json",
      ...headers,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout((duration + 30) * 1000),
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`wrk failed: ${text}`);
  return readWrkReport(text);
}

/** A process's resident memory, MiB (Linux /proc). */
async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const line = status.split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

/** The primary's open event streams, from its /metrics (loopback may read it). */
async function primaryStreams(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) =>
    l.startsWith('cfgtool_event_streams_open{api="cfgtool"}')
  );
  return Number(line?.split(" ").at(-1) ?? NaN);
}

/** One raw event-stream subscriber: counts the `version` events it has read. */
interface Subscriber {
  events: number;
  conn: Deno.TcpConn;
  done: Promise<void>;
}

async function subscribeRaw(base: string, path: string, token: string): Promise<Subscriber> {
  const u = new URL(base);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  await conn.write(
    new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\n` +
        "Accept: text/event-stream\r\n\r\n",
    ),
  );
  const sub: Subscriber = { events: 0, conn, done: Promise.resolve() };
  sub.done = (async () => {
    const dec = new TextDecoder();
    const buf = new Uint8Array(16 * 1024);
    let tail = "";
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) return;
        const text = tail + dec.decode(buf.subarray(0, n), { stream: true });
        let at = 0;
        for (;;) {
          const i = text.indexOf("event: version", at);
          if (i < 0) break;
          sub.events++;
          at = i + 1;
        }
        tail = text.slice(-16);
      }
    } catch {
      // closed
    }
  })();
  return sub;
}

/** Waits until `check` holds, polling; throws after `ms`. */
async function waitFor(check: () => boolean, what: string, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const f = await startFixture();
const relay = await startRelay({ upstream: f.inst.url, token: f.inst.admin });
const clients: FlagClient[] = [];
const relays: Awaited<ReturnType<typeof startRelay>>[] = [];
const subs: Subscriber[] = [];
const tmp = await Deno.makeTempDir({ prefix: "cfgtool-bench-relay-" });
try {
  await until(
    async () => (await (await fetch(`${relay.url}/healthz`)).json()).namespaces.length === 3,
    "the relay follows",
  );
  const subscribe = async (server: string) => {
    const c = new FlagClient({ server, token: f.tokens.read, namespaces: ["web:*"] });
    clients.push(c);
    await c.ready(15_000);
    return c;
  };
  const atPrimary = await subscribe(f.inst.url);
  const atRelay = await subscribe(relay.url);

  const primaryMs: number[] = [];
  const relayMs: number[] = [];
  for (let i = 0; i < pushes; i++) {
    const theme = i % 2 === 0 ? "dark" : "light";
    const files = manifestFiles({
      "flags/theme.toml": themeToml({ description: `Theme ${i}`, default: theme }),
    });
    const started = performance.now();
    const seen = (c: FlagClient, into: number[]) =>
      new Promise<number>((resolve) => {
        const off = c.onChange((ch) => {
          off();
          into.push(performance.now() - started);
          resolve(ch.version);
        });
      });
    const waits = [seen(atPrimary, primaryMs), seen(atRelay, relayMs)];
    await f.push(files);
    await Promise.all(waits);
  }

  const evalUrl = "/api/v1/tenants/acme/namespaces/web/environments/staging/evaluate";
  const evalBody = JSON.stringify({
    flag: "theme",
    context: { targeting_key: "u1", user: { email: "a@example.com" } },
  });
  const bulkBody = JSON.stringify({ context: { targetingKey: "u1" } });
  const rows: [string, WrkReport, WrkReport][] = [];
  // namespace-read for both: a namespace-client token is rate limited per Origin at the primary
  const named = [
    "X-Cfgtool-Tenant: acme",
    "X-Cfgtool-Namespace: web",
    "X-Cfgtool-Environment: staging",
  ];
  const cases: [string, string, string, readonly string[]][] = [
    ["POST …/evaluate", evalUrl, evalBody, []],
    ["POST /ofrep/v1/evaluate/flags (bulk)", "/ofrep/v1/evaluate/flags", bulkBody, named],
  ];
  for (const [label, path, body, headers] of cases) {
    const p = await wrk(`${f.inst.url}${path}`, f.tokens.read, body, tmp, headers);
    const r = await wrk(`${relay.url}${path}`, f.tokens.read, body, tmp, headers);
    rows.push([label, p, r]);
  }

  const ms = (x: number) => x.toFixed(1);
  console.log(`\npush → verified apply at a FlagClient (${pushes} pushes, ms)\n`);
  console.log("| subscriber of | p50 | p99 |");
  console.log("|---|---:|---:|");
  console.log(`| the primary | ${ms(pct(primaryMs, 50))} | ${ms(pct(primaryMs, 99))} |`);
  console.log(`| a relay of it | ${ms(pct(relayMs, 50))} | ${ms(pct(relayMs, 99))} |`);
  console.log(
    `\nwrk: ${threads} thread(s), ${connections} connections, ${duration} s per run\n`,
  );
  console.log("| endpoint | primary req/s | relay req/s | primary p99 ms | relay p99 ms |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [label, p, r] of rows) {
    console.log(
      `| ${label} | ${p.rps.toFixed(0)} | ${r.rps.toFixed(0)} | ${ms(p.p99)} | ${ms(r.p99)} |`,
    );
    if (p.non2xx > 0 || r.non2xx > 0) {
      console.log(`  (non-2xx: primary ${p.non2xx}, relay ${r.non2xx})`);
    }
  }

  // 3. fan-out over two relays (the FlagClients of part 1 closed: only relays at the primary)
  for (const c of clients.splice(0)) await c.close();
  const second = await startRelay({ upstream: f.inst.url, token: f.inst.admin });
  relays.push(second);
  const both = [relay, second];
  for (const r of both) {
    await until(async () => {
      const h = await (await fetch(`${r.url}/healthz`)).json();
      return h.upstream.connected && h.namespaces.length === 3;
    }, "both relays follow");
  }
  const idleMiB = await Promise.all(both.map((r) => rssMiB(r.pid)));
  const connectStarted = performance.now();
  const eventsPath = "/api/v1/events?ns=web:*";
  for (let i = 0; i < subscribers; i += 500) {
    const batch = Array.from(
      { length: Math.min(500, subscribers - i) },
      (_, j) => subscribeRaw(both[(i + j) % 2]!.url, eventsPath, f.tokens.read),
    );
    subs.push(...await Promise.all(batch));
  }
  await waitFor(() => subs.every((x) => x.events >= 1), "every subscriber's snapshot", 120_000);
  const connectMs = performance.now() - connectStarted;
  const streamsAtPrimary = await primaryStreams(f.inst.url);
  const loadedMiB = await Promise.all(both.map((r) => rssMiB(r.pid)));
  const fanStarted = performance.now();
  await f.push(manifestFiles({
    "flags/theme.toml": themeToml({ description: "Theme fan-out", default: "dark" }),
  }));
  await waitFor(() => subs.every((x) => x.events >= 2), "every subscriber's event", 120_000);
  const fanMs = performance.now() - fanStarted;
  const relayStreams = await Promise.all(both.map(async (r) => {
    const text = await (await fetch(`${r.url}/metrics`)).text();
    const line = text.split("\n").find((l) =>
      l.startsWith('cfgtool_relay_event_streams_open{api="cfgtool"}')
    );
    return Number(line?.split(" ").at(-1) ?? NaN);
  }));

  console.log(`\nfan-out: ${subscribers} event streams (ns=web:*) over two relays\n`);
  console.log("| | relay A | relay B |");
  console.log("|---|---:|---:|");
  console.log(`| subscribers | ${relayStreams[0]} | ${relayStreams[1]} |`);
  console.log(
    `| RSS idle, MiB | ${idleMiB[0]!.toFixed(0)} | ${idleMiB[1]!.toFixed(0)} |`,
  );
  console.log(
    `| RSS with subscribers, MiB | ${loadedMiB[0]!.toFixed(0)} | ${loadedMiB[1]!.toFixed(0)} |`,
  );
  console.log(
    `\nevent streams held by the primary: ${streamsAtPrimary} ` +
      "(one per relay per tenant; the fixture has 2 tenants)",
  );
  console.log(`all ${subscribers} subscribed with their snapshot event: ${ms(connectMs)} ms`);
  console.log(`push → every subscriber has read its event: ${ms(fanMs)} ms`);
} finally {
  for (const x of subs) {
    try {
      x.conn.close();
    } catch {
      // closed already
    }
  }
  await Promise.all(subs.map((x) => x.done));
  for (const r of relays) await r.stop();
  for (const c of clients) await c.close();
  await relay.stop();
  await f.inst.close();
  for (const r of [relay, ...relays]) {
    await Deno.remove(r.dataDir, { recursive: true }).catch(() => {});
  }
  await Deno.remove(tmp, { recursive: true });
}
