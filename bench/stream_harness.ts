/**
 * Shared by bench/stream_memory.ts and bench/stream_fanout.ts: child
 * processes that talk JSON lines (the server of bench/stream_server.ts, the
 * clients of bench/stream_clients.ts), a cfgtool installation holding the
 * realistic namespace, and percentiles. Everything runs on 127.0.0.1; every
 * child is killed when the benchmark ends.
 *
 * @module
 */
import { bootstrapSuperadmin } from "./bootstrap.ts";
import { realisticNamespaceFiles } from "./fixtures/realistic_namespace.ts";

const SERVER = new URL("./stream_server.ts", import.meta.url).pathname;
const CLIENTS = new URL("./stream_clients.ts", import.meta.url).pathname;

/** A child process that answers stdin lines with JSON lines on stdout. */
export class LineProcess {
  readonly child: Deno.ChildProcess;
  readonly #lines: unknown[] = [];
  readonly #waiting = new Set<() => void>();
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #ended = false;
  #stderr = "";

  /**
   * Spawns `deno <args>`; stderr is kept (its last 64 KiB) or, with
   * `onStderr`, handed over line by line.
   */
  constructor(args: string[], onStderr?: (line: string) => void) {
    this.child = new Deno.Command(Deno.execPath(), {
      args,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).spawn();
    this.#stdin = this.child.stdin.getWriter();
    void this.#pump(this.child.stdout, (line) => {
      try {
        this.#lines.push(JSON.parse(line));
      } catch {
        return; // not one of ours
      }
      for (const w of this.#waiting) w();
    }).finally(() => {
      this.#ended = true;
      for (const w of this.#waiting) w();
    });
    void this.#pump(this.child.stderr, (line) => {
      if (onStderr) onStderr(line);
      else this.#stderr = (this.#stderr + line + "\n").slice(-65536);
    });
  }

  /** What the process wrote to stderr lately. */
  get stderr(): string {
    return this.#stderr;
  }

  async #pump(stream: ReadableStream<Uint8Array<ArrayBuffer>>, onLine: (line: string) => void) {
    let buffered = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    }
  }

  /** Sends one command line. */
  async send(line: string): Promise<void> {
    await this.#stdin.write(new TextEncoder().encode(line + "\n"));
  }

  /** The next JSON line that has `key` (earlier ones without it are dropped). */
  // deno-lint-ignore no-explicit-any
  next(key: string, timeoutMs = 600_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = () => {
        while (this.#lines.length > 0) {
          const line = this.#lines.shift() as Record<string, unknown>;
          if (line !== null && typeof line === "object" && key in line) {
            done();
            return resolve(line);
          }
        }
        if (this.#ended) {
          done();
          reject(new Error(`process ended before "${key}":\n${this.#stderr.slice(-2000)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no "${key}" within ${timeoutMs} ms:\n${this.#stderr.slice(-2000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.#waiting.delete(check);
      };
      this.#waiting.add(check);
      check();
    });
  }

  /** Asks the process to quit, then kills it if it has not within 5 s. */
  async stop(): Promise<void> {
    try {
      await this.send("quit");
    } catch {
      // stdin already closed
    }
    const timer = setTimeout(() => {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // gone
      }
    }, 5000);
    await this.child.status;
    clearTimeout(timer);
  }
}

/** Memory figures of a probe, bytes. */
export interface Probe {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** A server process of bench/stream_server.ts. */
export interface BenchServer {
  proc: LineProcess;
  port: number;
  probe(): Promise<Probe>;
  /**
   * Yardsticks: writes frame `version` to every stream (`slice` at a time
   * with a turn of the event loop between, 0: all at once); returns how many.
   */
  push(version: number, slice?: number): Promise<number>;
  /** CPU time the server process has used so far (all its threads), ms; NaN when it does not say. */
  cpuMs(): Promise<number>;
}

/**
 * A mode of the benchmarks: `cfgtool`, `bare`, `bounded`, or
 * `cfgtool@<dir>`: the service of another checkout of the repository (its
 * own bench/stream_server.ts and lib/), to measure a change against the
 * code before it in the same run.
 */
export function parseMode(mode: string): { kind: string; server: string } {
  const at = mode.indexOf("@");
  if (at < 0) return { kind: mode, server: SERVER };
  const root = mode.slice(at + 1).replace(/\/+$/, "");
  return { kind: mode.slice(0, at), server: `${root}/bench/stream_server.ts` };
}

/**
 * Starts bench/stream_server.ts in `mode` (see {@linkcode parseMode}) and
 * waits for its port.
 *
 * @param mode `cfgtool`, `bare`, `bounded`, or one of them `@<dir>`
 * @param args `cfgtool`: the KV file and the settings JSON
 * @param onStderr receives the server's log lines
 */
export async function startBenchServer(
  mode: string,
  args: string[] = [],
  onStderr?: (line: string) => void,
): Promise<BenchServer> {
  const { kind, server } = parseMode(mode);
  // STREAM_BENCH_CPU_PROF=<dir>: each server writes a V8 CPU profile there when it quits
  const profDir = Deno.env.get("STREAM_BENCH_CPU_PROF");
  const prof = profDir
    ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${kind}.cpuprofile`]
    : [];
  const proc = new LineProcess(
    ["run", "-A", "--unstable-kv", "--v8-flags=--expose-gc", ...prof, server, kind, ...args],
    onStderr,
  );
  const { port } = await proc.next("port", 60_000);
  return {
    proc,
    port,
    probe: async () => {
      await proc.send("probe");
      return (await proc.next("probe")).probe;
    },
    push: async (version, slice = 0) => {
      await proc.send(`push ${version} ${slice}`);
      return (await proc.next("pushed")).pushed;
    },
    cpuMs: async () => {
      await proc.send("cpu");
      try {
        const { cpu } = await proc.next("cpu", 5000);
        return (cpu.user + cpu.system) / 1000;
      } catch {
        return NaN; // a server of an older checkout does not answer `cpu`
      }
    },
  };
}

/** Client processes holding subscribers. */
export interface ClientGroup {
  procs: LineProcess[];
  ready: number;
  failed: number;
  errors: string[];
  /** Waits until every subscriber has frame `id`; arrival times (wall-clock ms) of all. */
  arrivals(id: string): Promise<{ times: number[]; missing: number }>;
  stop(): Promise<void>;
}

/**
 * Opens `total` subscribers to `path` spread over `processes` client
 * processes (bench/stream_clients.ts) and waits until each has its first
 * frame. `transport` `h2` makes them HTTP/2 streams, many per connection.
 */
export async function openClients(
  port: number,
  total: number,
  processes: number,
  path: string,
  token?: string,
  transport: "h1" | "h2" = "h1",
): Promise<ClientGroup> {
  const procs: LineProcess[] = [];
  for (let i = 0; i < processes; i++) {
    const n = Math.floor(total / processes) + (i < total % processes ? 1 : 0);
    procs.push(
      new LineProcess([
        "run",
        "-A",
        CLIENTS,
        String(port),
        String(n),
        path,
        token ?? "-",
        transport,
      ]),
    );
  }
  const results = await Promise.all(procs.map((p) => p.next("ready")));
  return {
    procs,
    ready: results.reduce((a, r) => a + r.ready, 0),
    failed: results.reduce((a, r) => a + r.failed, 0),
    errors: results.filter((r) => r.error).map((r) => r.error),
    arrivals: async (id) => {
      await Promise.all(procs.map((p) => p.send(`await ${id}`)));
      const got = await Promise.all(procs.map((p) => p.next("arrivals")));
      return {
        times: got.flatMap((g) => g.arrivals as number[]),
        missing: got.reduce((a, g) => a + g.missing, 0),
      };
    },
    stop: async () => {
      await Promise.all(procs.map((p) => p.stop()));
    },
  };
}

/** A cfgtool installation: KV file with a superadmin, namespace acme/web holding the realistic namespace. */
export interface BenchInstallation {
  server: BenchServer;
  admin: string;
  dir: string;
  /** Pushes a one-flag change (`flag-07`'s description); returns the new version. */
  pushChange(mark: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Bootstraps a temp-dir KV (under `kvDir` when given), starts
 * bench/stream_server.ts in `mode` (`cfgtool`, or `cfgtool@<dir>`) with
 * `settings`, and pushes the realistic namespace to acme/web.
 */
export async function startInstallation(
  settings: Record<string, number>,
  onStderr?: (line: string) => void,
  kvDir?: string,
  mode = "cfgtool",
): Promise<BenchInstallation> {
  const dir = await Deno.makeTempDir({
    prefix: "cfgtool-bench-stream-",
    ...(kvDir ? { dir: kvDir } : {}),
  });
  const kv = `${dir}/kv.sqlite3`;
  const admin = await bootstrapSuperadmin(kv);
  const server = await startBenchServer(mode, [kv, JSON.stringify(settings)], onStderr);
  const base = `http://127.0.0.1:${server.port}`;
  const api = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const dec = new TextDecoder();
  const files: Record<string, string> = {};
  for (const [k, v] of realisticNamespaceFiles()) files[k] = dec.decode(v);
  await api("POST", "/api/v1/tenants", { slug: "acme" });
  await api("POST", "/api/v1/tenants/acme/namespaces", { slug: "web" });
  const put = async () =>
    (await api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", { files })).version as number;
  await put();
  return {
    server,
    admin,
    dir,
    pushChange: (mark) => {
      files["flags/flag-07.toml"] = files["flags/flag-07.toml"]!.replace(
        /description = "[^"]*"/,
        `description = "${mark}"`,
      );
      return put();
    },
    close: async () => {
      await server.proc.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * The p-quantile (0..1) of ascending numbers (nearest rank).
 *
 * @example
 * ```ts
 * import { quantile } from "./stream_harness.ts";
 * if (quantile([1, 2, 3, 4], 0.5) !== 2) throw new Error();
 * ```
 */
export function quantile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))]!;
}

/** Sleeps. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
