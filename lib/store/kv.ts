/**
 * Opening the Deno KV store named by `--kv`: a filesystem path (embedded
 * SQLite), `:memory:` (tests), or an `http(s)://` KV Connect URL (with
 * `DENO_KV_ACCESS_TOKEN` in the environment).
 *
 * @module
 */
import { dirname } from "node:path";
import { describeNetworkFailure } from "../network_errors.ts";
import { KvOpenError } from "../errors.ts";

/** Where the KV lives when `--kv` is not given. */
export const DEFAULT_KV_PATH = "./cfgtool-data/kv.sqlite3";

/** What a `--kv` value names. */
export type KvLocation =
  | { kind: "memory" }
  | { kind: "remote"; url: string }
  | { kind: "file"; path: string; dir: string };

/**
 * Classifies a `--kv` value without opening anything.
 *
 * @param spec a path, `:memory:` or an `http(s)://` URL
 * @returns the kind of store, and for files the path and its directory
 *
 * @example
 * ```ts
 * import { kvLocation } from "./kv.ts";
 * const loc = kvLocation("./data/kv.sqlite3");
 * if (loc.kind !== "file" || loc.dir !== "./data") throw new Error();
 * ```
 */
export function kvLocation(spec: string): KvLocation {
  if (spec === ":memory:") return { kind: "memory" };
  if (/^https?:\/\//i.test(spec)) return { kind: "remote", url: spec };
  return { kind: "file", path: spec, dir: dirname(spec) };
}

/**
 * Opens the KV store; for a path, creates the parent directory first and
 * retries commits refused with "database is locked" (see
 * {@linkcode retryLockedCommits}). A KV Connect URL that cannot be opened
 * is a {@linkcode KvOpenError}: `kv_access_token_missing` when
 * `DENO_KV_ACCESS_TOKEN` is not set, else `kv_unavailable` with the reason
 * in plain words (connection refused, name not resolved, TLS, the access
 * token refused).
 *
 * @param spec a path, `:memory:` or an `http(s)://` URL; defaults to
 *   {@linkcode DEFAULT_KV_PATH}
 * @returns the open store (close it with `kv.close()`)
 *
 * @example
 * ```ts
 * import { openKv } from "./kv.ts";
 * const dir = await Deno.makeTempDir();
 * // the parent directory is created first
 * const kv = await openKv(`${dir}/data/kv.sqlite3`);
 * await kv.set(["greeting"], "hello");
 * if ((await kv.get(["greeting"])).value !== "hello") throw new Error();
 * kv.close();
 * if (!(await Deno.stat(`${dir}/data/kv.sqlite3`)).isFile) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function openKv(spec: string = DEFAULT_KV_PATH): Promise<Deno.Kv> {
  const loc = kvLocation(spec);
  switch (loc.kind) {
    case "memory":
      return await Deno.openKv(":memory:");
    case "remote":
      return await openRemoteKv(loc.url);
    case "file":
      await Deno.mkdir(loc.dir, { recursive: true });
      // two processes starting on one new file: the one setting it up holds its lock
      return retryLockedCommits(await whileLocked(() => Deno.openKv(loc.path)));
  }
}

/** Opens a KV Connect URL, turning Deno's failures into a {@linkcode KvOpenError}. */
async function openRemoteKv(url: string): Promise<Deno.Kv> {
  try {
    return await Deno.openKv(url);
  } catch (err) {
    throw remoteKvError(err, url);
  }
}

function remoteKvError(err: unknown, url: string): KvOpenError {
  const shown = withoutCredentials(url);
  const message = err instanceof Error ? err.message : String(err);
  if (/DENO_KV_ACCESS_TOKEN/.test(message)) {
    return new KvOpenError(
      "kv_access_token_missing",
      `Cannot open the KV Connect store ${shown}: DENO_KV_ACCESS_TOKEN is not set. Set it to ` +
        `the store's access token (the --access-token of a self-hosted denokv, or a Deno ` +
        `Deploy access token), or give --kv / CFGTOOL_KV a file path to use a local store`,
      { cause: err },
    );
  }
  // a port in the URL (127.0.0.1:401) must not pass for an HTTP status
  const withoutUrls = message.replace(/https?:\/\/[^\s')]+/g, "");
  if (/\b40[13]\b|unauthori[sz]ed|forbidden|access token/i.test(withoutUrls)) {
    return new KvOpenError(
      "kv_unavailable",
      `Cannot open the KV Connect store ${shown}: it refused the access token in ` +
        `DENO_KV_ACCESS_TOKEN; set the token the store was started with`,
      { cause: err },
    );
  }
  const failure = describeNetworkFailure(err, url);
  return new KvOpenError(
    "kv_unavailable",
    `Cannot open the KV Connect store ${shown}: ${failure.text}. Check the URL given to ` +
      `--kv / CFGTOOL_KV (a file path there uses a local store instead)`,
    { cause: err, details: { reason: failure.kind } },
  );
}

function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.href.replace(/\/$/, "");
  } catch {
    return url;
  }
}

/** Attempts of a commit refused with "database is locked" before giving up. */
const LOCKED_ATTEMPTS = 50;

/**
 * Makes the atomic operations of a file-backed store retry their commit
 * when SQLite answers "database is locked". Another process on the same
 * file (a second `serve`, the admin CLI) holding the write lock at the
 * moment a read-then-write transaction (an atomic operation with checks)
 * wants to write makes SQLite fail at once instead of waiting; nothing was
 * written, so committing the same operation again is safe (its checks are
 * evaluated again). Plain `set`/`delete` already wait for the lock.
 *
 * @param kv a store opened on a SQLite file
 * @returns the same store
 *
 * @example
 * ```ts
 * import { retryLockedCommits } from "./kv.ts";
 * const kv = retryLockedCommits(await Deno.openKv(":memory:"));
 * if (!(await kv.atomic().set(["a"], 1).commit()).ok) throw new Error();
 * kv.close();
 * ```
 */
export function retryLockedCommits(kv: Deno.Kv): Deno.Kv {
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = () => whileLocked(commit);
    return op;
  };
  return kv;
}

/**
 * Runs `attempt` again, after a short random pause, while SQLite refuses it
 * with "database is locked" (another process holds the file's lock, and
 * nothing was done), up to 50 times; any other failure is thrown at once.
 *
 * @param attempt the operation
 * @returns its result
 *
 * @example
 * ```ts
 * import { whileLocked } from "./kv.ts";
 * let calls = 0;
 * const value = await whileLocked(() => {
 *   if (++calls < 3) return Promise.reject(new Error("database is locked"));
 *   return Promise.resolve("done");
 * });
 * if (value !== "done" || calls !== 3) throw new Error();
 * ```
 */
export async function whileLocked<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1;; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= LOCKED_ATTEMPTS || !/database is locked/i.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 8 * Math.min(n, 5)));
    }
  }
}

/**
 * Asks the KV for a strongly consistent read, to tell whether it answers
 * (readiness). Throws what the KV throws.
 *
 * @param kv the store
 *
 * @example
 * ```ts
 * import { pingKv } from "./kv.ts";
 * const kv = await Deno.openKv(":memory:");
 * await pingKv(kv);
 * kv.close();
 * ```
 */
export async function pingKv(kv: Deno.Kv): Promise<void> {
  await kv.get(["readyz"], { consistency: "strong" });
}
