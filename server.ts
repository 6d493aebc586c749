/**
 * The flag service: `createServer(options)` builds the request handler over an
 * opened KV; `serve(options)` binds the port, opens the KV and serves HTTP with
 * connection limits (lib/net/bounded_server.ts).
 * Also runnable directly: `deno run -A --unstable-kv server.ts --port 8080`.
 *
 * @module
 */
import { createApp } from "./lib/http/app.ts";
import { bufferedWriter, createLogger, type Logger } from "./lib/log.ts";
import { CfgtoolError } from "./lib/errors.ts";
import { DEFAULT_KV_PATH, openKv } from "./lib/store/kv.ts";
import { openTokenKey } from "./lib/auth/hmac_key.ts";
import { HeadWatcher } from "./lib/store/head_watcher.ts";
import { StreamGuard } from "./lib/auth/stream_guard.ts";
import { DESCRIPTOR_RESERVE, resolveSettings, type ServiceSettings } from "./lib/settings.ts";
import { type ConnectionLimits, serveBounded } from "./lib/net/bounded_server.ts";
import { raiseDescriptorLimit } from "./lib/net/fd_limit.ts";
import { startRetention } from "./lib/store/retention.ts";
import { ManifestWorkers } from "./lib/workers/manifest_workers.ts";

/** Options of {@linkcode createServer}. */
export interface ServerOptions {
  /** The opened KV. */
  kv: Deno.Kv;
  /** The HMAC key that digests service tokens and sessions. */
  key: CryptoKey;
  /** Where logs go (default: JSON lines on stderr). */
  log?: Logger;
  /** Tunables; unset ones take the defaults of lib/settings.ts. */
  settings?: Partial<ServiceSettings>;
  /** Public origin for URLs the service hands out (behind a proxy). */
  publicUrl?: string;
  /**
   * Start the manifest workers now rather than on first use (`serve` does:
   * starting one costs its caller tens of milliseconds).
   */
  startWorkers?: boolean;
}

