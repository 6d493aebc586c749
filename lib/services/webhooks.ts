/**
 * A tenant's webhooks (docs/webhooks.md): creating, listing, reading,
 * deleting and testing them, their deliveries, and the two queue handlers
 * that deliver (lib/services/queue_work.ts registers them).
 *
 * Who: a tenant admin (a person, or a `tenant-admin` token) of the tenant,
 * or a superadmin; everyone else is refused (403) before the tenant, the
 * webhook or the body is looked at, and nothing is written.
 *
 * How an event travels: every audit entry of a tenant is queued with the
 * change it records (lib/store/audit.ts). The `audit` handler
 * ({@linkcode handleAuditMessage}) finds the tenant's webhooks whose
 * `events` and `namespaces` match, and for each records a pending delivery
 * and queues its first attempt, in one commit that checks that no delivery
 * was made for (entry, webhook) yet: an entry handed over twice makes one
 * delivery. The `webhook.deliver` handler ({@linkcode handleDeliverMessage})
 * makes one attempt (a signed POST, 10 s at most; a 2xx answer delivers)
 * and records it with the next attempt's message in one commit checked
 * against the delivery as read, skipping an attempt already recorded:
 * retries after 5 s, 30 s, 2 min, 10 min, 1 h and 6 h (multiples of
 * `--webhook-retry-base-ms`), then `failed`.
 *
 * Where: only public addresses (lib/net/public_address.ts), checked when
 * the webhook is made (400) and again at each attempt, which connects to
 * the address it checked (lib/net/pinned_post.ts) and follows no redirect;
 * `serve --webhook-allow-private` lifts the rule.
 *
 * Secrets: `whsec_` and 32 random bytes in base64, shown once, stored
 * sealed (lib/auth/sealing.ts), never logged. Audit entries and logs name a
 * webhook's URL by its origin only (the path of a Slack URL is a secret).
 *
 * @module
 */
