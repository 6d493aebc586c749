/**
 * The metrics of one server (`createServer`), in a Prometheus registry of
 * its own (prom-client), so that two servers in one process (as tests run
 * them) never count into each other; only the process's own metrics
 * (lib/metrics/process_metrics.ts) are shared, as they describe the process.
 * `GET /metrics` (lib/http/metrics.ts) renders both.
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `cfgtool_build_info` | gauge (1) | `version` |
 * | `cfgtool_http_requests_total` | counter | `method`, `route`, `status` |
 * | `cfgtool_http_request_duration_seconds` | histogram | `method`, `route`, `status` |
 * | `cfgtool_evaluations_total` | counter | `api`, `tenant`, `namespace`, `flag`, `variation`, `reason` |
 * | `cfgtool_event_streams_open` | gauge | `api` |
 * | `cfgtool_manifest_pushes_total` | counter | `result` (`changed`, `unchanged`) |
 * | `cfgtool_manifest_push_size_bytes` | histogram | |
 * | `cfgtool_manifest_rollbacks_total` | counter | `result` |
 * | `cfgtool_kv_operation_duration_seconds` | histogram | `op` |
 * | `cfgtool_kv_operation_errors_total` | counter | `op` |
 * | `cfgtool_kv_commit_conflicts_total` | counter | |
 * | `cfgtool_cache_requests_total` | counter | `cache`, `result` (`hit`, `miss`) |
 * | `cfgtool_cache_entries` | gauge | `cache` |
 * | `cfgtool_audit_retention_pruned_total` | counter | `record` (`audit_entry`, `token`) |
 *
 * Every label set is bounded: `route` is the matched route pattern (never
 * the raw path), `method` one of the HTTP methods or `_other`, evaluations
 * as lib/metrics/evaluation_series.ts bounds them, the rest by the code.
 *
 * @module
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { VERSION } from "../version.ts";
import {
  type EvaluationRecorder,
  EvaluationSeries,
  type SeriesBounds,
} from "./evaluation_series.ts";
import { processRegistry } from "./process_metrics.ts";
import { ScrapeAccess } from "./scrape_access.ts";

/** Options of {@linkcode ServiceMetrics}. */
export interface ServiceMetricsOptions {
  /** Record anything at all (default true); off, every method returns at once. */
  enabled?: boolean;
  /** The metrics token (`--metrics-token`) that may scrape from any address. */
  token?: string;
  /** Bounds of the evaluation counter's label sets. */
  evaluationBounds?: Partial<SeriesBounds>;
}

/** A cache whose lookups are counted. */
export interface CountedCache {
  /** Lookups answered from the cache so far. */
  readonly hits: number;
  /** Lookups that were not so far. */
  readonly misses: number;
  /** Entries held now, when the cache can tell. */
  readonly size?: number;
}

/** How a KV operation ended. */
export type KvOutcome = "ok" | "error" | "conflict";

/** Buckets of the HTTP latency histogram, seconds: evaluations take well under a millisecond. */
const HTTP_BUCKETS = [
  0.0002,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];
/** Buckets of the KV latency histogram, seconds. */
const KV_BUCKETS = [
  0.00005,
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  1,
];
/** Buckets of the push size histogram: 1 KiB to 64 MiB, ×4. */
const SIZE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536].map((k) => k * 1024);

const NO_RECORDER: EvaluationRecorder = { add() {} };

/** One latency series of `cfgtool_http_request_duration_seconds`, counted in place. */
interface LatencySeries {
  labels: { method: string; route: string; status: string };
  /** Requests per bucket (not cumulative), by the index of the bucket's upper bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** A series as prom-client's histogram keeps it (what a scrape reads). */
interface PromHistogramEntry {
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

/**
 * The metrics of one server.
 *
 * @example
 * ```ts
 * import { ServiceMetrics } from "./service_metrics.ts";
 * const metrics = new ServiceMetrics();
 * metrics.observeRequest("GET", "/healthz", 200, 0.0004);
 * metrics.pushed(2048, true);
 * const text = await metrics.render();
 * if (!text.includes('cfgtool_http_requests_total{method="GET",route="/healthz",status="200"} 1')) {
 *   throw new Error(text);
 * }
 * if (!text.includes('cfgtool_manifest_pushes_total{result="changed"} 1')) throw new Error(text);
 * ```
 */
export class ServiceMetrics {
  /** False when the server runs without metrics: nothing is recorded. */
  readonly enabled: boolean;
  /** This server's registry (the process metrics are not in it). */
  readonly registry: Registry;
  /** Who may scrape. */
  readonly access: ScrapeAccess;
  readonly #series: EvaluationSeries;
  /** The latency histogram's observers by method, then route, then status. */
  readonly #observers = new Map<string, Map<string, Map<number, LatencySeries>>>();
  /** Every latency series, in the order first seen (the histogram reads them at a scrape). */
  readonly #latencies: LatencySeries[] = [];
  readonly #pushes: Counter<"result">;
  readonly #pushBytes: Histogram<string>;
  readonly #rollbacks: Counter<"result">;
  readonly #kv: Histogram<"op">;
  readonly #kvErrors: Counter<"op">;
  readonly #kvConflicts: Counter<string>;
  readonly #pruned: Counter<"record">;
  readonly #streams = new Map<string, Set<() => number>>();
  readonly #caches = new Map<string, Set<CountedCache>>();

