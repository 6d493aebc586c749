/**
 * Opening the Deno KV store named by `--kv`: a filesystem path (embedded
 * SQLite), `:memory:` (tests), or an `http(s)://` KV Connect URL (with
 * `DENO_KV_ACCESS_TOKEN` in the environment).
 *
 * @module
 */
import { dirname } from "node:path";

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
 * Opens the KV store; for a path, creates the parent directory first.
 *
 * @param spec a path, `:memory:` or an `http(s)://` URL; defaults to
 *   {@linkcode DEFAULT_KV_PATH}
 * @returns the open store (close it with `kv.close()`)
 *
 * @example
 * ```ts
 * import { openKv } from "./kv.ts";
 * const kv = await openKv(":memory:");
 * kv.close();
 * ```
 */
export async function openKv(spec: string = DEFAULT_KV_PATH): Promise<Deno.Kv> {
  const loc = kvLocation(spec);
  switch (loc.kind) {
    case "memory":
      return await Deno.openKv(":memory:");
    case "remote":
      return await Deno.openKv(loc.url);
    case "file":
      await Deno.mkdir(loc.dir, { recursive: true });
      return await Deno.openKv(loc.path);
  }
}
