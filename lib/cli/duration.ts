/**
 * Durations on the command line (`--expires-in 30d`, `--ttl 12h`): a
 * positive whole number followed by one unit, `s`, `m`, `h`, `d` or `w`.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { durationMsOf, formatDuration, instantOf } from "../protocol/time_text.ts";

export { formatDuration };

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
  const ms = durationMsOf(text);
  if (ms === null) {
    throw new UsageError(
      `${option} must be a positive whole number followed by s, m, h, d or w ` +
        `(30d, 12h, 90m), not ${JSON.stringify(text)}`,
    );
  }
  return ms;
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
  const date = instantOf(text);
  if (date === null) {
    throw new UsageError(
      `${option} must be an RFC 3339 timestamp such as 2030-01-31T00:00:00Z, not ${
        JSON.stringify(text)
      }`,
    );
  }
  return date;
}
