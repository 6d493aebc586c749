/**
 * The arithmetic and the report of the soak (bench/soak.ts): what one sample
 * of the server holds, the least-squares slope of a series, the summary of
 * RSS and open descriptors (first, last, max, growth over the second half)
 * with its verdict, and the Markdown of a run.
 *
 * @module
 */

/** One sample of the server process and of the load so far. */
export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  /** Resident set size, KiB (VmRSS of /proc/<pid>/status). */
  rssKiB: number;
  /** Open file descriptors (entries of /proc/<pid>/fd). */
  fds: number;
  /** Descriptors by kind: `socket`, `file`, `pipe`, `anon` (eventfd, epoll, …). */
  fdKinds: Record<string, number>;
  /** Threads of the process (Threads of /proc/<pid>/status). */
  threads: number;
  /** Server CPU since the previous sample, in cores (1 = one core busy). */
  cpu: number;
  /** Requests answered as expected so far, all operations. */
  ok: number;
  /** Requests with an unexpected status or a network error so far. */
  errors: number;
  /** Event streams (both kinds) the load held open at that moment. */
  openStreams: number;
  /** Of those, streams open 5 s longer than the load meant to hold them. */
  overdueStreams: number;
  /** Event streams opened so far. */
  streamConnects: number;
  /** Events received over all streams so far. */
  events: number;
  /** Size of the KV file and its WAL, KiB. */
  kvKiB: number;
  /** V8 heap in use, KiB, from the server's /metrics (null when it has none). */
  heapUsedKiB: number | null;
  /** V8 heap reserved, KiB, likewise. */
  heapTotalKiB: number | null;
  /** Series (sample lines) of the server's /metrics, likewise. */
  metricsSeries: number | null;
}

/** First, last, smallest and largest value of a series, and its growth. */
export interface SeriesSummary {
  first: number;
  last: number;
  min: number;
  max: number;
  /** Least-squares slope over the second half of the run, per hour. */
  slopePerHour: number;
  /** That slope times the length of the second half: the growth it explains. */
  secondHalfGrowth: number;
  /** Mean of the second half. */
  secondHalfMean: number;
}

/**
 * The least-squares slope of `ys` over `xs` (0 for fewer than two points or
 * no spread in `xs`).
 *
 * @param xs the abscissae
 * @param ys the values, as many as `xs`
 * @returns the slope, in units of y per unit of x
 *
 * @example
 * ```ts
 * import { leastSquaresSlope } from "./soak_summary.ts";
 * if (leastSquaresSlope([0, 1, 2, 3], [5, 7, 9, 11]) !== 2) throw new Error();
 * ```
 */
export function leastSquaresSlope(xs: readonly number[], ys: readonly number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return 0;
  let sx = 0, sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
  }
  const mx = sx / n, my = sy / n;
  let num = 0, den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Summarises one field of the samples: first, last, min, max, and the
 * least-squares slope over the samples of the second half of the run (from
 * half the last sample's time on), per hour, with the growth it implies
 * over that half.
 *
 * @param samples the samples, in time order
 * @param pick the field
 * @returns the summary (all zeros without samples)
 *
 * @example
 * ```ts
 * import { summarise } from "./soak_summary.ts";
 * const s = summarise([{ t: 0, v: 10 }, { t: 1800, v: 30 }, { t: 3600, v: 30 }], (x) => x.v);
 * if ([s.first, s.last, s.max, s.slopePerHour].join() !== "10,30,30,0") throw new Error();
 * ```
 */
export function summarise<T extends { t: number }>(
  samples: readonly T[],
  pick: (s: T) => number,
): SeriesSummary {
  if (samples.length === 0) {
    return {
      first: 0,
      last: 0,
      min: 0,
      max: 0,
      slopePerHour: 0,
      secondHalfGrowth: 0,
      secondHalfMean: 0,
    };
  }
  const values = samples.map(pick);
  const end = samples.at(-1)!.t;
  const second = samples.filter((s) => s.t >= end / 2);
  const ys = second.map(pick);
  const slopePerSecond = leastSquaresSlope(second.map((s) => s.t), ys);
  const span = second.length > 1 ? second.at(-1)!.t - second[0]!.t : 0;
  return {
    first: values[0]!,
    last: values.at(-1)!,
    min: Math.min(...values),
    max: Math.max(...values),
    slopePerHour: slopePerSecond * 3600,
    secondHalfGrowth: slopePerSecond * span,
    secondHalfMean: ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length),
  };
}

/** What the soak concludes about one resource. */
export interface Verdict {
  /** True when the resource stayed bounded by the rule below. */
  bounded: boolean;
  /** The rule and the figures it was applied to, in a sentence. */
  reason: string;
}

/**
 * RSS is judged bounded when the growth the second half's slope explains
 * stays under 5 % of the second half's mean RSS (and under 16 MiB): a leak
 * per request or per connection at the soak's rates shows as a steady climb
 * far above that, while a collector's sawtooth does not.
 *
 * @param rss the RSS summary, KiB
 * @returns the verdict
 *
 * @example
 * ```ts
 * import { rssVerdict } from "./soak_summary.ts";
 * const flat = { first: 60000, last: 61000, min: 59000, max: 64000, slopePerHour: 800,
 *   secondHalfGrowth: 400, secondHalfMean: 61000 };
 * if (!rssVerdict(flat).bounded) throw new Error();
 * if (rssVerdict({ ...flat, secondHalfGrowth: 20000 }).bounded) throw new Error();
 * ```
 */