import { base64 } from "base";
import { Webhook } from "webhooks-signing";
import type { RequestContext } from "../auth/deps.ts";
import { authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { seal, SealError, sealingKey, unseal, WEBHOOK_SECRET_SEAL } from "../auth/sealing.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../errors.ts";
import type { Logger } from "../log.ts";
import {
  checkDestination,
  RefusedDestination,
  type Resolver,
  UnresolvedDestination,
} from "../net/public_address.ts";
import { pinnedPost } from "../net/pinned_post.ts";
import { checkLength, MAX_DESCRIPTION_LENGTH } from "../protocol/limits.ts";
import { SLUG_PATTERN } from "../protocol/slug.ts";
import {
  EVENT_PATTERN,
  MAX_WEBHOOK_EVENTS,
  MAX_WEBHOOK_NAMESPACES,
  MAX_WEBHOOK_URL_LENGTH,
  MAX_WEBHOOKS_PER_TENANT,
  retryDelayMs,
  WEBHOOK_FORMATS,
  WEBHOOK_TIMEOUT_MS,
  type WebhookAttempt,
  type WebhookDeliveryInfo,
  type WebhookFormat,
  webhookHears,
  type WebhookInfo,
  type WebhookPayload,
} from "../protocol/webhooks.ts";
import type { ServiceSettings } from "../settings.ts";
import {
  AUDIT_EVENT_TYPES,
  type AuditEntry,
  eventAuditEntry,
  INSTALLATION_EVENT_TYPES,
} from "../store/audit.ts";
import { listNamespaces } from "../store/namespaces.ts";
import type { QueueMessage } from "../store/queue.ts";
import { getTenant } from "../store/tenants.ts";
import { ulid } from "../store/ulid.ts";
import {
  addWebhook,
  type DeliverMessage,
  type DeliveryRecord,
  getDeliveryEntry,
  getWebhookEntry,
  listDeliveries,
  liveWebhookEntries,
  liveWebhooks,
  pruneDeliveries,
  purgeTenantWebhooks,
  recordDelivery,
  removeWebhook,
  saveAttempt,
  WEBHOOK_DELIVER,
  type WebhookRecord,
} from "../store/webhooks.ts";
import { didYouMean } from "../suggest.ts";
import { withSpan } from "../telemetry/spans.ts";
import { VERSION } from "../version.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";

export type { IssuedWebhook, WebhookDeliveryInfo, WebhookInfo } from "../protocol/webhooks.ts";
export { WEBHOOK_DELIVER, WEBHOOK_FORMATS };

/**
 * What the webhook operations are given: the service deps, and from the
 * server (its `AppDeps` has them) the settings, the public URL (console
 * links in payloads) and the logger.
 */
export interface WebhookDeps extends ServiceDeps {
  /** `webhookAllowPrivate` and `webhookRetryBaseMs` (defaults: false, 5 s). */
  settings?: Partial<Pick<ServiceSettings, "webhookAllowPrivate" | "webhookRetryBaseMs">>;
  /** The service's public origin, for the console links of payloads. */
  publicUrl?: string;
  /** Where deliveries are logged (never a secret, a URL by its origin only). */
  log?: Logger;
  /** For tests: where names are looked up, and certificates to trust besides the system's. */
  webhookNet?: { resolve?: Resolver; caCerts?: string[] };
}

/** Event types a webhook may name besides the audit log's. */
const WEBHOOK_EVENT_TYPES = ["webhook.created", "webhook.deleted", "webhook.test"];

/** The event a test sends. */
const TEST_EVENT = "webhook.test";

const WEBHOOK_ID = /^whk_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The fields a creation body may have. */
const CREATE_FIELDS = new Set(["url", "events", "namespaces", "format", "description"]);

// ---- who may ----------------------------------------------------------------

/**
 * Refuses (403) everyone but a tenant admin of `tenant` (human or token)
 * and a superadmin: first the checks of reading the tenant (a token bound
 * elsewhere, a namespace-client token, a person of another tenant), then
 * `webhook.manage`.
 */
async function authorizeManage(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
): Promise<void> {
  await authorize(deps.kv, principal, "tenant.read", { tenant }, { memo: memoOf(deps) });
  if (!await can(deps.kv, principal, "webhook.manage", { tenant }, { memo: memoOf(deps) })) {
    throw new ForbiddenError(
      `Only a tenant admin of ${tenant} (a person, or a tenant-admin token) or a superadmin ` +
        "can manage its webhooks",
    );
  }
}

/** 404 for a webhook id that names no webhook of the tenant (of any shape). */
function noSuchWebhook(tenant: string, id: string): NotFoundError {
  const shown = id.length > 40 ? `${id.slice(0, 40)}…` : id;
  return new NotFoundError("webhook_not_found", `No webhook ${shown} in tenant ${tenant}`);
}

/** The tenant's webhook `id`, with its versionstamp; 404 when there is none. */
async function webhookEntryOf(
  deps: ServiceDeps,
  tenant: string,
  id: string,
): Promise<Deno.KvEntry<WebhookRecord>> {
  if (!WEBHOOK_ID.test(id)) throw noSuchWebhook(tenant, id);
  const entry = await getWebhookEntry(deps.kv, tenant, id);
  if (entry.value === null) throw noSuchWebhook(tenant, id);
  return entry as Deno.KvEntry<WebhookRecord>;
}

// ---- shapes -----------------------------------------------------------------

/**
 * A webhook as answers show it: the record without its sealed secret.
 *
 * @param record the stored webhook
 * @returns the public fields
 *
 * @example
 * ```ts
 * import { publicWebhook } from "./webhooks.ts";
 * const shown = publicWebhook({ id: "whk_1", tenant_slug: "acme", url: "https://x.test/h",
 *   events: ["*"], namespaces: null, format: "standard", description: null,
 *   sealed_secret: "s", created_at: "2030-01-01T00:00:00.000Z", created_by: "usr_1" });
 * if ("sealed_secret" in shown || shown.url !== "https://x.test/h") throw new Error();
 * ```
 */
export function publicWebhook(record: WebhookRecord): WebhookInfo {
  const { sealed_secret: _, ...rest } = record;
  return rest;
}

/**
 * A delivery as answers show it: its last attempt's outcome on top, every
 * attempt below, never the event's body.
 *
 * @param d the stored delivery
 * @returns the public fields
 *
 * @example
 * ```ts
 * import { publicDelivery } from "./webhooks.ts";
 * const shown = publicDelivery({ id: "dlv_1", webhook_id: "whk_1", tenant_slug: "acme",
 *   event_id: "01", event_type: "manifest.pushed", status: "delivered", next_attempt_at: null,
 *   created_at: "2030-01-01T00:00:00.000Z", entry: {},
 *   attempts: [{ attempt: 1, at: "2030-01-01T00:00:01.000Z", response_code: 204, ms: 12, error: null }] });
 * if (shown.attempt !== 1 || shown.response_code !== 204 || "entry" in shown) throw new Error();
 * ```
 */
export function publicDelivery(d: DeliveryRecord): WebhookDeliveryInfo {
  const last = d.attempts.at(-1);
  return {
    id: d.id,
    webhook_id: d.webhook_id,
    event_id: d.event_id,
    event_type: d.event_type,
    attempt: d.attempts.length,
    status: d.status,
    response_code: last?.response_code ?? null,
    ms: last?.ms ?? null,
    error: last?.error ?? null,
    at: last?.at ?? d.created_at,
    next_attempt_at: d.next_attempt_at,
    attempts: d.attempts,
  };
}

/** A URL as logs and audit entries name it: its origin (a path may hold a secret). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

// ---- input ------------------------------------------------------------------

/** A creation body, checked. */
interface WebhookSpec {
  url: URL;
  events: string[];
  namespaces: string[] | null;
  format: WebhookFormat;
  description: string | null;
}

const bad = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  new InvalidRequestError(message, { details: { field, ...extra } });

/**
 * Checks a creation body (400 naming the field): `url` an absolute
 * `http(s)` URL of at most 2 KiB without credentials or fragment; `events`
 * 1 to 50 patterns, each a known event type or a pattern with `*`;
 * `namespaces` (optional) 1 to 100 namespaces of the tenant; `format`
 * `standard` or `slack`; `description` at most 1,024 characters.
 *
 * @param body the parsed JSON body
 * @param namespaces the tenant's namespaces
 * @returns the checked input
 *
 * @example
 * ```ts
 * import { parseWebhookInput } from "./webhooks.ts";
 * const spec = parseWebhookInput({ url: "https://hooks.example.com/x", events: ["manifest.*"] }, []);
 * if (spec.format !== "standard" || spec.namespaces !== null) throw new Error();
 * let field = "";
 * try { parseWebhookInput({ url: "ftp://x", events: ["*"] }, []); }
 * catch (e) { field = String((e as { details: { field: string } }).details.field); }
 * if (field !== "url") throw new Error(field);
 * ```
 */
export function parseWebhookInput(body: unknown, namespaces: readonly string[]): WebhookSpec {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequestError("The body must be a JSON object");
  }
  const raw = body as Record<string, unknown>;
  for (const field of Object.keys(raw)) {
    if (!CREATE_FIELDS.has(field)) {
      throw bad(
        field,
        `Unknown field ${JSON.stringify(field.slice(0, 40))}: a webhook has ` +
          `${[...CREATE_FIELDS].join(", ")}`,
      );
    }
  }
  return {
    url: parseUrl(raw.url),
    events: parseEvents(raw.events),
    namespaces: parseNamespaces(raw.namespaces, namespaces),
    format: parseFormat(raw.format),
    description: parseDescription(raw.description),
  };
}

