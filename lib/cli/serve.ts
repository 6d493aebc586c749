/**
 * `cfgtool serve`: runs the flag service until SIGINT or SIGTERM; SIGHUP
 * reloads the TLS certificate. Its options come from the command line, the
 * environment (`CFGTOOL_KV`, …) and a configuration file (`--config`,
 * lib/cli/serve_config.ts), in that order of precedence; their checks are
 * in lib/cli/serve_values.ts.
 *
 * @module
 */
import { type Command, Option } from "commander";
import { DEFAULT_SETTINGS, DESCRIPTOR_RESERVE } from "../settings.ts";
import { createLogger, LOG_LEVELS } from "../log.ts";
import { formatDuration } from "./duration.ts";
import { TRUSTED_PROXY_OPTION, trustedProxyValues } from "./trusted_proxy_option.ts";
import {
  applyConfigFile,
  type ConfigurableCommand,
  type OptionLike,
  SECRET_KEYS,
} from "./serve_config.ts";
import {
  DEFAULT_MAIL_FROM,
  type GivenValue,
  readServeValues,
  SETTING_FLAGS,
} from "./serve_values.ts";

/**
 * Flags whose values are secrets: a worker of a group gets them through its
 * environment (their variables), never on its command line.
 */
const SECRET_FLAGS = new Set(["--smtp-url", "--metrics-token"]);

/** Flags the parent of a worker group handles itself and does not pass on. */
const PARENT_ONLY = new Set(["--config", "--port", "--hostname", "--workers", "--worker-index"]);

/**
 * Registers `serve` on the command tree.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerServeCommand } from "./serve.ts";
 * const program = new Command();
 * registerServeCommand(program);
 * const serve = program.commands.find((c) => c.name() === "serve");
 * if (!serve?.options.some((o) => o.long === "--config")) throw new Error();
 * ```
 */
