/**
 * Durations on the command line (`--expires-in 30d`, `--ttl 12h`): a
 * positive whole number followed by one unit, `s`, `m`, `h`, `d` or `w`.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

const UNIT_MS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60 * 1000,
  h: 60 * 60 * 1000,
  d: 24 * 60 * 60 * 1000,
  w: 7 * 24 * 60 * 60 * 1000,
};

const DURATION_RE = /^([1-9][0-9]{0,8})([smhdw])$/;

/**
 * Parses a duration such as `30d`, `12h`, `90m`, `45s` or `2w` into
 * milliseconds. Anything else (no unit, zero, a sign, a fraction, spaces,
 * combined units like `1h30m`) is a {@linkcode UsageError} naming the option.
 *
 * @param text the option value
 * @param option the option name used in the error message
 * @returns the duration in milliseconds
 *
 * @example
 * ```ts
 * import { parseDuration } from "./duration.ts";
 * if (parseDuration("12h") !== 12 * 3600 * 1000) throw new Error();
 * if (parseDuration("30d") !== 30 * 86400 * 1000) throw new Error();
 * ```
 */
export function parseDuration(text: string, option = "duration"): number {
  const m = DURATION_RE.exec(text.trim());
  if (m === null) {
    throw new UsageError(
      `${option} must be a positive whole number followed by s, m, h, d or w ` +
        `(30d, 12h, 90m), not ${JSON.stringify(text)}`,
    );
  }
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/**
 * Formats milliseconds as the largest whole unit that divides them exactly
 * (`2592000000` → `30d`), falling back to whole seconds.
 *
 * @param ms a duration in milliseconds
 * @returns a short text such as `30d`, `12h` or `90m`
 *
 * @example
 * ```ts
 * import { formatDuration } from "./duration.ts";
 * if (formatDuration(90 * 60 * 1000) !== "90m") throw new Error();
 * if (formatDuration(2 * 86400 * 1000) !== "2d") throw new Error();
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
 * Parses an RFC 3339 timestamp with a time zone (`2026-01-31T00:00:00Z`,
 * `2026-01-31T09:00:00+02:00`) into a Date; anything else is a
 * {@linkcode UsageError} naming the option.
 *
 * @param text the option value
 * @param option the option name used in the error message
 * @returns the instant
 *
 * @example
 * ```ts
 * import { parseTimestamp } from "./duration.ts";
 * const d = parseTimestamp("2030-01-01T00:00:00Z", "--expires-at");
 * if (d.toISOString() !== "2030-01-01T00:00:00.000Z") throw new Error();
 * ```
 */
export function parseTimestamp(text: string, option = "timestamp"): Date {
  const ok = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(text);
  const date = new Date(text);
  if (!ok || Number.isNaN(date.getTime())) {
    throw new UsageError(
      `${option} must be an RFC 3339 timestamp such as 2030-01-31T00:00:00Z, not ${
        JSON.stringify(text)
      }`,
    );
  }
  return date;
}
