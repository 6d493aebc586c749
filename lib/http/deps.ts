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
}

/** Variables every handler can read from the hono context. */
export type AppEnv = {
  Variables: {
    requestId: string;
    principal: Principal;
    clientIp: string | undefined;
    /** Authentication of this request just checked the namespace-client gate. */
    publicGateChecked: boolean;
  };
};
