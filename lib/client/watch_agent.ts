/**
 * The `cfgtool watch` agent: a {@linkcode FlagClient} that mirrors each
 * subscribed namespace's verified closure into `<dir>/<slug>/`, so that a
 * program in any language can read the flag files.
 *
 * Replacement is atomic. Each verified closure is written to a fresh
 * directory `<dir>/.<slug>.v<version>.<random>/`; then `<dir>/<slug>` (a
 * symbolic link to it) is replaced by `rename(2)` of a new link, so a reader
 * sees the old closure or the new one, never a mixture or nothing. Older
 * version directories are removed afterwards. Names starting with a dot are
 * never slugs, so the agent's own files cannot collide with a namespace.
 *
 * A status file (JSON, written by temp file + rename) says whether the
 * stream is connected (and since when it is not), when the agent stopped,
 * and per namespace the version, closure hash, update time and last error.
 * When the agent stops it writes `connected: false` with `disconnected_at`
 * and `stopped_at`, so a health check is never fooled by a dead agent's
 * last file. Each apply is logged as one line; failures are logged in plain
 * words (`event stream interrupted: the connection to the server was lost;
 * reconnecting in 1.2 s`), never as raw transport errors. The agent
 * survives server restarts (the client reconnects) and stops with an error
 * on fatal failures (401/403, a rejected subscription,
 * `protocol_downgrade`); a 401 names the server and the credential's public
 * prefix. Built on `node:fs` so it runs in Deno and Node
 * (on POSIX file systems: it relies on symbolic links).
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { mkdir, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { CfgtoolError } from "../errors.ts";
import type { LogLevel } from "../log.ts";
import { describeNetworkFailure } from "../network_errors.ts";
import { unauthorizedError } from "./_credential.ts";
import type { ClosureState } from "./closure_state.ts";
import {
  type ChangeEvent,
  FlagClient,
  type FlagClientOptions,
  type RefreshError,
} from "./flag_client.ts";

/** Options of {@linkcode WatchAgent}. */
export interface WatchAgentOptions extends FlagClientOptions {
  /** The directory that receives `<slug>/` for each namespace (created if missing). */
  dir: string;
  /** Where to write the status JSON (default `<dir>/.cfgtool-watch.json`). */
  statusFile?: string;
  /** Writes one line per apply (default: stdout). */
  log?: (line: string) => void;
  /** Writes one line per failure (default: stderr). */
  logError?: (line: string) => void;
}

/** The status file's content. */
export interface WatchStatus {
  /** The service URL. */
  server: string;
  /** When the file was written. */
  updated_at: string;
  /** Whether the event stream is connected (always false once the agent stopped). */
  connected: boolean;
  /** When the stream was lost (or the agent stopped while connected); null while connected or before the first connection. */
  disconnected_at: string | null;
  /** When the agent stopped (SIGINT/SIGTERM, a fatal error); null while it runs. */
  stopped_at: string | null;
  /** The most recent failure of any kind (the stream's own included). */
  last_error: ErrorStatus | null;
  /** Set when the agent stopped on a fatal error. */
  fatal: { code: string; message: string } | null;
  /** Per namespace slug. */
  namespaces: Record<string, {
    flags: string;
    version: number | null;
    closure_hash: string | null;
    updated_at: string | null;
    stale: boolean;
    last_error: ErrorStatus | null;
  }>;
}

/** A failure as the status file shows it. */
export interface ErrorStatus {
  /** The error's stable code. */
  code: string;
  /** For `integrity_check_failed`: which check. */
  check: string | null;
  /** What happened. */
  message: string;
  /** RFC 3339 time of the failure. */
  at: string;
}

/**
 * Runs the agent until {@linkcode WatchAgent.close} or a fatal error.
 *
 * @example
 * ```ts ignore
 * import { WatchAgent } from "./watch_agent.ts";
 * const agent = new WatchAgent({
 *   dir: "/var/lib/flags",
 *   server: "https://flags.example.com",
 *   token: Deno.env.get("CFGTOOL_TOKEN")!,
 *   namespaces: ["checkout:*"],
 * });
 * await agent.start();
 * await agent.done(); // rejects on a fatal error
 * ```
 */
