/**
 * Writing an imported manifest directory, all or nothing: the files go to
 * a new directory next to `--out` (`.<name>.import-<random>`), which is
 * then renamed to `--out`. An `--out` that exists and is not empty is
 * refused unless `force` is given; with it, the old directory is moved
 * aside, the new one renamed in its place and the old one removed, and
 * every file it held is listed as replaced. On any error the new directory
 * is removed and `--out` is as it was.
 *
 * @example
 * ```ts
 * import { writeImportDir } from "./write.ts";
 * const dir = await Deno.makeTempDir();
 * const r = await writeImportDir(`${dir}/out`, new Map([["namespace.toml", "schema_version = 1\n"]]));
 * const text = await Deno.readTextFile(`${dir}/out/namespace.toml`);
 * await Deno.remove(dir, { recursive: true });
 * if (r.written.join() !== "namespace.toml" || r.replaced.length !== 0 || text !== "schema_version = 1\n") throw new Error();
 * ```
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** What {@linkcode writeImportDir} did. */
export interface WriteResult {
  /** The files written, relative to the directory, sorted. */
  written: string[];
  /** The files the directory held before (with `force`), relative, sorted. */
  replaced: string[];
}

/**
 * Checks that `dir` may be written: it does not exist, or is an empty
 * directory, or `force` is given. Nothing is written.
 *
 * @param dir the output directory
 * @param force replace what it holds
 * @returns the files it holds (relative, sorted): what `force` replaces
 * @throws {UsageError} when it is a file, or not empty and `force` is not given, or holds
 *   anything a manifest directory does not (even with `force`)
 *
 * @example
 * ```ts
 * import { checkImportDir } from "./write.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/namespace.toml`, "");
 * let refused = false;
 * try { await checkImportDir(dir, false); } catch { refused = true; }
 * const listed = await checkImportDir(dir, true);
 * await Deno.writeTextFile(`${dir}/notes.txt`, "");
 * let foreign = false; // --force replaces a manifest directory, not any directory
 * try { await checkImportDir(dir, true); } catch { foreign = true; }
 * await Deno.remove(dir, { recursive: true });
 * if (!refused || !foreign || listed.join() !== "namespace.toml") throw new Error();
 * ```
 */
export async function checkImportDir(dir: string, force: boolean): Promise<string[]> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  if (!info.isDirectory) throw new UsageError(`${dir}: --out is not a directory`);
  const held = await listFiles(dir);
  if (held.length > 0 && !force) {
    throw new UsageError(
      `${dir}: --out is not empty (${held.length} ${
        held.length === 1 ? "entry" : "entries"
      }); give --force to replace it`,
    );
  }
  // --force replaces a manifest directory, never any directory: a mistyped --out (the project, a
  // home directory) must not be wiped
  const foreign = held.filter((f) => !isManifestEntry(f));
  if (foreign.length > 0) {
    throw new UsageError(
      `${dir}: --out holds files that are not a manifest's (${foreign.slice(0, 3).join(", ")}${
        foreign.length > 3 ? ", …" : ""
      }); --force replaces only a manifest directory ` +
        "(namespace.toml, flags/, segments/): choose an empty or new directory",
    );
  }
  return held;
}

/** Whether a path of an --out directory is one a manifest directory holds. */
function isManifestEntry(path: string): boolean {
  if (path === "namespace.toml" || path === "flags/" || path === "segments/") return true;
  for (const dir of ["flags/", "segments/"]) {
    if (!path.startsWith(dir)) continue;
    const name = path.slice(dir.length);
    return !name.includes("/") && (name.endsWith(".toml") || name === ".gitkeep");
  }
  return false;
}

/**
 * Writes the files as directory `dir`, atomically (see the module).
 *
 * @param dir the output directory
 * @param files relative path → text
 * @param options `force`: replace a directory that is not empty
 * @returns what was written and replaced
 * @throws {UsageError} as {@linkcode checkImportDir}
 */
export async function writeImportDir(
  dir: string,
  files: ReadonlyMap<string, string>,
  options: { force?: boolean } = {},
): Promise<WriteResult> {
  const replaced = await checkImportDir(dir, options.force === true);
  let end = dir.length;
  while (end > 1 && dir[end - 1] === "/") end--; // no regex: `/\/+$/` is quadratic
  const clean = dir.slice(0, end);
  const slash = clean.lastIndexOf("/");
  const parent = slash === -1 ? "." : slash === 0 ? "/" : clean.slice(0, slash);
  const name = clean.slice(slash + 1);
  const tag = crypto.randomUUID().slice(0, 8);
  const temp = `${parent}/.${name}.import-${tag}`;
  const aside = `${parent}/.${name}.replaced-${tag}`;
  // the topmost missing ancestor, removed again when the write fails
  let made: string | undefined;
  for (let at = parent; !(await exists(at)); at = at.slice(0, Math.max(at.lastIndexOf("/"), 1))) {
    made = at;
    if (!at.includes("/") || at === "/") break;
  }
  if (made !== undefined) await Deno.mkdir(parent, { recursive: true });
  let moved = false;
  try {
    await Deno.mkdir(temp);
    for (const [path, text] of files) {
      const at = `${temp}/${path}`;
      await Deno.mkdir(at.slice(0, at.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(at, text, { createNew: true });
    }
    if (await exists(clean)) {
      await Deno.rename(clean, aside);
      moved = true;
    }
    await Deno.rename(temp, clean);
  } catch (err) {
    await Deno.remove(temp, { recursive: true }).catch(() => {});
    if (moved) await Deno.rename(aside, clean).catch(() => {});
    if (made !== undefined) await Deno.remove(made, { recursive: true }).catch(() => {});
    throw err;
  }
  if (moved) await Deno.remove(aside, { recursive: true });
  return { written: [...files.keys()].sort(), replaced };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Every file and empty directory under `dir`, relative, sorted (links are not followed). */
async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const rel = prefix + e.name;
    if (e.isDirectory) {
      const inner = await listFiles(`${dir}/${e.name}`, `${rel}/`);
      out.push(...(inner.length === 0 ? [`${rel}/`] : inner));
    } else out.push(rel);
  }
  return out.sort();
}
