/**
 * `cfgtool relay`: a read-only tier in front of a `serve` installation (or
 * of another relay). It reads its data directory first (the closures it
 * kept, verified again, and the token verdicts it kept), starts serving
 * from memory, and follows its upstream (lib/relay/follower.ts): a relay
 * started while its upstream is down serves its last verified versions and
 * says so in its log and in `/healthz`. No database: memory, and files in
 * `--data-dir`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { trimTrailing } from "../ascii.ts";
import { bufferedWriter, createLogger, type Logger } from "../log.ts";
import { CfgtoolError, UsageError } from "../errors.ts";
import { importTokenKey, KEY_BYTES } from "../auth/hmac_key.ts";
import { DEFAULT_SETTINGS, DESCRIPTOR_RESERVE, resolveSettings } from "../settings.ts";
import { serveBounded } from "../net/bounded_server.ts";
import { raiseDescriptorLimit } from "../net/fd_limit.ts";
import { errorResponse } from "../http/errors.ts";
import { fetchEnv } from "../http/client_ip.ts";
import { watchedRequest } from "../net/request_timeout.ts";
import { TrustedProxies, TrustedProxyError } from "../net/trusted_proxies.ts";
import { createRelayApp } from "./app.ts";
import { createRelayDataPlane } from "./data_plane.ts";
import type { RelayDeps } from "./deps.ts";
import { ClosureDisk } from "./disk.ts";
import { Follower } from "./follower.ts";
import { Holdings } from "./holdings.ts";
import { RelayMetrics } from "./metrics.ts";
import { VerdictCache } from "./verdicts.ts";

/** Options of {@linkcode relay}. */
export interface RelayOptions {
  /** The upstream's base URL: a `serve` installation or another relay. */
  upstream: string;
  /** The relay's own token there (namespace-read, tenant-admin or superadmin). */
  token: string;
  /** `[tenant/]slug[:*]` values; empty: every namespace the token may read. */
  namespaces?: readonly string[];
  /** Where closures, verdicts and the relay's key are kept. */
  dataDir: string;
  /**
   * The relay's signing key (created when absent); default `relay.key` in
   * the data directory. Relays behind one load balancer share one, so that
   * a snapshot URL one of them signed is honoured by the others.
   */
  keyFile?: string;
  /** Listening address (default `127.0.0.1`). */
  hostname?: string;
  /** Port; 0 picks a free one (default 8081). */
  port?: number;
  /** The relay's public origin for the URLs it hands out (snapshot_url, OFREP event streams). */
  publicUrl?: string;
  /** How long a token verdict counts, ms (default 30 s). */
  tokenTtlMs?: number;
  /** How long a refusal counts, ms (default 5 s). */
  refusalTtlMs?: number;
  /** How long a verdict counts while the upstream is down, ms (default 1 h). */
  offlineGraceMs?: number;
  /** How often the namespaces are found again, ms (default 5 s). */
  discoverMs?: number;
  /** Bearer token that may read `/metrics` from any address. */
  metricsToken?: string;
  /**
   * Load balancers and proxies (CIDR ranges or addresses) whose
   * `X-Forwarded-For` names the client, for the log and the metrics
   * access check (lib/net/trusted_proxies.ts); default none.
   */
  trustedProxies?: readonly string[];
  /** Least severe level logged (default `info`). */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** Where logs go (default: JSON lines on stderr). */
  log?: Logger;
  /** Aborting stops the relay. */
  signal?: AbortSignal;
  /** Called once it listens. */
  onListen?: (addr: { hostname: string; port: number; url: string }) => void;
}

/**
 * Runs a relay until `signal` aborts.
 *
 * @param options upstream, token, data directory, listening address, lifetimes
 * @returns resolves once it has stopped
 *
 * @example
 * ```ts ignore
 * await relay({ upstream: "http://primary:8080", token, dataDir: "/var/lib/cfgtool-relay", port: 8081 });
 * ```
 */
export async function relay(options: RelayOptions): Promise<void> {
  const stderr = bufferedWriter();
  const log = options.log ?? createLogger(options.logLevel ?? "info", stderr.write);
  try {
    await relayWith(options, log);
  } finally {
    stderr.flush();
  }
}