function parseUrl(value: unknown): URL {
  if (typeof value !== "string" || value === "") {
    throw bad("url", "url is required: the http(s) URL deliveries are posted to");
  }
  if (value.length > MAX_WEBHOOK_URL_LENGTH) {
    throw bad("url", `url is ${value.length} characters long; the limit is 2048`, {
      limit: MAX_WEBHOOK_URL_LENGTH,
    });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad("url", "url must be an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw bad("url", `url must be http:// or https://, not ${url.protocol}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw bad("url", "url must not hold a user name or password: receivers check the signature");
  }
  if (url.hash !== "") throw bad("url", "url must not have a #fragment (it is never sent)");
  return url;
}

/** Every event type a webhook may name exactly. */
function knownEvents(): string[] {
  return [...AUDIT_EVENT_TYPES, ...WEBHOOK_EVENT_TYPES].filter((t) =>
    t !== "token.authenticated" && !INSTALLATION_EVENT_TYPES.includes(t)
  );
}

function parseEvents(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw bad(
      "events",
      'events is required: a list of event types, * matching any run of characters ("manifest.*", "*")',
    );
  }
  if (value.length > MAX_WEBHOOK_EVENTS) {
    throw bad("events", `events lists ${value.length} patterns; the limit is 50`);
  }
  const known = knownEvents();
  const out: string[] = [];
  for (const p of value) {
    if (typeof p !== "string" || !EVENT_PATTERN.test(p)) {
      throw bad(
        "events",
        `events: ${
          JSON.stringify(typeof p === "string" ? p.slice(0, 64) : p)
        } is not an event type or pattern (lower-case words and dots, * for any run of characters)`,
      );
    }
    if (p === "token.authenticated") {
      throw bad("events", "events: token.authenticated entries are never sent to webhooks");
    }
    if (!p.includes("*") && !known.includes(p)) {
      const hint = didYouMean(p, known);
      throw bad("events", `events: unknown event type ${JSON.stringify(p)}${hint}`);
    }
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

function parseNamespaces(value: unknown, known: readonly string[]): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0) {
    throw bad(
      "namespaces",
      "namespaces must be a non-empty list of namespace slugs (leave it out for all)",
    );
  }
  if (value.length > MAX_WEBHOOK_NAMESPACES) {
    throw bad("namespaces", `namespaces lists ${value.length}; the limit is 100`);
  }
  const out: string[] = [];
  for (const ns of value) {
    if (typeof ns !== "string" || !SLUG_PATTERN.test(ns)) {
      throw bad("namespaces", `namespaces: ${JSON.stringify(ns)} is not a namespace slug`);
    }
    if (!known.includes(ns)) {
      throw bad(
        "namespaces",
        `namespaces: the tenant has no namespace ${ns}${didYouMean(ns, known)}`,
      );
    }
    if (!out.includes(ns)) out.push(ns);
  }
  return out;
}

function parseFormat(value: unknown): WebhookFormat {
  if (value === undefined || value === null) return "standard";
  if (typeof value !== "string" || !(WEBHOOK_FORMATS as readonly string[]).includes(value)) {
    throw bad("format", `format must be one of ${WEBHOOK_FORMATS.join(", ")}`);
  }
  return value as WebhookFormat;
}

function parseDescription(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw bad("description", "description must be a string");
  checkLength("description", value, MAX_DESCRIPTION_LENGTH);
  return value;
}

/** The settings of `deps`, with their defaults. */
function settingsOf(deps: WebhookDeps): { allowPrivate: boolean; retryBaseMs: number } {
  return {
    allowPrivate: deps.settings?.webhookAllowPrivate ?? false,
    retryBaseMs: deps.settings?.webhookRetryBaseMs ?? 5_000,
  };
}

