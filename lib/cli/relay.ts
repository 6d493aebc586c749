/**
 * `cfgtool relay`: runs a read-only relay of a flag service (lib/relay/),
 * until SIGINT or SIGTERM. Its options come from the command line, the
 * environment (`CFGTOOL_RELAY_TOKEN`, …) and a configuration file
 * (`--config`, the same TOML keys as the flags, read as `serve` reads its
 * own: lib/cli/serve_config.ts), in that order of precedence.
 *
 * @module
 */
import { type Command, Option } from "commander";
import { UsageError } from "../errors.ts";
import { createLogger, LOG_LEVELS } from "../log.ts";
import { parseDuration } from "./duration.ts";
import { applyConfigFile, type ConfigurableCommand, SECRET_KEYS } from "./serve_config.ts";
import { TRUSTED_PROXY_OPTION, trustedProxyValues } from "./trusted_proxy_option.ts";

const DEFAULT_TOKEN_TTL = "30s";
const DEFAULT_REFUSAL_TTL = "5s";
const DEFAULT_OFFLINE_GRACE = "1h";

/**
 * Registers `relay` on the command tree.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerRelayCommand } from "./relay.ts";
 * const program = new Command();
 * registerRelayCommand(program);
 * const relay = program.commands.find((c) => c.name() === "relay");
 * if (!relay?.options.some((o) => o.long === "--upstream")) throw new Error();
 * ```
 */
export function registerRelayCommand(program: Command): void {
  program
    .command("relay")
    .description(
      "Run a read-only relay of a flag service: it follows the upstream's event stream, " +
        "keeps verified closures on disk and serves evaluation, OFREP and the event stream " +
        "from memory, also while the upstream is down.",
    )
    .addOption(
      new Option(
        "--config <file>",
        "read options from a TOML file: each key is a flag's name without -- " +
          '(upstream = "https://flags.example.com", data-dir = "/var/lib/cfgtool-relay"); ' +
          "flags and environment variables win over it",
      ).env("CFGTOOL_RELAY_CONFIG"),
    )
    .addOption(
      new Option(
        "--upstream <url>",
        "the service to follow: a cfgtool serve installation, or another relay",
      ).env("CFGTOOL_RELAY_UPSTREAM"),
    )
    .addOption(
      new Option(
        "--token <token>",
        "the relay's own token at the upstream: namespace-read (one namespace), tenant-admin " +
          "(a tenant) or superadmin (everything); prefer the variable or the config file: " +
          "flags show in ps",
      ).env("CFGTOOL_RELAY_TOKEN"),
    )
    .option(
      "--ns <namespace>",
      "follow only this namespace, [tenant/]slug (repeat it; in the config file one string, " +
        "space-separated); default: every namespace the token may read, found again every " +
        "--discover-ms",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .addOption(
      new Option(
        "--data-dir <dir>",
        "where the relay keeps each namespace's latest verified closure, the token verdicts " +
          "and its signing key (created with mode 0700)",
      ).default("./cfgtool-relay").env("CFGTOOL_RELAY_DATA_DIR"),
    )
    .option(
      "--key-file <path>",
      "the relay's key that signs the snapshot URLs it hands out (created with mode 0600 " +
        "when absent); default relay.key in --data-dir. Relays behind one load balancer " +
        "share one file, so that each honours the URLs the others signed",
    )
    .option("--port <port>", "port to listen on; 0 picks a free one", "8081")
    .option("--hostname <host>", "address to listen on", "127.0.0.1")
    .addOption(
      new Option(
        "--public-url <url>",
        "public origin of the relay for the URLs it hands out (snapshot_url, OFREP event " +
          "streams); default: the request's origin",
      ).env("CFGTOOL_RELAY_PUBLIC_URL"),
    )
    .option(
      "--token-ttl <duration>",
      "how long the upstream's verdict on a client token counts before the relay asks again " +
        "(a revoked token keeps working at the relay at most this long)",
      DEFAULT_TOKEN_TTL,
    )
    .option(
      "--refusal-ttl <duration>",
      "how long a refused client token stays refused before the relay asks again",
      DEFAULT_REFUSAL_TTL,
    )
    .option(
      "--offline-grace <duration>",
      "while the upstream does not answer, verdicts it gave within this long keep counting " +
        "(also across a restart of the relay); 0s refuses every token the cache no longer covers",
      DEFAULT_OFFLINE_GRACE,
    )
    .option(
      "--discover-ms <n>",
      "how often the namespaces the token may read are listed again, ms",
      "5000",
    )
    .option(...TRUSTED_PROXY_OPTION)
    .addOption(
      new Option(
        "--metrics-token <token>",
        "Bearer token that may read GET /metrics from any address (without it only loopback " +
          "clients may)",
      ).env("CFGTOOL_METRICS_TOKEN"),
    )
    .addOption(
      new Option("--log-level <level>", `least severe log lines written: ${LOG_LEVELS.join(", ")}`)
        .default("info"),
    )
    .addHelpText("after", RELAY_HELP)
    .action(async (_opts, command) => {
      const self = command as unknown as RelayCommand;
      const ac = new AbortController();
      const onInt = () => ac.abort("SIGINT");
      const onTerm = () => ac.abort("SIGTERM");
      Deno.addSignalListener("SIGINT", onInt);
      Deno.addSignalListener("SIGTERM", onTerm);
      try {
        const config = self.opts().config;
        const fileKeys = typeof config === "string" && config !== ""
          ? await applyConfigFile(self, config)
          : [];
        const o = self.opts();
        const upstream = stringOpt(o.upstream);
        const token = stringOpt(o.token);
        if (upstream === undefined) throw new UsageError("relay needs --upstream <url>");
        if (token === undefined) {
          throw new UsageError("relay needs --token <token> (or CFGTOOL_RELAY_TOKEN)");
        }
        const port = Number(o.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new UsageError(`--port must be 0 to 65535, not ${o.port}`);
        }
        const discoverMs = Number(o.discoverMs);
        if (!Number.isInteger(discoverMs) || discoverMs < 100) {
          throw new UsageError(`--discover-ms must be an integer of at least 100`);
        }
        const ns = o.ns;
        const namespaces = Array.isArray(ns)
          ? ns
          : typeof ns === "string"
          ? ns.split(/\s+/).filter((s) => s !== "")
          : [];
        const logLevel = String(o.logLevel);
        if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
          throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
        }
        const trustedProxies = await trustedProxyValues(o.trustedProxy);
        const secrets = fileKeys.filter((k) => SECRET_KEYS.has(k));
        if (secrets.length > 0 && readableByOthers(String(config))) {
          createLogger(logLevel as "info")(
            "warn",
            "configuration file holds secrets and is readable by its group or everyone: " +
              "chmod 600 it",
            { config: String(config), keys: secrets.join(",") },
          );
        }
        const publicUrl = stringOpt(o.publicUrl);
        const metricsToken = stringOpt(o.metricsToken);
        // lazy: the relay (hono, the engine, the SDK's stream client) loads only for relay
        const { relay } = await import("../relay/serve.ts");
        await relay({
          upstream,
          token,
          namespaces,
          dataDir: String(o.dataDir),
          ...(stringOpt(o.keyFile) ? { keyFile: stringOpt(o.keyFile)! } : {}),
          hostname: String(o.hostname),
          port,
          tokenTtlMs: parseDuration(String(o.tokenTtl), "--token-ttl"),
          refusalTtlMs: parseDuration(String(o.refusalTtl), "--refusal-ttl"),
          offlineGraceMs: parseDuration(String(o.offlineGrace), "--offline-grace"),
          discoverMs,
          logLevel: logLevel as "info",
          signal: ac.signal,
          ...(publicUrl ? { publicUrl } : {}),
          ...(metricsToken ? { metricsToken } : {}),
          ...(trustedProxies.length > 0 ? { trustedProxies } : {}),
          onListen: ({ url }) => console.log(`cfgtool relay listening on ${url}`),
        });
      } finally {
        Deno.removeSignalListener("SIGINT", onInt);
        Deno.removeSignalListener("SIGTERM", onTerm);
      }
    });
}