export function registerServeCommand(program: Command): void {
  const cmd = program
    .command("serve")
    .description("Run the flag service (HTTP or HTTPS on Deno's HTTP engine, state in Deno KV).")
    .addOption(
      new Option(
        "--config <file>",
        "read options from a TOML file: each key is a flag's name without -- " +
          '(port = 8080, kv = "/var/lib/cfgtool/kv.sqlite3"); flags and environment ' +
          "variables win over it",
      ).env("CFGTOOL_CONFIG"),
    )
    .option("--port <port>", "port to listen on; 0 picks a free one", "8080")
    .option("--hostname <host>", "address to listen on", "127.0.0.1")
    .addOption(
      new Option(
        "--kv <location>",
        "KV store: a file path (embedded SQLite), :memory:, or a KV Connect URL " +
          "(http(s)://…, token in DENO_KV_ACCESS_TOKEN)",
      ).default("./cfgtool-data/kv.sqlite3").env("CFGTOOL_KV"),
    )
    .addOption(
      new Option(
        "--token-key-file <path>",
        "HMAC key that digests service tokens, sessions and sign-in codes (default: token.key " +
          "beside the KV file, created with mode 0600 when absent; required with a KV Connect URL)",
      ).env("CFGTOOL_TOKEN_KEY_FILE"),
    );
  cmd.option(
    "--workers <n>",
    "server processes on this port, sharing the store (Linux): a number, or auto for one " +
      "per core",
    "1",
  );
  cmd.addOption(new Option("--worker-index <i>", "set by --workers in each worker").hideHelp());
  cmd.addOption(
    new Option(
      "--public-url <url>",
      "public origin of the service for URLs it hands out (snapshot_url, OFREP event " +
        "streams, sign-in mail links, the OIDC redirect URI, SAML entity ids and consumer URL) " +
        "and for the session cookie's " +
        "Secure name; sign-in needs it unless clients reach the server on a loopback address",
    ).env("CFGTOOL_PUBLIC_URL"),
  );
  cmd.addOption(
    new Option(
      "--smtp-url <url>",
      "SMTP server for sign-in mail, smtp://[user:pass@]host[:port] or smtps://…; without " +
        "it each message is written as an .eml file to the outbox directory beside the KV file",
    ).env("CFGTOOL_SMTP_URL"),
  );
  cmd.option("--mail-from <address>", "From address of sign-in mail", DEFAULT_MAIL_FROM);
  cmd.option(
    "--tls-cert <file>",
    "serve HTTPS (HTTP/2 and HTTP/1.1) with this PEM certificate chain, leaf first; " +
      "needs --tls-key; reread on SIGHUP",
  );
  cmd.option("--tls-key <file>", "the PEM private key of --tls-cert (not encrypted)");
  cmd.addOption(
    new Option("--log-level <level>", `least severe log lines written: ${LOG_LEVELS.join(", ")}`)
      .default("info"),
  );
  cmd.addOption(
    new Option(
      "--metrics-token <token>",
      "Bearer token that may read GET /metrics from any address (without it only loopback " +
        "clients may); prefer the variable or the config file: flags show in ps",
    ).env("CFGTOOL_METRICS_TOKEN"),
  );
  cmd.option(...TRUSTED_PROXY_OPTION);
  cmd.option(
    "--audit-retention <duration>",
    "delete audit entries, and expired or revoked token records, older than this " +
      `(30d, 12w; default ${formatDuration(DEFAULT_SETTINGS.auditRetentionMs)})`,
  );
  cmd.option(
    "--webhook-allow-private",
    "let webhooks deliver to loopback, private, link-local and other non-public addresses " +
      "(refused by default, at creation and at each delivery)",
  );
  for (const [flag, key, help] of SETTING_FLAGS) {
    const fallback = key === "maxConnections"
      ? `the file descriptor limit minus ${DESCRIPTOR_RESERVE}`
      : DEFAULT_SETTINGS[key];
    cmd.option(`${flag} <n>`, `${help} (default ${fallback})`);
  }
  cmd
    .addHelpText("after", SERVE_HELP)
    .action(async (_opts, command) => {
      const self = command as unknown as ServeCommand;
      // First: from now on SIGHUP is a reload, not the end of the process.
      const reloads = new EventTarget();
      const onHup = () => reloads.dispatchEvent(new Event("reload"));
      const ac = new AbortController();
      const onInt = () => ac.abort("SIGINT");
      const onTerm = () => ac.abort("SIGTERM");
      const hangups = Deno.build.os !== "windows";
      if (hangups) Deno.addSignalListener("SIGHUP", onHup);
      Deno.addSignalListener("SIGINT", onInt);
      Deno.addSignalListener("SIGTERM", onTerm);
      try {
        const config = self.opts().config;
        const configFile = typeof config === "string" && config !== "" ? config : undefined;
        const fileKeys = configFile !== undefined ? await applyConfigFile(self, configFile) : [];
        const v = readServeValues((attribute) => given(self, attribute, configFile));
        if (configFile !== undefined && v.worker === undefined) {
          const secrets = fileKeys.filter((k) => SECRET_KEYS.has(k));
          // lazy, as every lib/server module here
          const { readableByOthers } = await import("../server/tls.ts");
          if (secrets.length > 0 && readableByOthers(configFile)) {
            createLogger(v.logLevel)(
              "warn",
              "configuration file holds secrets and is readable by its group or everyone: " +
                "chmod 600 it",
              { config: configFile, keys: secrets.join(",") },
            );
          }
        }
        const trustedProxies = await trustedProxyValues(self.opts().trustedProxy);
        const scheme = v.tls ? "https" : "http";
        const onListen = ({ hostname, port }: { hostname: string; port: number }) =>
          console.log(`cfgtool listening on ${scheme}://${hostname}:${port}`);
        if (v.workers > 1) {
          // The parent checks the pair once, so a bad one fails here and not in every worker.
          if (v.tls) await (await import("../server/tls.ts")).readTlsPair(v.tls);
          // lazy: the parent of a group serves nothing itself
          const [{ serveWorkers }, { announceFirstRunOn }] = await Promise.all([
            import("../server/supervisor.ts"),
            import("../server/first_run.ts"),
          ]);
          const { args, env } = workerLaunch(self);
          const log = createLogger(v.logLevel);
          let firstRun: Promise<void> = Promise.resolve();
          await serveWorkers({
            workers: v.workers,
            hostname: v.hostname,
            port: v.port,
            args,
            env,
            reloads,
            log,
            signal: ac.signal,
            onListen: (addr) => {
              onListen(addr);
              // The parent, not a worker, so the group prints one first-run line.
              firstRun = announceFirstRunOn(
                { kv: v.kv, ...(v.tokenKeyFile ? { tokenKeyFile: v.tokenKeyFile } : {}) },
                {
                  scheme,
                  hostname: addr.hostname,
                  port: addr.port,
                  ...(v.publicUrl ? { publicUrl: v.publicUrl } : {}),
                },
                log,
                (line) => console.log(line),
              );
            },
          });
          await firstRun;
          return;
        }
        if (v.worker !== undefined) stopWhenStdinCloses(ac);
        // lazy: the whole service (hono, store, auth, flags, closures) loads only for serve
        const { serve } = await import("../server/serve.ts");
        await serve({
          kv: v.kv,
          ...(v.tokenKeyFile ? { tokenKeyFile: v.tokenKeyFile } : {}),
          hostname: v.hostname,
          port: v.port,
          settings: v.settings,
          ...(v.publicUrl ? { publicUrl: v.publicUrl } : {}),
          ...(v.smtpUrl ? { smtpUrl: v.smtpUrl } : {}),
          mailFrom: v.mailFrom,
          ...(v.tls ? { tls: v.tls } : {}),
          ...(v.metricsToken ? { metricsToken: v.metricsToken } : {}),
          ...(trustedProxies.length > 0 ? { trustedProxies } : {}),
          ...(configFile !== undefined ? { configFile } : {}),
          logLevel: v.logLevel,
          reloads,
          signal: ac.signal,
          onListen,
          ...(v.worker !== undefined
            ? { worker: v.worker }
            : { onFirstRun: (line: string) => console.log(line) }),
        });
      } finally {
        if (hangups) Deno.removeSignalListener("SIGHUP", onHup);
        Deno.removeSignalListener("SIGINT", onInt);
        Deno.removeSignalListener("SIGTERM", onTerm);
      }
    });
}