/** The destination rule at creation: a 400 naming why a URL is refused. */
async function checkUrlAtCreation(deps: WebhookDeps, url: URL): Promise<void> {
  try {
    await checkDestination(url, {
      allowPrivate: settingsOf(deps).allowPrivate,
      ...(deps.webhookNet?.resolve ? { resolve: deps.webhookNet.resolve } : {}),
    });
  } catch (err) {
    if (err instanceof RefusedDestination) {
      throw bad(
        "url",
        `Cannot deliver to ${url.host}: ${err.message}. Webhooks deliver only to public ` +
          "addresses (the server's operator may allow private ones with " +
          "--webhook-allow-private)",
        { reason: "private_address" },
      );
    }
    if (err instanceof UnresolvedDestination) {
      throw bad("url", `Cannot deliver to ${url.host}: ${err.message}`, { reason: "unresolved" });
    }
    throw err;
  }
}

// ---- operations -------------------------------------------------------------

/**
 * Creates a webhook (`POST /api/v1/tenants/{t}/webhooks`): 403 for anyone
 * but a tenant admin or a superadmin, 404 `tenant_not_found`, 400 for a bad
 * body (read only once authorised), a destination that is not public, or
 * a tenant that has 20 webhooks already; audited `webhook.created`.
 * Returns the secret, shown this once.
 *
 * @param deps store, key, runtime, settings
 * @param principal the caller
 * @param tenant the tenant slug
 * @param body the JSON body, read only once authorised
 * @param ctx the request
 * @returns the webhook and its `whsec_…` secret
 *
 * @example
 * ```ts
 * import { createWebhook, listWebhooks } from "./webhooks.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime };
 * const made = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["manifest.*"] }, { requestId: "r1" });
 * if (!made.secret.startsWith("whsec_")) throw new Error();
 * if ((await listWebhooks(deps, admin, "acme"))[0]?.id !== made.webhook.id) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function createWebhook(
  deps: WebhookDeps,
  principal: Principal,
  tenant: string,
  body: Deferred<unknown>,
  ctx: RequestContext,
): Promise<{ webhook: WebhookInfo; secret: string }> {
  return withSpan("cfgtool.service.create_webhook", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    const { created_at: tenantSince } = await getTenant(deps.kv, tenant);
    const namespaces = (await listNamespaces(deps.kv, tenant)).map((n) => n.slug);
    const spec = parseWebhookInput(await resolveInput(body), namespaces);
    await checkUrlAtCreation(deps, spec.url);
    // never older than its tenant (a clock behind the one that made the tenant): it would not count
    const now = new Date(Math.max(clockOf(deps)().getTime(), Date.parse(tenantSince)));
    const secret = `whsec_${base64.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
    const record: WebhookRecord = {
      id: `whk_${ulid(now.getTime())}`,
      tenant_slug: tenant,
      url: spec.url.href,
      events: spec.events,
      namespaces: spec.namespaces,
      format: spec.format,
      description: spec.description,
      sealed_secret: await seal(await sealingKey(deps.key, WEBHOOK_SECRET_SEAL), secret),
      created_at: now.toISOString(),
      created_by: principalId(principal),
    };
    const audit = eventAuditEntry("webhook.created", actorOf(principal, ctx.requestId), now, {
      tenant_slug: tenant,
      details: auditDetails(record),
    });
    const { added, count } = await addWebhook(deps.kv, record, audit, MAX_WEBHOOKS_PER_TENANT);
    if (!added) {
      throw new InvalidRequestError(
        `Tenant ${tenant} has ${count} webhooks, the most it may have: delete one first`,
        { details: { limit: MAX_WEBHOOKS_PER_TENANT } },
      );
    }
    return { webhook: publicWebhook(record), secret };
  });
}

/** What a `webhook.created` or `webhook.deleted` entry says: never the URL's path or the secret. */
function auditDetails(record: WebhookRecord): Record<string, unknown> {
  return {
    webhook_id: record.id,
    url_origin: originOf(record.url),
    events: record.events,
    namespaces: record.namespaces,
    format: record.format,
  };
}

/**
 * Lists a tenant's webhooks, oldest first (`GET …/webhooks`), never their
 * secrets: 403 for anyone but a tenant admin or a superadmin, 404
 * `tenant_not_found`.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @returns the webhooks
 *
 * @example
 * ```ts
 * import { listWebhooks } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * const code = await listWebhooks({ kv, key: null as never, runtime: null as never }, p, "acme")
 *   .catch((e: { code: string }) => e.code);
 * if (code !== "forbidden") throw new Error(String(code));
 * kv.close();
 * ```
 */
export function listWebhooks(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
): Promise<WebhookInfo[]> {
  return withSpan("cfgtool.service.list_webhooks", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    const live = await liveWebhooks(deps.kv, tenant);
    if (live.tenant === null) await getTenant(deps.kv, tenant); // 404
    return live.webhooks.map(publicWebhook);
  });
}

