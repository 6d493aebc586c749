/**
 * `cfgtool serve`: runs the flag service until SIGINT or SIGTERM.
 *
 * @module
 */
import { type Command, Option } from "commander";
import { UsageError } from "../errors.ts";
import { DEFAULT_SETTINGS, DESCRIPTOR_RESERVE, type ServiceSettings } from "../settings.ts";

/** One `serve` flag per tunable of lib/settings.ts. */
const SETTING_FLAGS: readonly [flag: string, key: keyof ServiceSettings, help: string][] = [
  ["--head-poll-ms", "headPollMs", "interval of the per-process head poller, ms"],
  ["--inline-event-limit", "inlineEventLimitBytes", "largest inline version event, bytes"],
  ["--delta-file-limit", "deltaFileLimit", "deltas with more file entries go as snapshots"],
  ["--keepalive-ms", "keepaliveMs", "keepalive comment interval on idle streams, ms"],
  ["--idle-close-ms", "idleCloseMs", "close idle event streams after this long, ms"],
  [
    "--max-connections-per-token",
    "maxConnectionsPerToken",
    "concurrent event streams per token, over all processes on the store",
  ],
  [
    "--process-lease-ms",
    "processLeaseMs",
    "the event streams of a process that died stop counting toward that limit after this long, ms",
  ],
  ["--retention-days", "retentionDays", "keep closure history at least this many days"],
  ["--retention-versions", "retentionVersions", "…and at least this many versions"],
  ["--prune-interval-ms", "pruneIntervalMs", "interval of the retention pruning task, ms"],
  [
    "--stream-auth-check-ms",
    "streamAuthCheckMs",
    "how often open streams re-check their credential (revocation, expiry), ms",
  ],
  [
    "--credential-poll-ms",
    "credentialPollMs",
    "how often this process looks for credential changes made by other processes, ms",
  ],
  [
    "--session-ttl-ms",
    "sessionTtlMs",
    "a signed-in session (browser or CLI) ends this long after sign-in, ms",
  ],
  [
    "--session-idle-ms",
    "sessionIdleMs",
    "a browser session ends after this long without a request, ms",
  ],
  [
    "--email-code-ttl-ms",
    "emailCodeTtlMs",
    "a sign-in link or code sent by mail works this long, ms",
  ],
  [
    "--header-timeout-ms",
    "headerTimeoutMs",
    "close a connection that sends no complete request head within this long, ms",
  ],
  [
    "--keepalive-timeout-ms",
    "keepAliveTimeoutMs",
    "close a keep-alive connection that has no request in flight for this long, ms",
  ],
  [
    "--max-connections",
    "maxConnections",
    "open HTTP connections at most; more are closed as they arrive",
  ],
  [
    "--client-rate-limit",
    "clientRateLimitPerMinute",
    "namespace-client evaluations per minute per (tenant, namespace, environment, Origin)",
  ],
];