const SERVE_HELP = `
Configuration file: --config cfgtool.toml (or CFGTOOL_CONFIG) reads options from a
TOML file whose keys are the flags above without their leading --:
  port = 8443
  kv = "/var/lib/cfgtool/kv.sqlite3"
  head-poll-ms = 250
  workers = "auto"
Numbers are TOML integers (or strings, as on the command line); everything else is
a string; relative paths are relative to the current directory, as for the flags.
A flag on the command line wins over its environment variable (CFGTOOL_KV,
CFGTOOL_TOKEN_KEY_FILE, CFGTOOL_PUBLIC_URL, CFGTOOL_SMTP_URL,
CFGTOOL_METRICS_TOKEN), the variable over the file, the file over the default. An
unknown key or a value of the wrong type stops the start (exit 2), naming the
file, the line and the nearest known key.

First run: on a new installation's store (no tenant and no user yet) serve prints
one more line after its listening line: a one-time link that opens the web
console as the installation's operator, to create the first tenant (the link
\`cfgtool admin console-link\` makes: it works once, for 10 minutes). Only when
the link can be opened: the server listens on a loopback address, or
--public-url names its origin; elsewhere the line says how to make one. The
link is printed nowhere else, the log included; a store that is not new gets no
line. With --workers the line is printed once.

TLS: --tls-cert and --tls-key (PEM files, given together) make the service speak
HTTPS, HTTP/2 or HTTP/1.1 by ALPN; the listening line then says https://. On
SIGHUP it reads both files again: new connections get the new certificate, open
connections and event streams keep going on the old one, and a pair that does
not load is logged at error and the old pair stays. With --workers, SIGHUP to the
parent reaches every worker. Replace both files first, then send SIGHUP.

Logs: JSON lines on stderr; --log-level debug|info|warn|error drops the lines
below the level (debug adds connection errors such as failed TLS handshakes).

Store layout: the store records the version of its layout. At start serve
records it on a new store, refuses a store that a newer cfgtool migrated (exit 3:
run that cfgtool or a newer one), and migrates an older store before it listens,
in batches that resume after a restart, audited, by one process while the others
wait. Layouts never move back: back the store up (cfgtool admin backup) before an
upgrade. See docs/operations.md, Upgrading.

Audit retention: --audit-retention (default 400d) deletes audit entries, and
expired or revoked token records, older than it, in batches, every
--prune-interval-ms.

Webhooks: a tenant's webhooks deliver only to public addresses: a URL whose host
is, or resolves to, a loopback, private, link-local, CGNAT, multicast or cloud
metadata address is refused when the webhook is made and again at each delivery.
--webhook-allow-private lifts that (a receiver on this host or your network).
A failed delivery is retried after --webhook-retry-base-ms (5 s), then 6, 24,
120, 720 and 4320 times it (30 s … 6 h). See docs/webhooks.md.

Behind a load balancer: --trusted-proxy 10.0.0.0/8 (repeat it, or in the config
file one string: trusted-proxy = "10.0.0.0/8 127.0.0.1") names the proxies in
front of serve. Only a request whose connection comes from one of them may name
its client in X-Forwarded-For: the header is read from the right, trusted
proxies are skipped, and the first other address is the client; the per-IP
sign-in limits count it and each request log line shows it as client_ip.
Anyone else's X-Forwarded-For is ignored. Without the option the connection's
address is the client, whatever the headers say.

Metrics: GET /metrics answers loopback clients; with --metrics-token (better:
CFGTOOL_METRICS_TOKEN or the config file, which ps does not show) also any client
that sends Authorization: Bearer <token>. The token is never logged.

Connections: a client must send a complete request head (after the TLS handshake)
within --header-timeout-ms, and a whole request, head and body, within
--request-timeout-ms: a body still unread then is answered 408 request_timeout and
its connection closed (answers, event streams among them, are never cut). Idle
keep-alive connections close after --keepalive-timeout-ms, which also bounds the
head of a later request on them. At start the soft file descriptor limit is raised
to the hard limit (needs --allow-ffi under deno run) and logged; when descriptors
run out, new connections wait instead of failing the server.

Workers: --workers N starts N copies of this process as workers on the same port
(SO_REUSEPORT: the kernel spreads connections over them) and the same store, and
prints one listening line. Each worker is a full server with the same options
(secrets reach it through its environment, not its command line); pushes,
revocations, the stream limit per token and the client rate limit hold for all of
them through the store. SIGINT/SIGTERM stop every worker; a worker that dies is
restarted after 1 s, doubling to 30 s, and the group stops (exit 1) after five
failures in a row. Needs Linux, a store all processes share (a KV file or a KV
Connect URL, not :memory:), and under deno run --allow-run (workers run with
--unstable-net added).

Examples:
  cfgtool serve
  cfgtool serve --port 0 --kv :memory:
  cfgtool serve --hostname 0.0.0.0 --kv /var/lib/cfgtool/kv.sqlite3
  cfgtool serve --config /etc/cfgtool/cfgtool.toml
  cfgtool serve --port 8443 --tls-cert cert.pem --tls-key key.pem
  cfgtool serve --workers auto --kv /var/lib/cfgtool/kv.sqlite3
`;