/**
 * Reads one webhook (`GET …/webhooks/{id}`): 403 as {@linkcode listWebhooks},
 * 404 `webhook_not_found`.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @param id the webhook id
 * @returns the webhook
 *
 * @example
 * ```ts
 * import { createWebhook, getWebhook } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime: null as never };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["*"] }, { requestId: "r1" });
 * if ((await getWebhook(deps, admin, "acme", webhook.id)).url !== "https://93.184.216.34/hooks") {
 *   throw new Error();
 * }
 * const code = await getWebhook(deps, admin, "acme", "whk_nope").catch((e) => e.code);
 * if (code !== "webhook_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export function getWebhook(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  id: string,
): Promise<WebhookInfo> {
  return withSpan("cfgtool.service.get_webhook", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    return publicWebhook((await webhookEntryOf(deps, tenant, id)).value);
  });
}

/**
 * Deletes a webhook and its deliveries (`DELETE …/webhooks/{id}`); audited
 * `webhook.deleted`. Deliveries queued for it are dropped. 403 as
 * {@linkcode listWebhooks}, 404 `webhook_not_found`.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @param id the webhook id
 * @param ctx the request
 * @returns the deleted webhook
 *
 * @example
 * ```ts
 * import { createWebhook, deleteWebhook, listWebhooks } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime: null as never };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["*"] }, { requestId: "r1" });
 * await deleteWebhook(deps, admin, "acme", webhook.id, { requestId: "r1" });
 * if ((await listWebhooks(deps, admin, "acme")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function deleteWebhook(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  id: string,
  ctx: RequestContext,
): Promise<WebhookInfo> {
  return withSpan("cfgtool.service.delete_webhook", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    if (!WEBHOOK_ID.test(id)) throw noSuchWebhook(tenant, id);
    const now = clockOf(deps)();
    const gone = await removeWebhook(
      deps.kv,
      tenant,
      id,
      (record) =>
        eventAuditEntry("webhook.deleted", actorOf(principal, ctx.requestId), now, {
          tenant_slug: tenant,
          details: auditDetails(record),
        }),
    );
    if (gone === null) throw noSuchWebhook(tenant, id);
    return publicWebhook(gone);
  });
}

/**
 * A webhook's newest deliveries, newest first (`GET …/{id}/deliveries`,
 * the last 100). 403 as {@linkcode listWebhooks}, 404 `webhook_not_found`.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @param id the webhook id
 * @returns the deliveries
 *
 * @example
 * ```ts
 * import { createWebhook, listWebhookDeliveries } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime: null as never };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["*"] }, { requestId: "r1" });
 * if ((await listWebhookDeliveries(deps, admin, "acme", webhook.id)).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function listWebhookDeliveries(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  id: string,
): Promise<WebhookDeliveryInfo[]> {
  return withSpan("cfgtool.service.webhook_deliveries", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    await webhookEntryOf(deps, tenant, id);
    return (await listDeliveries(deps.kv, tenant, id)).map(publicDelivery);
  });
}

/** What the console's page of a tenant's webhooks shows. */
export interface TenantWebhooks {
  webhooks: WebhookInfo[];
  /** The tenant's namespaces (the creation form's choices). */
  namespaces: string[];
}

/**
 * The console's page of a tenant's webhooks: the webhooks and the tenant's
 * namespaces. 403 as {@linkcode listWebhooks}.
 *
 * @param deps store
 * @param principal the person
 * @param tenant the tenant slug
 * @returns the webhooks and namespaces
 *
 * @example
 * ```ts
 * import { createWebhook, tenantWebhooks } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime: null as never };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["*"] }, { requestId: "r1" });
 * const page = await tenantWebhooks(deps, admin, "acme");
 * if (page.webhooks[0]?.id !== webhook.id || page.namespaces.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function tenantWebhooks(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
): Promise<TenantWebhooks> {
  const webhooks = await listWebhooks(deps, principal, tenant);
  const namespaces = (await listNamespaces(deps.kv, tenant)).map((n) => n.slug);
  return { webhooks, namespaces };
}

/**
 * The console's page of one webhook: the webhook and its newest
 * deliveries. 403 as {@linkcode listWebhooks}, 404 `webhook_not_found`.
 *
 * @param deps store
 * @param principal the person
 * @param tenant the tenant slug
 * @param id the webhook id
 * @returns the webhook and its deliveries
 *
 * @example
 * ```ts
 * import { createWebhook, webhookWithDeliveries } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * const deps = { kv, key, runtime: null as never };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: "https://93.184.216.34/hooks", events: ["*"] }, { requestId: "r1" });
 * const page = await webhookWithDeliveries(deps, admin, "acme", webhook.id);
 * if (page.webhook.id !== webhook.id || page.deliveries.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export function webhookWithDeliveries(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  id: string,
): Promise<{ webhook: WebhookInfo; deliveries: WebhookDeliveryInfo[] }> {
  return withSpan("cfgtool.service.webhook_page", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    const entry = await webhookEntryOf(deps, tenant, id);
    const deliveries = (await listDeliveries(deps.kv, tenant, id)).map(publicDelivery);
    return { webhook: publicWebhook(entry.value), deliveries };
  });
}

/**
 * Sends a `webhook.test` event to a webhook now, one attempt (no retries),
 * and records it in its deliveries (`POST …/{id}/test`). 403 as
 * {@linkcode listWebhooks}, 404 `webhook_not_found`.
 *
 * @param deps store, key, settings
 * @param principal the caller
 * @param tenant the tenant slug
 * @param id the webhook id
 * @param ctx the request
 * @returns the delivery, `delivered` or `failed`
 *
 * @example
 * ```ts
 * import { createWebhook, testWebhook } from "./webhooks.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * // a receiver on this host: private destinations allowed
 * const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
 *   new Response(null, { status: 204 }));
 * const deps = { kv, key, runtime: null as never, settings: { webhookAllowPrivate: true } };
 * const { webhook } = await createWebhook(deps, admin, "acme",
 *   { url: `http://127.0.0.1:${receiver.addr.port}/in`, events: ["*"] }, { requestId: "r1" });
 * const delivery = await testWebhook(deps, admin, "acme", webhook.id, { requestId: "r1" });
 * if (delivery.status !== "delivered" || delivery.response_code !== 204) throw new Error();
 * await receiver.shutdown();
 * kv.close();
 * ```
 */
