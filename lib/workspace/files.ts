/**
 * Reads every file of a workspace directory into memory, once. Paths are
 * relative to the workspace root with `/` separators. Documentation and
 * tooling beside the workspace (`*.md`, `LICENSE*`, and names starting with
 * `.` such as `.git` or `.DS_Store`; see {@linkcode isIgnoredName}) are not
 * part of the workspace and are skipped at every level; symbolic links and
 * special files are reported.
 *
 * @module
 */
import { NotFoundError, type Problem } from "../errors.ts";
import { isIgnoredName } from "./layout.ts";
import { loadPatternEngine } from "../flags/compile_pattern.ts";

/** The files of a workspace: relative path → exact bytes, in path order. */
export type WorkspaceFiles = Map<string, Uint8Array>;

/** The outcome of reading a workspace directory. */
export interface ReadResult {
  /** Every regular file, by relative path. */
  files: WorkspaceFiles;
  /** Links and special files found (they are not read). */
  problems: Problem[];
}

/**
 * Reads every regular file under `dir`. Throws {@linkcode NotFoundError}
 * with code `workspace_not_found` when `dir` does not exist or is not a
 * directory (exit status 2 on the command line).
 * When a file may hold a `matches` predicate, it also loads the pattern
 * engine (`loadPatternEngine`, lib/flags/compile_pattern.ts) for a process
 * that deferred it.
 *
 * @param dir the workspace directory
 * @returns the files and the problems found while walking
 *
 * @example
 * ```ts
 * import { readWorkspaceFiles } from "./files.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/variables`);
 * await Deno.writeTextFile(`${dir}/variables/x.toml`, "schema_version = 1\n");
 * const { files } = await readWorkspaceFiles(dir);
 * if (!files.has("variables/x.toml")) throw new Error();
 * ```
 */
export async function readWorkspaceFiles(dir: string): Promise<ReadResult> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new NotFoundError("workspace_not_found", `workspace "${dir}" does not exist`, {
        cause: err,
      });
    }
    throw err;
  }
  if (!info.isDirectory) {
    throw new NotFoundError("workspace_not_found", `workspace "${dir}" is not a directory`);
  }
  const paths: string[] = [];
  const problems: Problem[] = [];
  await walk(dir, "", paths, problems);
  paths.sort();
  const contents = await Promise.all(paths.map((p) => Deno.readFile(`${dir}/${p}`)));
  const files: WorkspaceFiles = new Map();
  paths.forEach((p, i) => files.set(p, contents[i]!));
  // A process that deferred the `matches` engine (`cfgtool resolve`) loads
  // it here, before anything compiles the workspace's predicates. A TOML
  // string may spell `matches` with `\u` escapes: a file with one loads it too.
  if (contents.some(mayHoldMatches)) await loadPatternEngine();
  return { files, problems };
}

const enc = new TextEncoder();
const NEEDLES = ["matches", "\\u", "\\U"].map((n) => enc.encode(n));

/**
 * Whether the bytes may hold a `matches` predicate: they hold the word, or a
 * `\u`/`\U` escape that could spell it (a superset of such files).
 */
function mayHoldMatches(bytes: Uint8Array): boolean {
  return NEEDLES.some((needle) => holds(bytes, needle));
}

function holds(bytes: Uint8Array, needle: Uint8Array): boolean {
  const first = needle[0]!;
  for (let i = bytes.indexOf(first); i !== -1; i = bytes.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && bytes[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

async function walk(root: string, rel: string, paths: string[], problems: Problem[]) {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(rel === "" ? root : `${root}/${rel}`)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (isIgnoredName(e.name)) continue;
    const path = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isSymlink) {
      problems.push({ path, message: "symbolic links are not allowed in a workspace" });
    } else if (e.isDirectory) {
      await walk(root, path, paths, problems);
    } else if (e.isFile) {
      paths.push(path);
    } else {
      problems.push({ path, message: "not a regular file" });
    }
  }
}
