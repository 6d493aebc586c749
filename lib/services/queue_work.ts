/**
 * The work a server process takes from the installation's durable queue
 * (lib/store/queue.ts): each kind of message and the service function that
 * handles it. Any process of the installation may take any message;
 * every handler is idempotent.
 *
 * | kind | handler |
 * |---|---|
 * | `audit` | the tenant's webhooks hear of an audit entry: a pending delivery each (lib/services/webhooks.ts, `handleAuditMessage`) |
 * | `webhook.deliver` | one attempt of a webhook delivery, and the next one queued after a failure (`handleDeliverMessage`) |
 * | `change.apply` | a scheduled apply of a change request, or a rollout's next step (lib/services/change_apply.ts, `runScheduledApply`) |
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import { AUDIT_MESSAGE } from "../store/audit.ts";
import type { ServiceDeps } from "./deps.ts";
import { APPLY_MESSAGE } from "../store/change_requests.ts";
import { runScheduledApply } from "./change_apply.ts";
import { startScheduleSweep } from "../store/schedule_sweep.ts";
import {
  handleAuditMessage,
  handleDeliverMessage,
  WEBHOOK_DELIVER,
  type WebhookDeps,
} from "./webhooks.ts";

/** What the handlers need besides the service deps. */
export interface QueueWorkOptions {
  /** The service's public origin: the console links of webhook payloads (none without it). */
  publicUrl?: string;
  /** `webhookAllowPrivate`, `webhookRetryBaseMs` (the defaults of lib/settings.ts otherwise). */
  settings?: Partial<Pick<ServiceSettings, "webhookAllowPrivate" | "webhookRetryBaseMs">>;
  /** Where deliveries are logged. */
  log?: Logger;
  /** For tests: the webhooks' resolver and extra trusted certificates. */
  webhookNet?: NonNullable<WebhookDeps["webhookNet"]>;
}

/**
 * Registers every handler on the runtime's queue listener and starts it.
 *
 * @param deps store, key, runtime
 * @param options public URL, settings, logger
 * @returns the sweep of overdue schedules, to stop at shutdown
 *
 * @example
 * ```ts
 * import { startQueueWork } from "./queue_work.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const work = startQueueWork({ kv, key, runtime }, { settings: DEFAULT_SETTINGS });
 * await work.stop();
 * runtime.close();
 * kv.close();
 * await runtime.queue.stopped;
 * ```
 */
export function startQueueWork(
  deps: ServiceDeps,
  options: QueueWorkOptions = {},
): { stop(): Promise<void> } {
  const { queue } = deps.runtime;
  const webhooks: WebhookDeps = { ...deps, ...options };
  queue.on(AUDIT_MESSAGE, (message) => handleAuditMessage(webhooks, message));
  queue.on(WEBHOOK_DELIVER, (message) => handleDeliverMessage(webhooks, message));
  queue.on(APPLY_MESSAGE, (message) => runScheduledApply(deps, message));
  queue.start();
  // a scheduled apply whose message the queue gave up on is sent again
  const sweep = startScheduleSweep(deps.kv, {
    intervalMs: SWEEP_INTERVAL_MS,
    log: options.log ?? (() => {}),
  });
  return { stop: () => sweep.stop() };
}

/** How often one process of the installation looks for overdue schedules, ms. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
