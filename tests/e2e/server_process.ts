/**
 * Test helper: runs a real `cfgtool serve` process on a free loopback port and
 * stops it. Its stderr (JSON logs) is collected so tests can inspect it.
 *
 * @module
 */

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** A running server process. */
export interface ServerProcess {
  /** Base URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  /** stderr once it has been quiet for a moment (the server batches log writes). */
  logsSettled(): Promise<string>;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  /** Sends SIGTERM and waits for exit; returns the exit code. */
  stop(): Promise<number>;
  /** Sends SIGKILL and waits for exit. */
  kill(): Promise<void>;
  /** The child process. */
  child: Deno.ChildProcess;
}

/** Options of {@linkcode startServer}. */
export interface StartOptions {
  /** `--kv` value (default `:memory:`). */
  kv?: string;
  /** Extra arguments after `serve`. */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
}

/**
 * Starts `cli.ts serve --port 0` and resolves once it prints its URL.
 *
 * @example
 * ```ts ignore
 * const server = await startServer();
 * await fetch(`${server.url}/healthz`);
 * await server.stop();
 * ```
 */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const child = spawnCli(
    ["serve", "--port", "0", "--kv", options.kv ?? ":memory:", ...(options.args ?? [])],
    options.env,
  );
  const p = await spawnUntilReady(child, {
    what: "server",
    timeoutMs: 30_000,
    ready: (out) => out.match(/listening on (https?:\/\/[^\s]+)/)?.[1],
  });
  return { ...p, url: p.ready };
}

/**
 * Spawns `cli.ts` with `args` (and `NO_COLOR=1` plus `env`), stdout and
 * stderr piped for {@linkcode spawnUntilReady}.
 *
 * @example
 * ```ts ignore
 * const child = spawnCli(["relay", "--port", "0"], { CFGTOOL_RELAY_TOKEN: token });
 * ```
 */
export function spawnCli(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
}

/** A child process {@linkcode spawnUntilReady} watches, once it is ready. */
export interface ReadyProcess<T> {
  /** What its stdout said when it became ready. */
  ready: T;
  /** The child process. */
  child: Deno.ChildProcess;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  /** stderr once it has been quiet for a moment (processes batch log writes). */
  logsSettled(): Promise<string>;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  /** Sends SIGTERM (once) and waits for exit; returns the exit code. */
  stop(): Promise<number>;
  /** Sends SIGKILL and waits for exit. */
  kill(): Promise<void>;
}

/** Options of {@linkcode spawnUntilReady}. */
export interface ReadyOptions<T> {
  /** What the process is, for error messages ("server", "relay", …). */
  what: string;
  /** What its stdout so far says once it is ready, else undefined. */
  ready: (stdout: string) => T | undefined;
  /** How long it may take to be ready before it is killed. */
  timeoutMs: number;
}

/**
 * Reads a spawned child's stdout and stderr (both piped) and resolves once
 * `options.ready` finds what it waits for in stdout. A child that exits
 * first, or is not ready in time (then killed), fails it with its stderr.
 * The one start/stop helper of the test processes (`serve`, `relay`, the
 * OpenID provider).
 *
 * @example
 * ```ts ignore
 * const child = new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" }).spawn();
 * const p = await spawnUntilReady(child, {
 *   what: "relay",
 *   timeoutMs: 30_000,
 *   ready: (out) => out.match(/listening on (\S+)/)?.[1],
 * });
 * await p.stop();
 * ```
 */
export async function spawnUntilReady<T>(
  child: Deno.ChildProcess,
  options: ReadyOptions<T>,
): Promise<ReadyProcess<T>> {
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  let resolveReady!: (v: T) => void;
  let rejectReady!: (e: Error) => void;
  const readyPromise = new Promise<T>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      if (isOut) {
        out += text;
        const found = options.ready(out);
        if (found !== undefined) resolveReady(found);
      } else {
        err += text;
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  const status = child.status.then((s) => {
    rejectReady(new Error(`${options.what} exited with ${s.code} before it was ready:\n${err}`));
    return s;
  });
  const timer = setTimeout(() => {
    rejectReady(
      new Error(`${options.what} did not start in ${options.timeoutMs / 1000} s:\n${err}`),
    );
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, options.timeoutMs);
  let ready: T;
  try {
    ready = await readyPromise;
  } catch (e) {
    await status;
    await pumps;
    throw e;
  } finally {
    clearTimeout(timer);
  }
  let stopped = false;
  return {
    ready,
    child,
    logs: () => err,
    async logsSettled() {
      const end = Date.now() + 2000;
      let seen = -1;
      while (seen !== err.length && Date.now() < end) {
        seen = err.length;
        await new Promise((r) => setTimeout(r, 40));
      }
      return err;
    },
    stdout: () => out,
    async stop() {
      if (!stopped) {
        stopped = true;
        try {
          child.kill("SIGTERM");
        } catch {
          // already gone
        }
      }
      const s = await status;
      await pumps;
      return s.code;
    },
    async kill() {
      stopped = true;
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await status;
      await pumps;
    },
  };
}
