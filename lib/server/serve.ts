/**
 * `serve(options)`: binds the port (HTTPS with a TLS pair), opens the KV
 * (its layout first: an older store is migrated before anything serves, a
 * newer one refused, lib/store/layout.ts) and the token key, and serves
 * the flag service (lib/server/create.ts) with connection limits
 * (lib/net/bounded_server.ts) until its signal aborts. With a TLS pair,
 * each `reload` event (SIGHUP) reads the pair again and serves new
 * connections with it (lib/server/tls_reload.ts).
 *
 * @module
 */
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bufferedWriter, createLogger, type Logger } from "../log.ts";
import { CfgtoolError, UsageError } from "../errors.ts";
import { DEFAULT_KV_PATH, kvLocation, openKv } from "../store/kv.ts";
import { prepareLayout, type PrepareLayoutOptions } from "../store/layout.ts";
import { DEFAULT_MAIL_FROM, smtpTarget } from "../login/mailer.ts";
import type { MailSettings } from "../http/deps.ts";
import { openTokenKey } from "../auth/hmac_key.ts";
import { DESCRIPTOR_RESERVE, resolveSettings, type ServiceSettings } from "../settings.ts";
import { type ConnectionLimits, type HttpListener, serveBounded } from "../net/bounded_server.ts";
import { raiseDescriptorLimit } from "../net/fd_limit.ts";
import { TrustedProxies, TrustedProxyError } from "../net/trusted_proxies.ts";
import { errorResponse } from "../http/errors.ts";
import { createServer, type FlagServer } from "./create.ts";
import { announceFirstRun } from "./first_run.ts";
import { listenTls, readableByOthers, readTlsPair, type TlsPair } from "./tls.ts";
import { certificateFields, type TlsReloader, watchTlsReloads } from "./tls_reload.ts";

/** Options of {@linkcode serve}. Aborting `signal` with a string reason (`"SIGTERM"`) names it in the shutdown log line. */
export interface ServeOptions {
  /** KV location: a path, `:memory:` or a KV Connect URL (default `./cfgtool-data/kv.sqlite3`). */
  kv?: string;
  /** Public origin for URLs the service hands out (behind a proxy). */
  publicUrl?: string;
  /**
   * SMTP server for sign-in mail (`smtp://…`, `smtps://…`); absent: each
   * message is written as an `.eml` file to `<directory of the KV file>/outbox`
   * (a temp directory for `:memory:` and KV Connect).
   */
  smtpUrl?: string;
  /** From address of sign-in mail (default `cfgtool <no-reply@localhost>`). */
  mailFrom?: string;
  /** HMAC key file (default: `token.key` beside the KV file, created when absent). */
  tokenKeyFile?: string;
  /** Listening address (default `127.0.0.1`). */
  hostname?: string;
  /** Port; 0 picks a free one (default 8080). */
  port?: number;
  /** Where logs go (default: JSON lines on stderr at `logLevel` and above). */
  log?: Logger;
  /** The least severe level logged when `log` is not given (default `info`). */
  logLevel?: "debug" | "info" | "warn" | "error";
  /**
   * Serve HTTPS with this certificate chain (`certFile`, PEM, leaf first)
   * and its private key (`keyFile`, PEM), HTTP/2 and HTTP/1.1 by ALPN. Read
   * again at each `reload` event.
   */
  tls?: { certFile: string; keyFile: string };
  /**
   * Each `reload` event reads the TLS pair again (the CLI sends one on
   * SIGHUP); without `tls` it is logged and ignored.
   */
  reloads?: EventTarget;
  /** Bearer token that may scrape `GET /metrics` from any address (never logged). */
  metricsToken?: string;
  /**
   * Load balancers and proxies (CIDR ranges or addresses) whose
   * `X-Forwarded-For` names the client, for the per-IP limits and the
   * log (lib/net/trusted_proxies.ts); default none: the peer is the client.
   */
  trustedProxies?: readonly string[];
  /** The configuration file the options came from, named in the `listening` line. */
  configFile?: string;
  /** Aborting this stops the server. */
  signal?: AbortSignal;
  /** Tunables; unset ones take the defaults of lib/settings.ts. */
  settings?: Partial<ServiceSettings>;
  /**
   * The store layout this server reads and writes, with the migrations of
   * an older store, run (or waited for) before it serves
   * (lib/store/layout.ts); default: this release's. Tests give their own.
   */
  layout?: Omit<PrepareLayoutOptions, "log" | "signal" | "migrate">;
  /** Called once the server listens, with its address and URL (`http://…` or `https://…`). */
  onListen?: (addr: { hostname: string; port: number; url: string }) => void;
  /**
   * Given, a server on a new installation's store (no tenant, no user)
   * makes a one-time operator console link once it listens and passes
   * this the line that shows it, or says how to make one
   * (lib/server/first_run.ts); the CLI prints it. Not called otherwise,
   * nor in a worker of a group (its parent does it).
   */
  onFirstRun?: (line: string) => void;
  /**
   * This process is worker `worker` of a `serve --workers` group
   * (lib/server/supervisor.ts): it binds the port with `SO_REUSEPORT`, next
   * to its siblings, and its `/healthz` answers say which worker answered
   * (`x-cfgtool-worker`).
   */
  worker?: number;
}

