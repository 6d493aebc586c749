/**
 * Test helper: runs a real `cfgtool relay` process on a free loopback port
 * (its data directory given or a fresh temp one) and stops it. Its stderr
 * (JSON logs) is kept for the tests to read.
 *
 * @module
 */

import { spawnCli, spawnUntilReady } from "../e2e/server_process.ts";

/** A running relay. */
export interface RelayProcess {
  /** Base URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** Its process id. */
  pid: number;
  /** Its data directory. */
  dataDir: string;
  /** Everything it wrote to stderr so far. */
  logs(): string;
  /** SIGTERM, and waits for the exit; returns the exit code. */
  stop(): Promise<number>;
}

/** Options of {@linkcode startRelay}. */
export interface RelayStart {
  /** The upstream's URL. */
  upstream: string;
  /** The relay's token there (empty: none in the environment; the config file gives it). */
  token: string;
  /** The data directory (default: a fresh temp directory). */
  dataDir?: string;
  /** Extra arguments. */
  args?: string[];
}

/**
 * Starts `cli.ts relay --port 0` and resolves once it prints its URL.
 *
 * @example
 * ```ts ignore
 * const relay = await startRelay({ upstream: primary.url, token: admin });
 * await relay.stop();
 * ```
 */
export async function startRelay(options: RelayStart): Promise<RelayProcess> {
  const dataDir = options.dataDir ?? await Deno.makeTempDir({ prefix: "cfgtool-relay-" });
  const child = spawnCli(
    [
      "relay",
      "--upstream",
      options.upstream,
      "--data-dir",
      dataDir,
      "--port",
      "0",
      "--discover-ms",
      "500",
      ...(options.args ?? []),
    ],
    options.token ? { CFGTOOL_RELAY_TOKEN: options.token } : {},
  );
  const p = await spawnUntilReady(child, {
    what: "relay",
    timeoutMs: 30_000,
    ready: (out) => out.match(/listening on (https?:\/\/[^\s]+)/)?.[1],
  });
  return { url: p.ready, pid: child.pid, dataDir, logs: p.logs, stop: p.stop };
}

/**
 * Polls `probe` until it returns true (each try after the last settled),
 * failing with `what` after `ms`.
 *
 * @example
 * ```ts ignore
 * await until(async () => (await health(relay)).namespaces.length === 3, "relay follows");
 * ```
 */
export async function until(
  probe: () => Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