function camel(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Registers `serve` on the command tree.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerServeCommand } from "./serve.ts";
 * const program = new Command();
 * registerServeCommand(program);
 * if (!program.commands.some((c) => c.name() === "serve")) throw new Error();
 * ```
 */
export function registerServeCommand(program: Command): void {
  const cmd = program
    .command("serve")
    .description("Run the flag service (HTTP on Deno.serve, state in Deno KV).")
    .option("--port <port>", "port to listen on; 0 picks a free one", "8080")
    .option("--hostname <host>", "address to listen on", "127.0.0.1")
    .option(
      "--kv <location>",
      "KV store: a file path (embedded SQLite), :memory:, or a KV Connect URL " +
        "(http(s)://…, token in DENO_KV_ACCESS_TOKEN); env CFGTOOL_KV",
      Deno.env.get("CFGTOOL_KV") ?? "./cfgtool-data/kv.sqlite3",
    )
    .option(
      "--token-key-file <path>",
      "HMAC key that digests service tokens, sessions and sign-in codes (default: " +
        "$CFGTOOL_TOKEN_KEY_FILE, else token.key " +
        "beside the KV file, created with mode 0600 when absent; required with a KV Connect URL)",
      Deno.env.get("CFGTOOL_TOKEN_KEY_FILE"),
    );
  cmd.option(
    "--workers <n>",
    "server processes on this port, sharing the store (Linux): a number, or auto for one " +
      "per core",
    "1",
  );
  cmd.addOption(new Option("--worker-index <i>", "set by --workers in each worker").hideHelp());
  cmd.option(
    "--public-url <url>",
    "public origin of the service for URLs it hands out (snapshot_url, OFREP event " +
      "streams, sign-in mail links, the OIDC redirect URI) and for the session cookie's " +
      "Secure name; sign-in needs it unless clients reach the server on a loopback address " +
      "(env CFGTOOL_PUBLIC_URL)",
    Deno.env.get("CFGTOOL_PUBLIC_URL"),
  );
  cmd.option(
    "--smtp-url <url>",
    "SMTP server for sign-in mail, smtp://[user:pass@]host[:port] or smtps://… (env " +
      "CFGTOOL_SMTP_URL); without it each message is written as an .eml file to the outbox " +
      "directory beside the KV file",
  );
  cmd.option("--mail-from <address>", "From address of sign-in mail", DEFAULT_MAIL_FROM);
  for (const [flag, key, help] of SETTING_FLAGS) {
    const fallback = key === "maxConnections"
      ? `the file descriptor limit minus ${DESCRIPTOR_RESERVE}`
      : DEFAULT_SETTINGS[key];
    cmd.option(`${flag} <n>`, `${help} (default ${fallback})`);
  }
  cmd
    .addHelpText(
      "after",
      "\nConnections: a client must send a complete request head within --header-timeout-ms;\n" +
        "idle keep-alive connections close after --keepalive-timeout-ms. At start the soft\n" +
        "file descriptor limit is raised to the hard limit (needs --allow-ffi under deno run)\n" +
        "and logged; when descriptors run out, new connections wait instead of failing the server.\n" +
        "\nWorkers: --workers N starts N copies of this process as workers on the same port\n" +
        "(SO_REUSEPORT: the kernel spreads connections over them) and the same store, and\n" +
        "prints one listening line. Each worker is a full server; pushes, revocations, the\n" +
        "stream limit per token and the client rate limit hold for all of them through the\n" +
        "store. SIGINT/SIGTERM stop every worker; a worker that dies is restarted after 1 s,\n" +
        "doubling to 30 s, and the group stops (exit 1) after five failures in a row. Needs\n" +
        "Linux, a store all processes share (a KV file or a KV Connect URL, not :memory:), and\n" +
        "under deno run --allow-run (workers run with --unstable-net added).\n" +
        "\nExamples:\n  cfgtool serve\n  cfgtool serve --port 0 --kv :memory:\n" +
        "  cfgtool serve --hostname 0.0.0.0 --kv /var/lib/cfgtool/kv.sqlite3\n" +
        "  cfgtool serve --workers auto --kv /var/lib/cfgtool/kv.sqlite3\n",
    )
    .action(async (opts) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UsageError(`--port must be an integer from 0 to 65535, not "${opts.port}"`);
      }
      const settings: Partial<ServiceSettings> = {};
      const raw = opts as unknown as Record<string, string | undefined>;
      for (const [flag, key] of SETTING_FLAGS) {
        const value = raw[camel(flag)];
        if (value === undefined) continue;
        if (!/^\d{1,12}$/.test(value) || Number(value) <= 0) {
          throw new UsageError(`${flag} must be a positive integer, not "${value}"`);
        }
        settings[key] = Number(value);
      }
      const workers = workerCount(raw.workers ?? "1");
      if (workers > 1 && opts.kv === ":memory:") {
        throw new UsageError(
          "--workers above 1 needs a store the processes share: each would have its own " +
            "`:memory:` KV; use a KV file or a KV Connect URL",
        );
      }
      const publicUrl = raw.publicUrl ? publicOrigin(raw.publicUrl) : undefined;
      // Read here, not as the option's default: help would print a default (and its password).
      const smtpSpec = raw.smtpUrl ?? Deno.env.get("CFGTOOL_SMTP_URL");
      const smtpUrl = smtpSpec ? checkSmtpUrl(smtpSpec) : undefined;
      const mailFrom = raw.mailFrom ?? DEFAULT_MAIL_FROM;
      const worker = raw.workerIndex === undefined ? undefined : Number(raw.workerIndex);
      const ac = new AbortController();
      const onInt = () => ac.abort("SIGINT");
      const onTerm = () => ac.abort("SIGTERM");
      Deno.addSignalListener("SIGINT", onInt);
      Deno.addSignalListener("SIGTERM", onTerm);
      const onListen = ({ hostname, port }: { hostname: string; port: number }) =>
        console.log(`cfgtool listening on http://${hostname}:${port}`);
      try {
        if (workers > 1) {
          // lazy: the parent of a group serves nothing itself
          const { serveWorkers } = await import("../server/supervisor.ts");
          await serveWorkers({
            workers,
            hostname: opts.hostname,
            port,
            args: workerArgs(opts.kv, raw),
            signal: ac.signal,
            onListen,
          });
          return;
        }
        if (worker !== undefined) stopWhenStdinCloses(ac);
        // lazy: the whole service (hono, store, auth, flags, closures) loads only for serve
        const { serve } = await import("../server/serve.ts");
        await serve({
          kv: opts.kv,
          ...(opts.tokenKeyFile ? { tokenKeyFile: opts.tokenKeyFile } : {}),
          hostname: opts.hostname,
          port,
          settings,
          ...(publicUrl ? { publicUrl } : {}),
          ...(smtpUrl ? { smtpUrl } : {}),
          mailFrom,
          signal: ac.signal,
          onListen,
          ...(worker !== undefined ? { worker } : {}),
        });
      } finally {
        Deno.removeSignalListener("SIGINT", onInt);
        Deno.removeSignalListener("SIGTERM", onTerm);
      }
    });
}

