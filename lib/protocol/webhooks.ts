/**
 * Webhooks on the wire (docs/webhooks.md): what `/api/v1/tenants/{t}/webhooks`
 * takes and answers, what a delivery posts, the limits, the retry
 * schedule, and how a webhook's `events` patterns pick audit entries.
 * Shared by the server and the SDK.
 *
 * @module
 */

/** How a delivery's body is shaped: the signed JSON event, or a Slack incoming-webhook message. */
export type WebhookFormat = "standard" | "slack";

/** The formats, in order. */
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ["standard", "slack"];

/** Webhooks a tenant may have at most. */
export const MAX_WEBHOOKS_PER_TENANT = 20;

/** Longest webhook URL, characters (2 KiB). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Most `events` patterns a webhook may list. */
export const MAX_WEBHOOK_EVENTS = 50;

/** Most `namespaces` a webhook may list. */
export const MAX_WEBHOOK_NAMESPACES = 100;

/** Deliveries kept per webhook (older ones are pruned). */
export const MAX_WEBHOOK_DELIVERIES = 100;

/** A delivery attempt gives up after this long, ms. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * The delays before the retries of a failed delivery, as multiples of the
 * first (`serve --webhook-retry-base-ms`, 5 s by default): 5 s, 30 s,
 * 2 min, 10 min, 1 h, 6 h. After the last retry fails the delivery is
 * `failed`.
 */
export const WEBHOOK_RETRY_FACTORS: readonly number[] = [1, 6, 24, 120, 720, 4320];

/** The attempts a delivery gets at most: the first and one per retry. */
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_FACTORS.length + 1;

/** Where a delivery stands. */
export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

/** A webhook as every answer shows it: never its secret. */
export interface WebhookInfo {
  /** `whk_<ulid>` */
  id: string;
  tenant_slug: string;
  /** Where deliveries go (`http(s)://…`). */
  url: string;
  /** Audit entry types, `*` matching any run of characters (`manifest.*`, `*`). */
  events: string[];
  /** Only entries of these namespaces; null: every entry of the tenant. */
  namespaces: string[] | null;
  format: WebhookFormat;
  description: string | null;
  created_at: string;
  /** User id or token id of the creator. */
  created_by: string;
}

/** The body of `POST /api/v1/tenants/{t}/webhooks`. */
export interface CreateWebhookInput {
  url: string;
  events: string[];
  namespaces?: string[];
  format?: WebhookFormat;
  description?: string;
}

/** A new webhook and its signing secret (`whsec_…`), shown once. */
export interface IssuedWebhook {
  webhook: WebhookInfo;
  secret: string;
}

/** One attempt of a delivery. */
export interface WebhookAttempt {
  /** 1 for the first. */
  attempt: number;
  /** When it started (RFC 3339). */
  at: string;
  /** The receiver's status, or null when none came. */
  response_code: number | null;
  /** How long it took, ms (null when it was refused before connecting). */
  ms: number | null;
  /** Why it failed, or null. */
  error: string | null;
}

/** A delivery: one event to one webhook, with its attempts (newest last). */
export interface WebhookDeliveryInfo {
  /** `dlv_<ulid>`: the `webhook-id` header, the same on every attempt. */
  id: string;
  webhook_id: string;
  /** The audit entry's id (`webhook.test` events have their own). */
  event_id: string;
  event_type: string;
  /** Attempts made so far. */
  attempt: number;
  status: WebhookDeliveryStatus;
  /** The last attempt's status code, ms and error. */
  response_code: number | null;
  ms: number | null;
  error: string | null;
  /** When the delivery was made, or last attempted (RFC 3339). */
  at: string;
  /** When the next attempt is due, while `pending`. */
  next_attempt_at: string | null;
  attempts: WebhookAttempt[];
}

/**
 * The JSON body of a `standard` delivery (Standard Webhooks' `{type,
 * timestamp, data}`): the audit entry as `GET /api/v1/audit` shows it,
 * its tenant and namespace, and where to look at it in the console.
 */
export interface WebhookPayload {
  type: string;
  timestamp: string;
  data: {
    tenant: string;
    namespace: string | null;
    /** `<public url>/ui/t/<tenant>/ns/<ns>` (or the tenant's page); null without `--public-url`. */
    console_url: string | null;
    entry: Record<string, unknown>;
  };
}

/** The shape of an `events` pattern: lower-case words, dots, `_`, `-` and `*`. */
export const EVENT_PATTERN = /^[a-z*][a-z0-9_.*-]{0,63}$/;

/**
 * Whether an event type matches a pattern: `*` matches any run of
 * characters (dots included), everything else itself.
 *
 * @param pattern `manifest.*`, `*.deleted`, `*`, `token.created`
 * @param type an audit entry type
 * @returns true when it matches
 *
 * @example
 * ```ts
 * import { eventMatches } from "./webhooks.ts";
 * if (!eventMatches("manifest.*", "manifest.pushed") || eventMatches("manifest.*", "manifests")) {
 *   throw new Error();
 * }
 * if (!eventMatches("*", "tenant.deleted") || !eventMatches("*.deleted", "namespace.deleted")) throw new Error();
 * if (eventMatches("token.created", "token.created.x")) throw new Error();
 * ```
 */
export function eventMatches(pattern: string, type: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === type;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!type.startsWith(first) || type.length < first.length + last.length) return false;
  if (!type.endsWith(last)) return false;
  let at = first.length;
  const end = type.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = type.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * Whether a webhook hears of an entry: its type matches one of the
 * webhook's `events`, and, when the webhook names namespaces, the entry is
 * of one of them.
 *
 * @param webhook its `events` and `namespaces`
 * @param entry the entry's `type` and `namespace_slug`
 * @returns true when the entry is delivered to the webhook
 *
 * @example
 * ```ts
 * import { webhookHears } from "./webhooks.ts";
 * const hook = { events: ["manifest.*"], namespaces: ["web"] };
 * if (!webhookHears(hook, { type: "manifest.pushed", namespace_slug: "web" })) throw new Error();
 * if (webhookHears(hook, { type: "manifest.pushed", namespace_slug: "app" })) throw new Error();
 * if (webhookHears(hook, { type: "tenant.deleted", namespace_slug: null })) throw new Error();
 * ```
 */
export function webhookHears(
  webhook: { events: readonly string[]; namespaces: readonly string[] | null },
  entry: { type: string; namespace_slug: string | null },
): boolean {
  if (webhook.namespaces !== null) {
    if (entry.namespace_slug === null || !webhook.namespaces.includes(entry.namespace_slug)) {
      return false;
    }
  }
  return webhook.events.some((p) => eventMatches(p, entry.type));
}

/**
 * The delay before the attempt after attempt `attempt` failed, or null
 * when it was the last ({@linkcode WEBHOOK_RETRY_FACTORS}).
 *
 * @param attempt the attempt that failed (1 for the first)
 * @param baseMs the first retry's delay (default 5 s)
 * @returns the delay, ms, or null
 *
 * @example
 * ```ts
 * import { retryDelayMs } from "./webhooks.ts";
 * if (retryDelayMs(1) !== 5_000 || retryDelayMs(6) !== 6 * 60 * 60 * 1000) throw new Error();
 * if (retryDelayMs(7) !== null || retryDelayMs(2, 10) !== 60) throw new Error();
 * ```
 */
export function retryDelayMs(attempt: number, baseMs = 5_000): number | null {
  const factor = WEBHOOK_RETRY_FACTORS[attempt - 1];
  return factor === undefined ? null : factor * baseMs;
}