  /** @param options on or off, the scrape token, evaluation label bounds */
  constructor(options: ServiceMetricsOptions = {}) {
    this.enabled = options.enabled ?? true;
    this.access = new ScrapeAccess(options.token);
    this.#series = new EvaluationSeries(options.evaluationBounds);
    this.registry = new Registry();
    const registers = [this.registry];
    const series = this.#series;
    const streams = this.#streams;
    const caches = this.#caches;

    new Gauge({
      name: "cfgtool_build_info",
      help: "The running cfgtool version (always 1).",
      labelNames: ["version"],
      registers,
    }).set({ version: VERSION }, 1);
    const latencies = this.#latencies;
    const latency: Histogram<"method" | "route" | "status"> = new Histogram({
      name: "cfgtool_http_request_duration_seconds",
      help: "Time to answer an HTTP request (to the response head for event streams), " +
        "by method, matched route pattern and status.",
      labelNames: ["method", "route", "status"],
      buckets: HTTP_BUCKETS,
      registers,
      // Requests are counted in plain arrays (observeRequest): prom-client's own
      // observe() costs several times more per request. A scrape copies them in.
      collect: () => {
        latency.reset();
        for (const s of latencies) latency.zero(s.labels);
        const entries = Object.values(
          (latency as unknown as { hashMap: Record<string, PromHistogramEntry> }).hashMap,
        );
        latencies.forEach((s, n) => {
          const entry = entries[n]!;
          entry.sum = s.sum;
          entry.count = s.count;
          HTTP_BUCKETS.forEach((bound, i) => (entry.bucketValues[bound] = s.counts[i]!));
        });
      },
    });
    new Counter({
      name: "cfgtool_http_requests_total",
      help: "HTTP requests answered, by method, matched route pattern and status.",
      labelNames: ["method", "route", "status"],
      registers,
      // the latency histogram counts them already: one update per request, not two
      async collect() {
        this.reset();
        for (const v of (await latency.get()).values) {
          if (v.metricName !== "cfgtool_http_request_duration_seconds_count") continue;
          const { method, route, status } = v.labels;
          this.inc({ method: `${method}`, route: `${route}`, status: `${status}` }, v.value);
        }
      },
    });
    new Counter({
      name: "cfgtool_evaluations_total",
      help: "Flag evaluations, by API, tenant, namespace, flag, variation and reason " +
        "(bounded: _other, _unknown and _none stand for what is over the bounds).",
      labelNames: ["api", "tenant", "namespace", "flag", "variation", "reason"],
      registers,
      collect() {
        this.reset();
        for (const c of series.counts()) this.inc(c.labels, c.value);
      },
    });
    new Gauge({
      name: "cfgtool_event_streams_open",
      help: "Event streams open now: api=cfgtool for /api/v1/events, api=ofrep for OFREP's.",
      labelNames: ["api"],
      registers,
      collect() {
        this.reset();
        for (const [api, sources] of streams) {
          let n = 0;
          for (const count of sources) n += count();
          this.set({ api }, n);
        }
      },
    });
    this.#pushes = new Counter({
      name: "cfgtool_manifest_pushes_total",
      help: "Manifest pushes committed (result=unchanged: same content as the head).",
      labelNames: ["result"],
      registers,
    });
    this.#pushBytes = new Histogram({
      name: "cfgtool_manifest_push_size_bytes",
      help: "Size of the pushed manifest uploads, bytes.",
      buckets: SIZE_BUCKETS,
      registers,
    });
    this.#rollbacks = new Counter({
      name: "cfgtool_manifest_rollbacks_total",
      help: "Manifest rollbacks committed (result=unchanged: same content as the head).",
      labelNames: ["result"],
      registers,
    });
    this.#kv = new Histogram({
      name: "cfgtool_kv_operation_duration_seconds",
      help: "Deno KV operations by kind (list: time spent fetching, over the whole iteration).",
      labelNames: ["op"],
      buckets: KV_BUCKETS,
      registers,
    });
    this.#kvErrors = new Counter({
      name: "cfgtool_kv_operation_errors_total",
      help: "Deno KV operations that threw, by kind.",
      labelNames: ["op"],
      registers,
    });
    this.#kvConflicts = new Counter({
      name: "cfgtool_kv_commit_conflicts_total",
      help: "Atomic commits refused because a checked key had changed.",
      registers,
    });
    new Counter({
      name: "cfgtool_cache_requests_total",
      help: "Lookups in the per-process caches, by cache and result (hit, miss).",
      labelNames: ["cache", "result"],
      registers,
      collect() {
        this.reset();
        for (const [cache, set] of caches) {
          let hits = 0;
          let misses = 0;
          for (const c of set) {
            hits += c.hits;
            misses += c.misses;
          }
          this.inc({ cache, result: "hit" }, hits);
          this.inc({ cache, result: "miss" }, misses);
        }
      },
    });
    new Gauge({
      name: "cfgtool_cache_entries",
      help: "Entries held by the per-process caches.",
      labelNames: ["cache"],
      registers,
      collect() {
        this.reset();
        for (const [cache, set] of caches) {
          let n: number | undefined;
          for (const c of set) if (c.size !== undefined) n = (n ?? 0) + c.size;
          if (n !== undefined) this.set({ cache }, n);
        }
      },
    });
    this.#pruned = new Counter({
      name: "cfgtool_audit_retention_pruned_total",
      help: "Records deleted by the audit-retention task: audit entries, and expired or " +
        "revoked token records.",
      labelNames: ["record"],
      registers,
    });
  }

  /**
   * Counts one answered HTTP request.
   *
   * @param method the request method (normalized by the caller)
   * @param route the matched route pattern
   * @param status the response status
   * @param seconds time to the response
   */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    if (!this.enabled) return;
    let byRoute = this.#observers.get(method);
    if (byRoute === undefined) this.#observers.set(method, byRoute = new Map());
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, byStatus = new Map());
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        labels: { method, route, status: String(status) },
        counts: new Array(HTTP_BUCKETS.length).fill(0),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, series);
      this.#latencies.push(series);
    }
    let i = 0;
    while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]!) i++;
    if (i < HTTP_BUCKETS.length) series.counts[i]!++;
    series.sum += seconds;
    series.count++;
  }

  /**
   * The recorder of one API's evaluations in one namespace (bounded, see
   * lib/metrics/evaluation_series.ts); one that records nothing when
   * metrics are off.
   *
   * @param api `cfgtool` or `ofrep`
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns the recorder
   */
  evaluations(api: string, tenant: string, namespace: string): EvaluationRecorder {
    return this.enabled ? this.#series.of(api, tenant, namespace) : NO_RECORDER;
  }

  /**
   * Counts a committed manifest push.
   *
   * @param bytes the upload's size
   * @param changed whether it made a new version
   */
  pushed(bytes: number, changed: boolean): void {
    if (!this.enabled) return;
    this.#pushes.inc({ result: changed ? "changed" : "unchanged" });
    this.#pushBytes.observe(bytes);
  }

  /**
   * Counts a committed rollback.
   *
   * @param changed whether it made a new version
   */
  rolledBack(changed: boolean): void {
    if (this.enabled) this.#rollbacks.inc({ result: changed ? "changed" : "unchanged" });
  }

  /**
   * Records one KV operation.
   *
   * @param op the operation (`get`, `commit`, …)
   * @param seconds how long it took
   * @param outcome how it ended
   */
  observeKv(op: string, seconds: number, outcome: KvOutcome): void {
    if (!this.enabled) return;
    this.#kv.observe({ op }, seconds);
    if (outcome === "error") this.#kvErrors.inc({ op });
    else if (outcome === "conflict") this.#kvConflicts.inc();
  }

  /**
   * Counts what one audit-retention run deleted.
   *
   * @param result audit entries and token records deleted
   */
  auditPruned(result: { auditEntries: number; tokens: number }): void {
    if (!this.enabled) return;
    this.#pruned.inc({ record: "audit_entry" }, result.auditEntries);
    this.#pruned.inc({ record: "token" }, result.tokens);
  }

  /**
   * Adds a source of open streams, read at each scrape.
   *
   * @param api which API's streams (`cfgtool`, `ofrep`)
   * @param count the number open now
   * @returns removes the source
   */
  addStreams(api: string, count: () => number): () => void {
    let set = this.#streams.get(api);
    if (set === undefined) this.#streams.set(api, set = new Set());
    set.add(count);
    return () => void set.delete(count);
  }

  /**
   * Adds a cache whose hits and misses are read at each scrape.
   *
   * @param name the `cache` label
   * @param cache its counters
   * @returns removes the cache
   */
  addCache(name: string, cache: CountedCache): () => void {
    let set = this.#caches.get(name);
    if (set === undefined) this.#caches.set(name, set = new Set());
    set.add(cache);
    return () => void set.delete(cache);
  }

  /** The exposition's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The exposition: this server's metrics, then the process's.
   *
   * @returns Prometheus text format
   */
  async render(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processRegistry().metrics()}`;
  }
}