/** `--workers`: a positive integer, or `auto` for the number of cores. */
function workerCount(value: string): number {
  if (value === "auto") return Math.max(1, navigator.hardwareConcurrency);
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1) {
    throw new UsageError(`--workers must be a positive integer or auto, not "${value}"`);
  }
  return Number(value);
}

/** The `serve` flags every worker of a group gets: what this process was given, bar the port. */
function workerArgs(kv: string, raw: Record<string, string | undefined>): string[] {
  const args = ["--kv", kv];
  if (raw.tokenKeyFile) args.push("--token-key-file", raw.tokenKeyFile);
  if (raw.publicUrl) args.push("--public-url", raw.publicUrl);
  // CFGTOOL_SMTP_URL reaches the workers through their environment, not on
  // their command lines (where `ps` would show its password).
  if (raw.smtpUrl) args.push("--smtp-url", raw.smtpUrl);
  if (raw.mailFrom) args.push("--mail-from", raw.mailFrom);
  for (const [flag] of SETTING_FLAGS) {
    const value = raw[camel(flag)];
    if (value !== undefined) args.push(flag, value);
  }
  return args;
}

/**
 * A worker's stdin is a pipe from its parent that is never written: it
 * closes when the parent exits, however it exits, and the worker stops.
 */
function stopWhenStdinCloses(ac: AbortController): void {
  void (async () => {
    try {
      for await (const _ of Deno.stdin.readable) {
        // nothing is ever sent
      }
    } catch {
      // closed
    }
    ac.abort("parent_exited");
  })();
}

/** The From address of sign-in mail when `--mail-from` is not given. */
const DEFAULT_MAIL_FROM = "cfgtool <no-reply@localhost>";

/** `--smtp-url`: an smtp: or smtps: URL with a host. Messages never echo it (it may hold a password). */
function checkSmtpUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (
    url === undefined || (url.protocol !== "smtp:" && url.protocol !== "smtps:") || !url.hostname
  ) {
    throw new UsageError(
      "--smtp-url must be smtp://[user:password@]host[:port] or smtps://…",
    );
  }
  return value;
}

function publicOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--public-url must be an absolute http(s) URL, not "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--public-url must be an http(s) URL, not "${value}"`);
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
    throw new UsageError(
      `--public-url must be an origin (scheme://host[:port]) without a path: the service ` +
        `answers at the root of its origin, not "${value}"`,
    );
  }
  return url.origin;
}
