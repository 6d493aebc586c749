/**
 * Where schema verdict records (lib/workspace/schema_verdicts.ts) live on
 * disk: one file per workspace state, `<cache dir>/<source fingerprint hex>.json`,
 * under `$XDG_CACHE_HOME/cfgtool/schema-verdicts` (else
 * `$HOME/.cache/cfgtool/schema-verdicts`). The file name only finds a
 * record; what it may vouch for is decided by its content. Every failure
 * here (no cache directory, no permission, a full disk, a record being
 * written by another process) means "no record" or "not saved": the cache
 * can make a command slower, never wrong, and never asks for a permission.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";

/** Records kept at most; the oldest beyond this are removed when one is saved. */
export const MAX_RECORDS = 256;

const SUBDIR = "cfgtool/schema-verdicts";

/**
 * The default cache directory, or undefined when the environment names no
 * home or cache directory, or the program may not read the variable or
 * read and write the directory without asking.
 *
 * @param env reads an environment variable (default: the process's, when permitted)
 * @returns the directory, or undefined
 *
 * @example
 * ```ts
 * import { defaultVerdictDir } from "./verdict_store.ts";
 * const vars: Record<string, string> = { HOME: "/home/ana" };
 * const dir = defaultVerdictDir((name) => vars[name]);
 * if (dir !== undefined && dir !== "/home/ana/.cache/cfgtool/schema-verdicts") throw new Error(dir);
 * ```
 */
export function defaultVerdictDir(
  env: (name: string) => string | undefined = permittedEnv,
): string | undefined {
  const xdg = env("XDG_CACHE_HOME");
  const home = env("HOME");
  const base = xdg !== undefined && xdg.startsWith("/")
    ? xdg
    : home !== undefined && home.startsWith("/")
    ? `${home}/.cache`
    : undefined;
  if (base === undefined) return undefined;
  const dir = `${trimTrailing(base, "/")}/${SUBDIR}`;
  return granted({ name: "read", path: dir }) && granted({ name: "write", path: dir })
    ? dir
    : undefined;
}

/**
 * Reads the record of a workspace state.
 *
 * @param dir the cache directory
 * @param key the workspace's source fingerprint (`sha256:<hex>`)
 * @returns the record's text, or undefined when there is none or it cannot be read
 *
 * @example
 * ```ts
 * import { loadVerdictText, saveVerdictText } from "./verdict_store.ts";
 * const dir = await Deno.makeTempDir();
 * await saveVerdictText(dir, "sha256:00", "{}");
 * if (await loadVerdictText(dir, "sha256:00") !== "{}") throw new Error();
 * if (await loadVerdictText(dir, "sha256:11") !== undefined) throw new Error();
 * ```
 */
export async function loadVerdictText(dir: string, key: string): Promise<string | undefined> {
  const file = recordPath(dir, key);
  if (file === undefined) return undefined;
  try {
    return await Deno.readTextFile(file);
  } catch {
    return undefined;
  }
}

/**
 * Saves the record of a workspace state, whole or not at all: written to a
 * temporary file and renamed into place, so a reader never sees half of it.
 * Beyond {@linkcode MAX_RECORDS} records the oldest are removed. Failures
 * are ignored.
 *
 * @param dir the cache directory (created when missing)
 * @param key the workspace's source fingerprint (`sha256:<hex>`)
 * @param text the record
 *
 * @example
 * ```ts
 * import { loadVerdictText, saveVerdictText } from "./verdict_store.ts";
 * const dir = `${await Deno.makeTempDir()}/nested/cache`;
 * await saveVerdictText(dir, "sha256:ab", "[1]");
 * if (await loadVerdictText(dir, "sha256:ab") !== "[1]") throw new Error();
 * ```
 */
export async function saveVerdictText(dir: string, key: string, text: string): Promise<void> {
  const file = recordPath(dir, key);
  if (file === undefined) return;
  const temp = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(temp, text);
    await Deno.rename(temp, file);
    await prune(dir);
  } catch {
    await Deno.remove(temp).catch(() => {});
  }
}

function recordPath(dir: string, key: string): string | undefined {
  const m = /^sha256:([0-9a-f]+)$/.exec(key);
  return m === null ? undefined : `${dir}/${m[1]}.json`;
}

async function prune(dir: string): Promise<void> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".json")) names.push(e.name);
  }
  if (names.length <= MAX_RECORDS) return;
  const aged = await Promise.all(names.map(async (name) => {
    const info = await Deno.stat(`${dir}/${name}`).catch(() => undefined);
    return { name, at: info?.mtime?.getTime() ?? 0 };
  }));
  aged.sort((a, b) => a.at - b.at);
  for (const { name } of aged.slice(0, aged.length - MAX_RECORDS)) {
    await Deno.remove(`${dir}/${name}`).catch(() => {});
  }
}

function granted(desc: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(desc).state === "granted";
  } catch {
    return false;
  }
}

function permittedEnv(name: string): string | undefined {
  if (!granted({ name: "env", variable: name })) return undefined;
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
