/**
 * Times and durations as people write them, read the same way by the
 * command line and the API: a duration is a positive whole number and one
 * unit (`90s`, `15m`, `12h`, `30d`, `2w`); an instant is RFC 3339 with its
 * zone (`2026-12-24T09:00:00Z`, `2026-12-24T10:00:00+01:00`). Callers turn
 * a null into their own error (a usage error, a 400). The `before` and
 * `after` predicate operators (lib/flags/conditions.ts) read times with
 * {@linkcode rfc3339MsOf}: RFC 3339's own grammar, strictly, or a date.
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
 * if (instantOf("2030-01-01") !== null || instantOf("2030-02-30T00:00:00Z") !== null) throw new Error();
 * ```
 */
export function instantOf(text: string): Date | null {
  if (!INSTANT_RE.test(text)) return null;
  // the days a month has, as rfc3339MsOf checks them (2026-02-30 is no day)
  const ms = rfc3339MsOf(text[10] === " " ? `${text.slice(0, 10)}T${text.slice(11)}` : text);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/**
 * RFC 3339 (section 5.6): a `date-time` with its offset, or a `full-date`.
 * `T` and `Z` in either case, as the RFC allows; any number of fraction
 * digits; months, days, hours, minutes, seconds (`60`: a leap second) and
 * offsets in their ranges. Whether the day exists in its month is checked
 * apart. Linear: no two quantifiers compete for the same characters.
 */
const RFC3339_RE =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The instant of an RFC 3339 date-time with its zone, or of a date, in
 * milliseconds since the epoch; NaN when `text` is neither. A date
 * (`2026-01-01`) is midnight UTC at its start. Fraction digits beyond the
 * millisecond are dropped (not rounded). A leap second, `23:59:60` UTC in
 * whatever offset it is written, is the last millisecond of its day
 * (`23:59:59.999Z`), since JavaScript time has no leap seconds; second `60`
 * at any other time is NaN, as is a day its month does not have
 * (`2026-02-29`) and a date-time without a zone. Allocates nothing but for
 * a leap second.
 *
 * @param text the candidate
 * @returns milliseconds since 1970-01-01T00:00:00Z, or NaN
 *
 * @example
 * ```ts
 * import { rfc3339MsOf } from "./time_text.ts";
 * if (rfc3339MsOf("2026-01-01T01:00:00+01:00") !== Date.UTC(2026, 0, 1)) throw new Error();
 * if (rfc3339MsOf("2026-01-01") !== Date.UTC(2026, 0, 1)) throw new Error();
 * if (!Number.isNaN(rfc3339MsOf("2026-01-01T00:00:00"))) throw new Error("no zone");
 * if (!Number.isNaN(rfc3339MsOf("2026-02-29"))) throw new Error("not a leap year");
 * ```
 */
export function rfc3339MsOf(text: string): number {
  if (!RFC3339_RE.test(text) || !dayExists(text)) return NaN;
  // "60" at the seconds: RFC3339_RE allows it only there.
  if (text.length > 10 && text.charCodeAt(17) === 0x36) {
    const ms = Date.parse(`${text.slice(0, 17)}59${text.slice(19)}`);
    const second = ms - mod(ms, 1000);
    return mod(second + 1000, DAY_MS) === 0 ? second + 999 : NaN;
  }
  // A date alone is UTC (ECMAScript's date-only form); the rest carries its offset.
  // V8 (Deno, Node) reads every text RFC3339_RE accepts, lower-case t and z and
  // fractions of any length included, which ECMAScript's own format leaves to
  // the engine; it would roll 2026-02-30 over into March, hence dayExists.
  return Date.parse(text);
}

/** Whether the day of a text RFC3339_RE accepted exists in its month and year. */
function dayExists(text: string): boolean {
  const day = number(text, 8, 2);
  if (day <= 28) return true;
  const month = number(text, 5, 2);
  if (month !== 2) {
    return day <= (month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31);
  }
  const year = number(text, 0, 4);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (leap ? 29 : 28);
}

/** The decimal number of the `n` ASCII digits of `text` from `at`. */
function number(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) v = v * 10 + text.charCodeAt(i) - 0x30;
  return v;
}

/** `n` modulo `m`, never negative (instants before 1970 are negative). */
function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}
