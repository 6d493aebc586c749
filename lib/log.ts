/**
 * Structured logs: one JSON object a line on stderr. Callers pass facts, never
 * secrets; request paths are logged without their query string, which may
 * carry a signed closure token. As a last guard every line is scrubbed of
 * anything shaped like a credential (a service or session token, a
 * `token=`/`secret=`-style query value), wherever a client pasted it.
 *
 * @module
 */

/** Log severity. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Writes one log record. */
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const ORDER: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Every log level, least severe first (the values `serve --log-level` takes). */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/**
 * Whether `value` names a log level (`debug`, `info`, `warn` or `error`).
 *
 * @param value a level as written on the command line or in a file
 * @returns true for one of {@linkcode LOG_LEVELS}
 *
 * @example
 * ```ts
 * import { isLogLevel } from "./log.ts";
 * if (!isLogLevel("warn") || isLogLevel("verbose") || isLogLevel("WARN")) throw new Error();
 * ```
 */
export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(ORDER, value);
}

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
    write(redactSecrets(recordJson(level, msg, fields)));
  };
}

let lastMs = NaN;
let lastIso = "";

/** The time now in ISO 8601, formatted once per millisecond (a busy server logs many per ms). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * One record as a JSON line: `time`, `level`, `msg`, then the fields in
 * their order (the same text as stringifying `{time, level, msg,
 * ...fields}`, built without copying the fields; a field named `time`,
 * `level` or `msg` takes that key's place, as the spread would).
 */
function recordJson(level: LogLevel, msg: string, fields?: Record<string, unknown>): string {
  const time = isoNow();
  if (fields === undefined) return JSON.stringify({ time, level, msg });
  if (
    Object.hasOwn(fields, "time") || Object.hasOwn(fields, "level") || Object.hasOwn(fields, "msg")
  ) {
    return JSON.stringify({ time, level, msg, ...fields });
  }
  const rest = JSON.stringify(fields);
  const head = `{"time":"${time}","level":"${level}","msg":${JSON.stringify(msg)}`;
  return rest.length === 2 ? `${head}}` : `${head},${rest.slice(1)}`;
}

/**
 * Service tokens (`svc_<type>_…`) and session tokens (`ses_…`), `_` also
 * percent-encoded: at a word start with 6 or more payload characters, or glued
 * to other text (`abc_svc_admin_…`) with 20 or more (a real payload has 32–44).
 */
const TOKEN_SHAPE =
  /\b(svc(?:_|%5[fF])[a-z]{1,10}(?:_|%5[fF])|ses(?:_|%5[fF]))[1-9A-HJ-NP-Za-km-z]{6,}|(svc(?:_|%5[fF])[a-z]{1,10}(?:_|%5[fF])|ses(?:_|%5[fF]))[1-9A-HJ-NP-Za-km-z]{20,}/g;
/** Query parameters whose values are credentials. */
const SECRET_PARAM =
  /([?&](?:[a-z_]*token|secret|password|passwd|api_?key|key|signature|sig|auth(?:orization)?)=)[^&#"\s\\]+/gi;

/**
 * Replaces anything shaped like a credential in `text` with `[redacted]`,
 * keeping the token's type prefix so a log reader can still tell what leaked.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "./log.ts";
 * const out = redactSecrets("/api/v1/tokens/svc_read_3xKq9ZpLmN2rT?token=abc.def");
 * if (out !== "/api/v1/tokens/svc_read_[redacted]?token=[redacted]") throw new Error(out);
 * ```
 */
export function redactSecrets(text: string): string {
  // Each pattern needs one of these: most lines (paths with "namespaces" included) skip both.
  if (
    !text.includes("svc_") && !text.includes("ses_") && !text.includes("%5") && !text.includes("=")
  ) return text;
  return text
    .replace(TOKEN_SHAPE, (_m, atWord?: string, glued?: string) => `${atWord ?? glued}[redacted]`)
    .replace(SECRET_PARAM, "$1[redacted]");
}

/** A logger that drops everything (library use, tests). */
export const silentLogger: Logger = () => {};

/** A line writer that batches its writes, and can be flushed. */
export interface BufferedWriter {
  /** Queues one line. */
  write(line: string): void;
  /** Writes every queued line now. */
  flush(): void;
}

/**
 * A stderr writer that batches lines and writes them together at most
 * `delayMs` later (or at once when `maxLines` are queued): one write call
 * per batch instead of one per line, which doubles what a busy server can
 * answer. Each line is encoded into one reused buffer as it comes, so no
 * line outlives its request (kept as strings until the batch is written,
 * they cost the garbage collector more than the writing). Call `flush()`
 * before exit; lines are otherwise lost only if the process dies within
 * `delayMs` of writing them. `sink` gets the bytes of a batch and must use
 * them before it returns (the buffer is reused).
 *
 * @example
 * ```ts
 * import { bufferedWriter } from "./log.ts";
 * const out: string[] = [];
 * const w = bufferedWriter({ sink: (bytes) => out.push(new TextDecoder().decode(bytes)) });
 * w.write("a");
 * w.write("é");
 * w.flush();
 * if (out.join("") !== "a\né\n") throw new Error(JSON.stringify(out));
 * ```
 */
export function bufferedWriter(
  options: { delayMs?: number; maxLines?: number; sink?: (bytes: Uint8Array) => void } = {},
): BufferedWriter {
  const delay = options.delayMs ?? 5;
  const max = options.maxLines ?? 256;
  const encoder = new TextEncoder();
  const sink = options.sink ?? writeAll;
  const buf = new Uint8Array(128 * 1024);
  let used = 0;
  let lines = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    const batch = buf.subarray(0, used);
    used = 0;
    lines = 0;
    sink(batch);
  };
  return {
    write(line) {
      const most = line.length * 3 + 1; // UTF-8 bytes at most, and the newline
      if (used + most > buf.length) {
        flush();
        if (most > buf.length) {
          sink(encoder.encode(`${line}\n`)); // a line larger than the buffer, alone
          return;
        }
      }
      used += encoder.encodeInto(line, buf.subarray(used)).written;
      buf[used++] = 0x0a;
      if (++lines >= max) flush();
      else if (timer === undefined) timer = setTimeout(flush, delay);
    },
    flush,
  };
}

function writeAll(bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}