export function rssVerdict(rss: SeriesSummary): Verdict {
  const limit = Math.min(0.05 * rss.secondHalfMean, 16 * 1024);
  const bounded = rss.secondHalfGrowth < limit;
  return {
    bounded,
    reason:
      `second-half growth ${mib(rss.secondHalfGrowth)} MiB (slope ${mib(rss.slopePerHour)} MiB/h) ${
        bounded ? "<" : "≥"
      } limit ${mib(limit)} MiB (5 % of the second half's mean, ` +
      `at most 16 MiB)`,
  };
}

/**
 * Open descriptors are judged bounded when the second half never holds more
 * than the first half's maximum plus 8 (the streams the load holds at a
 * moment vary), and once the load has stopped and its connections closed
 * the count is back within 4 of the count before the load.
 *
 * @param firstHalfMax the most descriptors seen in the first half
 * @param secondHalfMax the most seen in the second half
 * @param before descriptors before the load started
 * @param after descriptors after the load stopped and settled
 * @returns the verdict
 *
 * @example
 * ```ts
 * import { fdVerdict } from "./soak_summary.ts";
 * if (!fdVerdict(60, 62, 20, 21).bounded) throw new Error();
 * if (fdVerdict(60, 90, 20, 21).bounded || fdVerdict(60, 60, 20, 40).bounded) throw new Error();
 * ```
 */
export function fdVerdict(
  firstHalfMax: number,
  secondHalfMax: number,
  before: number,
  after: number,
): Verdict {
  const bounded = secondHalfMax <= firstHalfMax + 8 && after <= before + 4;
  return {
    bounded,
    reason: `max ${firstHalfMax} in the first half, ${secondHalfMax} in the second ` +
      `(allowed ${firstHalfMax + 8}); ${before} before the load, ${after} after it ` +
      `(allowed ${before + 4})`,
  };
}

/**
 * KiB as MiB with one decimal.
 *
 * @param kib the amount in KiB
 * @returns its text in MiB
 *
 * @example
 * ```ts
 * import { mib } from "./soak_summary.ts";
 * if (mib(1536) !== "1.5") throw new Error();
 * ```
 */
export function mib(kib: number): string {
  return (kib / 1024).toFixed(1);
}

/**
 * Every `step`-th sample, always with the first and the last: the condensed
 * table of a long run.
 *
 * @param samples the samples
 * @param rows about how many rows to keep
 * @returns the kept samples, in order
 *
 * @example
 * ```ts
 * import { condense } from "./soak_summary.ts";
 * const s = [0, 1, 2, 3, 4, 5, 6].map((t) => ({ t }));
 * if (condense(s, 3).map((x) => x.t).join() !== "0,3,6") throw new Error();
 * ```
 */
export function condense<T>(samples: readonly T[], rows: number): T[] {
  if (samples.length <= rows) return [...samples];
  const step = Math.ceil((samples.length - 1) / Math.max(1, rows - 1));
  const out: T[] = [];
  for (let i = 0; i < samples.length - 1; i += step) out.push(samples[i]!);
  out.push(samples.at(-1)!);
  return out;
}

/**
 * The Markdown table of samples (time, RSS, V8 heap used, descriptors, threads, CPU, requests,
 * errors, open and overdue streams, streams opened, events, KV size).
 *
 * @param samples the rows to show
 * @returns the table, one line per row plus the header
 *
 * @example
 * ```ts
 * import { sampleTable } from "./soak_summary.ts";
 * const row = { t: 60, rssKiB: 65536, fds: 40, fdKinds: {}, threads: 30, cpu: 0.31, ok: 900,
 *   errors: 0, openStreams: 18, overdueStreams: 0, streamConnects: 70, events: 120, kvKiB: 2048,
 *   heapUsedKiB: 30720, heapTotalKiB: 40960, metricsSeries: 100 };
 * const want = "| 1:00 | 64.0 | 30.0 | 40 | 30 | 0.31 | 900 | 0 | 18 | 0 | 70 | 120 | 2.0 |";
 * if (!sampleTable([row]).includes(want)) throw new Error();
 * ```
 */
export function sampleTable(samples: readonly SoakSample[]): string {
  const lines = [
    "| time | RSS MiB | heap used MiB | fds | threads | server CPU (cores) | requests ok | errors | open streams | overdue | streams opened | events received | KV MiB |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const s of samples) {
    lines.push(
      `| ${clock(s.t)} | ${mib(s.rssKiB)} | ${
        s.heapUsedKiB === null ? "" : mib(s.heapUsedKiB)
      } | ${s.fds} | ${s.threads} | ${
        s.cpu.toFixed(2)
      } | ${s.ok} | ${s.errors} | ${s.openStreams} | ${s.overdueStreams} | ${s.streamConnects} | ${s.events} | ${
        mib(s.kvKiB)
      } |`,
    );
  }
  return lines.join("\n");
}

/**
 * Seconds as `m:ss` (or `h:mm:ss`).
 *
 * @param seconds the duration
 * @returns its text
 *
 * @example
 * ```ts
 * import { clock } from "./soak_summary.ts";
 * if (clock(125) !== "2:05" || clock(3725) !== "1:02:05") throw new Error();
 * ```
 */
export function clock(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return `${h > 0 ? `${h}:` : ""}${mm}:${String(r).padStart(2, "0")}`;
}