async function relayWith(options: RelayOptions, log: Logger): Promise<void> {
  let upstream: URL;
  try {
    upstream = new URL(options.upstream);
  } catch {
    throw new UsageError(`--upstream ${options.upstream} is not a URL`);
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new UsageError(`--upstream ${options.upstream} is not an http(s) URL`);
  }
  const upstreamUrl = trimTrailing(upstream.href, "/");
  let proxies: TrustedProxies;
  try {
    proxies = TrustedProxies.parse(options.trustedProxies ?? []);
  } catch (err) {
    throw err instanceof TrustedProxyError ? new UsageError(err.message) : err;
  }
  const hostname = options.hostname ?? "127.0.0.1";
  const port = options.port ?? 8081;
  const descriptors = raiseDescriptorLimit();
  let listener: Deno.TcpListener;
  try {
    listener = Deno.listen({ hostname, port, tcpBacklog: 4096 });
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new CfgtoolError("address_in_use", `Port ${port} on ${hostname} is already in use`);
    }
    throw err;
  }
  await Deno.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const key = await relayKey(options.keyFile ?? join(options.dataDir, "relay.key"));

  const metrics = new RelayMetrics();
  const holdings = new Holdings();
  const disk = new ClosureDisk(options.dataDir, log);
  const verdicts = new VerdictCache({
    upstream: upstreamUrl,
    dataDir: options.dataDir,
    log,
    onOutcome: (o) => metrics.verdict(o),
    ...(options.tokenTtlMs !== undefined ? { ttlMs: options.tokenTtlMs } : {}),
    ...(options.refusalTtlMs !== undefined ? { refusalTtlMs: options.refusalTtlMs } : {}),
    ...(options.offlineGraceMs !== undefined ? { offlineGraceMs: options.offlineGraceMs } : {}),
  });
  // what this relay served before it stopped, verified again
  const kept = await disk.loadAll();
  for (const k of kept) holdings.put(k.tenant, k.state, "disk", k.savedAt);
  const knownTokens = await verdicts.load();
  if (kept.length > 0 || knownTokens > 0) {
    log("info", "relay: serving the last verified versions from the data directory", {
      data_dir: options.dataDir,
      namespaces: kept.map((k) => `${k.tenant}/${k.state.namespace}@${k.state.version}`).join(","),
      token_verdicts: knownTokens,
    });
  }

  const follower = new Follower({
    upstream: upstreamUrl,
    token: options.token,
    namespaces: options.namespaces ?? [],
    holdings,
    disk,
    log,
    onReconnect: () => metrics.reconnected(),
    ...(options.discoverMs !== undefined ? { discoverMs: options.discoverMs } : {}),
  });
  const shutdown = new AbortController();
  const settings = resolveSettings({});
  const relayDeps: RelayDeps = {
    upstream: upstreamUrl,
    ...(options.publicUrl ? { publicUrl: trimTrailing(options.publicUrl, "/") } : {}),
    holdings,
    verdicts,
    key,
    log,
    settings,
    shutdown: shutdown.signal,
    metrics,
    lagMs: (t, ns) => follower.lagMs(t, ns),
    upstreamState: () => {
      const since = follower.connectedSince;
      return {
        connected: follower.connected,
        since: since === null ? null : new Date(since).toISOString(),
        lastError: follower.lastDiscoveryError,
      };
    },
  };
  const app = createRelayApp(
    relayDeps,
    options.metricsToken ? { metricsToken: options.metricsToken } : {},
  );
  // evaluation and OFREP with a bearer credential: answered before the router
  const plane = createRelayDataPlane(relayDeps);

  const stop = new AbortController();
  const http = serveBounded(
    listener,
    (req, info) => {
      const env = fetchEnv(req, info, proxies);
      return plane(req, env) ?? app.fetch(watchedRequest(req), env);
    },
    {
      limits: {
        headerTimeoutMs: settings.headerTimeoutMs,
        keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
        requestTimeoutMs: settings.requestTimeoutMs,
        maxConnections: descriptors.soft === null
          ? Number.MAX_SAFE_INTEGER
          : Math.max(16, descriptors.soft - DESCRIPTOR_RESERVE),
      },
      log,
      signal: stop.signal,
      requestTimeoutResponse: (err) => errorResponse(err, crypto.randomUUID(), log),
      handlerWatchesBodies: true, // the data plane reads its bodies; the router gets watchedRequest()
    },
  );
  const onAbort = () => {
    const reason = options.signal?.reason;
    log("info", "shutting down", { signal: typeof reason === "string" ? reason : "abort" });
    shutdown.abort(); // streams end first, or a graceful stop would wait for them
    stop.abort();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const addr = listener.addr as Deno.NetAddr;
  const url = `http://${addr.hostname}:${addr.port}`;
  log("info", "listening", {
    url,
    role: "relay",
    upstream: upstreamUrl,
    data_dir: options.dataDir,
    ...(proxies.any ? { trusted_proxies: options.trustedProxies!.join(",") } : {}),
  });
  options.onListen?.({ hostname: addr.hostname, port: addr.port, url });
  follower.start();
  await http.finished;
  await follower.close();
  await verdicts.flush();
  await disk.settled();
}

/**
 * The relay's own HMAC key (signed snapshot URLs), read from `path` or made
 * there. Relays that share a key file may start together: the key is
 * written whole to a temporary file and linked into place, so one of them
 * makes it and the others read that one, never a part of it.
 */
async function relayKey(path: string): Promise<CryptoKey> {
  try {
    return await importTokenKey(await Deno.readFile(path));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const bytes = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeFile(tmp, bytes, { mode: 0o600, createNew: true });
  try {
    await Deno.link(tmp, path);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    return await importTokenKey(await Deno.readFile(path));
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
  return await importTokenKey(bytes);
}

/** The defaults `relay --help` shows. */
export const RELAY_DEFAULTS = {
  port: 8081,
  tokenTtlMs: 30_000,
  refusalTtlMs: 5_000,
  offlineGraceMs: 3_600_000,
  discoverMs: 5_000,
  keepaliveMs: DEFAULT_SETTINGS.keepaliveMs,
} as const;
