/**
 * Test helper: reads a `/metrics` answer with a real Prometheus text-format
 * parser (`parse-prometheus-text-format`, a port of Prometheus's own) and
 * looks samples up by name and labels.
 *
 * @module
 */
import parsePrometheus from "parse-prometheus-text-format";

/** One sample of a counter or gauge, or one series of a histogram. */
export interface Sample {
  labels: Record<string, string>;
  /** Counter and gauge value. */
  value?: number;
  /** Histogram: observations. */
  count?: number;
  /** Histogram: their sum. */
  sum?: number;
  /** Histogram: cumulative count per upper bound. */
  buckets?: Record<string, number>;
}

/** One metric family. */
export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

// deno-lint-ignore no-explicit-any
type Parsed = any[];

const numbers = (o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number(v)]));

/** Labels without `le`, as a stable key. */
const seriesKey = (labels: Record<string, string>) =>
  JSON.stringify(Object.entries(labels).filter(([k]) => k !== "le").sort());

/**
 * Parses an exposition; throws when the parser refuses it.
 *
 * The parser folds a histogram's series into one and drops their labels
 * when the histogram has labels of its own, so histograms are read a
 * second time through the same parser with their type line as `untyped`,
 * which keeps every `_bucket`, `_sum` and `_count` line with its labels.
 *
 * @param text Prometheus text format
 * @returns the families by name
 */
export function parseExposition(text: string): Map<string, Family> {
  const strict = parsePrometheus(text) as Parsed;
  const lines = parsePrometheus(
    text.replace(/^# TYPE (\S+) histogram$/gm, "# TYPE $1 untyped"),
  ) as Parsed;
  const flat = new Map<string, Parsed>(); // a name's lines may come in several runs
  for (const f of lines) flat.set(f.name, [...(flat.get(f.name) ?? []), ...f.metrics]);
  const out = new Map<string, Family>();
  for (const f of strict) {
    let list: Sample[];
    if (f.type === "HISTOGRAM") {
      const series = new Map<string, Sample>();
      const of = (labels: Record<string, string>) => {
        const key = seriesKey(labels ?? {});
        let s = series.get(key);
        if (s === undefined) {
          const own = Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => k !== "le"));
          series.set(key, s = { labels: own, buckets: {}, count: 0, sum: 0 });
        }
        return s;
      };
      for (const m of flat.get(`${f.name}_bucket`) ?? []) {
        of(m.labels).buckets![m.labels.le] = Number(m.value);
      }
      for (const m of flat.get(`${f.name}_sum`) ?? []) of(m.labels).sum = Number(m.value);
      for (const m of flat.get(`${f.name}_count`) ?? []) of(m.labels).count = Number(m.value);
      list = [...series.values()];
    } else {
      // deno-lint-ignore no-explicit-any
      list = f.metrics.map((m: any) => ({
        labels: m.labels ?? {},
        value: Number(m.value),
        ...(m.quantiles === undefined ? {} : { buckets: numbers(m.quantiles) }),
      }));
    }
    out.set(f.name, { name: f.name, help: f.help, type: f.type, samples: list });
  }
  return out;
}

/**
 * The samples of a family whose labels include `labels`.
 *
 * @param families parsed exposition
 * @param name family name
 * @param labels labels the samples must have
 * @returns the matching samples (none when the family is absent)
 */
export function samples(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): Sample[] {
  return (families.get(name)?.samples ?? []).filter((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
}

/**
 * The sum of the values (or histogram counts) of the matching samples.
 *
 * @param families parsed exposition
 * @param name family name
 * @param labels labels the samples must have
 * @returns the total, 0 when none match
 */
export function total(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  return samples(families, name, labels).reduce((n, s) => n + (s.value ?? s.count ?? 0), 0);
}