export class WatchAgent {
  /** The client behind the agent. */
  readonly client: FlagClient;
  readonly #dir: string;
  readonly #statusFile: string;
  readonly #server: string;
  readonly #log: (line: string) => void;
  readonly #logError: (line: string) => void;
  /** Per namespace: the mirror chain and what was mirrored last. */
  readonly #chains = new Map<string, Promise<void>>();
  readonly #mirrored = new Map<string, string>();
  #statusChain: Promise<void> = Promise.resolve();
  readonly #token: string;
  #fatal: { code: string; message: string } | null = null;
  #unsubscribe: (() => void)[] = [];
  /** Whether the stream ever connected, and when it was lost (null while connected). */
  #wasConnected = false;
  #disconnectedAt: Date | null = null;
  #stoppedAt: Date | null = null;
  #stopping: Promise<void> | null = null;
  /** A stream failure not yet logged: it is logged with the reconnect delay. */
  #pendingStreamFailure: string | null = null;
  /** Whether the stream connected since the last failure was logged. */
  #streamUp = false;
  #interrupted = false;

  /**
   * Creates the agent and its {@linkcode FlagClient} (which connects at
   * once); nothing is written until {@linkcode WatchAgent.start}.
   *
   * @param options the client's options plus the directory and status file
   */
  constructor(options: WatchAgentOptions) {
    const { dir, statusFile, log, logError, logger, ...clientOptions } = options;
    this.#dir = dir;
    this.#statusFile = statusFile ?? join(dir, ".cfgtool-watch.json");
    this.#server = trimTrailing(options.server, "/");
    this.#token = options.token;
    this.#log = log ?? ((line) => console.log(line));
    this.#logError = logError ?? ((line) => console.error(line));
    this.client = new FlagClient({
      ...clientOptions,
      logger: (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
        this.#onClientLog(msg, fields);
        logger?.(level, msg, fields);
      },
    });
  }

  /**
   * Creates the directory, writes the first status file and starts
   * mirroring. Closures already verified are mirrored at once.
   *
   * @returns resolves once set up (not when ready)
   */
  async start(): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    this.#unsubscribe.push(
      this.client.onChange((c) => this.#onChange(c)),
      this.client.onError((e) => this.#onError(e)),
    );
    this.client.done().catch((err: Error & { code?: string }) => {
      const fatal = this.#explainFatal(err) as Error & { code?: string };
      this.#fatal = { code: fatal.code ?? "error", message: fatal.message };
      this.#writeStatus();
    });
    for (const slug of this.client.namespaces) {
      if (this.client.closure(slug) !== undefined) this.#schedule(slug);
    }
    await this.#writeStatusNow();
  }

  /**
   * Settles when the agent stops: resolves after {@linkcode WatchAgent.close},
   * rejects with the fatal error. Pending writes are finished first.
   *
   * @returns the promise
   */
  async done(): Promise<void> {
    try {
      await this.client.done();
    } catch (err) {
      throw this.#explainFatal(err);
    } finally {
      await this.#stopped();
    }
  }

  /**
   * Stops the client, writes the final status (`connected: false`,
   * `disconnected_at`, `stopped_at`) and waits for pending writes.
   *
   * @returns resolves when stopped
   */
  async close(): Promise<void> {
    await this.client.close();
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
    await this.#stopped();
  }

