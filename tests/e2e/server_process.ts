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
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      CLI,
      "serve",
      "--port",
      "0",
      "--kv",
      options.kv ?? ":memory:",
      ...(options.args ?? []),
    ],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", ...options.env },
  }).spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  let resolveUrl!: (url: string) => void;
  let rejectUrl!: (e: Error) => void;
  const urlPromise = new Promise<string>((res, rej) => {
    resolveUrl = res;
    rejectUrl = rej;
  });
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      if (isOut) {
        out += text;
        const m = out.match(/listening on (https?:\/\/[^\s]+)/);
        if (m) resolveUrl(m[1]!);
      } else {
        err += text;
      }
    }
  };
  const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  const status = child.status.then((s) => {
    rejectUrl(new Error(`server exited with ${s.code} before listening:\n${err}`));
    return s;
  });
  const timer = setTimeout(
    () => rejectUrl(new Error(`server did not start in 30 s:\n${err}`)),
    30_000,
  );
  let url: string;
  try {
    url = await urlPromise;
  } finally {
    clearTimeout(timer);
  }
  let stopped = false;
  return {
    url,
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
