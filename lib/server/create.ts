/**
 * The flag service's request handler over an opened KV: the HTTP app and
 * the per-process runtime it serves from, plus background retention.
 * `serve` (lib/server/serve.ts) binds it to a port.
 *
 * @module
 */
import { createApp } from "../http/app.ts";
import type { MailSettings } from "../http/deps.ts";
import { createLogger, type Logger } from "../log.ts";
import { resolveSettings, type ServiceSettings } from "../settings.ts";
import { Runtime } from "../runtime/runtime.ts";
import { startRetention } from "../store/retention.ts";

/** Options of {@linkcode createServer}. */
export interface ServerOptions {
  /** The opened KV. */
  kv: Deno.Kv;
  /** The HMAC key that digests service tokens and sessions. */
  key: CryptoKey;
  /** Where logs go (default: JSON lines on stderr). */
  log?: Logger;
  /** Tunables; unset ones take the defaults of lib/settings.ts. */
  settings?: Partial<ServiceSettings>;
  /** Public origin for URLs the service hands out (behind a proxy). */
  publicUrl?: string;
  /** Where sign-in mail goes (SMTP or an outbox directory); absent: email sign-in answers 503. */
  mail?: MailSettings;
  /**
   * Start the manifest workers now rather than on first use (`serve` does:
   * starting one costs its caller tens of milliseconds).
   */
  startWorkers?: boolean;
}

/** A request handler and what it holds open. */
export interface FlagServer {
  /** The fetch handler, as `Deno.serve` takes it (`info` gives the client address). */
  fetch: (req: Request, info?: Deno.ServeHandlerInfo) => Response | Promise<Response>;
  /** Stops background work (pollers, streams). Does not close the KV. */
  close(): Promise<void>;
  /** The per-process state it serves from (its event hub, caches), for metrics and tests. */
  readonly runtime: Runtime;
}

/**
 * Builds the service's request handler over an opened KV.
 *
 * @example
 * ```ts
 * import { createServer } from "./create.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const server = createServer({ kv, key: await randomTokenKey(), log: () => {} });
 * const res = await server.fetch(new Request("http://x/healthz"));
 * if (res.status !== 200) throw new Error();
 * await server.close();
 * kv.close();
 * ```
 */
export function createServer(options: ServerOptions): FlagServer {
  const log = options.log ?? createLogger();
  const settings = resolveSettings(options.settings);
  const runtime = new Runtime({
    kv: options.kv,
    key: options.key,
    log,
    settings,
    ...(options.startWorkers ? { startWorkers: true } : {}),
  });
  const app = createApp({
    kv: options.kv,
    key: options.key,
    log,
    settings,
    runtime,
    ...(options.publicUrl ? { publicUrl: options.publicUrl.replace(/\/+$/, "") } : {}),
    ...(options.mail ? { mail: options.mail } : {}),
  });
  const retention = startRetention(options.kv, {
    policy: { days: settings.retentionDays, versions: settings.retentionVersions },
    intervalMs: settings.pruneIntervalMs,
    log,
  });
  return {
    fetch: (req, info) => app.fetch(req, info ? { remoteAddr: info.remoteAddr } : {}),
    runtime,
    close: async () => {
      runtime.close();
      await retention.stop();
    },
  };
}
