/**
 * The checks of `cfgtool serve`'s option values, wherever each came from:
 * the command line, an environment variable or the configuration file
 * (lib/cli/serve_config.ts). A bad value is a {@linkcode UsageError} that
 * names where it was given: `--port must be …` for a flag,
 * `port in /etc/cfgtool/cfgtool.toml must be …` for a key of the file,
 * `CFGTOOL_PUBLIC_URL must be …` for a variable.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import { parseDuration } from "./duration.ts";

/** The shortest `--audit-retention`: one day. */
export const MIN_AUDIT_RETENTION_MS = 86_400_000;

/** One option's value as given, and how to name where it was given. */
export interface GivenValue {
  /** The value (a string, as commander holds it), or undefined when not given. */
  value: string | undefined;
  /** `--port`, `port in cfgtool.toml`, `CFGTOOL_KV`. */
  label: string;
}

/** Looks up an option's value by its attribute name (`headPollMs`). */
export type GivenValues = (attribute: string) => GivenValue;

/** The settings that are numbers (every tunable but the switches). */
export type NumericSetting = {
  [K in keyof ServiceSettings]: ServiceSettings[K] extends number ? K : never;
}[keyof ServiceSettings];

/** `serve`'s tunables: the flag, the setting it sets, and its help (lib/settings.ts). */
export const SETTING_FLAGS: readonly [
  flag: string,
  key: NumericSetting,
  help: string,
][] = [
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
    "--request-timeout-ms",
    "requestTimeoutMs",
    "a request's head and body must arrive within this long, or it is answered 408 and " +
    "its connection closed; responses (event streams) are not limited, ms",
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
  [
    "--webhook-retry-base-ms",
    "webhookRetryBaseMs",
    "a failed webhook delivery is retried after this long, then 6, 24, 120, 720 and 4320 " +
    "times it, ms",
  ],
];

/**
 * commander's attribute name of a long flag: `--head-poll-ms` → `headPollMs`.
 *
 * @param flag a long flag
 * @returns its attribute name
 *
 * @example
 * ```ts
 * import { attributeOf } from "./serve_values.ts";
 * if (attributeOf("--head-poll-ms") !== "headPollMs") throw new Error();
 * ```
 */
export function attributeOf(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Everything `serve` was told, checked. */
export interface ServeValues {
  /** Port, 0 to 65535. */
  port: number;
  /** Listening address. */
  hostname: string;
  /** KV location. */
  kv: string;
  /** HMAC key file, when given. */
  tokenKeyFile?: string;
  /** Worker processes (1: this process serves). */
  workers: number;
  /** This process's index in a worker group. */
  worker?: number;
  /** Public origin. */
  publicUrl?: string;
  /** SMTP URL (may hold a password). */
  smtpUrl?: string;
  /** From address of sign-in mail. */
  mailFrom: string;
  /** Tunables given. */
  settings: Partial<ServiceSettings>;
  /** TLS pair paths, when given. */
  tls?: { certFile: string; keyFile: string };
  /** Least severe level logged. */
  logLevel: LogLevel;
  /** Bearer token for `GET /metrics` from other addresses. */
  metricsToken?: string;
}

/** The From address of sign-in mail when `--mail-from` is not given. */
export const DEFAULT_MAIL_FROM = "cfgtool <no-reply@localhost>";

/**
 * Checks every `serve` value and returns them typed (see the module
 * documentation for how errors name a value).
 *
 * @param given each option's value and label, by attribute name
 * @returns the checked values
 * @throws {UsageError} for the first bad value
 *
 * @example
 * ```ts
 * import { readServeValues } from "./serve_values.ts";
 * const given: Record<string, string> = { port: "9090", kv: ":memory:", headPollMs: "100" };
 * const v = readServeValues((a) => ({ value: given[a], label: `--${a}` }));
 * if (v.port !== 9090 || v.settings.headPollMs !== 100 || v.logLevel !== "info") throw new Error();
 * try {
 *   readServeValues((a) => ({ value: a === "port" ? "99999" : given[a], label: `port in x.toml` }));
 *   throw new Error("accepted port 99999");
 * } catch (err) {
 *   if (!String(err).includes('port in x.toml must be an integer from 0 to 65535, not "99999"')) throw err;
 * }
 * ```
 */
export function readServeValues(given: GivenValues): ServeValues {
  const port = given("port");
  const portNumber = Number(port.value ?? "8080");
  if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) {
    throw new UsageError(
      `${port.label} must be an integer from 0 to 65535, not "${port.value}"`,
    );
  }
  const kv = given("kv").value ?? "./cfgtool-data/kv.sqlite3";
  const workers = workerCount(given("workers"));
  if (workers > 1 && kv === ":memory:") {
    throw new UsageError(
      "--workers above 1 needs a store the processes share: each would have its own " +
        "`:memory:` KV; use a KV file or a KV Connect URL",
    );
  }
  const settings: Partial<ServiceSettings> = {};
  for (const [flag, key] of SETTING_FLAGS) {
    const { value, label } = given(attributeOf(flag));
    if (value === undefined) continue;
    if (!/^\d{1,12}$/.test(value) || Number(value) <= 0) {
      throw new UsageError(`${label} must be a positive integer, not "${value}"`);
    }
    settings[key] = Number(value);
  }
  const retention = given("auditRetention");
  if (retention.value !== undefined) {
    settings.auditRetentionMs = parseDuration(retention.value, retention.label);
    if (settings.auditRetentionMs < MIN_AUDIT_RETENTION_MS) {
      // a retention of seconds would erase the audit trail as it is written
      throw new UsageError(
        `${retention.label} must be at least 1d (one day), not "${retention.value}"`,
      );
    }
  }
  if (given("webhookAllowPrivate").value === "true") settings.webhookAllowPrivate = true;
  const publicUrl = nonEmpty(given("publicUrl"));
  const smtpUrl = nonEmpty(given("smtpUrl"));
  const tokenKeyFile = given("tokenKeyFile").value || undefined;
  const worker = given("workerIndex").value;
  const tls = tlsPaths(given("tlsCert"), given("tlsKey"));
  const metricsToken = nonEmpty(given("metricsToken"));
  return {
    port: portNumber,
    hostname: given("hostname").value ?? "127.0.0.1",
    kv,
    workers,
    ...(tokenKeyFile ? { tokenKeyFile } : {}),
    ...(worker !== undefined ? { worker: Number(worker) } : {}),
    ...(publicUrl ? { publicUrl: publicOrigin(publicUrl) } : {}),
    ...(smtpUrl ? { smtpUrl: checkSmtpUrl(smtpUrl) } : {}),
    mailFrom: given("mailFrom").value ?? DEFAULT_MAIL_FROM,
    settings,
    ...(tls ? { tls } : {}),
    logLevel: logLevel(given("logLevel")),
    ...(metricsToken ? { metricsToken: checkMetricsToken(metricsToken) } : {}),
  };
}

