/**
 * `cfgtool serve --workers N`: N server processes on one port and one store.
 * This process (the parent) serves nothing itself: it picks the port,
 * starts N copies of itself as `serve` workers that each bind the port with
 * `SO_REUSEPORT` (Linux spreads incoming connections over them), waits for
 * all of them to listen, forwards SIGINT/SIGTERM to them (and SIGHUP, the
 * TLS certificate reload, on each `reload` event), and restarts a worker
 * that dies with a growing delay (1 s doubling to 30 s; a worker that
 * ran a minute starts over at 1 s). A worker that dies five times in a row
 * without running a minute makes the parent stop the others and exit 1.
 *
 * A copy of this process is the same program with the same flags: under
 * `deno run` the same `deno` binary, runtime flags (permissions, config)
 * and script, plus `--unstable-net` (`SO_REUSEPORT` is an unstable Deno
 * API); a compiled binary runs itself (it must have been compiled with
 * `--unstable-net`). The command line comes from `/proc/self/cmdline`.
 * Secrets (an SMTP password, the metrics token) reach the workers through
 * their environment (`env`), never on their command lines, where `ps`
 * would show them.
 *
 * Workers read their stdin, a pipe from the parent: when it closes (the
 * parent died, even by SIGKILL) they shut down. Every cross-process rule
 * (head poller, credential polls, installation-wide stream and rate limits)
 * already goes through the store, so the workers need nothing else from
 * each other.
 *
 * @module
 */
import { CfgtoolError, UsageError } from "../errors.ts";
import { createLogger, type Logger } from "../log.ts";

/** How to start a copy of this program: the executable and the arguments before `serve`. */
export interface Launcher {
  /** The executable. */
  command: string;
  /** Arguments before the subcommand (`run`, runtime flags, the script), or none. */
  args: string[];
}

/** When a dead worker is started again. */
export interface RestartPolicy {
  /** Delay before the first restart, ms (doubles with each failure in a row). */
  initialMs: number;
  /** Longest delay, ms. */
  maxMs: number;
  /** A worker that ran this long before it died starts over at `initialMs`, ms. */
  stableMs: number;
  /** More failures in a row than this stop the whole group. */
  maxFailures: number;
}

/** Options of {@linkcode serveWorkers}. */
export interface WorkerGroupOptions {
  /** How many worker processes (at least 2). */
  workers: number;
  /** Listening address. */
  hostname: string;
  /** Port; 0 picks a free one, which every worker then binds. */
  port: number;
  /** `serve` arguments every worker gets (not `--port`, `--workers`). */
  args: string[];
  /** Environment variables every worker gets on top of this process's (secrets go here). */
  env?: Record<string, string>;
  /** Each `reload` event sends SIGHUP to every running worker (they reload their TLS pair). */
  reloads?: EventTarget;
  /** Where the parent's own lines go (default: JSON on stderr). */
  log?: Logger;
  /** Aborting it stops the workers, with its reason (`"SIGINT"`, `"SIGTERM"`) as their signal. */
  signal?: AbortSignal;
  /** Called once every worker listens. */
  onListen?: (addr: { hostname: string; port: number; url: string }) => void;
  /** How to start a worker (default {@linkcode selfLauncher}). */
  launcher?: Launcher;
  /** Restart policy (defaults in the module documentation). */
  restart?: Partial<RestartPolicy>;
  /** Workers still running this long after being told to stop are killed, ms (default 60 s). */
  stopGraceMs?: number;
}

const DEFAULT_RESTART: RestartPolicy = {
  initialMs: 1000,
  maxMs: 30_000,
  stableMs: 60_000,
  maxFailures: 5,
};

const LISTENING = /cfgtool listening on (https?:\/\/\S+)/;

