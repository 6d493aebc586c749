/**
 * What every route of the HTTP application is given (`AppDeps`) and what
 * each handler can read from the hono context (`AppEnv`): the one module
 * route files import for their types, so no route file imports the app that
 * mounts it.
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import type { Logger } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** What the HTTP application needs from the server. */
export interface AppDeps {
  /** The opened KV store. */
  kv: Deno.Kv;
  /** The HMAC key that digests tokens and sessions. */
  key: CryptoKey;
  /** Where logs go. */
  log: Logger;
  /** Tunables (lib/settings.ts). */
  settings: ServiceSettings;
  /**
   * The service's public origin (`https://flags.example.com`) for URLs it
   * hands out (snapshot_url, OFREP event streams); default: the request's origin.
   */
  publicUrl?: string;
  /**
   * The server's per-process state: head watcher, stream guard, manifest
   * workers, compiled models, event hub, memos, origin index, rate limiter.
   */
  runtime: Runtime;
  /** Clock, for tests. */
  now?: () => Date;
  /**
   * How sign-in mail leaves (verified-email login): an SMTP URL, or the
   * outbox directory where each message is written as an `.eml` file when
   * no SMTP server is configured; and the From address.
   */
  mail?: MailSettings;
}

/** Where sign-in mail goes (`--smtp-url`, `--mail-from`, `<data dir>/outbox/`). */
export interface MailSettings {
  /** `smtp://…` or `smtps://…`; absent: write to {@linkcode MailSettings.outboxDir}. */
  smtpUrl?: string;
  /** Directory of `.eml` files when there is no SMTP server. */
  outboxDir?: string;
  /** The From address. */
  from: string;
}

/** Variables every handler can read from the hono context. */
export type AppEnv = {
  Variables: {
    requestId: string;
    principal: Principal;
    clientIp: string | undefined;
    /**
     * The form fields of a page's post, read once by the route's first
     * middleware (the console's), where the CSRF check finds `_csrf`.
     */
    form: Map<string, string> | undefined;
    /** The request authenticated with the browser session cookie (not a header). */
    viaCookie: boolean;
  };
};
