/**
 * What every route of a relay is given: the one type the relay's route
 * modules import, so none imports the app that mounts it.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { ServiceSettings } from "../settings.ts";
import type { Holdings } from "./holdings.ts";
import type { RelayMetrics } from "./metrics.ts";
import type { VerdictCache } from "./verdicts.ts";

/** The relay's state, as its routes read it. */
export interface RelayDeps {
  /** The upstream's base URL (named in `read_only` refusals). */
  upstream: string;
  /** The relay's own public origin for URLs it hands out; default: the request's origin. */
  publicUrl?: string;
  /** The namespaces it serves, in memory. */
  holdings: Holdings;
  /** Verdicts on client tokens. */
  verdicts: VerdictCache;
  /** The relay's own key: it signs the snapshot URLs of its event stream. */
  key: CryptoKey;
  /** Where logs go (the service's JSON lines). */
  log: Logger;
  /** Event-stream limits and lifecycle (the service's settings and defaults). */
  settings: Pick<
    ServiceSettings,
    "keepaliveMs" | "idleCloseMs" | "inlineEventLimitBytes" | "deltaFileLimit"
  >;
  /** Aborted when the relay stops: streams end. */
  shutdown: AbortSignal;
  /** The relay's metrics. */
  metrics: RelayMetrics;
  /** Upstream state for `/healthz`. */
  upstreamState(): UpstreamState;
  /** A namespace's lag, ms (null when unknown). */
  lagMs(tenant: string, namespace: string): number | null;
}

/** The follower's view of the upstream. */
export interface UpstreamState {
  connected: boolean;
  /** Since when (RFC 3339), or null. */
  since: string | null;
  /** The last failure to reach it, or null. */
  lastError: string | null;
}
