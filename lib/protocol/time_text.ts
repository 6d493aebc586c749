/**
 * Times and durations as people write them, read the same way by the
 * command line and the API: a duration is a positive whole number and one
 * unit (`90s`, `15m`, `12h`, `30d`, `2w`); an instant is RFC 3339 with its
 * zone (`2026-12-24T09:00:00Z`, `2026-12-24T10:00:00+01:00`). Callers turn
 * a null into their own error (a usage error, a 400).
 *
 * @module
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60 * 1000,
  h: 60 * 60 * 1000,
  d: 24 * 60 * 60 * 1000,
  w: 7 * 24 * 60 * 60 * 1000,
};

const DURATION_RE = /^([1-9][0-9]{0,8})([smhdw])$/;
const INSTANT_RE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A duration in milliseconds, or null when `text` is not one (no unit,
 * zero, a sign, a fraction, spaces inside, combined units like `1h30m`).
 *
 * @param text the duration, like `30d`
 * @returns milliseconds, or null
 *
 * @example
 * ```ts
 * import { durationMsOf } from "./time_text.ts";
 * if (durationMsOf("12h") !== 12 * 3600 * 1000 || durationMsOf("1h30m") !== null) throw new Error();
 * ```
 */
export function durationMsOf(text: string): number | null {
  const m = DURATION_RE.exec(text.trim());
  return m === null ? null : Number(m[1]) * UNIT_MS[m[2]!]!;
}

/**
 * Milliseconds as the largest whole unit that divides them exactly
 * (`2592000000` → `30d`), else whole seconds.
 *
 * @param ms a duration in milliseconds
 * @returns a short text such as `30d`, `12h` or `90m`
 *
 * @example
 * ```ts
 * import { formatDuration } from "./time_text.ts";
 * if (formatDuration(90 * 60 * 1000) !== "90m" || formatDuration(2 * 86400 * 1000) !== "2d") throw new Error();
 * ```
 */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m"] as const) {
    const size = UNIT_MS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

/**
 * An RFC 3339 instant with its zone, or null when `text` is not one.
 *
 * @param text the instant
 * @returns the date, or null
 *
 * @example
 * ```ts
 * import { instantOf } from "./time_text.ts";
 * if (instantOf("2030-01-01T01:00:00+01:00")?.toISOString() !== "2030-01-01T00:00:00.000Z") throw new Error();
 * if (instantOf("2030-01-01") !== null) throw new Error();
 * ```
 */
export function instantOf(text: string): Date | null {
  if (!INSTANT_RE.test(text)) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}
