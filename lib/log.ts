/**
 * Structured logs: one JSON object a line on stderr. Callers pass facts, never
 * secrets; request paths are logged without their query string, which may
 * carry a signed closure token.
 *
 * @module
 */

/** Log severity. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Writes one log record. */
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * Creates a logger that writes JSON lines at or above `min` to `write`
 * (stderr by default).
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger("info", (l) => lines.push(l));
 * log("debug", "hidden");
 * log("info", "listening", { port: 8080 });
 * if (lines.length !== 1 || JSON.parse(lines[0]!).port !== 8080) throw new Error();
 * ```
 */
export function createLogger(
  min: LogLevel = "info",
  write: (line: string) => void = (line) => console.error(line),
): Logger {
  return (level, msg, fields) => {
    if (ORDER[level] < ORDER[min]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
  };
}

/** A logger that drops everything (library use, tests). */
export const silentLogger: Logger = () => {};
