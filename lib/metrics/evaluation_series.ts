/**
 * The evaluation counter's label sets, bounded so that no client can make
 * the process keep an unbounded number of series. A series is one
 * (api, tenant, namespace, flag, variation, reason); the bounds:
 *
 * - the flag label only ever holds keys of the evaluated manifest: an
 *   evaluation of a key the manifest does not have (`FLAG_NOT_FOUND`) counts
 *   under flag `_unknown`, so asking for a million made-up keys adds one
 *   series, not a million;
 * - at most `maxNamespaces` (tenant, namespace) pairs get series of their
 *   own, the first seen; evaluations of any other namespace count under
 *   tenant and namespace `_other` (with flag, variation and reason `_other`);
 * - within a namespace, at most `maxSeriesPerNamespace` distinct
 *   (api, flag, variation, reason); further ones count under flag,
 *   variation and reason `_other` of that namespace;
 * - variation is `_none` when the result has none (an error), and a reason
 *   outside OpenFeature's set is `_other`.
 *
 * So at most `maxNamespaces × (maxSeriesPerNamespace + 2) + 2` series exist.
 * Real flag keys, slugs and variation names start with a letter or digit
 * (lib/flags/model.ts), so the `_…` values never collide with them.
 *
 * Counting is a map lookup and an increment per evaluation; the counts are
 * handed to the Prometheus counter only when it is scraped.
 *
 * @module
 */

/** Bounds of an {@linkcode EvaluationSeries}. */
export interface SeriesBounds {
  /** (tenant, namespace) pairs with series of their own (default 100). */
  maxNamespaces: number;
  /** Distinct (api, flag, variation, reason) per namespace (default 100). */
  maxSeriesPerNamespace: number;
}

/** Default {@linkcode SeriesBounds}. */
export const DEFAULT_SERIES_BOUNDS: Readonly<SeriesBounds> = Object.freeze({
  maxNamespaces: 100,
  maxSeriesPerNamespace: 100,
});

/** The label value of everything over a bound. */
export const OTHER = "_other";
/** The flag label of an evaluation of a key the manifest does not have. */
export const UNKNOWN_FLAG = "_unknown";
/** The variation label of a result without a variation. */
export const NO_VARIATION = "_none";

/** One series: its labels and its count. */
export interface EvaluationCount {
  /** The labels, as the counter exposes them. */
  labels: {
    api: string;
    tenant: string;
    namespace: string;
    flag: string;
    variation: string;
    reason: string;
  };
  /** Evaluations counted. */
  value: number;
}

/** Counts the evaluations of one API in one namespace. */
export interface EvaluationRecorder {
  /**
   * Counts `n` evaluations (default one) of a flag.
   *
   * @param flag the flag key, as the engine's result names it
   * @param variation the variation served, or null (an error)
   * @param reason the OpenFeature reason
   * @param unknownFlag true when the manifest has no such flag (`FLAG_NOT_FOUND`)
   * @param n how many
   */
  add(
    flag: string,
    variation: string | null,
    reason: string,
    unknownFlag?: boolean,
    n?: number,
  ): void;
}

const REASONS = new Set(["STATIC", "TARGETING_MATCH", "SPLIT", "DEFAULT", "DISABLED", "ERROR"]);

type Slot = EvaluationCount;

/** The series of one (tenant, namespace): its bound is shared by its APIs. */
class NamespaceSeries {
  /** Every series, in the order first seen. */
  readonly slots: Slot[] = [];
  readonly apis = new Map<string, ApiSeries>();
  /** Series of their own (not overflow) left to admit. */
  room: number;

  constructor(readonly tenant: string, readonly namespace: string, max: number) {
    this.room = max;
  }

  api(name: string): ApiSeries {
    let a = this.apis.get(name);
    if (a === undefined) this.apis.set(name, a = new ApiSeries(this, name));
    return a;
  }

  slot(api: string, flag: string, variation: string, reason: string): Slot {
    const tenant = this.tenant;
    const namespace = this.namespace;
    const slot = { labels: { api, tenant, namespace, flag, variation, reason }, value: 0 };
    this.slots.push(slot);
    return slot;
  }
}