/** Whether a file's mode lets its group or everyone read it. */
function readableByOthers(path: string): boolean {
  try {
    const mode = Deno.statSync(path).mode;
    return mode !== null && (mode & 0o044) !== 0;
  } catch {
    return false;
  }
}

function stringOpt(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** What the action reads from and writes to its command. */
interface RelayCommand extends ConfigurableCommand {
  opts(): Record<string, string | string[] | boolean | undefined>;
}

const RELAY_HELP = `
What a relay serves, with the wire of serve (evaluate, evaluate/all, OFREP single and
bulk with its ETag, the OFREP event stream, /api/v1/events, the closure endpoint, the
manifest download, /api/v1/me): from the latest verified closure of each namespace it
follows, in memory. Any other request is 405 read_only naming the upstream.

Tokens: clients use their own tokens. The relay asks the upstream about each one once
(GET /api/v1/me) and keeps the verdict for --token-ttl (default ${DEFAULT_TOKEN_TTL}), a refusal for
--refusal-ttl (${DEFAULT_REFUSAL_TTL}). While the upstream does not answer, verdicts it gave within
--offline-grace (${DEFAULT_OFFLINE_GRACE}) keep counting, also after a restart of the relay (they are
kept in the data directory by the token's SHA-256, never the token). So a token revoked
at the primary works at a relay for up to --token-ttl, and for up to --offline-grace
while the primary is down: shorten them for faster revocation, lengthen the grace for
availability. The public_evaluate gate and CORS of namespace-client tokens come from
the relay's copy of namespace.toml.

Start without the upstream: a relay reads its data directory first (every kept closure
is verified again) and serves those versions; /healthz says "serving": "last_verified"
until the upstream answers. A relay may follow another relay (a regional tier).

Behind a load balancer: --trusted-proxy 10.0.0.0/8 (repeat it, or in the config file
one string, space-separated) names the proxies in front of the relay: only their
X-Forwarded-For names the client (read from the right, trusted hops skipped), shown
as client_ip on each request log line. Anyone else's header is ignored.

Configuration file: --config relay.toml (or CFGTOOL_RELAY_CONFIG), keys are the flags
without --:
  upstream = "https://flags.example.com"
  data-dir = "/var/lib/cfgtool-relay"
  port = 8081
  ns = "acme/web acme/checkout"
  token-ttl = "30s"
  trusted-proxy = "10.0.0.0/8"
  token = "svc_tenant_…"     # a secret: chmod 600 the file (a readable one is warned about)
An unknown key, or a value of the wrong type, stops the start (exit 2) naming the
file and the line; the token's value is never repeated.

Examples:
  CFGTOOL_RELAY_TOKEN=svc_tenant_… cfgtool relay --upstream https://flags.example.com \\
    --data-dir /var/lib/cfgtool-relay --hostname 0.0.0.0 --port 8081
  cfgtool relay --upstream http://10.0.0.5:8081 --token "$TOKEN" --ns acme/web --port 0
`;