export function testWebhook(
  deps: WebhookDeps,
  principal: Principal,
  tenant: string,
  id: string,
  ctx: RequestContext,
): Promise<WebhookDeliveryInfo> {
  return withSpan("cfgtool.service.test_webhook", { "cfgtool.tenant": tenant }, async () => {
    await authorizeManage(deps, principal, tenant);
    const hook = await webhookEntryOf(deps, tenant, id);
    const now = clockOf(deps)();
    const entry = eventAuditEntry(TEST_EVENT, actorOf(principal, ctx.requestId), now, {
      tenant_slug: tenant,
      details: { webhook_id: id },
    });
    const delivery = newDelivery(hook.value, entry, now);
    const { attempt, ok } = await attemptDelivery(deps, hook.value, delivery, 1);
    const done: DeliveryRecord = {
      ...delivery,
      status: ok ? "delivered" : "failed",
      attempts: [attempt],
      next_attempt_at: null,
    };
    if (await recordDelivery(deps.kv, hook, done, { now: now.getTime() })) {
      await pruneDeliveries(deps.kv, tenant, id);
    }
    logAttempt(deps, hook.value, done, attempt);
    return publicDelivery(done);
  });
}

// ---- delivering -------------------------------------------------------------

function newDelivery(
  hook: WebhookRecord,
  entry: AuditEntry | Record<string, unknown>,
  now: Date,
): DeliveryRecord {
  return {
    id: `dlv_${ulid(now.getTime())}`,
    webhook_id: hook.id,
    tenant_slug: hook.tenant_slug,
    event_id: String(entry.id),
    event_type: String(entry.type),
    status: "pending",
    attempts: [],
    next_attempt_at: now.toISOString(),
    created_at: now.toISOString(),
    entry: entry as Record<string, unknown>,
  };
}

/**
 * The audit message handler: records a pending delivery, and queues its
 * first attempt, for each of the tenant's webhooks that hears of the entry
 * (made by the time of the entry, its `events` and `namespaces` matching).
 * Idempotent: an entry delivered again makes no second delivery. A
 * `tenant.deleted` entry deletes the tenant's webhooks instead.
 *
 * @param deps store, key, settings, logger
 * @param message the queue message `{kind: "audit", entry}`
 * @returns nothing
 *
 * @example
 * ```ts
 * import { handleAuditMessage } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * // a tenant that does not exist has no webhooks: nothing to do
 * await handleAuditMessage({ kv, key: null as never, runtime: null as never }, {
 *   kind: "audit",
 *   entry: { id: "01", type: "manifest.pushed", tenant_slug: "acme", namespace_slug: "web", timestamp: new Date().toISOString() },
 * });
 * kv.close();
 * ```
 */
export async function handleAuditMessage(deps: WebhookDeps, message: QueueMessage): Promise<void> {
  const entry = message.entry as AuditEntry | undefined;
  if (
    typeof entry !== "object" || entry === null || typeof entry.tenant_slug !== "string" ||
    typeof entry.id !== "string" || typeof entry.type !== "string"
  ) {
    deps.log?.("warn", "audit message without an entry dropped");
    return;
  }
  const tenant = entry.tenant_slug;
  if (entry.type === "tenant.deleted") {
    const n = await purgeTenantWebhooks(deps.kv, tenant, entry.timestamp);
    if (n > 0) deps.log?.("info", "webhooks of a deleted tenant deleted", { tenant, webhooks: n });
    return;
  }
  const { entries } = await liveWebhookEntries(deps.kv, tenant);
  for (const hook of entries) {
    if (hook.value.created_at > entry.timestamp || !webhookHears(hook.value, entry)) continue;
    const now = clockOf(deps)();
    const delivery = newDelivery(hook.value, entry, now);
    const first: DeliverMessage = {
      kind: WEBHOOK_DELIVER,
      tenant,
      webhook_id: hook.value.id,
      delivery_id: delivery.id,
      attempt: 1,
    };
    const made = await recordDelivery(deps.kv, hook, delivery, {
      entryId: entry.id,
      message: first,
      now: now.getTime(),
    });
    if (made) await pruneDeliveries(deps.kv, tenant, hook.value.id);
  }
}

