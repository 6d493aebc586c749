/**
 * Manifest directories on disk: read one into a file set (relative
 * `/`-separated path to exact bytes) and write one back. Only the three
 * manifest shapes are read (`namespace.toml`, `flags/<key>.toml`,
 * `segments/<key>.toml`); anything else in the directory is refused, except
 * entries whose name starts with `.` (`.git`, `.gitkeep`, editor files),
 * which are skipped. Symbolic links are refused, never followed.
 *
 * @module
 */
import { dirname, join } from "node:path";
import {
  CfgtoolError,
  InvalidRequestError,
  type Problem,
  ProblemsError,
  UsageError,
} from "../errors.ts";
import { compareProblems } from "./validate.ts";
import {
  MAX_FILE_BYTES,
  MAX_MANIFEST_FILES,
  parseManifestPath,
  unknownFileMessage,
} from "./model.ts";
import { compareUtf8 } from "../bytes.ts";

/** A manifest file set: relative `/`-separated path to exact file bytes. */
export type ManifestFiles = Map<string, Uint8Array>;

/** What {@linkcode scanManifestDir} found. */
export interface ScanResult {
  /** The manifest files read, by relative path. */
  files: ManifestFiles;
  /** Entries refused (unknown files, links, oversized files), sorted. */
  problems: Problem[];
}

/**
 * Reads a manifest directory, collecting refused entries as problems instead
 * of throwing, so that `lint` can report them together with validation
 * problems. A file over 1 MiB is reported and not read.
 *
 * @param dir the manifest directory
 * @returns the files read and the problems found
 * @throws {UsageError} when `dir` does not exist or is not a directory
 *
 * @example
 * ```ts
 * import { scanManifestDir } from "./files.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/namespace.toml`, "schema_version = 1\n");
 * await Deno.writeTextFile(`${dir}/notes.txt`, "hi\n");
 * const { files, problems } = await scanManifestDir(dir);
 * if (!files.has("namespace.toml") || problems[0]?.path !== "notes.txt") throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function scanManifestDir(dir: string): Promise<ScanResult> {
  await requireDir(dir);
  const files: ManifestFiles = new Map();
  const problems: Problem[] = [];
  const readOne = async (rel: string) => {
    const abs = join(dir, rel);
    const info = await Deno.lstat(abs);
    if (info.size > MAX_FILE_BYTES) {
      problems.push({
        path: rel,
        message: `file is ${info.size} bytes; the limit is ${MAX_FILE_BYTES} bytes (1 MiB)`,
      });
      return;
    }
    files.set(rel, await Deno.readFile(abs));
  };
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(".")) continue;
    const refusal = refuse(e, e.name);
    if (refusal) {
      problems.push(refusal);
    } else if (e.isFile && e.name === "namespace.toml") {
      await readOne(e.name);
    } else if (e.isDirectory && (e.name === "flags" || e.name === "segments")) {
      for await (const c of Deno.readDir(join(dir, e.name))) {
        if (c.name.startsWith(".")) continue;
        const rel = `${e.name}/${c.name}`;
        const r = refuse(c, rel);
        if (r) problems.push(r);
        else if (c.isFile && parseManifestPath(rel) !== undefined) await readOne(rel);
        else {problems.push({
            path: c.isDirectory ? `${rel}/` : rel,
            message: unknownEntry(c, rel),
          });}
      }
    } else {
      problems.push({
        path: e.isDirectory ? `${e.name}/` : e.name,
        message: unknownEntry(e, e.name),
      });
    }
  }
  problems.sort(compareProblems);
  return { files: new Map([...files].sort(([a], [b]) => compareUtf8(a, b))), problems };
}

/**
 * Reads a manifest directory into a file set, refusing unknown files,
 * symbolic links and files over 1 MiB. The contents are not validated: pass
 * the result to `validateManifest`.
 *
 * @param dir the manifest directory
 * @returns relative path to exact bytes, sorted by path
 * @throws {ProblemsError} listing every refused entry
 * @throws {UsageError} when `dir` does not exist or is not a directory
 *
 * @example
 * ```ts
 * import { readManifestDir } from "./files.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/flags`);
 * await Deno.writeTextFile(`${dir}/flags/dark-mode.toml`, "schema_version = 1\n");
 * const files = await readManifestDir(dir);
 * if (!files.has("flags/dark-mode.toml")) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readManifestDir(dir: string): Promise<ManifestFiles> {
  const { files, problems } = await scanManifestDir(dir);
  if (problems.length > 0) throw new ProblemsError(problems);
  return files;
}

/** Options of {@linkcode writeManifestDir}. */
export interface WriteOptions {
  /**
   * Remove manifest files (the three accepted shapes only) that are on disk
   * but not in `files`, so the directory mirrors the set. Other files are
   * never touched. Default false.
   */
  prune?: boolean;
}

