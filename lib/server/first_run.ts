/**
 * The first run of a new installation: when `serve` starts on a store with
 * no tenant and no user, it prints one line on stdout, right after its
 * listening line, with a one-time link that opens the web console as the
 * installation's operator (the link `cfgtool admin console-link` makes:
 * one use, 10 minutes; lib/login/operator_link.ts). It does so only when
 * the link can be opened where it points: the server listens on a
 * loopback address (the link uses it), or `--public-url` names its
 * public origin (the link uses that). Listening elsewhere without
 * `--public-url`, the line says how to make a link instead. A store that
 * is not new gets no line at all.
 *
 * That stdout line is the only place the link's secret is written: the
 * log records that a link was printed and until when, never the link.
 * With `--workers`, the parent of the group prints the line, once.
 *
 * @module
 */
import type { Logger } from "../log.ts";
import type { AuthDeps } from "../auth/deps.ts";
import { openTokenKey } from "../auth/hmac_key.ts";
import { createFirstRunLink } from "../login/operator_link.ts";
import { isFreshStore } from "../store/fresh_store.ts";
import { openKv } from "../store/kv.ts";

/** Where the server listens, as its listening line says, and its public origin. */
export interface ListeningPlace {
  /** `http` or `https`. */
  scheme: "http" | "https";
  /** The address it listens on (`127.0.0.1`, `::1`, `0.0.0.0`). */
  hostname: string;
  /** The port. */
  port: number;
  /** `--public-url`, as an origin. */
  publicUrl?: string;
}

/**
 * Whether an address is a loopback one: `127.0.0.0/8`, `::1`
 * (also IPv4-mapped) or `localhost`.
 *
 * @param hostname the address
 * @returns true for a loopback address
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "./first_run.ts";
 * for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]) {
 *   if (!isLoopbackHost(h)) throw new Error(h);
 * }
 * for (const h of ["0.0.0.0", "::", "10.0.0.5", "127.0.0.1.example.com", "1270.0.0.1"]) {
 *   if (isLoopbackHost(h)) throw new Error(h);
 * }
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  let h = hostname.toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (h.startsWith("::ffff:")) h = h.slice("::ffff:".length);
  const parts = h.split(".");
  return parts.length === 4 && parts[0] === "127" &&
    parts.every((p) => p.length >= 1 && p.length <= 3 && [...p].every((d) => d >= "0" && d <= "9"));
}

/**
 * The origin a first-run link can point at: `--public-url` when given,
 * else the listening address when it is a loopback one; null otherwise.
 *
 * @param place where the server listens
 * @returns the origin, or null
 *
 * @example
 * ```ts
 * import { firstRunOrigin } from "./first_run.ts";
 * const at = (hostname: string, publicUrl?: string) =>
 *   firstRunOrigin({ scheme: "http", hostname, port: 8080, ...(publicUrl ? { publicUrl } : {}) });
 * if (at("127.0.0.1") !== "http://127.0.0.1:8080") throw new Error();
 * if (at("::1") !== "http://[::1]:8080") throw new Error();
 * if (at("0.0.0.0") !== null) throw new Error("not a loopback address");
 * if (at("0.0.0.0", "https://flags.example.com") !== "https://flags.example.com") throw new Error();
 * ```
 */
export function firstRunOrigin(place: ListeningPlace): string | null {
  if (place.publicUrl !== undefined) return place.publicUrl; // an origin: no path, no slash
  if (!isLoopbackHost(place.hostname)) return null;
  const host = place.hostname.includes(":") && !place.hostname.startsWith("[")
    ? `[${place.hostname}]`
    : place.hostname;
  return `${place.scheme}://${host}:${place.port}`;
}