/** A request handler and what it holds open. */
export interface FlagServer {
  /** The fetch handler, as `Deno.serve` takes it (`info` gives the client address). */
  fetch: (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;
  /** Stops background work (pollers, streams). Does not close the KV. */
  close(): Promise<void>;
}

/**
 * Builds the service's request handler over an opened KV.
 *
 * @example
 * ```ts
 * import { createServer } from "./server.ts";
 * import { randomTokenKey } from "./lib/auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const server = createServer({ kv, key: await randomTokenKey(), log: () => {} });
 * const res = await server.fetch(new Request("http://x/healthz"));
 * if (res.status !== 200) throw new Error();
 * await server.close();
 * kv.close();
 * ```
 */
export function createServer(options: ServerOptions): FlagServer {
  const log = options.log ?? createLogger();
  const settings = resolveSettings(options.settings);
  const heads = new HeadWatcher(options.kv, { pollIntervalMs: settings.headPollMs });
  const shutdown = new AbortController();
  const guard = new StreamGuard(options.kv, { intervalMs: settings.streamAuthCheckMs });
  const workers = new ManifestWorkers();
  if (options.startWorkers) workers.start();
  const app = createApp({
    kv: options.kv,
    key: options.key,
    log,
    heads,
    settings,
    guard,
    workers,
    shutdown: shutdown.signal,
    ...(options.publicUrl ? { publicUrl: options.publicUrl.replace(/\/+$/, "") } : {}),
  });
  const retention = startRetention(options.kv, {
    policy: { days: settings.retentionDays, versions: settings.retentionVersions },
    intervalMs: settings.pruneIntervalMs,
    log,
  });
  return {
    fetch: (req, info) => app.fetch(req, info ? { remoteAddr: info.remoteAddr } : {}),
    close: async () => {
      shutdown.abort();
      guard.close();
      heads.close();
      workers.close();
      await retention.stop();
    },
  };
}

/** Options of {@linkcode serve}. Aborting `signal` with a string reason (`"SIGTERM"`) names it in the shutdown log line. */
export interface ServeOptions {
  /** KV location: a path, `:memory:` or a KV Connect URL (default `./cfgtool-data/kv.sqlite3`). */
  kv?: string;
  /** Public origin for URLs the service hands out (behind a proxy). */
  publicUrl?: string;
  /** HMAC key file (default: `token.key` beside the KV file, created when absent). */
  tokenKeyFile?: string;
  /** Listening address (default `127.0.0.1`). */
  hostname?: string;
  /** Port; 0 picks a free one (default 8080). */
  port?: number;
  /** Where logs go. */
  log?: Logger;
  /** Aborting this stops the server. */
  signal?: AbortSignal;
  /** Tunables; unset ones take the defaults of lib/settings.ts. */
  settings?: Partial<ServiceSettings>;
  /** Called once the server listens, with its address. */
  onListen?: (addr: { hostname: string; port: number }) => void;
}

/**
 * Opens the KV and serves until `signal` aborts. Resolves when the server has
 * stopped and the KV is closed.
 *
 * @example
 * ```ts ignore
 * import { serve } from "./server.ts";
 * const ac = new AbortController();
 * const done = serve({ kv: ":memory:", port: 0, signal: ac.signal });
 * ac.abort();
 * await done;
 * ```
 */
export async function serve(options: ServeOptions = {}): Promise<void> {
  const stderr = bufferedWriter();
  const log = options.log ?? createLogger("info", stderr.write);
  try {
    await serveWith(options, log);
  } finally {
    stderr.flush();
  }
}

async function serveWith(options: ServeOptions, log: Logger): Promise<void> {
  const kvSpec = options.kv ?? DEFAULT_KV_PATH;
  const hostname = options.hostname ?? "127.0.0.1";
  const port = options.port ?? 8080;
  const settings = resolveSettings(options.settings);
  const descriptors = raiseDescriptorLimit();
  // Bind before anything touches the disk: a busy port must leave no KV file or key behind.
  const listener = bind(hostname, port);
  let kv: Deno.Kv | undefined;
  let loaded;
  try {
    kv = await openKv(kvSpec);
    loaded = await openTokenKey(
      kv,
      options.tokenKeyFile === undefined
        ? { kv: kvSpec }
        : { kv: kvSpec, keyFile: options.tokenKeyFile },
    );
  } catch (err) {
    kv?.close();
    listener.close();
    throw err;
  }
  if (loaded.created) log("info", "created token HMAC key file", { path: loaded.path });
  else if (loaded.path === null) {
    log("info", "using an in-process token HMAC key (tokens die with the process)");
  }
  const limits = connectionLimits(settings, descriptors.soft);
  log("info", "file descriptor limit", {
    soft: descriptors.soft,
    hard: descriptors.hard,
    ...(descriptors.raisedFrom !== undefined ? { raised_from: descriptors.raisedFrom } : {}),
    ...(descriptors.note ? { note: descriptors.note } : {}),
    max_connections: limits.maxConnections,
  });
  const server = createServer({
    kv,
    key: loaded.key,
    log,
    settings,
    startWorkers: true,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  });
  const stop = new AbortController();
  const http = serveBounded(listener, server.fetch, { limits, log, signal: stop.signal });
  const onAbort = () => {
    const { connections, inFlight } = http.stats();
    const reason = options.signal?.reason;
    log("info", "shutting down", {
      signal: typeof reason === "string" ? reason : "abort",
      open_streams_closed: inFlight,
      connections,
    });
    // End long-lived streams first, or a graceful shutdown would wait for them.
    void server.close();
    stop.abort();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const addr = { hostname: listener.addr.hostname, port: listener.addr.port };
  log("info", "listening", { url: `http://${addr.hostname}:${addr.port}`, kv: describeKv(kvSpec) });
  options.onListen?.(addr);
  await http.finished;
  await server.close();
  kv.close();
}

function bind(hostname: string, port: number): Deno.TcpListener {
  try {
    return Deno.listen({ hostname, port });
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new CfgtoolError("address_in_use", `Port ${port} on ${hostname} is already in use`);
    }
    throw err;
  }
}

/** The connection limits of the settings; `maxConnections` 0 follows the descriptor limit. */
function connectionLimits(settings: ServiceSettings, softLimit: number | null): ConnectionLimits {
  const auto = softLimit === null
    ? Number.MAX_SAFE_INTEGER
    : Math.max(16, softLimit - DESCRIPTOR_RESERVE);
  return {
    headerTimeoutMs: settings.headerTimeoutMs,
    keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
    maxConnections: settings.maxConnections > 0 ? settings.maxConnections : auto,
  };
}

function describeKv(spec: string): string {
  // A KV Connect URL may carry credentials in its userinfo; never log them.
  try {
    const u = new URL(spec);
    if (u.protocol === "http:" || u.protocol === "https:") {
      return `${u.protocol}//${u.host}${u.pathname}`;
    }
  } catch {
    // a path
  }
  return spec;
}

if (import.meta.main) {
  const { runCli } = await import("./cli.ts");
  Deno.exit(await runCli(["serve", ...Deno.args]));
}
