/**
 * A tenant's webhooks and their deliveries (lib/services/webhooks.ts says
 * who may do what; docs/webhooks.md what is sent):
 *
 * - `["webhook", t, id]`: the webhook, its signing secret sealed
 *   (lib/auth/sealing.ts); created and deleted with its audit entry in one
 *   commit that checks and sets `["webhook_lock", t]`, so two creations at
 *   once cannot pass the limit together. Webhooks older than their tenant
 *   (a tenant deleted and made again before the clean-up ran) are not the
 *   tenant's: {@linkcode liveWebhooks} leaves them out.
 * - `["webhook_delivery", t, webhook, id]`: one event to one webhook, its
 *   status and attempts, written with the queue message of its next
 *   attempt in one commit; the newest {@linkcode MAX_WEBHOOK_DELIVERIES}
 *   per webhook are kept ({@linkcode pruneDeliveries}).
 * - `["webhook_entry", t, webhook, entry]`: the delivery made for an audit
 *   entry, checked absent in the commit that makes it, so an entry handed
 *   over again by the queue makes no second delivery.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import {
  MAX_WEBHOOK_DELIVERIES,
  type WebhookAttempt,
  type WebhookDeliveryStatus,
  type WebhookFormat,
} from "../protocol/webhooks.ts";
import { addAudit, type AuditEntry } from "./audit.ts";
import {
  allWebhooksPrefix,
  tenantKey,
  webhookDeliveryKey,
  webhookDeliveryPrefix,
  webhookDeliverySeqKey,
  webhookEntryKey,
  webhookEntryPrefix,
  webhookKey,
  webhookLockKey,
  webhookPrefix,
} from "./keys.ts";
import { deleteInBatches } from "./kv_batch.ts";
import { enqueueOn, type QueueMessage } from "./queue.ts";
import type { TenantRecord } from "./tenants.ts";

/** A stored webhook. */
export interface WebhookRecord {
  /** `whk_<ulid>` */
  id: string;
  tenant_slug: string;
  url: string;
  events: string[];
  namespaces: string[] | null;
  format: WebhookFormat;
  description: string | null;
  /** The `whsec_…` secret, sealed (lib/auth/sealing.ts); never stored in the clear. */
  sealed_secret: string;
  created_at: string;
  created_by: string;
}

/** A stored delivery: the event and where its delivery stands. */
export interface DeliveryRecord {
  /** `dlv_<ulid>` */
  id: string;
  webhook_id: string;
  tenant_slug: string;
  /** The audit entry's id. */
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  /** Every attempt made, oldest first. */
  attempts: WebhookAttempt[];
  /** While pending: when the next attempt is due. */
  next_attempt_at: string | null;
  created_at: string;
  /** The entry delivered (the audit entry, or a `webhook.test` event). */
  entry: Record<string, unknown>;
}

/** The queue message kind of one delivery attempt. */
export const WEBHOOK_DELIVER = "webhook.deliver";

/** The queue message of one delivery attempt. */
export interface DeliverMessage extends QueueMessage {
  kind: typeof WEBHOOK_DELIVER;
  tenant: string;
  webhook_id: string;
  delivery_id: string;
  /** Which attempt this is (1 for the first). */
  attempt: number;
}

/** Pruning runs when a webhook's delivery count reaches a multiple of this. */
const PRUNE_EVERY = 20;