/**
 * Writes a manifest file set into a directory (created when missing). Every
 * path must be an accepted manifest path, which also rules out absolute
 * paths and `..`; each file is written to a temporary name and renamed into
 * place, so a reader never sees half a file. With `prune`, manifest files
 * absent from the set are removed.
 *
 * @param dir the target directory
 * @param files relative path to exact bytes
 * @param options see {@linkcode WriteOptions}
 * @throws {ProblemsError} when a path is not a manifest path (nothing is written)
 * @throws {CfgtoolError} when `flags/` or `segments/` exists but is not a plain directory
 *
 * @example
 * ```ts
 * import { readManifestDir, writeManifestDir } from "./files.ts";
 * const dir = await Deno.makeTempDir();
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * await writeManifestDir(dir, files);
 * if ((await readManifestDir(dir)).size !== 1) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeManifestDir(
  dir: string,
  files: ReadonlyMap<string, Uint8Array>,
  options: WriteOptions = {},
): Promise<void> {
  const bad: Problem[] = [];
  for (const path of files.keys()) {
    if (parseManifestPath(path) === undefined) {
      bad.push({ path, message: "refusing to write: not a manifest path" });
    }
  }
  if (bad.length > 0) throw new ProblemsError(bad.sort(compareProblems));
  await Deno.mkdir(dir, { recursive: true });
  for (const sub of ["flags", "segments"]) {
    const abs = join(dir, sub);
    let info: Deno.FileInfo | undefined;
    try {
      info = await Deno.lstat(abs);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    if (info && !info.isDirectory) {
      throw new CfgtoolError("invalid_directory", `${abs} exists and is not a directory`, {
        status: 400,
      });
    }
    const needed = [...files.keys()].some((p) => p.startsWith(`${sub}/`));
    if (!info && needed) await Deno.mkdir(abs);
  }
  for (const [path, bytes] of files) {
    const abs = join(dir, path);
    const tmp = join(dirname(abs), `.${crypto.randomUUID()}.tmp`);
    try {
      await Deno.writeFile(tmp, bytes, { mode: 0o644 });
      await Deno.rename(tmp, abs);
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
  }
  if (options.prune) {
    for (const path of await listManifestPaths(dir)) {
      if (!files.has(path)) await Deno.remove(join(dir, path));
    }
  }
}

async function listManifestPaths(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name === "namespace.toml") out.push(e.name);
    if (e.isDirectory && (e.name === "flags" || e.name === "segments")) {
      for await (const c of Deno.readDir(join(dir, e.name))) {
        const rel = `${e.name}/${c.name}`;
        if (c.isFile && parseManifestPath(rel) !== undefined) out.push(rel);
      }
    }
  }
  return out;
}

async function requireDir(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new UsageError(`manifest directory not found: ${dir}`);
    }
    throw err;
  }
  if (!info.isDirectory) throw new UsageError(`not a directory: ${dir}`);
}

function refuse(e: Deno.DirEntry, rel: string): Problem | undefined {
  if (e.isSymlink) {
    return { path: rel, message: "refusing a symbolic link: links are not followed" };
  }
  if (!e.isFile && !e.isDirectory) return { path: rel, message: "refusing a special file" };
  return undefined;
}

function unknownEntry(e: Deno.DirEntry, rel: string): string {
  if (e.isDirectory) {
    return "unknown directory: a manifest holds only namespace.toml, flags/ and segments/";
  }
  return unknownFileMessage(rel);
}

/** A manifest sent as JSON: `{files: {path: text}, message?}`. */
export interface JsonManifest {
  /** The file set, texts encoded as UTF-8. */
  files: ManifestFiles;
  /** The push message, when one was sent. */
  message: string | undefined;
  /** `"propose": true`: open a change request with the files instead of committing them. */
  propose: boolean;
}

/**
 * Decodes a manifest sent as a JSON body, `{files: {path: text}, message?}`,
 * into a file set; throws `InvalidRequestError` (400 `invalid_request`) for a body
 * that is not that shape.
 *
 * @param bytes the body, UTF-8 JSON
 * @returns the files and the message
 *
 * @example
 * ```ts
 * import { manifestFromJson } from "./files.ts";
 * const body = new TextEncoder().encode('{"files": {"namespace.toml": "schema_version = 1\\n"}}');
 * const { files, message } = manifestFromJson(body);
 * if (files.size !== 1 || message !== undefined) throw new Error();
 * ```
 */
export function manifestFromJson(bytes: Uint8Array): JsonManifest {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidRequestError("request body must be a JSON object");
  }
  const { files, message, propose } = body as Record<string, unknown>;
  if (propose !== undefined && typeof propose !== "boolean") {
    throw new InvalidRequestError("propose must be true or false", {
      details: { field: "propose" },
    });
  }
  if (files === null || typeof files !== "object" || Array.isArray(files)) {
    throw new InvalidRequestError("files must be an object of path → text");
  }
  if (message !== undefined && message !== null && typeof message !== "string") {
    throw new InvalidRequestError("message must be a string", { details: { field: "message" } });
  }
  const entries = Object.entries(files);
  if (entries.length > MAX_MANIFEST_FILES) {
    throw new CfgtoolError(
      "payload_too_large",
      `manifest has ${entries.length} files; at most ${MAX_MANIFEST_FILES} are accepted`,
      { status: 413 },
    );
  }
  const encoder = new TextEncoder();
  const out: ManifestFiles = new Map();
  for (const [path, text] of entries) {
    if (typeof text !== "string") {
      throw new InvalidRequestError(`files["${path}"] must be a string`);
    }
    out.set(path, encoder.encode(text));
  }
  return {
    files: out,
    message: typeof message === "string" ? message : undefined,
    propose: propose === true,
  };
}