/** The series of one API in one namespace: flag → variation → reason → count. */
class ApiSeries implements EvaluationRecorder {
  readonly #ns: NamespaceSeries;
  readonly #api: string;
  readonly #flags = new Map<string, Map<string, Map<string, Slot>>>();
  #overflow: Slot | undefined;

  constructor(ns: NamespaceSeries, api: string) {
    this.#ns = ns;
    this.#api = api;
  }

  add(flag: string, variation: string | null, reason: string, unknownFlag = false, n = 1): void {
    const f = unknownFlag ? UNKNOWN_FLAG : flag;
    const v = variation ?? NO_VARIATION;
    const r = REASONS.has(reason) ? reason : OTHER;
    let byVariation = this.#flags.get(f);
    let byReason = byVariation?.get(v);
    let slot = byReason?.get(r);
    if (slot === undefined) {
      if (this.#ns.room > 0) {
        this.#ns.room--;
        slot = this.#ns.slot(this.#api, f, v, r);
        if (byVariation === undefined) this.#flags.set(f, byVariation = new Map());
        if (byReason === undefined) byVariation.set(v, byReason = new Map());
        byReason.set(r, slot);
      } else {
        slot = this.#overflow ??= this.#ns.slot(this.#api, OTHER, OTHER, OTHER);
      }
    }
    slot.value += n;
  }
}

/**
 * Counts evaluations per bounded label set (see the module doc).
 *
 * @example
 * ```ts
 * import { EvaluationSeries } from "./evaluation_series.ts";
 * const series = new EvaluationSeries({ maxNamespaces: 1, maxSeriesPerNamespace: 1 });
 * const web = series.of("ofrep", "acme", "web");
 * web.add("a", "on", "DEFAULT");
 * web.add("b", "on", "DEFAULT"); // over the namespace's bound: _other
 * series.of("ofrep", "acme", "api").add("a", "on", "DEFAULT"); // over the namespace bound
 * const flags = series.counts().map((c) => `${c.labels.namespace}/${c.labels.flag}`);
 * if (flags.join() !== "web/a,web/_other,_other/_other") throw new Error(flags.join());
 * ```
 */
export class EvaluationSeries {
  readonly #bounds: SeriesBounds;
  readonly #namespaces = new Map<string, NamespaceSeries>();
  readonly #overflow: NamespaceSeries;

  /** @param bounds the bounds; unset ones take {@linkcode DEFAULT_SERIES_BOUNDS} */
  constructor(bounds: Partial<SeriesBounds> = {}) {
    this.#bounds = { ...DEFAULT_SERIES_BOUNDS, ...bounds };
    // every namespace over the bound shares one series per api
    this.#overflow = new NamespaceSeries(OTHER, OTHER, 0);
  }

  /**
   * The recorder of one API's evaluations in one namespace (the shared
   * `_other` one when the namespace is over the bound). Look it up once
   * per request: a bulk evaluation then costs a few map lookups per flag.
   *
   * @param api `cfgtool` (the service's own endpoints) or `ofrep`
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns the recorder
   */
  of(api: string, tenant: string, namespace: string): EvaluationRecorder {
    const key = `${tenant}\u0000${namespace}`;
    let ns = this.#namespaces.get(key);
    if (ns === undefined) {
      if (this.#namespaces.size >= this.#bounds.maxNamespaces) return this.#overflow.api(api);
      ns = new NamespaceSeries(tenant, namespace, this.#bounds.maxSeriesPerNamespace);
      this.#namespaces.set(key, ns);
    }
    return ns.api(api);
  }

  /** Number of series held. */
  get size(): number {
    let n = this.#overflow.slots.length;
    for (const ns of this.#namespaces.values()) n += ns.slots.length;
    return n;
  }

  /**
   * Every series with its count, namespaces in the order first seen, the
   * shared overflow last.
   *
   * @returns the series
   */
  counts(): EvaluationCount[] {
    const out: EvaluationCount[] = [];
    for (const ns of [...this.#namespaces.values(), this.#overflow]) {
      for (const slot of ns.slots) out.push({ labels: slot.labels, value: slot.value });
    }
    return out;
  }
}
