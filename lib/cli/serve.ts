/**
 * `cfgtool serve`: runs the flag service until SIGINT or SIGTERM.
 *
 * @module
 */
import type { Command } from "commander";
import { UsageError } from "../errors.ts";
import { DEFAULT_SETTINGS, DESCRIPTOR_RESERVE, type ServiceSettings } from "../settings.ts";

/** One `serve` flag per tunable of lib/settings.ts. */
const SETTING_FLAGS: readonly [flag: string, key: keyof ServiceSettings, help: string][] = [
  ["--head-poll-ms", "headPollMs", "interval of the per-process head poller, ms"],
  ["--inline-event-limit", "inlineEventLimitBytes", "largest inline version event, bytes"],
  ["--delta-file-limit", "deltaFileLimit", "deltas with more file entries go as snapshots"],
  ["--keepalive-ms", "keepaliveMs", "keepalive comment interval on idle streams, ms"],
  ["--idle-close-ms", "idleCloseMs", "close idle event streams after this long, ms"],
  ["--max-connections-per-token", "maxConnectionsPerToken", "concurrent event streams per token"],
  ["--retention-days", "retentionDays", "keep closure history at least this many days"],
  ["--retention-versions", "retentionVersions", "…and at least this many versions"],
  ["--prune-interval-ms", "pruneIntervalMs", "interval of the retention pruning task, ms"],
  [
    "--stream-auth-check-ms",
    "streamAuthCheckMs",
    "how often open streams re-check their credential (revocation, expiry), ms",
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
      "HMAC key that digests service tokens (default: $CFGTOOL_TOKEN_KEY_FILE, else token.key " +
        "beside the KV file, created with mode 0600 when absent; required with a KV Connect URL)",
      Deno.env.get("CFGTOOL_TOKEN_KEY_FILE"),
    );
  cmd.option(
    "--public-url <url>",
    "public origin of the service for URLs it hands out (snapshot_url, OFREP event " +
      "streams) when it runs behind a proxy (env CFGTOOL_PUBLIC_URL)",
    Deno.env.get("CFGTOOL_PUBLIC_URL"),
  );
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
        "\nExamples:\n  cfgtool serve\n  cfgtool serve --port 0 --kv :memory:\n" +
        "  cfgtool serve --hostname 0.0.0.0 --kv /var/lib/cfgtool/kv.sqlite3\n",
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
      // lazy: the whole service (hono, store, auth, flags, closures) loads only for serve
      const { serve } = await import("../server/serve.ts");
      const ac = new AbortController();
      const onInt = () => ac.abort("SIGINT");
      const onTerm = () => ac.abort("SIGTERM");
      Deno.addSignalListener("SIGINT", onInt);
      Deno.addSignalListener("SIGTERM", onTerm);
      try {
        await serve({
          kv: opts.kv,
          ...(opts.tokenKeyFile ? { tokenKeyFile: opts.tokenKeyFile } : {}),
          hostname: opts.hostname,
          port,
          settings,
          ...(raw.publicUrl ? { publicUrl: publicOrigin(raw.publicUrl) } : {}),
          signal: ac.signal,
          onListen: ({ hostname, port }) =>
            console.log(`cfgtool listening on http://${hostname}:${port}`),
        });
      } finally {
        Deno.removeSignalListener("SIGINT", onInt);
        Deno.removeSignalListener("SIGTERM", onTerm);
      }
    });
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