/**
 * The first-run line of a server on this store: the one-time console
 * link when the store is new and the link can be opened (see
 * {@linkcode firstRunOrigin}), how to make one when it cannot, and null
 * when the store is not new. Making the line makes the link (nothing is
 * written otherwise). The log gets a line without the link.
 *
 * @param deps the store, the token key, a clock
 * @param place where the server listens
 * @param log where to say that a link was made (never the link)
 * @returns the line to print on stdout, or null
 *
 * @example
 * ```ts
 * import { firstRunLine } from "./first_run.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { silentLogger } from "../log.ts";
 * const deps = { kv: await Deno.openKv(":memory:"), key: await randomTokenKey() };
 * const line = await firstRunLine(deps, { scheme: "http", hostname: "127.0.0.1", port: 8080 }, silentLogger);
 * if (!line?.includes(" http://127.0.0.1:8080/auth/operator?code=")) throw new Error(String(line));
 * const elsewhere = await firstRunLine(deps, { scheme: "http", hostname: "0.0.0.0", port: 8080 }, silentLogger);
 * if (!elsewhere?.includes("cfgtool admin console-link")) throw new Error(String(elsewhere));
 * deps.kv.close();
 * ```
 */
export async function firstRunLine(
  deps: AuthDeps,
  place: ListeningPlace,
  log: Logger,
): Promise<string | null> {
  const origin = firstRunOrigin(place);
  if (origin === null) {
    if (!await isFreshStore(deps.kv)) return null;
    log(
      "info",
      "new installation: no console link, as the server listens on a non-loopback " +
        "address without --public-url",
      { hostname: place.hostname },
    );
    return `new installation: no console link printed, as this server listens on ` +
      `${place.hostname} without --public-url; make one on this host with ` +
      "cfgtool admin console-link --user you@example.com --url <this server's origin>";
  }
  const link = await createFirstRunLink(deps);
  if (link === null) return null;
  log("info", "new installation: printed a one-time operator console link on stdout", {
    expires_at: link.expiresAt.toISOString(),
  });
  return "new installation: open the console as its operator with this one-time link " +
    `(works once, for 10 minutes): ${origin}/auth/operator?code=${link.code}`;
}

/**
 * Prints the first-run line of a server on this store, if any (see
 * {@linkcode firstRunLine}). A failure is logged and the server goes on:
 * `cfgtool admin console-link` still makes links.
 *
 * @param deps the store, the token key
 * @param place where the server listens
 * @param log the server's log
 * @param print where the line goes (stdout)
 * @returns nothing
 *
 * @example
 * ```ts ignore
 * await announceFirstRun({ kv, key }, place, log, (line) => console.log(line));
 * ```
 */
export async function announceFirstRun(
  deps: AuthDeps,
  place: ListeningPlace,
  log: Logger,
  print: (line: string) => void,
): Promise<void> {
  try {
    const line = await firstRunLine(deps, place, log);
    if (line !== null) print(line);
  } catch (err) {
    log(
      "warn",
      "could not make the first-run console link; make one with " +
        "cfgtool admin console-link",
      { error: (err as Error).message },
    );
  }
}

/**
 * {@linkcode announceFirstRun} for the parent of a `--workers` group, which
 * has no store of its own open: it opens the store and the token key the
 * workers use, prints the line once, and closes the store.
 *
 * @param store the `--kv` location and the `--token-key-file`, if given
 * @param place where the group listens
 * @param log the parent's log
 * @param print where the line goes (stdout)
 * @returns nothing
 *
 * @example
 * ```ts ignore
 * await announceFirstRunOn({ kv: "./cfgtool-data/kv.sqlite3" }, place, log, console.log);
 * ```
 */
export async function announceFirstRunOn(
  store: { kv: string; tokenKeyFile?: string },
  place: ListeningPlace,
  log: Logger,
  print: (line: string) => void,
): Promise<void> {
  let kv: Deno.Kv | undefined;
  try {
    kv = await openKv(store.kv);
    const { key } = await openTokenKey(
      kv,
      store.tokenKeyFile === undefined ? { kv: store.kv } : {
        kv: store.kv,
        keyFile: store.tokenKeyFile,
      },
    );
    await announceFirstRun({ kv, key }, place, log, print);
  } catch (err) {
    log(
      "warn",
      "could not make the first-run console link; make one with " +
        "cfgtool admin console-link",
      { error: (err as Error).message },
    );
  } finally {
    kv?.close();
  }
}
