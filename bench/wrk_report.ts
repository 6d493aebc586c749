/**
 * Shared by the load scripts: reading what wrk printed (`--latency`).
 *
 * @module
 */

/** The figures of one wrk report. */
export interface WrkReport {
  /** Requests per second. */
  rps: number;
  /** Median latency, ms. */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
  /** Responses with a status outside 2xx (wrk counts 304 among them). */
  non2xx: number;
  /** wrk's "Socket errors" line, or null when there were none. */
  socketErrors: string | null;
}

/**
 * Reads a wrk `--latency` report; throws with the text when a figure is missing.
 *
 * @param text wrk's standard output
 * @returns the figures
 */
export function readWrkReport(text: string): WrkReport {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(text);
  const p50 = /^\s+50%\s+(\S+)/m.exec(text);
  const p99 = /^\s+99%\s+(\S+)/m.exec(text);
  if (!rps || !p50 || !p99) throw new Error(`cannot read wrk output:\n${text}`);
  return {
    rps: Number(rps[1]),
    p50: toMs(p50[1]!),
    p99: toMs(p99[1]!),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: /Socket errors: (.*)$/m.exec(text)?.[1] ?? null,
  };
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!m) throw new Error(`cannot read wrk duration "${text}"`);
  return Number(m[1]) * ({ us: 1e-3, ms: 1, s: 1e3 } as Record<string, number>)[m[2]!]!;
}
