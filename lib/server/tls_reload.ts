/**
 * Certificate reload on SIGHUP: `cfgtool serve --tls-cert/--tls-key` reads
 * the pair again from the same paths and serves new connections with it,
 * while open connections and their event streams go on with the old one.
 *
 * How: Deno's TLS listener takes its certificate once, when it binds, and
 * has no call to change it. (Its unstable SNI resolver is asked once per
 * server name and caches the answer for the listener's life, so it cannot
 * swap a certificate either; there is no public server-side `startTls` to
 * run TLS ourselves over a plain TCP listener.) So a reload binds a second
 * TLS listener with the new pair on the same address and port, which
 * `SO_REUSEPORT` allows (the first was bound with it too; the flag is an
 * unstable Deno API, `--unstable-net`), hands it to the running server
 * (lib/net/bounded_server.ts `replaceListener`), and closes the old
 * listener. Connections already accepted belong to the HTTP engine, not
 * to the listener, and are not touched. A pair that does not load, or a
 * bind that fails, leaves the old listener in place and is logged at
 * `error`.
 *
 * One caveat of closing a listener in an `SO_REUSEPORT` group: until its
 * socket is really closed (Deno drops it when the pending accept ends, a
 * turn of the event loop after `close()`), the kernel still hands it a
 * share of new connections, and Linux resets those left in its queue when
 * it closes. So a connection arriving in that moment of a reload may be
 * reset (the client retries). Linux 5.14 and later move them to the new
 * listener instead with `sysctl net.ipv4.tcp_migrate_req=1`. The reload is
 * logged once the old socket is gone.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { HttpListener } from "../net/bounded_server.ts";
import {
  listenTls,
  type ListenTlsOptions,
  readableByOthers,
  readTlsPair,
  type TlsPair,
  type TlsPaths,
} from "./tls.ts";

/** Options of {@linkcode watchTlsReloads}. */
export interface TlsReloadOptions {
  /** Where the pair is read from, at each reload. */
  paths: TlsPaths;
  /** The address and port the server listens on (its actual port, not 0). */
  listen: Omit<ListenTlsOptions, "reusePort">;
  /**
   * Can a second listener bind the port (`SO_REUSEPORT` on both)? When
   * false, a reload is refused with an error line and the old pair stays.
   */
  canRebind: boolean;
  /**
   * Hands the new listener to the server; resolves once the old listener is
   * closed, with false when the server is stopping.
   */
  replace: (next: HttpListener) => Promise<boolean>;
  /** Where reloads are logged. */
  log: Logger;
  /** Each `reload` event (SIGHUP) reloads the pair. */
  reloads: EventTarget;
}

/** A running reload watcher. */
export interface TlsReloader {
  /** Reloads now; resolves with true when the new pair serves new connections. */
  reload(): Promise<boolean>;
  /** Stops listening for `reload` events; resolves once a reload in progress is done. */
  stop(): Promise<void>;
}

/**
 * Listens for `reload` events on `options.reloads` and reloads the TLS pair
 * on each (see the module documentation). Reloads run one at a time, in
 * order.
 *
 * @param options paths, address, server and log
 * @returns the watcher
 *
 * @example
 * ```ts
 * import { watchTlsReloads } from "./tls_reload.ts";
 * const lines: string[] = [];
 * const reloads = new EventTarget();
 * const watcher = watchTlsReloads({
 *   paths: { certFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem" },
 *   listen: { hostname: "127.0.0.1", port: 8443, backlog: 511 },
 *   canRebind: true,
 *   replace: () => Promise.resolve(true),
 *   log: (level, msg) => lines.push(`${level} ${msg}`),
 *   reloads,
 * });
 * if (await watcher.reload()) throw new Error("a missing pair must not replace the old one");
 * if (!lines[0]?.startsWith("error tls certificate reload failed")) throw new Error(lines[0]);
 * await watcher.stop();
 * ```
 */
export function watchTlsReloads(options: TlsReloadOptions): TlsReloader {
  const { paths, log } = options;
  let queue: Promise<unknown> = Promise.resolve();
  const once = async (): Promise<boolean> => {
    if (!options.canRebind) {
      log("error", "tls certificate reload failed: keeping the current certificate", {
        error: "a reload binds a second listener with SO_REUSEPORT, an unstable Deno API: " +
          "run with --unstable-net (restart to take the new certificate now)",
      });
      return false;
    }
    let pair: TlsPair;
    let next: HttpListener;
    try {
      pair = await readTlsPair(paths);
      next = listenTls(pair, { ...options.listen, reusePort: true });
    } catch (err) {
      log("error", "tls certificate reload failed: keeping the current certificate", {
        cert: paths.certFile,
        key: paths.keyFile,
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
    if (!(await options.replace(next))) return false;
    log(pair.expired ? "warn" : "info", "tls certificate reloaded", {
      cert: paths.certFile,
      ...certificateFields(pair),
    });
    if (readableByOthers(paths.keyFile)) {
      log("warn", "tls key file is readable by its group or everyone: chmod 600 it", {
        key: paths.keyFile,
      });
    }
    return true;
  };
  const reload = (): Promise<boolean> => {
    const run = queue.then(once, once);
    queue = run;
    return run;
  };
  const onReload = () => void reload();
  options.reloads.addEventListener("reload", onReload);
  return {
    reload,
    stop: async () => {
      options.reloads.removeEventListener("reload", onReload);
      await queue.catch(() => {});
    },
  };
}

/**
 * The log fields of a pair's certificate: subject, issuer, `not_after`,
 * `sha256`, and `expired: true` when it is out of its validity.
 *
 * @param pair a checked pair
 * @returns the fields
 *
 * @example
 * ```ts
 * import { certificateFields } from "./tls_reload.ts";
 * const fields = certificateFields({
 *   paths: { certFile: "c", keyFile: "k" },
 *   cert: "",
 *   key: "",
 *   info: { subject: "CN=a", issuer: "CN=ca", notAfter: "2030-01-01T00:00:00.000Z", sha256: "AB" },
 *   expired: false,
 * });
 * if (fields.not_after !== "2030-01-01T00:00:00.000Z" || "expired" in fields) throw new Error();
 * ```
 */
export function certificateFields(pair: TlsPair): Record<string, string | boolean> {
  return {
    subject: pair.info.subject,
    issuer: pair.info.issuer,
    not_after: pair.info.notAfter,
    sha256: pair.info.sha256,
    ...(pair.expired ? { expired: true } : {}),
  };
}
