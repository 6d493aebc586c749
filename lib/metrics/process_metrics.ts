/**
 * The process's own metrics (CPU, resident memory, open file descriptors,
 * heap, event-loop lag: prom-client's default `process_*` and `nodejs_*`
 * metrics, which work under Deno through its Node compatibility, less three
 * misnamed gauges), in one
 * registry per process. They describe the process, not a server, so every
 * server of the process shows the same ones; the registry is made on the
 * first scrape, so a process that is never scraped never samples them.
 *
 * @module
 */
import { collectDefaultMetrics, Registry } from "prom-client";

let registry: Registry | undefined;

/**
 * Gauges of prom-client's defaults whose names end in `_total`, which
 * Prometheus keeps for counters (`promtool check metrics` flags them); the
 * same figures remain, by type, in `nodejs_active_handles`,
 * `nodejs_active_requests` and `nodejs_active_resources`.
 */
const DROPPED = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

/**
 * The process registry, made on first use.
 *
 * @returns the registry holding the default process metrics
 *
 * @example
 * ```ts
 * import { processRegistry } from "./process_metrics.ts";
 * const text = await processRegistry().metrics();
 * if (!text.includes("process_resident_memory_bytes")) throw new Error(text);
 * ```
 */
export function processRegistry(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
    for (const name of DROPPED) registry.removeSingleMetric(name);
  }
  return registry;
}
