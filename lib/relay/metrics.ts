/**
 * A relay's `/metrics` (Prometheus text, a registry of its own):
 *
 * | series | what |
 * |---|---|
 * | `cfgtool_relay_upstream_connected` | 1 while every upstream stream is connected |
 * | `cfgtool_relay_upstream_reconnects_total` | upstream streams connected again after a drop |
 * | `cfgtool_relay_namespace_version{tenant,namespace}` | the version served |
 * | `cfgtool_relay_namespace_lag_seconds{tenant,namespace}` | 0 while its stream is connected, else the time since it was |
 * | `cfgtool_relay_token_verdicts_total{outcome}` | token checks: `hit` (cache), `upstream` (asked), `refused`, `offline` (kept verdict, upstream down), `unavailable` |
 * | `cfgtool_relay_requests_total{method,status}` | answered requests |
 * | `cfgtool_relay_event_streams_open{api}` | open streams (`cfgtool`, `ofrep`) |
 *
 * @module
 */
import { Counter, Gauge, Registry } from "prom-client";
import type { VerdictOutcome } from "./verdicts.ts";

/** What the namespace gauges read when scraped. */
export interface NamespaceSample {
  tenant: string;
  namespace: string;
  version: number;
  lagMs: number | null;
}

/** What the relay's metrics read on each scrape. */
export interface RelayProbes {
  connected(): boolean;
  namespaces(): NamespaceSample[];
  streams(): { cfgtool: number; ofrep: number };
}

/**
 * The relay's metrics.
 *
 * @example
 * ```ts
 * import { RelayMetrics } from "./metrics.ts";
 * const m = new RelayMetrics();
 * m.verdict("hit");
 * m.probe({ connected: () => true, namespaces: () => [], streams: () => ({ cfgtool: 0, ofrep: 0 }) });
 * const text = await m.render();
 * if (!text.includes('cfgtool_relay_token_verdicts_total{outcome="hit"} 1')) throw new Error(text);
 * if (!text.includes("cfgtool_relay_upstream_connected 1")) throw new Error(text);
 * ```
 */
export class RelayMetrics {
  /** The registry `/metrics` renders. */
  readonly registry: Registry = new Registry();
  readonly #reconnects: Counter;
  readonly #verdicts: Counter<"outcome">;
  readonly #requests: Counter<"method" | "status">;
  #probes: RelayProbes = {
    connected: () => false,
    namespaces: () => [],
    streams: () => ({ cfgtool: 0, ofrep: 0 }),
  };

  constructor() {
    const registers = [this.registry];
    const probes = () => this.#probes;
    this.#reconnects = new Counter({
      name: "cfgtool_relay_upstream_reconnects_total",
      help: "Upstream event streams connected again after a drop.",
      registers,
    });
    this.#verdicts = new Counter({
      name: "cfgtool_relay_token_verdicts_total",
      help: "Client token checks by outcome (hit: answered from the verdict cache).",
      labelNames: ["outcome"],
      registers,
    });
    this.#requests = new Counter({
      name: "cfgtool_relay_requests_total",
      help: "Requests answered by the relay.",
      labelNames: ["method", "status"],
      registers,
    });
    new Gauge({
      name: "cfgtool_relay_upstream_connected",
      help: "1 while every upstream event stream is connected.",
      registers,
      collect() {
        this.set(probes().connected() ? 1 : 0);
      },
    });
    new Gauge({
      name: "cfgtool_relay_namespace_version",
      help: "The manifest version the relay serves.",
      labelNames: ["tenant", "namespace"],
      registers,
      collect() {
        this.reset();
        for (const n of probes().namespaces()) {
          this.set({ tenant: n.tenant, namespace: n.namespace }, n.version);
        }
      },
    });
    new Gauge({
      name: "cfgtool_relay_namespace_lag_seconds",
      help: "0 while the namespace's upstream stream is connected, else seconds since it was.",
      labelNames: ["tenant", "namespace"],
      registers,
      collect() {
        this.reset();
        for (const n of probes().namespaces()) {
          if (n.lagMs !== null) {
            this.set({ tenant: n.tenant, namespace: n.namespace }, n.lagMs / 1000);
          }
        }
      },
    });
    new Gauge({
      name: "cfgtool_relay_event_streams_open",
      help: "Open event streams served by the relay.",
      labelNames: ["api"],
      registers,
      collect() {
        const s = probes().streams();
        this.set({ api: "cfgtool" }, s.cfgtool);
        this.set({ api: "ofrep" }, s.ofrep);
      },
    });
  }

  /**
   * Sets what the gauges read at scrape time.
   *
   * @param probes the readers
   */
  probe(probes: RelayProbes): void {
    this.#probes = probes;
  }

  /** Counts an upstream reconnection. */
  reconnected(): void {
    this.#reconnects.inc();
  }

  /**
   * Counts a token check.
   *
   * @param outcome how it was answered
   */
  verdict(outcome: VerdictOutcome): void {
    this.#verdicts.inc({ outcome });
  }

  /**
   * Counts an answered request.
   *
   * @param method the method
   * @param status the status
   */
  request(method: string, status: number): void {
    const m = ["GET", "POST", "OPTIONS", "HEAD", "PUT", "PATCH", "DELETE"].includes(method)
      ? method
      : "other";
    this.#requests.inc({ method: m, status: String(status) });
  }

  /** The Prometheus text. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