/**
 * The launcher of a copy of this process, from its command line
 * (`/proc/self/cmdline` split at NUL) and its script arguments
 * (`Deno.args`): the compiled binary itself, or `deno run` with the same
 * runtime flags and script and `--unstable-net` added. Null when the
 * process was started some other way (`deno test`, `deno eval`).
 *
 * @param cmdline the process's argv, argv[0] first
 * @param scriptArgs the arguments the program got (`Deno.args`)
 * @param execPath the running executable (`Deno.execPath()`)
 * @returns the launcher, or null
 *
 * @example
 * ```ts
 * import { selfLauncher } from "./supervisor.ts";
 * const l = selfLauncher(
 *   ["deno", "run", "-A", "cli.ts", "serve", "--workers", "2"],
 *   ["serve", "--workers", "2"],
 *   "/usr/bin/deno",
 * );
 * if (JSON.stringify(l) !== '{"command":"/usr/bin/deno","args":["run","--unstable-net","-A","cli.ts"]}') {
 *   throw new Error(JSON.stringify(l));
 * }
 * const compiled = selfLauncher(["./cfgtool", "serve"], ["serve"], "/opt/cfgtool");
 * if (compiled?.command !== "/opt/cfgtool" || compiled.args.length !== 0) throw new Error();
 * ```
 */
export function selfLauncher(
  cmdline: readonly string[],
  scriptArgs: readonly string[],
  execPath: string,
): Launcher | null {
  const split = cmdline.length - scriptArgs.length;
  if (split < 1) return null;
  for (let i = 0; i < scriptArgs.length; i++) {
    if (cmdline[split + i] !== scriptArgs[i]) return null;
  }
  const prefix = cmdline.slice(1, split);
  if (prefix.length === 0) return { command: execPath, args: [] };
  if (prefix[0] !== "run" || prefix.length < 2) return null;
  return { command: execPath, args: ["run", "--unstable-net", ...prefix.slice(1)] };
}

/**
 * The launcher of this very process (see {@linkcode selfLauncher}), or a
 * usage error saying why there is none.
 *
 * @returns the launcher
 * @throws {UsageError} off Linux, without `/proc/self/cmdline`, when not
 *   started by `deno run` or as a binary compiled with `--unstable-net`,
 *   or without permission to run it
 *
 * @example
 * ```ts ignore
 * const launcher = currentLauncher();
 * ```
 */
export function currentLauncher(): Launcher {
  if (Deno.build.os !== "linux") {
    throw new UsageError(
      "--workers above 1 needs Linux: only there does SO_REUSEPORT spread connections over processes",
    );
  }
  let cmdline: string[];
  try {
    cmdline = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
  } catch (err) {
    throw new UsageError(
      `--workers reads /proc/self/cmdline to start copies of itself: ${(err as Error).message} ` +
        "(allow reading it: --allow-read)",
    );
  }
  if (cmdline.at(-1) === "") cmdline.pop();
  const launcher = selfLauncher(cmdline, Deno.args, Deno.execPath());
  if (launcher === null) {
    throw new UsageError(
      "--workers needs cfgtool started as `deno run … cli.ts serve …` or as the compiled binary",
    );
  }
  if (launcher.args.length === 0 && typeof Deno.listenDatagram !== "function") {
    throw new UsageError(
      "--workers needs SO_REUSEPORT, an unstable Deno API: compile cfgtool with --unstable-net",
    );
  }
  if (Deno.permissions.querySync({ name: "run", command: launcher.command }).state !== "granted") {
    throw new UsageError(
      `--workers starts copies of cfgtool (${launcher.command}): allow it with --allow-run`,
    );
  }
  return launcher;
}

/**
 * The port every worker binds: `port` itself once it is known to be free,
 * or for 0 a free one the system picks. The probe binds without
 * `SO_REUSEPORT`, so a port another group already shares counts as taken.
 *
 * @param hostname the address
 * @param port the port, 0 for any
 * @returns the port
 * @throws {CfgtoolError} `address_in_use`
 *
 * @example
 * ```ts
 * import { freePort } from "./supervisor.ts";
 * const port = freePort("127.0.0.1", 0);
 * if (!(port > 0)) throw new Error();
 * ```
 */
