/**
 * Event-stream fan-out on loopback (docs/performance.md, "Event stream fan-out").
 *
 *   ulimit -n 65536   # or as high as the hard limit allows; both processes need N+ fds
 *   deno run -A bench/fanout.ts [N=10000] [pushes=3]
 *
 * Starts a real `cfgtool serve` process on a temp-dir KV file, pushes the
 * realistic namespace of bench/fixtures (50 flags, 20 segments), opens N idle
 * subscribers to `web:*` with fetch (each parses its stream with
 * eventsource-parser and waits for its first snapshot event), then pushes a
 * one-flag change `pushes` times and measures, per push, the time from just
 * before the PUT until each subscriber has the version event (p50, p99, max
 * = the last subscriber). Also reports the server's RSS before and after
 * the subscribers connected (memory per connection), and the inline event's
 * size against the snapshot's (uncompressed tar and tar.gz).
 *
 * The client here is one process, so at large N it is the client that is
 * timed: bench/stream_fanout.ts spreads the subscribers over several client
 * processes and times a bare `Deno.serve` yardstick in the same run;
 * bench/stream_memory.ts and bench/stream_hold.ts measure what a
 * subscriber costs and how many one process holds.
 *
 * @module
 */
import { createParser } from "sse-parser";
import { realisticNamespaceFiles } from "./fixtures/realistic_namespace.ts";
import { runCli, startInstallation } from "../tests/e2e/installation.ts";

const N = Number(Deno.args[0] ?? 10_000);
const PUSHES = Number(Deno.args[1] ?? 3);
const BATCH = 250;

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

const dec = new TextDecoder();
const files: Record<string, string> = {};
for (const [k, v] of realisticNamespaceFiles()) files[k] = dec.decode(v);

const inst = await startInstallation({
  args: ["--max-connections-per-token", String(N + 10), "--keepalive-ms", "25000"],
});
const pid = inst.server.child.pid;
void runCli; // (the installation bootstraps through the real CLI)
interface Sub {
  ac: AbortController;
  /** Arrival time of each version event by version. */
  arrivals: Map<number, number>;
  lastData: string;
}
const subs: Sub[] = [];
let failed = 0;
let firstError = "";
try {
  await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
  await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
  const put = async () => {
    const res = await inst.api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", inst.admin, {
      files,
    });
    if (res.status !== 201) throw new Error(`push: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.version as number;
  };
  await put();
  await new Promise((r) => setTimeout(r, 500));
  const rssBefore = rssKiB(pid);

  const waiters = new Map<Sub, () => void>();
  const open = async (): Promise<Sub> => {
    const sub: Sub = { ac: new AbortController(), arrivals: new Map(), lastData: "" };
    const res = await fetch(`${inst.url}/api/v1/events?ns=acme/web:*`, {
      headers: { authorization: `Bearer ${inst.admin}` },
      signal: sub.ac.signal,
    });
    if (res.status !== 200) throw new Error(`subscribe: ${res.status} ${await res.text()}`);
    let gotFirst!: () => void;
    const first = new Promise<void>((r) => (gotFirst = r));
    const parser = createParser({
      onEvent(e) {
        const at = performance.now();
        const d = JSON.parse(e.data);
        sub.arrivals.set(d.version, at);
        sub.lastData = e.data;
        if (sub.arrivals.size === 1) gotFirst();
        waiters.get(sub)?.();
      },
    });
    (async () => {
      const reader = res.body!.getReader();
      const td = new TextDecoder();
      try {
        while (true) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(td.decode(value, { stream: true }));
        }
      } catch {
        // aborted
      }
    })();
    await first;
    return sub;
  };

  const t0 = performance.now();
  for (let i = 0; i < N; i += BATCH) {
    const batch = await Promise.allSettled(
      Array.from({ length: Math.min(BATCH, N - i) }, () => open()),
    );
    for (const r of batch) {
      if (r.status === "fulfilled") subs.push(r.value);
      else {
        failed++;
        firstError ||= String(r.reason);
      }
    }
    if (failed > 0) break;
  }
  const connectMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1000));
  const rssAfter = rssKiB(pid);
  console.log(
    `subscribers: ${subs.length} of ${N} (failed ${failed}${firstError ? `: ${firstError}` : ""})`,
  );
  console.log(`connect + first snapshot event for all: ${(connectMs / 1000).toFixed(1)} s`);
  console.log(
    `server RSS: ${(rssBefore / 1024).toFixed(1)} MiB before, ${
      (rssAfter / 1024).toFixed(1)
    } MiB after; ${
      ((rssAfter - rssBefore) / Math.max(1, subs.length)).toFixed(1)
    } KiB per connection`,
  );

  const firstEvent = JSON.parse(subs[0]!.lastData);
  for (let p = 0; p < PUSHES; p++) {
    files["flags/flag-07.toml"] = files["flags/flag-07.toml"]!.replace(
      /description = "[^"]*"/,
      `description = "push ${p}"`,
    );
    const start = performance.now();
    const v = await put();
    const committed = performance.now();
    await Promise.all(
      subs.map((s) =>
        s.arrivals.has(v) ? Promise.resolve() : new Promise<void>((resolve) => {
          waiters.set(s, () => {
            if (s.arrivals.has(v)) {
              waiters.delete(s);
              resolve();
            }
          });
        })
      ),
    );
    const lat = subs.map((s) => s.arrivals.get(v)! - start).sort((a, b) => a - b);
    await new Promise((r) => setTimeout(r, 500));
    const fanout = inst.server.logs().split("\n").filter((l) => l.includes('"event fan-out"'))
      .map((l) => JSON.parse(l)).find((l) => l.version === v);
    console.log(
      `push ${p + 1} (v${v}): PUT ${(committed - start).toFixed(1)} ms; to subscribers p50 ${
        pct(lat, 0.5).toFixed(1)
      } ms, p99 ${pct(lat, 0.99).toFixed(1)} ms, last ${lat.at(-1)!.toFixed(1)} ms; ` +
        `server fan-out (delta + ${fanout?.members} writes) ${fanout?.ms} ms`,
    );
  }
  const inline = JSON.parse(subs[0]!.lastData);
  const inlineBytes = new TextEncoder().encode(subs[0]!.lastData).length;
  const snap = await fetch(firstEvent.snapshot_url);
  const gz = (await snap.arrayBuffer()).byteLength;
  console.log(
    `one-flag change: inline event data ${inlineBytes} B (${inline.delivery}, ${inline.files?.length} file); ` +
      `snapshot tar ${firstEvent.snapshot_size_bytes} B, tar.gz ${gz} B, snapshot event data ${
        new TextEncoder().encode(JSON.stringify(firstEvent)).length
      } B`,
  );
} finally {
  for (const s of subs) s.ac.abort();
  await inst.close();
}