/**
 * Opens the KV and serves until `signal` aborts. Resolves when the server has
 * stopped and the KV is closed.
 *
 * @example
 * ```ts ignore
 * import { serve } from "./serve.ts";
 * const ac = new AbortController();
 * const done = serve({ kv: ":memory:", port: 0, signal: ac.signal });
 * ac.abort();
 * await done;
 * ```
 */
export async function serve(options: ServeOptions = {}): Promise<void> {
  const stderr = bufferedWriter();
  const log = options.log ?? createLogger(options.logLevel ?? "info", stderr.write);
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
  const proxies = trustedProxies(options.trustedProxies);
  const descriptors = raiseDescriptorLimit();
  const pair = options.tls ? await readTlsPair(options.tls) : undefined;
  // SO_REUSEPORT: a worker shares the port with its siblings; a TLS reload binds a
  // second listener next to the first (lib/server/tls_reload.ts).
  const reusePort = options.worker !== undefined || (pair !== undefined && reusePortAvailable());
  // Bind before anything touches the disk: a busy port must leave no KV file or key behind.
  const listener = bind(hostname, port, options.worker !== undefined, reusePort, pair);
  let kv: Deno.Kv | undefined;
  let loaded;
  try {
    kv = await openKv(kvSpec);
    // The layout first: recorded on a new store, a newer one refused, an older one
    // migrated (by one process; the others wait) before anything serves.
    const layout = await prepareLayout(kv, {
      ...options.layout,
      log,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (layout.stopped) {
      // a shutdown during the migration: it resumes at the next start
      kv.close();
      listener.close();
      return;
    }
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
  const mail = mailSettings(kvSpec, options, log);
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
    ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
    ...(proxies.any ? { trustedProxies: proxies } : {}),
    mail,
  });
  const stop = new AbortController();
  const handler = options.worker === undefined
    ? server.fetch
    : tagWorker(server.fetch, options.worker);
  const http = serveBounded(listener, handler, {
    limits,
    log,
    signal: stop.signal,
    // the service's own error envelope (a fresh request id: the handler never answered)
    requestTimeoutResponse: (err) => errorResponse(err, crypto.randomUUID(), log),
    handlerWatchesBodies: true, // the data plane reads its bodies; the router gets watchedRequest()
    ...(pair ? { tls: { cert: pair.cert, key: pair.key } } : {}),
  });
  const addr = { hostname: listener.addr.hostname, port: listener.addr.port };
  let reloader: TlsReloader | undefined;
  const onReloadWithoutTls = () =>
    log("info", "reload requested (SIGHUP): nothing to reload without --tls-cert");
  if (pair && options.tls && options.reloads) {
    reloader = watchTlsReloads({
      paths: options.tls,
      listen: { ...addr, backlog: LISTEN_BACKLOG },
      canRebind: reusePort,
      replace: (next) => http.replaceListener(next),
      // in a worker group, say which worker reloaded
      log: options.worker === undefined
        ? log
        : (level, msg, fields) => log(level, msg, { ...fields, worker: options.worker }),
      reloads: options.reloads,
    });
  } else {
    options.reloads?.addEventListener("reload", onReloadWithoutTls);
  }
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
  const url = `${pair ? "https" : "http"}://${addr.hostname}:${addr.port}`;
  if (pair) {
    log(pair.expired ? "warn" : "info", "tls certificate", {
      cert: pair.paths.certFile,
      ...certificateFields(pair),
    });
    if (readableByOthers(pair.paths.keyFile)) {
      log("warn", "tls key file is readable by its group or everyone: chmod 600 it", {
        key: pair.paths.keyFile,
      });
    }
  }
  log("info", "listening", {
    url,
    kv: describeKv(kvSpec),
    ...(options.configFile !== undefined ? { config: options.configFile } : {}),
    ...(proxies.any ? { trusted_proxies: options.trustedProxies!.join(",") } : {}),
    ...(options.worker !== undefined ? { worker: options.worker, pid: Deno.pid } : {}),
  });
  options.onListen?.({ ...addr, url });
  if (options.onFirstRun && options.worker === undefined) {
    const place = {
      scheme: pair ? "https" as const : "http" as const,
      ...addr,
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    };
    await announceFirstRun({ kv, key: loaded.key }, place, log, options.onFirstRun);
  }
  await http.finished;
  await reloader?.stop();
  options.reloads?.removeEventListener("reload", onReloadWithoutTls);
  await server.close();
  // this process's event streams stop counting toward the installation-wide limit at once
  await server.runtime.hub.registry.close();
  kv.close();
}

/**
 * Where sign-in mail goes: the SMTP server, else the outbox directory beside
 * the KV file (a temp directory when there is no KV file). Logged once; the
 * SMTP URL only as host:port (it may carry a password).
 */
function mailSettings(kvSpec: string, options: ServeOptions, log: Logger): MailSettings {
  const from = options.mailFrom ?? DEFAULT_MAIL_FROM;
  if (options.smtpUrl) {
    log("info", "sign-in mail goes to an SMTP server", { smtp: smtpTarget(options.smtpUrl) });
    return { smtpUrl: options.smtpUrl, from };
  }
  const where = kvLocation(kvSpec);
  // Made with the first message (mode 0700): a server that sends none leaves nothing behind.
  const outboxDir = where.kind === "file"
    ? resolve(where.dir, "outbox")
    : join(tmpdir(), `cfgtool-outbox-${crypto.randomUUID()}`);
  log("info", "no --smtp-url: sign-in mail is written as .eml files to the outbox", {
    outbox: outboxDir,
  });
  return { outboxDir, from };
}

/** `--trusted-proxy` values read, a bad one a usage error (before anything is bound). */
function trustedProxies(values: readonly string[] | undefined): TrustedProxies {
  try {
    return TrustedProxies.parse(values ?? []);
  } catch (err) {
    throw err instanceof TrustedProxyError ? new UsageError(err.message) : err;
  }
}

/** Pending connections the kernel may queue before accept (Deno's default is 511). */
const LISTEN_BACKLOG = 4096;

/** Is `SO_REUSEPORT` usable? It is an unstable API: without --unstable-net Deno ends the process on it. */
function reusePortAvailable(): boolean {
  return typeof Deno.listenDatagram === "function";
}

function bind(
  hostname: string,
  port: number,
  worker: boolean,
  reusePort: boolean,
  pair: TlsPair | undefined,
): HttpListener {
  if (worker && !reusePortAvailable()) {
    throw new UsageError(
      "a --workers worker binds its port with SO_REUSEPORT: run it with --unstable-net",
    );
  }
  try {
    // SO_REUSEPORT would let this process share a port another server of the same user
    // holds: a lone process (not a worker of a group) first makes sure the port is free.
    if (pair && reusePort && !worker && port !== 0) Deno.listen({ hostname, port }).close();
    if (pair) return listenTls(pair, { hostname, port, reusePort, backlog: LISTEN_BACKLOG });
    // A reconnect storm (thousands of event-stream clients after a restart) overflows the
    // default queue of 511 pending connections; the kernel caps this at net.core.somaxconn.
    return Deno.listen({
      hostname,
      port,
      tcpBacklog: LISTEN_BACKLOG,
      ...(reusePort ? { reusePort: true } : {}),
    });
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new CfgtoolError("address_in_use", `Port ${port} on ${hostname} is already in use`);
    }
    throw err;
  }
}

/**
 * The handler of worker `index`: its `/healthz` answers carry
 * `x-cfgtool-worker: <index>`, so a client (or a test) can tell which
 * process of the group answered. Nothing else changes.
 */
function tagWorker(
  fetch: FlagServer["fetch"],
  index: number,
): (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Response | Promise<Response> {
  const value = String(index);
  const tag = (res: Response) => {
    try {
      res.headers.set("x-cfgtool-worker", value);
    } catch {
      // immutable headers: the answer goes out untagged
    }
    return res;
  };
  return (req, info) => {
    const res = fetch(req, info);
    return req.url.endsWith("/healthz") ? Promise.resolve(res).then(tag) : res;
  };
}

/** The connection limits of the settings; `maxConnections` 0 follows the descriptor limit. */
function connectionLimits(settings: ServiceSettings, softLimit: number | null): ConnectionLimits {
  const auto = softLimit === null
    ? Number.MAX_SAFE_INTEGER
    : Math.max(16, softLimit - DESCRIPTOR_RESERVE);
  return {
    headerTimeoutMs: settings.headerTimeoutMs,
    keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
    requestTimeoutMs: settings.requestTimeoutMs,
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