/** What the action reads from and writes to its command. */
interface ServeCommand extends ConfigurableCommand {
  readonly options: readonly (OptionLike & { readonly envVar?: string | undefined })[];
  opts(): Record<string, string | boolean | undefined>;
}

/**
 * An option's value and where it was given, for messages: the flag, the
 * environment variable, or the key in the configuration file.
 */
function given(cmd: ServeCommand, attribute: string, configFile?: string): GivenValue {
  const option = cmd.options.find((o) => o.attributeName() === attribute);
  const flag = option?.long ?? `--${attribute}`;
  const raw = cmd.opts()[attribute];
  // a switch (--webhook-allow-private) reads as "true" when given
  const value = typeof raw === "string" ? raw : raw === true ? "true" : undefined;
  switch (cmd.getOptionValueSource(attribute)) {
    case "config":
      return { value, label: `${flag.slice(2)} in ${configFile}` };
    case "env":
      return { value, label: option?.envVar ?? flag };
    default:
      return { value, label: flag };
  }
}

/**
 * The `serve` flags and environment every worker of a group gets: each
 * option this process was given (on the command line, by a variable or by
 * the configuration file), bar the ones the parent handles itself; secrets
 * as their environment variables. The workers read no configuration file
 * (CFGTOOL_CONFIG is emptied): a worker started again later gets the values
 * the group started with.
 */
function workerLaunch(cmd: ServeCommand): { args: string[]; env: Record<string, string> } {
  const args: string[] = [];
  const env: Record<string, string> = { CFGTOOL_CONFIG: "" };
  const opts = cmd.opts();
  for (const option of cmd.options) {
    const flag = option.long;
    if (flag === undefined || PARENT_ONLY.has(flag)) continue;
    const attribute = option.attributeName();
    const value = opts[attribute];
    const source = cmd.getOptionValueSource(attribute);
    // Defaults are the workers' own defaults too; the store is named all the same.
    if (value === undefined || value === false || (source === "default" && flag !== "--kv")) {
      continue;
    }
    if (SECRET_FLAGS.has(flag) && option.envVar !== undefined) {
      env[option.envVar] = String(value);
    } else if (value === true) {
      args.push(flag);
    } else {
      args.push(flag, String(value));
    }
  }
  return { args, env };
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
