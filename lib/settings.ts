/**
 * Tunable settings of the flag service, with their defaults. `cfgtool serve`
 * exposes each as a flag (lib/cli/serve.ts); tests pass small values.
 *
 * @module
 */

/** Every tunable of a running service. */
export interface ServiceSettings {
  /** Interval of the per-process head poller, ms (docs/events.md, "Several server processes"). */
  headPollMs: number;
  /** Largest serialized `version` event sent inline, bytes (default 64 KiB). */
  inlineEventLimitBytes: number;
  /** A delta with more file entries than this is sent as a snapshot (spec: 32). */
  deltaFileLimit: number;
  /** Keepalive comment interval on idle streams, ms (spec: at most 30 s). */
  keepaliveMs: number;
  /** Idle streams are closed after this long, ms (spec: 24 h). */
  idleCloseMs: number;
  /** Concurrent event-stream connections per token, installation-wide (spec: 16). */
  maxConnectionsPerToken: number;
  /**
   * Lease time of a process's share of the installation-wide stream counts,
   * ms: renewed every third of it while the process lives, so the streams of
   * a process that died stop counting after at most this long
   * (docs/operations.md, "Several processes on one host").
   */
  processLeaseMs: number;
  /** Closure reconstruction data is kept for at least this many days (spec: 30). */
  retentionDays: number;
  /** …and for at least this many versions per namespace (spec: 100). */
  retentionVersions: number;
  /** Interval of the retention pruning task, ms. */
  pruneIntervalMs: number;
  /**
   * The installation's audit-retention policy, ms (default 400 days): audit
   * entries, and expired or revoked token records, older than this are
   * deleted by the retention task (docs/operations.md, "Audit retention").
   */
  auditRetentionMs: number;
  /** namespace-client evaluations per minute per (tenant, namespace, environment, Origin). */
  clientRateLimitPerMinute: number;
  /** How often open streams re-check their credential (revocation, expiry), ms. */
  streamAuthCheckMs: number;
  /**
   * Interval of the per-process poll of the credential epoch key, ms: a
   * credential changed through another process stops working here within
   * about this long (docs/operations.md, "Credential cache").
   */
  credentialPollMs: number;
  /** Absolute lifetime of a signed-in session (browser and CLI), ms (default 12 h). */
  sessionTtlMs: number;
  /** A browser session ends after this long without a request, ms (default 2 h). */
  sessionIdleMs: number;
  /** A sign-in link or code sent by mail works this long, ms (default 15 min). */
  emailCodeTtlMs: number;
  /** A connection that sends no complete request head within this long is closed, ms. */
  headerTimeoutMs: number;
  /** A keep-alive connection with no request in flight is closed after this long, ms. */
  keepAliveTimeoutMs: number;
  /**
   * A request's head and body must arrive within this long, ms (default
   * 60 s: a 16 MiB manifest at about 2.2 Mbit/s); a body still unread then
   * is answered 408 and its connection closed (docs/operations.md,
   * "Connections").
   */
  requestTimeoutMs: number;
  /**
   * Open HTTP connections at most; more are closed as they arrive. 0: the
   * file-descriptor limit minus {@linkcode DESCRIPTOR_RESERVE}.
   */
  maxConnections: number;
  /**
   * The delay before a failed webhook delivery's first retry, ms (default
   * 5 s); the later retries wait 6, 24, 120, 720 and 4320 times it (30 s,
   * 2 min, 10 min, 1 h, 6 h), then the delivery is `failed`
   * (docs/webhooks.md).
   */
  webhookRetryBaseMs: number;
  /**
   * Let webhooks deliver to loopback, private, link-local and other
   * non-public addresses (`serve --webhook-allow-private`; default false:
   * refused at creation and at each delivery, docs/webhooks.md).
   */
  webhookAllowPrivate: boolean;
}

/** Descriptors kept free for the store, logs and files when `maxConnections` is 0. */
export const DESCRIPTOR_RESERVE = 64;

/** The defaults, as the specs give them. */
export const DEFAULT_SETTINGS: Readonly<ServiceSettings> = Object.freeze({
  headPollMs: 250,
  inlineEventLimitBytes: 64 * 1024,
  deltaFileLimit: 32,
  keepaliveMs: 25_000,
  idleCloseMs: 24 * 60 * 60 * 1000,
  maxConnectionsPerToken: 16,
  processLeaseMs: 10_000,
  retentionDays: 30,
  retentionVersions: 100,
  pruneIntervalMs: 60 * 60 * 1000,
  auditRetentionMs: 400 * 24 * 60 * 60 * 1000,
  clientRateLimitPerMinute: 600,
  streamAuthCheckMs: 5000,
  credentialPollMs: 25,
  sessionTtlMs: 12 * 60 * 60 * 1000,
  sessionIdleMs: 2 * 60 * 60 * 1000,
  emailCodeTtlMs: 15 * 60 * 1000,
  headerTimeoutMs: 10_000,
  keepAliveTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  maxConnections: 0,
  webhookRetryBaseMs: 5_000,
  webhookAllowPrivate: false,
});

/**
 * Fills unset settings with the defaults.
 *
 * @example
 * ```ts
 * import { resolveSettings } from "./settings.ts";
 * const s = resolveSettings({ deltaFileLimit: 4, webhookAllowPrivate: true });
 * if (s.deltaFileLimit !== 4 || s.headPollMs !== 250 || !s.webhookAllowPrivate) throw new Error();
 * ```
 */
export function resolveSettings(partial: Partial<ServiceSettings> = {}): ServiceSettings {
  const out = { ...DEFAULT_SETTINGS };
  for (const [k, v] of Object.entries(partial)) {
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}