  /** Records the stop (once) and writes the final status after pending writes. */
  #stopped(): Promise<void> {
    if (this.#stopping === null) {
      this.#stoppedAt = new Date();
      this.#markDisconnected(this.#stoppedAt);
      this.#pendingStreamFailure = null;
      this.#stopping = (async () => {
        await Promise.all(this.#chains.values());
        await this.#writeStatusNow();
        await this.#flush();
      })();
    }
    return this.#stopping;
  }

  /** Remembers when a connected stream was lost (the first moment only). */
  #markDisconnected(at: Date): void {
    if (this.#wasConnected && this.#disconnectedAt === null) this.#disconnectedAt = at;
  }

  /** A fatal 401 names the server and the credential's public prefix. */
  #explainFatal(err: unknown): unknown {
    if (err instanceof CfgtoolError && err.status === 401 && err.code === "unauthorized") {
      const reason = err.message.replace(/^the event stream answered 401: /, "");
      return unauthorizedError(this.#server, this.#token, reason, err.details);
    }
    return err;
  }

  /** Follows the client's connection life to log it in plain words. */
  #onClientLog(msg: string, fields: Record<string, unknown> | undefined): void {
    if (msg === "event stream connected") {
      this.#wasConnected = true;
      this.#disconnectedAt = null;
      this.#streamUp = true;
      if (this.#interrupted) {
        this.#interrupted = false;
        this.#logError(`${new Date().toISOString()} event stream reconnected`);
      }
      this.#writeStatus();
    } else if (msg === "event stream reconnecting") {
      this.#markDisconnected(new Date());
      const delay = typeof fields?.delay_ms === "number" ? fields.delay_ms : 0;
      const seconds = `${(delay / 1000).toFixed(1)} s`;
      const why = this.#pendingStreamFailure;
      this.#pendingStreamFailure = null;
      const line = this.#streamUp
        ? `event stream interrupted: ${why ?? "the server ended it"}; reconnecting in ${seconds}`
        : `event stream unavailable: ${why ?? "no answer"}; retrying in ${seconds}`;
      this.#streamUp = false;
      this.#interrupted = true;
      this.#logError(`${new Date().toISOString()} ${line}`);
    }
  }

  async #flush(): Promise<void> {
    await Promise.all(this.#chains.values());
    await this.#statusChain;
  }

  #onChange(change: ChangeEvent): void {
    const at = new Date().toISOString();
    // said once the files are written, so a reader acting on the line finds them
    this.#schedule(change.namespace, () =>
      this.#log(
        `${at} applied ${change.namespace} v${change.version} ${change.closureHash} (${change.delivery}, ${change.changedPaths.length} file${
          change.changedPaths.length === 1 ? "" : "s"
        } changed)`,
      ));
  }

  #onError(error: RefreshError): void {
    const message = plainMessage(error, this.#server);
    if (error.namespace === null && error.check === null) {
      // logged with the reconnect delay, or as the fatal error by the caller
      if (this.#pendingStreamFailure !== null) {
        this.#logError(
          `${error.at.toISOString()} event stream failed: ${this.#pendingStreamFailure}`,
        );
      }
      this.#pendingStreamFailure = message;
    } else {
      this.#logError(
        `${error.at.toISOString()} refresh failed${
          error.namespace ? ` ${error.namespace}` : ""
        }: ${error.code}${error.check ? ` (${error.check})` : ""}: ${message}`,
      );
    }
    this.#writeStatus();
  }

  /** Mirrors the namespace's current closure (the latest, whatever the change was) after earlier writes. */
  #schedule(slug: string, written?: () => void): void {
    const prev = this.#chains.get(slug) ?? Promise.resolve();
    const next = prev.then(async () => {
      const state = this.client.closure(slug);
      if (state === undefined) return written?.();
      const id = `${state.version}-${state.hash}`;
      if (this.#mirrored.get(slug) === id) return written?.();
      try {
        await mirrorClosure(this.#dir, state);
        this.#mirrored.set(slug, id);
        written?.();
      } catch (err) {
        this.#logError(`${new Date().toISOString()} mirror failed ${slug}: ${err}`);
      }
      await this.#writeStatusNow();
    });
    this.#chains.set(slug, next);
  }

  #writeStatus(): void {
    void this.#writeStatusNow();
  }

  #writeStatusNow(): Promise<void> {
    this.#statusChain = this.#statusChain.then(async () => {
      try {
        await writeAtomic(
          this.#statusFile,
          new TextEncoder().encode(JSON.stringify(this.status(), null, 2) + "\n"),
        );
      } catch (err) {
        this.#logError(`${new Date().toISOString()} cannot write ${this.#statusFile}: ${err}`);
      }
    });
    return this.#statusChain;
  }

  /**
   * The status as written to the status file.
   *
   * @returns the status
   */
  status(): WatchStatus {
    const now = new Date();
    const connected = this.#stoppedAt === null && this.client.connected;
    const namespaces: WatchStatus["namespaces"] = {};
    for (const s of this.client.status()) {
      namespaces[s.namespace] = {
        flags: s.flags,
        version: s.version,
        closure_hash: s.closureHash,
        updated_at: s.updatedAt?.toISOString() ?? null,
        stale: s.stale,
        last_error: errorStatus(s.lastError, this.#server),
      };
    }
    return {
      server: this.#server,
      updated_at: now.toISOString(),
      connected,
      disconnected_at: connected ? null : this.#disconnectedAt?.toISOString() ?? null,
      stopped_at: this.#stoppedAt?.toISOString() ?? null,
      last_error: errorStatus(this.client.lastRefreshError(), this.#server),
      fatal: this.#fatal,
      namespaces,
    };
  }
}

/**
 * Writes a closure into `<dir>/<slug>` atomically: a new version directory,
 * then a symbolic link swapped in by rename; older version directories of
 * the namespace are removed. A real directory at `<dir>/<slug>` (from an
 * older agent or by hand) is replaced.
 *
 * @param dir the mirror root
 * @param state the verified closure
 * @returns resolves when the link points at the new files
 *
 * @example
 * ```ts ignore
 * await mirrorClosure("/var/lib/flags", client.closure("web")!);
 * ```
 */
export async function mirrorClosure(dir: string, state: ClosureState): Promise<void> {
  const slug = state.namespace;
  const name = `.${slug}.v${state.version}.${randomHex()}`;
  const versionDir = join(dir, name);
  await mkdir(versionDir, { recursive: true });
  for (const [path, bytes] of state.files) {
    const file = join(versionDir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
  }
  const link = join(dir, `.${slug}.link.${randomHex()}`);
  await symlink(name, link);
  const target = join(dir, slug);
  try {
    await rename(link, target);
  } catch {
    // A real directory where the link goes: replace it (once).
    await rm(target, { recursive: true, force: true });
    await rename(link, target);
  }
  const own = new RegExp(`^\\.${slug.replace(/[.]/g, "\\.")}\\.v\\d+\\.[0-9a-f]+$`);
  for (const entry of await readdir(dir)) {
    if (entry !== name && own.test(entry)) {
      await rm(join(dir, entry), { recursive: true, force: true });
    }
  }
}

function errorStatus(e: RefreshError | null, server: string): ErrorStatus | null {
  return e === null ? null : {
    code: e.code,
    check: e.check,
    message: plainMessage(e, server),
    at: e.at.toISOString(),
  };
}

/**
 * A failure in plain words: network errors (`fetch failed`, `error reading
 * a body from connection`) are explained from their cause chain; the
 * service's own messages are kept.
 */
function plainMessage(e: RefreshError, server: string): string {
  const err = e.error;
  if (err instanceof CfgtoolError && err.code === "unreachable") {
    if (err.cause instanceof DOMException && err.cause.name === "AbortError") {
      // the client aborts a download that outlives its request timeout
      return `no answer from ${server} in time (${e.namespace ?? "event stream"})`;
    }
    const failure = describeNetworkFailure(err.cause ?? err, server);
    return `cannot reach ${server}: ${failure.text}`;
  }
  if (err instanceof CfgtoolError && err.code === "stream_idle") {
    return err.message.replace(/; reconnecting$/, "");
  }
  if (err instanceof CfgtoolError) return err.message;
  const failure = describeNetworkFailure(err, server);
  return failure.kind === "connection_reset"
    ? "the connection to the server was lost"
    : `network error: ${failure.text}`;
}

async function writeAtomic(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomHex()}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}

function randomHex(): string {
  const b = crypto.getRandomValues(new Uint8Array(6));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