/** A given, non-empty value (an empty environment variable counts as unset). */
function nonEmpty(given: GivenValue): GivenValue | undefined {
  return given.value === undefined || given.value === "" ? undefined : given;
}

/** `--workers`: a positive integer, or `auto` for the number of cores. */
function workerCount({ value = "1", label }: GivenValue): number {
  if (value === "auto") return Math.max(1, navigator.hardwareConcurrency);
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1) {
    throw new UsageError(`${label} must be a positive integer or auto, not "${value}"`);
  }
  return Number(value);
}

function tlsPaths(
  cert: GivenValue,
  key: GivenValue,
): { certFile: string; keyFile: string } | undefined {
  const c = nonEmpty(cert);
  const k = nonEmpty(key);
  if (c === undefined && k === undefined) return undefined;
  if (c === undefined || k === undefined) {
    const has = (c ?? k)!.label;
    throw new UsageError(
      `${has} needs its pair: give --tls-cert (the certificate chain) and --tls-key ` +
        "(its private key) together, or neither",
    );
  }
  return { certFile: c.value!, keyFile: k.value! };
}

function logLevel({ value = "info", label }: GivenValue): LogLevel {
  if (isLogLevel(value)) return value;
  throw new UsageError(`${label} must be one of ${LOG_LEVELS.join(", ")}, not "${value}"`);
}

/** `--metrics-token`: it goes in an `Authorization: Bearer` header, so visible ASCII only. Never echoed. */
function checkMetricsToken({ value, label }: GivenValue): string {
  if (!/^[\x21-\x7e]+$/.test(value!)) {
    throw new UsageError(
      `${label} must be printable ASCII without spaces (it is sent as a Bearer token)`,
    );
  }
  return value!;
}

/** `--smtp-url`: an smtp: or smtps: URL with a host. Messages never echo it (it may hold a password). */
function checkSmtpUrl({ value, label }: GivenValue): string {
  let url: URL | undefined;
  try {
    url = new URL(value!);
  } catch {
    // reported below
  }
  if (
    url === undefined || (url.protocol !== "smtp:" && url.protocol !== "smtps:") || !url.hostname
  ) {
    throw new UsageError(`${label} must be smtp://[user:password@]host[:port] or smtps://…`);
  }
  return value!;
}

function publicOrigin({ value, label }: GivenValue): string {
  let url: URL;
  try {
    url = new URL(value!);
  } catch {
    throw new UsageError(`${label} must be an absolute http(s) URL, not "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${label} must be an http(s) URL, not "${value}"`);
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
    throw new UsageError(
      `${label} must be an origin (scheme://host[:port]) without a path: the service ` +
        `answers at the root of its origin, not "${value}"`,
    );
  }
  return url.origin;
}