export function freePort(hostname: string, port: number): number {
  try {
    const probe = Deno.listen({ hostname, port });
    const chosen = probe.addr.port;
    probe.close();
    return chosen;
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new CfgtoolError("address_in_use", `Port ${port} on ${hostname} is already in use`);
    }
    throw err;
  }
}

interface Worker {
  index: number;
  child: Deno.ChildProcess;
  startedAt: number;
  /** Resolves with the worker's URL once it listens; rejects if it exits first. */
  ready: Promise<string>;
  status: Promise<Deno.CommandStatus>;
  /** Has it printed its listening line (and so set up its SIGHUP handler)? */
  listening: boolean;
  /** A reload came while it was starting: send SIGHUP once it listens. */
  reloadPending: boolean;
}

/**
 * Runs a group of `serve` workers on one port until `signal` aborts (see the
 * module documentation). Resolves once every worker has stopped.
 *
 * @param options the group
 * @throws {CfgtoolError} when a worker fails to start, keeps dying, or
 *   stops with an error
 *
 * @example
 * ```ts ignore
 * const ac = new AbortController();
 * await serveWorkers({ workers: 2, hostname: "127.0.0.1", port: 0, args: ["--kv", kvPath], signal: ac.signal });
 * ```
 */
export async function serveWorkers(options: WorkerGroupOptions): Promise<void> {
  const log = options.log ?? createLogger();
  const launcher = options.launcher ?? currentLauncher();
  const policy = { ...DEFAULT_RESTART, ...options.restart };
  const port = freePort(options.hostname, options.port);
  const workers: (Worker | null)[] = Array.from({ length: options.workers }, () => null);
  const failures: number[] = workers.map(() => 0);
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopping = false;
  let started = false;
  const failed: { error: CfgtoolError | null } = { error: null };
  let wake: () => void = () => {};

  const spawn = (index: number): Worker => {
    const child = new Deno.Command(launcher.command, {
      args: [
        ...launcher.args,
        "serve",
        ...options.args,
        "--hostname",
        options.hostname,
        "--port",
        String(port),
        "--workers",
        "1",
        "--worker-index",
        String(index),
      ],
      stdin: "piped", // never written: it closes when this process dies, and the worker stops
      stdout: "piped",
      stderr: "inherit",
      ...(options.env ? { env: options.env } : {}),
    }).spawn();
    const status = child.status;
    const ready = readListening(child.stdout, status);
    const w: Worker = {
      index,
      child,
      startedAt: Date.now(),
      ready,
      status,
      listening: false,
      reloadPending: false,
    };
    workers[index] = w;
    ready.then(
      (url) => {
        w.listening = true;
        log("info", "worker listening", { worker: index, pid: child.pid, url });
        // It may have read the TLS pair before the reload that came while it started.
        if (w.reloadPending && !stopping) kill(child, "SIGHUP");
      },
      () => {},
    );
    void status.then((s) => onExit(w, s));
    return w;
  };

  const onExit = (w: Worker, s: Deno.CommandStatus) => {
    if (workers[w.index] === w) workers[w.index] = null;
    w.child.stdin.close().catch(() => {}); // its end of the pipe
    if (stopping) {
      if (!s.success && s.signal === null && failed.error === null) {
        failed.error = new CfgtoolError(
          "worker_failed",
          `worker ${w.index} (pid ${w.child.pid}) exited with code ${s.code} while stopping`,
        );
      }
      wake();
      return;
    }
    if (!started) return; // the start-up reports it
    const ranMs = Date.now() - w.startedAt;
    if (ranMs >= policy.stableMs) failures[w.index] = 0;
    const n = ++failures[w.index]!;
    const exit = { worker: w.index, pid: w.child.pid, code: s.code, signal: s.signal };
    if (n > policy.maxFailures) {
      log("error", "worker keeps dying: stopping the group", { ...exit, failures: n - 1 });
      failed.error = new CfgtoolError(
        "worker_failed",
        `worker ${w.index} exited ${n - 1} times in a row (last: code ${s.code}` +
          `${s.signal ? `, ${s.signal}` : ""}); see the log above`,
      );
      stop("SIGTERM");
      return;
    }
    const delay = Math.min(policy.maxMs, policy.initialMs * 2 ** (n - 1));
    log("warn", "worker exited: restarting it", { ...exit, restart_in_ms: delay });
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopping) spawn(w.index);
    }, delay);
    timers.add(timer);
  };

  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = (signal: Deno.Signal) => {
    if (stopping) return;
    stopping = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
    const live = workers.filter((w): w is Worker => w !== null);
    log("info", "stopping workers", { signal, workers: live.length });
    for (const w of live) kill(w.child, signal);
    graceTimer = setTimeout(() => {
      for (const w of workers) if (w !== null) kill(w.child, "SIGKILL");
    }, options.stopGraceMs ?? 60_000);
    wake();
  };

  const onAbort = () => {
    const reason = options.signal?.reason;
    stop(reason === "SIGINT" || reason === "SIGTERM" ? reason : "SIGTERM");
  };
  if (options.signal?.aborted) return;
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const onReload = () => {
    if (stopping) return;
    const live = workers.filter((w): w is Worker => w !== null);
    log("info", "reloading workers", { signal: "SIGHUP", workers: live.length });
    for (const w of live) {
      // SIGHUP ends a process that has no handler for it yet: a starting worker gets it later.
      if (w.listening) kill(w.child, "SIGHUP");
      else w.reloadPending = true;
    }
  };
  options.reloads?.addEventListener("reload", onReload);

  try {
    // The first worker alone creates the store and the token key file; then the others.
    log("info", "starting workers", { workers: options.workers, port });
    let url: string;
    try {
      url = await spawn(0).ready;
      const rest = workers.map((_, i) => i).slice(1).map((i) => spawn(i).ready);
      await Promise.all(rest);
    } catch (err) {
      const interrupted = stopping; // told to stop while starting: not a failure
      stop("SIGTERM");
      await allExited(workers);
      if (interrupted) return;
      throw err;
    }
    started = true;
    if (!stopping) {
      const pids = workers.map((w) => w?.child.pid ?? null);
      log("info", "workers listening", { url, workers: options.workers, pids });
      const u = new URL(url);
      options.onListen?.({
        hostname: u.hostname.replace(/^\[|\]$/g, ""),
        port: Number(u.port),
        url,
      });
    }
    while (!stopping || workers.some((w) => w !== null)) {
      await new Promise<void>((resolve) => (wake = resolve));
    }
    if (failed.error !== null) throw failed.error;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    options.reloads?.removeEventListener("reload", onReload);
    if (graceTimer !== undefined) clearTimeout(graceTimer);
    for (const t of timers) clearTimeout(t);
  }
}

/** Sends a signal to a child, ignoring one that is already gone. */
function kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
}

async function allExited(workers: (Worker | null)[]): Promise<void> {
  await Promise.all(workers.map((w) => w?.status));
}

/**
 * Reads a worker's stdout until its "listening" line and keeps draining it
 * (anything else it prints is passed on). Rejects if the worker exits first.
 */
function readListening(
  stdout: ReadableStream<Uint8Array>,
  status: Promise<Deno.CommandStatus>,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let seen = false;
    let buffered = "";
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of stdout) {
          if (seen) {
            await Deno.stdout.write(chunk);
            continue;
          }
          buffered += decoder.decode(chunk, { stream: true });
          const m = LISTENING.exec(buffered);
          if (m) {
            seen = true;
            resolve(m[1]!);
          }
        }
      } catch {
        // the pipe broke: the exit below tells
      }
    })();
    void status.then((s) => {
      if (!seen) {
        reject(
          new CfgtoolError(
            "worker_failed",
            `a worker exited with code ${s.code}${
              s.signal ? ` (${s.signal})` : ""
            } before listening; see its log above`,
          ),
        );
      }
    });
  });
}
