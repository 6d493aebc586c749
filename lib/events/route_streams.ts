/**
 * The {@linkcode SseStreams} of one route as the service's settings make
 * them: keepalive and idle close from lib/settings.ts, closed when the
 * process shuts down, on the service's clock. Every event-stream route
 * (`/api/v1/events`, the OFREP event stream, the console's live stream)
 * builds its streams here, so their lifecycle cannot drift apart.
 *
 * @module
 */
import type { ServiceSettings } from "../settings.ts";
import { SseStreams } from "./sse.ts";

/**
 * The streams of one route.
 *
 * @param settings the service's settings (`keepaliveMs`, `idleCloseMs`)
 * @param shutdown aborted when the process shuts down: every stream ends
 * @param now the service's clock (default: the system's)
 * @returns the route's streams
 *
 * @example
 * ```ts
 * import { routeStreams } from "./route_streams.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * const ac = new AbortController();
 * const streams = routeStreams(DEFAULT_SETTINGS, ac.signal, () => new Date(0));
 * const s = streams.open();
 * ac.abort(); // shutdown closes every stream
 * if (!s.closed || streams.size !== 0) throw new Error();
 * ```
 */
export function routeStreams(
  settings: Pick<ServiceSettings, "keepaliveMs" | "idleCloseMs">,
  shutdown: AbortSignal,
  now?: () => Date,
): SseStreams {
  return new SseStreams({
    keepaliveMs: settings.keepaliveMs,
    idleCloseMs: settings.idleCloseMs,
    shutdown,
    ...(now ? { now: () => now().getTime() } : {}),
  });
}