/**
 * The webhooks of a tenant's current incarnation: none when the tenant does
 * not exist, and none made before it was (leftovers of a tenant of the same
 * slug that was deleted).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns the tenant (or null) and its webhooks, in id (creation) order
 *
 * @example
 * ```ts
 * import { liveWebhooks } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * const live = await liveWebhooks(kv, "acme");
 * if (live.tenant !== null || live.webhooks.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function liveWebhooks(
  kv: Deno.Kv,
  tenant: string,
): Promise<{ tenant: TenantRecord | null; webhooks: WebhookRecord[] }> {
  const live = await liveWebhookEntries(kv, tenant);
  return { tenant: live.tenant, webhooks: live.entries.map((e) => e.value) };
}

/**
 * One webhook of a tenant's current incarnation, with its versionstamp;
 * the value is null when there is none.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param id the webhook id
 * @returns the entry
 *
 * @example
 * ```ts
 * import { getWebhookEntry } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await getWebhookEntry(kv, "acme", "whk_1")).value !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function getWebhookEntry(
  kv: Deno.Kv,
  tenant: string,
  id: string,
): Promise<Deno.KvEntryMaybe<WebhookRecord>> {
  const [t, w] = await kv.getMany<[TenantRecord, WebhookRecord]>([
    tenantKey(tenant),
    webhookKey(tenant, id),
  ]);
  if (t.value === null || w.value === null || w.value.created_at < t.value.created_at) {
    return { key: w.key, value: null, versionstamp: null };
  }
  return w;
}

/**
 * Stores a new webhook with its `webhook.created` audit entry, unless the
 * tenant has `limit` webhooks already: one commit, checked against the
 * tenant and the tenant's webhook lock. 404 `tenant_not_found` when the
 * tenant does not exist.
 *
 * @param kv the store
 * @param record the webhook
 * @param audit its `webhook.created` entry
 * @param limit the most webhooks a tenant may have
 * @returns whether it was stored, and how many the tenant had before
 *
 * @example
 * ```ts
 * import { addWebhook, liveWebhooks } from "./webhooks.ts";
 * import { createTenant } from "./tenants.ts";
 * import { eventAuditEntry } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const now = new Date(Date.now() + 1);
 * const record = { id: "whk_1", tenant_slug: "acme", url: "https://x.test/h", events: ["*"],
 *   namespaces: null, format: "standard" as const, description: null, sealed_secret: "…",
 *   created_at: now.toISOString(), created_by: "ops" };
 * const audit = eventAuditEntry("webhook.created", { id: "ops", principal_type: "system", request_id: null }, now, { tenant_slug: "acme" });
 * if (!(await addWebhook(kv, record, audit, 1)).added) throw new Error();
 * if ((await addWebhook(kv, { ...record, id: "whk_2" }, audit, 1)).added) throw new Error("over the limit");
 * if ((await liveWebhooks(kv, "acme")).webhooks.length !== 1) throw new Error();
 * kv.close();
 * ```
 */
export async function addWebhook(
  kv: Deno.Kv,
  record: WebhookRecord,
  audit: AuditEntry,
  limit: number,
): Promise<{ added: boolean; count: number }> {
  const t = record.tenant_slug;
  while (true) {
    const [tenant, lock] = await kv.getMany<[TenantRecord, unknown]>([
      tenantKey(t),
      webhookLockKey(t),
    ]);
    if (tenant.value === null) throw new NotFoundError("tenant_not_found", `No tenant ${t}`);
    const { webhooks } = await liveWebhooks(kv, t);
    if (webhooks.length >= limit) return { added: false, count: webhooks.length };
    const op = kv.atomic()
      .check(tenant)
      .check(lock)
      .check({ key: webhookKey(t, record.id), versionstamp: null })
      .set(webhookLockKey(t), { changed_at: record.created_at })
      .set(webhookKey(t, record.id), record);
    if ((await addAudit(op, audit).commit()).ok) return { added: true, count: webhooks.length };
  }
}

/**
 * Deletes a webhook with its `webhook.deleted` audit entry (one commit),
 * then its deliveries. Null (nothing written) when there is no such webhook.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param id the webhook id
 * @param audit builds the `webhook.deleted` entry from the record
 * @returns the deleted webhook, or null
 *
 * @example
 * ```ts
 * import { removeWebhook } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await removeWebhook(kv, "acme", "whk_1", () => { throw new Error("no entry"); }) !== null) {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export async function removeWebhook(
  kv: Deno.Kv,
  tenant: string,
  id: string,
  audit: (record: WebhookRecord) => AuditEntry,
): Promise<WebhookRecord | null> {
  while (true) {
    const entry = await getWebhookEntry(kv, tenant, id);
    if (entry.value === null) return null;
    const op = kv.atomic()
      .check(entry)
      .set(webhookLockKey(tenant), { changed_at: new Date().toISOString() })
      .delete(webhookKey(tenant, id));
    if ((await addAudit(op, audit(entry.value)).commit()).ok) {
      await purgeDeliveries(kv, tenant, id);
      return entry.value;
    }
  }
}

/** Deletes every delivery, entry key and counter of a webhook. */
async function purgeDeliveries(kv: Deno.Kv, tenant: string, id: string): Promise<void> {
  await deleteInBatches(kv, kv.list({ prefix: webhookDeliveryPrefix(tenant, id) }));
  await deleteInBatches(kv, kv.list({ prefix: webhookEntryPrefix(tenant, id) }));
  await kv.delete(webhookDeliverySeqKey(tenant, id));
}

