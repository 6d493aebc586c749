/**
 * The server process of the stream benchmarks (bench/stream_memory.ts,
 * bench/stream_fanout.ts): either the real service, or a yardstick that
 * holds the same kind of responses with nothing of cfgtool around them, and
 * in both cases answers memory probes on stdin, so heap and RSS are read
 * inside the process that holds the streams.
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/stream_server.ts cfgtool <kv-file> [settings-json]
 * deno run -A --v8-flags=--expose-gc bench/stream_server.ts bare      # Deno.serve + ReadableStream
 * deno run -A --v8-flags=--expose-gc bench/stream_server.ts bounded   # lib/net/bounded_server.ts + ReadableStream
 * ```
 *
 * - `cfgtool`: `serve()` of lib/server/serve.ts (what `cfgtool serve` runs)
 *   on 127.0.0.1, port 0, the given KV file and settings (JSON of
 *   lib/settings.ts's fields). Logs go to stderr as usual.
 * - `bare`: a `Deno.serve` on 127.0.0.1 whose every response is a
 *   `text/event-stream` `ReadableStream` holding one opening frame and then
 *   nothing: Deno's own cost of an open streaming response, which cfgtool
 *   cannot go below.
 * - `bounded`: the same handler behind cfgtool's own accept loop
 *   (lib/net/bounded_server.ts), to tell that loop's cost from Deno's.
 *
 * Prints `{"port":<n>}` once listening, then one JSON line per stdin
 * command: `probe` collects garbage (twice) and answers `{"probe":{rss,
 * heapUsed, heapTotal, external, open}}` in bytes (`open`: streams a yardstick
 * holds); `push <version>` (yardsticks
 * only) writes one 1.3 KB `version` frame to every open stream and answers
 * `{"pushed":<streams>}` (`push <version> <slice>` writes `slice` streams
 * at a time with a turn of the event loop between slices, as the hub's
 * fan-out does); `cpu` answers `{"cpu":{user,system}}`, the CPU time the
 * process has used so far (all its threads, µs); `snapshot <file>` writes a V8 heap snapshot
 * there (for a closer look at what a subscriber holds); `quit` exits. Only
 * 127.0.0.1 is bound.
 *
 * @module
 */
import { writeHeapSnapshot } from "node:v8";
import { cpuUsage } from "node:process";
import { serve } from "../lib/server/serve.ts";
import { serveBounded } from "../lib/net/bounded_server.ts";
import { createLogger } from "../lib/log.ts";
import { nextTurn } from "../lib/events/next_turn.ts";
import type { ServiceSettings } from "../lib/settings.ts";

const encoder = new TextEncoder();
const [mode = "bare", kv, settingsJson] = Deno.args;

/** Answers probe lines for the life of the process. */
async function answerCommands(
  push: (version: number, slice: number) => number,
  stop: () => void,
  open: () => number | undefined,
) {
  const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
  let buffered = "";
  for await (const chunk of lines) {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const [cmd, arg, slice] = buffered.slice(0, nl).trim().split(" ");
      buffered = buffered.slice(nl + 1);
      if (cmd === "probe") {
        console.log(JSON.stringify({ probe: { ...await probe(), open: open() } }));
      } else if (cmd === "push") {
        console.log(JSON.stringify({ pushed: push(Number(arg), Number(slice ?? 0)) }));
      } else if (cmd === "cpu") {
        const { user, system } = cpuUsage();
        console.log(JSON.stringify({ cpu: { user, system } }));
      } else if (cmd === "snapshot") {
        console.log(JSON.stringify({ snapshot: writeHeapSnapshot(arg) }));
      } else if (cmd === "quit") return stop();
    }
  }
  stop();
}

/** Heap and RSS after two full collections. */
async function probe() {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 2; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = Deno.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
}

/** A `version` frame the size of the realistic one-flag inline event. */
function versionFrame(version: number): Uint8Array {
  const data = JSON.stringify({ protocol: "v2", namespace: "web", version, pad: "x".repeat(1200) });
  return encoder.encode(`event: version\nid: web:${version}\ndata: ${data}\n\n`);
}

/** The yardstick handler: an SSE response that holds its stream open. */
function yardstick() {
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const opening = versionFrame(0).slice(0, 480); // about the size of a snapshot event
  opening.set(encoder.encode("\n\n"), opening.length - 2);
  const handler = () => {
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
        open.add(c);
        c.enqueue(opening);
      },
      cancel() {
        open.delete(ctl);
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" },
    });
  };
  const push = (version: number, slice: number) => {
    const frame = versionFrame(version);
    if (slice <= 0) {
      for (const c of open) c.enqueue(frame);
      return open.size;
    }
    // as the hub's fan-out does: slices with a turn of the event loop between them
    const all = [...open];
    let i = 0;
    const step = () => {
      const end = Math.min(all.length, i + slice);
      for (; i < end; i++) all[i]!.enqueue(frame);
      if (i < all.length) void nextTurn().then(step);
    };
    step();
    return open.size;
  };
  return { handler, push, open };
}

const ac = new AbortController();
const announce = (port: number) => console.log(JSON.stringify({ port }));
if (mode === "cfgtool") {
  if (kv === undefined) throw new Error("usage: stream_server.ts cfgtool <kv-file> [settings]");
  const settings = JSON.parse(settingsJson ?? "{}") as Partial<ServiceSettings>;
  const done = serve({
    kv,
    port: 0,
    hostname: "127.0.0.1",
    settings,
    signal: ac.signal,
    onListen: ({ port }) => announce(port),
  });
  await answerCommands(() => 0, () => ac.abort(), () => undefined);
  await done;
} else if (mode === "bare" || mode === "bounded") {
  const { handler, push, open } = yardstick();
  if (mode === "bare") {
    Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      signal: ac.signal,
      onListen: ({ port }) => announce(port),
    }, handler);
  } else {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    serveBounded(listener, handler, {
      limits: { headerTimeoutMs: 10_000, keepAliveTimeoutMs: 30_000, maxConnections: 1e9 },
      log: createLogger("warn", (line) => console.error(line)),
      signal: ac.signal,
    });
    announce(listener.addr.port);
  }
  await answerCommands(push, () => ac.abort(), () => open.size);
  Deno.exit(0);
} else {
  throw new Error(`unknown mode ${mode}: cfgtool, bare or bounded`);
}