/**
 * The `webhook.deliver` handler: makes the attempt the message names,
 * unless the delivery is gone, done, or has that attempt already (the
 * queue handed the message over again); records it, and queues the next
 * attempt after a failure until the retries run out (then `failed`). A
 * destination that is not public, or a secret that does not open (the
 * token key was replaced), fails the delivery at once.
 *
 * @param deps store, key, settings, logger
 * @param message `{kind: "webhook.deliver", tenant, webhook_id, delivery_id, attempt}`
 * @returns nothing
 *
 * @example
 * ```ts
 * import { handleDeliverMessage } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * // a delivery that is gone (its webhook deleted) is dropped
 * await handleDeliverMessage({ kv, key: null as never, runtime: null as never }, {
 *   kind: "webhook.deliver", tenant: "acme", webhook_id: "whk_1", delivery_id: "dlv_1", attempt: 1,
 * });
 * kv.close();
 * ```
 */
export async function handleDeliverMessage(
  deps: WebhookDeps,
  message: QueueMessage,
): Promise<void> {
  const { tenant, webhook_id, delivery_id, attempt } = message as DeliverMessage;
  if (
    typeof tenant !== "string" || typeof webhook_id !== "string" ||
    typeof delivery_id !== "string" || typeof attempt !== "number"
  ) {
    deps.log?.("warn", "webhook delivery message of a wrong shape dropped");
    return;
  }
  const entry = await getDeliveryEntry(deps.kv, tenant, webhook_id, delivery_id);
  const before = entry.value;
  if (before === null || before.status !== "pending" || before.attempts.length >= attempt) return;
  const hook = (await getWebhookEntry(deps.kv, tenant, webhook_id)).value;
  if (hook === null) return;
  const made = await attemptDelivery(deps, hook, before, attempt);
  const now = clockOf(deps)();
  const after: DeliveryRecord = {
    ...before,
    attempts: [...before.attempts, made.attempt],
    status: made.ok ? "delivered" : "failed",
    next_attempt_at: null,
  };
  let next: DeliverMessage | undefined;
  const delay = made.ok || !made.retry ? null : retryDelayMs(attempt, settingsOf(deps).retryBaseMs);
  if (delay !== null) {
    const at = now.getTime() + delay;
    after.status = "pending";
    after.next_attempt_at = new Date(at).toISOString();
    next = { kind: WEBHOOK_DELIVER, tenant, webhook_id, delivery_id, attempt: attempt + 1, at };
  }
  const saved = await saveAttempt(
    deps.kv,
    entry as Deno.KvEntry<DeliveryRecord>,
    after,
    next,
    now.getTime(),
  );
  if (saved) logAttempt(deps, hook, after, made.attempt);
}

/** One attempt's outcome: the attempt as recorded, and whether to try again after a failure. */
interface AttemptOutcome {
  attempt: WebhookAttempt;
  ok: boolean;
  retry: boolean;
}

/**
 * Makes one attempt: opens the secret, checks the destination, signs and
 * posts the body, reads the status. Never throws: every failure is the
 * attempt's `error`.
 */
async function attemptDelivery(
  deps: WebhookDeps,
  hook: WebhookRecord,
  delivery: DeliveryRecord,
  number: number,
): Promise<AttemptOutcome> {
  const startedAt = clockOf(deps)();
  const failed = (error: string, retry: boolean, extra: Partial<WebhookAttempt> = {}) => ({
    attempt: {
      attempt: number,
      at: startedAt.toISOString(),
      response_code: null,
      ms: null,
      error,
      ...extra,
    },
    ok: false,
    retry,
  });
  let secret: string;
  try {
    secret = await unseal(await sealingKey(deps.key, WEBHOOK_SECRET_SEAL), hook.sealed_secret);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    return failed(
      "the webhook's signing secret was sealed with another token key (the key was replaced " +
        "by `cfgtool admin rekey` without the old key file): delete the webhook and create it " +
        "again",
      false,
    );
  }
  const url = new URL(hook.url);
  const { allowPrivate } = settingsOf(deps);
  let addresses: string[];
  try {
    addresses = (await checkDestination(url, {
      allowPrivate,
      ...(deps.webhookNet?.resolve ? { resolve: deps.webhookNet.resolve } : {}),
    })).addresses;
  } catch (err) {
    if (err instanceof RefusedDestination) {
      return failed(`refused: ${err.message} (webhooks deliver only to public addresses)`, false);
    }
    if (err instanceof UnresolvedDestination) return failed(err.message, true);
    throw err;
  }
  const tenant = hook.tenant_slug;
  const entry = delivery.entry;
  const namespace = typeof entry.namespace_slug === "string" ? entry.namespace_slug : null;
  const consoleUrl = consoleLink(deps.publicUrl, tenant, namespace);
  const body = hook.format === "slack"
    ? JSON.stringify({ text: slackText(entry, tenant, namespace, consoleUrl) })
    : JSON.stringify(payloadOf(entry, tenant, namespace, consoleUrl));
  const sentAt = new Date();
  const headers = {
    "content-type": "application/json",
    "user-agent": `cfgtool-webhooks/${VERSION}`,
    "webhook-id": delivery.id,
    "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(delivery.id, sentAt, body),
  };
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const answer = await pinnedPost({
      url,
      addresses,
      headers,
      body,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      ...(deps.webhookNet?.caCerts ? { caCerts: deps.webhookNet.caCerts } : {}),
    });
    const took = ms();
    if (answer.status >= 200 && answer.status < 300) {
      return {
        attempt: {
          attempt: number,
          at: startedAt.toISOString(),
          response_code: answer.status,
          ms: took,
          error: null,
        },
        ok: true,
        retry: false,
      };
    }
    const redirect = answer.location === undefined
      ? ""
      : ` (a redirect to ${answer.location.slice(0, 200)}: not followed)`;
    return failed(`the receiver answered ${answer.status}${redirect}`, true, {
      response_code: answer.status,
      ms: took,
    });
  } catch (err) {
    return failed((err as Error).message, true, { ms: ms() });
  }
}