/**
 * Deletes the webhooks of a deleted tenant (those made at or before
 * `until`, the deletion's time: a tenant made again since keeps its own),
 * with their deliveries. Not audited: the tenant's deletion is.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param until the deletion's time (RFC 3339)
 * @returns how many webhooks were deleted
 *
 * @example
 * ```ts
 * import { purgeTenantWebhooks } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await purgeTenantWebhooks(kv, "acme", new Date().toISOString()) !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function purgeTenantWebhooks(
  kv: Deno.Kv,
  tenant: string,
  until: string,
): Promise<number> {
  let n = 0;
  for await (const e of kv.list<WebhookRecord>({ prefix: webhookPrefix(tenant) })) {
    if (e.value.created_at > until) continue;
    const res = await kv.atomic().check(e).delete(e.key).commit();
    if (!res.ok) continue;
    await purgeDeliveries(kv, tenant, e.value.id);
    n++;
  }
  return n;
}

/**
 * Records a new delivery of a webhook and, when given, the queue message
 * of its first attempt, in one commit checked against the webhook (it
 * still exists) and, for an audit entry, against the entry's key (no
 * delivery made for it yet). False when either check failed: the delivery
 * exists already, or the webhook is gone; nothing is written then.
 *
 * @param kv the store
 * @param webhook the webhook's entry (from {@linkcode getWebhookEntry} or a list)
 * @param delivery the new delivery
 * @param options `entryId`: the audit entry it delivers (its idempotency
 *   key); `message`: the first attempt to enqueue; `now`: epoch ms
 * @returns whether it was recorded
 *
 * @example
 * ```ts
 * import { addWebhook, getWebhookEntry, listDeliveries, recordDelivery } from "./webhooks.ts";
 * import { createTenant } from "./tenants.ts";
 * import { eventAuditEntry } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const now = new Date(Date.now() + 1);
 * const hook = { id: "whk_1", tenant_slug: "acme", url: "https://x.test/h", events: ["*"],
 *   namespaces: null, format: "standard" as const, description: null, sealed_secret: "…",
 *   created_at: now.toISOString(), created_by: "ops" };
 * const actor = { id: "ops", principal_type: "system" as const, request_id: null };
 * await addWebhook(kv, hook, eventAuditEntry("webhook.created", actor, now, { tenant_slug: "acme" }), 20);
 * const entry = (await getWebhookEntry(kv, "acme", "whk_1")) as Deno.KvEntry<typeof hook>;
 * const delivery = { id: "dlv_1", webhook_id: "whk_1", tenant_slug: "acme", event_id: "01",
 *   event_type: "manifest.pushed", status: "pending" as const, attempts: [],
 *   next_attempt_at: null, created_at: now.toISOString(), entry: {} };
 * const once = { entryId: "01", now: Date.now() };
 * if (!await recordDelivery(kv, entry, delivery, once)) throw new Error();
 * // the same audit entry again: refused, nothing written
 * if (await recordDelivery(kv, entry, { ...delivery, id: "dlv_2" }, once)) throw new Error();
 * if ((await listDeliveries(kv, "acme", "whk_1")).length !== 1) throw new Error();
 * kv.close();
 * ```
 */
export async function recordDelivery(
  kv: Deno.Kv,
  webhook: Deno.KvEntry<WebhookRecord>,
  delivery: DeliveryRecord,
  options: { entryId?: string; message?: DeliverMessage; now: number },
): Promise<boolean> {
  const t = delivery.tenant_slug;
  const w = delivery.webhook_id;
  const op = kv.atomic().check(webhook);
  if (options.entryId !== undefined) {
    const marker = webhookEntryKey(t, w, options.entryId);
    op.check({ key: marker, versionstamp: null }).set(marker, delivery.id);
  }
  op.set(webhookDeliveryKey(t, w, delivery.id), delivery)
    .sum(webhookDeliverySeqKey(t, w), 1n);
  if (options.message !== undefined) enqueueOn(op, options.message, options.now);
  return (await op.commit()).ok;
}

