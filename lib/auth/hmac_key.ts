/**
 * The server-side HMAC key that digests tokens, sessions and client IPs.
 * It comes from `--token-key-file` / `CFGTOOL_TOKEN_KEY_FILE`; when absent,
 * a 32-byte random key file (`token.key`, mode 0600) is created beside the
 * KV data. A `:memory:` KV without a key file gets an in-process random
 * key. Changing the key invalidates every token and session.
 *
 * @module
 */
import { join } from "node:path";
import { CfgtoolError, UsageError } from "../errors.ts";
import { kvLocation } from "../store/kv.ts";
import { getKeyFingerprint, recordKeyFingerprint } from "../store/key_check.ts";
import { hmacHex, rememberKeyBytes } from "./digest.ts";

/** Name of the key file created beside the KV data. */
export const KEY_FILE_NAME = "token.key";
/** Size of a generated key in bytes. */
export const KEY_BYTES = 32;

/** A loaded token key and where it came from. */
export interface LoadedKey {
  key: CryptoKey;
  /** The key file, or null for an in-process key. */
  path: string | null;
  /** True when this call created the file. */
  created: boolean;
}

/**
 * Imports raw bytes as an HMAC-SHA-256 signing key.
 *
 * @param bytes at least 32 bytes of key material
 * @returns the key
 *
 * @example
 * ```ts
 * import { importTokenKey } from "./hmac_key.ts";
 * const key = await importTokenKey(new Uint8Array(32));
 * if (key.algorithm.name !== "HMAC") throw new Error();
 * ```
 */
export async function importTokenKey(bytes: Uint8Array): Promise<CryptoKey> {
  if (bytes.length < KEY_BYTES) {
    throw new UsageError(
      `Cannot use the token key: it has ${bytes.length} bytes, at least ${KEY_BYTES} are needed`,
    );
  }
  const key = await crypto.subtle.importKey(
    "raw",
    bytes as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  rememberKeyBytes(key, bytes);
  return key;
}

/**
 * Makes a random in-process key (tests, `:memory:` stores).
 *
 * @returns the key
 *
 * @example
 * ```ts
 * import { randomTokenKey } from "./hmac_key.ts";
 * import { hmacHex } from "./digest.ts";
 * const [a, b] = [await randomTokenKey(), await randomTokenKey()];
 * if (a.algorithm.name !== "HMAC") throw new Error(a.algorithm.name);
 * // two keys sign the same token differently
 * if (await hmacHex(a, "svc_x") === await hmacHex(b, "svc_x")) throw new Error();
 * ```
 */
export function randomTokenKey(): Promise<CryptoKey> {
  return importTokenKey(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
}

/**
 * Loads the token key: from `keyFile` when given (it must exist), else from
 * `token.key` beside a file-backed KV (created with mode 0600 when absent),
 * else (`:memory:`) a random in-process key. A remote KV needs `keyFile`:
 * every server of the installation must share the key.
 *
 * @param options `kv`: the `--kv` value; `keyFile`: the `--token-key-file` value
 * @returns the key and its file
 *
 * @example
 * ```ts
 * import { loadTokenKey } from "./hmac_key.ts";
 * const loaded = await loadTokenKey({ kv: ":memory:" });
 * if (loaded.path !== null) throw new Error();
 * ```
 */
export async function loadTokenKey(
  options: { kv: string; keyFile?: string },
): Promise<LoadedKey> {
  if (options.keyFile !== undefined) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(options.keyFile);
    } catch (err) {
      throw new UsageError(
        `Cannot read the token key file ${options.keyFile}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return { key: await importTokenKey(bytes), path: options.keyFile, created: false };
  }
  const loc = kvLocation(options.kv);
  if (loc.kind === "memory") {
    return { key: await randomTokenKey(), path: null, created: false };
  }
  if (loc.kind === "remote") {
    throw new UsageError(
      "Cannot find the token key: a remote KV needs --token-key-file (shared by every server)",
    );
  }
  const path = join(loc.dir, KEY_FILE_NAME);
  try {
    return { key: await importTokenKey(await Deno.readFile(path)), path, created: false };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(loc.dir, { recursive: true });
  const bytes = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  try {
    await Deno.writeFile(path, bytes, { mode: 0o600, createNew: true });
  } catch (err) {
    // Another process created it first: use theirs.
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    return { key: await importTokenKey(await Deno.readFile(path)), path, created: false };
  }
  await Deno.chmod(path, 0o600).catch(() => {});
  return { key: await importTokenKey(bytes), path, created: true };
}

/** The fixed string whose HMAC fingerprints a key (lib/auth/rekey.ts uses it too). */
export const KEY_CHECK_INPUT = "cfgtool token key check v1";

/**
 * Loads the token key (as {@linkcode loadTokenKey}) and checks it against the
 * fingerprint recorded in the store, so that a lost or replaced key file is
 * refused instead of silently invalidating every token: when the store has a
 * fingerprint and the key file is missing, no new key is created; when the
 * key differs from the recorded one, opening fails. The first open records
 * the fingerprint (an HMAC of a fixed string, not the key).
 *
 * @param kv the opened store
 * @param options `kv`: the `--kv` value; `keyFile`: the `--token-key-file` value
 * @returns the key and its file
 *
 * @example
 * ```ts
 * import { openTokenKey } from "./hmac_key.ts";
 * const kv = await Deno.openKv(":memory:");
 * const loaded = await openTokenKey(kv, { kv: ":memory:" });
 * if (loaded.path !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function openTokenKey(
  kv: Deno.Kv,
  options: { kv: string; keyFile?: string },
): Promise<LoadedKey> {
  const recorded = await getKeyFingerprint(kv);
  const loc = kvLocation(options.kv);
  if (recorded !== null && options.keyFile === undefined && loc.kind === "file") {
    const path = join(loc.dir, KEY_FILE_NAME);
    try {
      await Deno.stat(path);
    } catch {
      throw new CfgtoolError(
        "token_key_missing",
        `The token key file ${path} is missing, but this store's tokens were digested with a key. ` +
          "Restore the file from your backup (or pass --token-key-file), or start over with a " +
          "new key: `cfgtool admin rekey` (every token and session is revoked).",
      );
    }
  }
  const loaded = await loadTokenKey(options);
  const fingerprint = await hmacHex(loaded.key, KEY_CHECK_INPUT);
  if (recorded === null) {
    await recordKeyFingerprint(kv, fingerprint);
  } else if (recorded !== fingerprint) {
    throw new CfgtoolError(
      "token_key_mismatch",
      `The token key${loaded.path ? ` in ${loaded.path}` : ""} is not the key this store's ` +
        "tokens were digested with. Use the original key file (--token-key-file), or start " +
        "over with a new key: `cfgtool admin rekey` (every token and session is revoked).",
    );
  }
  return loaded;
}