function logAttempt(
  deps: WebhookDeps,
  hook: WebhookRecord,
  d: DeliveryRecord,
  attempt: WebhookAttempt,
): void {
  deps.log?.(d.status === "failed" ? "warn" : "info", "webhook delivery attempt", {
    tenant: hook.tenant_slug,
    webhook_id: hook.id,
    destination: originOf(hook.url),
    delivery_id: d.id,
    event_type: d.event_type,
    attempt: attempt.attempt,
    status: d.status,
    response_code: attempt.response_code,
    ms: attempt.ms,
    ...(attempt.error === null ? {} : { error: attempt.error }),
  });
}

/**
 * The console page of an entry: its namespace's, else its tenant's; null
 * without a public URL.
 *
 * @param publicUrl the service's public origin, if known
 * @param tenant the tenant slug
 * @param namespace the namespace slug, if any
 * @returns the URL, or null
 *
 * @example
 * ```ts
 * import { consoleLink } from "./webhooks.ts";
 * if (consoleLink("https://flags.example.com", "acme", "web") !== "https://flags.example.com/ui/t/acme/ns/web") {
 *   throw new Error();
 * }
 * if (consoleLink(undefined, "acme", null) !== null) throw new Error();
 * ```
 */
export function consoleLink(
  publicUrl: string | undefined,
  tenant: string,
  namespace: string | null,
): string | null {
  if (publicUrl === undefined) return null;
  const e = encodeURIComponent;
  return `${publicUrl}/ui/t/${e(tenant)}${namespace === null ? "" : `/ns/${e(namespace)}`}`;
}

/**
 * The body of a `standard` delivery: `{type, timestamp, data: {tenant,
 * namespace, console_url, entry}}`.
 *
 * @param entry the audit entry (or test event)
 * @param tenant its tenant
 * @param namespace its namespace, if any
 * @param consoleUrl where to look at it, if known
 * @returns the payload
 *
 * @example
 * ```ts
 * import { payloadOf } from "./webhooks.ts";
 * const p = payloadOf({ id: "01", type: "manifest.pushed", timestamp: "2030-01-01T00:00:00.000Z" }, "acme", "web", null);
 * if (p.type !== "manifest.pushed" || p.data.entry.id !== "01" || p.data.namespace !== "web") throw new Error();
 * ```
 */
export function payloadOf(
  entry: Record<string, unknown>,
  tenant: string,
  namespace: string | null,
  consoleUrl: string | null,
): WebhookPayload {
  return {
    type: String(entry.type),
    timestamp: String(entry.timestamp),
    data: { tenant, namespace, console_url: consoleUrl, entry },
  };
}

/** Slack's three escapes of message text. */
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * The one-line summary a `slack` delivery posts as `{text}`: where, what,
 * who, the version or reason when the entry has one, and a link to the
 * console.
 *
 * @param entry the audit entry
 * @param tenant its tenant
 * @param namespace its namespace, if any
 * @param consoleUrl the console link, if known
 * @returns the text (Slack mrkdwn)
 *
 * @example
 * ```ts
 * import { slackText } from "./webhooks.ts";
 * const text = slackText(
 *   { type: "manifest.pushed", actor_id: "tok_1", details: { version: 3, message: "a <b>" } },
 *   "acme", "web", "https://f.example/ui/t/acme/ns/web");
 * if (text !== "acme/web: manifest.pushed by tok_1, version 3 \u201ca &lt;b&gt;\u201d <https://f.example/ui/t/acme/ns/web|open in cfgtool>") {
 *   throw new Error(text);
 * }
 * ```
 */
export function slackText(
  entry: Record<string, unknown>,
  tenant: string,
  namespace: string | null,
  consoleUrl: string | null,
): string {
  const where = namespace === null ? tenant : `${tenant}/${namespace}`;
  const details =
    (typeof entry.details === "object" && entry.details !== null ? entry.details : {}) as Record<
      string,
      unknown
    >;
  let text = `${where}: ${entry.type} by ${entry.actor_id ?? "someone"}`;
  if (typeof details.version === "number") text += `, version ${details.version}`;
  if (typeof details.message === "string" && details.message !== "") {
    const line = details.message.split("\n")[0]!;
    text += ` \u201c${line.length > 120 ? `${line.slice(0, 120)}…` : line}\u201d`;
  }
  if (typeof details.reason === "string") text += ` (${details.reason})`;
  text = slackEscape(text);
  return consoleUrl === null ? text : `${text} <${consoleUrl}|open in cfgtool>`;
}