/**
 * The webhook entries of a tenant's current incarnation, with their
 * versionstamps (what {@linkcode recordDelivery} checks), and the tenant.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns the tenant (or null) and the entries
 *
 * @example
 * ```ts
 * import { liveWebhookEntries } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await liveWebhookEntries(kv, "acme")).entries.length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function liveWebhookEntries(
  kv: Deno.Kv,
  tenant: string,
): Promise<{ tenant: TenantRecord | null; entries: Deno.KvEntry<WebhookRecord>[] }> {
  const record = (await kv.get<TenantRecord>(tenantKey(tenant))).value;
  if (record === null) return { tenant: null, entries: [] };
  const entries: Deno.KvEntry<WebhookRecord>[] = [];
  for await (const e of kv.list<WebhookRecord>({ prefix: webhookPrefix(tenant) })) {
    if (e.value.created_at >= record.created_at) entries.push(e);
  }
  return { tenant: record, entries };
}

/**
 * One delivery's entry (value null when pruned or its webhook deleted).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param webhook the webhook id
 * @param id the delivery id
 * @returns the entry
 *
 * @example
 * ```ts
 * import { getDeliveryEntry } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await getDeliveryEntry(kv, "acme", "whk_1", "dlv_1")).value !== null) throw new Error();
 * kv.close();
 * ```
 */
export function getDeliveryEntry(
  kv: Deno.Kv,
  tenant: string,
  webhook: string,
  id: string,
): Promise<Deno.KvEntryMaybe<DeliveryRecord>> {
  return kv.get<DeliveryRecord>(webhookDeliveryKey(tenant, webhook, id));
}

/**
 * Writes a delivery after an attempt, with the queue message of the next
 * attempt when there is one, in one commit checked against the entry read
 * before the attempt: false (nothing written) when the delivery changed or
 * went meanwhile.
 *
 * @param kv the store
 * @param before the delivery's entry as read before the attempt
 * @param after the delivery with the attempt added
 * @param next the next attempt's message, if any
 * @param now epoch ms
 * @returns whether it was written
 *
 * @example
 * ```ts
 * import { addWebhook, getDeliveryEntry, getWebhookEntry, recordDelivery, saveAttempt } from "./webhooks.ts";
 * import { createTenant } from "./tenants.ts";
 * import { eventAuditEntry } from "./audit.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "ops" });
 * const now = new Date(Date.now() + 1);
 * const hook = { id: "whk_1", tenant_slug: "acme", url: "https://x.test/h", events: ["*"],
 *   namespaces: null, format: "standard" as const, description: null, sealed_secret: "…",
 *   created_at: now.toISOString(), created_by: "ops" };
 * const actor = { id: "ops", principal_type: "system" as const, request_id: null };
 * await addWebhook(kv, hook, eventAuditEntry("webhook.created", actor, now, { tenant_slug: "acme" }), 20);
 * const entry = (await getWebhookEntry(kv, "acme", "whk_1")) as Deno.KvEntry<typeof hook>;
 * const delivery = { id: "dlv_1", webhook_id: "whk_1", tenant_slug: "acme", event_id: "01",
 *   event_type: "manifest.pushed", status: "pending" as const, attempts: [],
 *   next_attempt_at: null, created_at: now.toISOString(), entry: {} };
 * await recordDelivery(kv, entry, delivery, { now: Date.now() });
 * const before = (await getDeliveryEntry(kv, "acme", "whk_1", "dlv_1")) as Deno.KvEntry<typeof delivery>;
 * const done = { ...before.value, status: "delivered" as const };
 * if (!await saveAttempt(kv, before, done, undefined, Date.now())) throw new Error();
 * // a second writer of the same attempt loses: the delivery changed since it read it
 * if (await saveAttempt(kv, before, done, undefined, Date.now())) throw new Error();
 * kv.close();
 * ```
 */
export async function saveAttempt(
  kv: Deno.Kv,
  before: Deno.KvEntry<DeliveryRecord>,
  after: DeliveryRecord,
  next: DeliverMessage | undefined,
  now: number,
): Promise<boolean> {
  const op = kv.atomic().check(before).set(before.key, after);
  if (next !== undefined) enqueueOn(op, next, now);
  return (await op.commit()).ok;
}

/**
 * A webhook's newest deliveries, newest first.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param webhook the webhook id
 * @param limit how many at most (default {@linkcode MAX_WEBHOOK_DELIVERIES})
 * @returns the deliveries
 *
 * @example
 * ```ts
 * import { listDeliveries } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await listDeliveries(kv, "acme", "whk_1")).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function listDeliveries(
  kv: Deno.Kv,
  tenant: string,
  webhook: string,
  limit: number = MAX_WEBHOOK_DELIVERIES,
): Promise<DeliveryRecord[]> {
  const out: DeliveryRecord[] = [];
  const list = kv.list<DeliveryRecord>({ prefix: webhookDeliveryPrefix(tenant, webhook) }, {
    reverse: true,
    limit,
  });
  for await (const e of list) out.push(e.value);
  return out;
}

/**
 * Deletes a webhook's deliveries beyond the newest `keep` (and their
 * entry keys), when its delivery count is a multiple of 20 or `force` is
 * set: the list stays within `keep` plus 19, and the endpoint shows the
 * newest `keep`.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param webhook the webhook id
 * @param options `keep` (default {@linkcode MAX_WEBHOOK_DELIVERIES}), `force`
 * @returns how many were deleted
 *
 * @example
 * ```ts
 * import { pruneDeliveries } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await pruneDeliveries(kv, "acme", "whk_1", { force: true }) !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function pruneDeliveries(
  kv: Deno.Kv,
  tenant: string,
  webhook: string,
  options: { keep?: number; force?: boolean } = {},
): Promise<number> {
  const keep = options.keep ?? MAX_WEBHOOK_DELIVERIES;
  if (!options.force) {
    const seq = (await kv.get<Deno.KvU64>(webhookDeliverySeqKey(tenant, webhook))).value;
    if (seq === null || seq.value % BigInt(PRUNE_EVERY) !== 0n) return 0;
  }
  const old: Deno.KvKey[] = [];
  let seen = 0;
  const list = kv.list<DeliveryRecord>({ prefix: webhookDeliveryPrefix(tenant, webhook) }, {
    reverse: true,
  });
  for await (const e of list) {
    if (++seen <= keep) continue;
    old.push(e.key);
    if (e.value.event_type !== "webhook.test") {
      old.push(webhookEntryKey(tenant, webhook, e.value.event_id));
    }
  }
  await deleteInBatches(kv, old);
  return Math.max(0, seen - keep);
}

/**
 * Seals every webhook's secret again (`cfgtool admin rekey`): `reseal`
 * gets each sealed secret and returns it sealed under the new key, or null
 * when it cannot open it (the webhook is left as it is; its deliveries
 * then fail naming why).
 *
 * @param kv the store
 * @param reseal the old sealed secret → the new one, or null
 * @returns how many were sealed again, and how many could not be
 *
 * @example
 * ```ts
 * import { resealWebhookSecrets } from "./webhooks.ts";
 * const kv = await Deno.openKv(":memory:");
 * const r = await resealWebhookSecrets(kv, (s) => Promise.resolve(s));
 * if (r.resealed !== 0 || r.unreadable !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function resealWebhookSecrets(
  kv: Deno.Kv,
  reseal: (sealed: string) => Promise<string | null>,
): Promise<{ resealed: number; unreadable: number }> {
  let resealed = 0;
  let unreadable = 0;
  for await (const e of kv.list<WebhookRecord>({ prefix: allWebhooksPrefix() })) {
    const sealed = await reseal(e.value.sealed_secret);
    if (sealed === null) {
      unreadable++;
      continue;
    }
    const res = await kv.atomic().check(e).set(e.key, { ...e.value, sealed_secret: sealed })
      .commit();
    if (res.ok) resealed++;
  }
  return { resealed, unreadable };
}
