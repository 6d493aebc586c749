/**
 * `cfgtool pull <dir>`: downloads a namespace manifest (tar.gz), checks it
 * against the closure hash of its ETag, and writes it into a directory. The
 * new files are written into a temporary sibling directory which then
 * replaces the target in one rename, so the target never holds half a
 * manifest (when the working directory is inside the target, its three
 * manifest entries are swapped instead, one rename each). Entries that are not manifest files (dotfiles such as `.git`,
 * and with `--force` anything else) are moved over and kept; manifest files
 * the pulled version does not have are dropped and listed in the output. Without `--force`, a non-empty directory that is not a
 * manifest directory is refused.
 *
 * @module
 */
import { basename, dirname, join, resolve, sep } from "node:path";
import type { Command } from "commander";
import { CfgtoolError, UsageError } from "../errors.ts";
import { parseWholeNumber, printJson, resolveRemote, withRemoteOptions } from "./remote_options.ts";

/**
 * Registers `pull`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerPullCommand } from "./pull.ts";
 * const program = new Command();
 * registerPullCommand(program);
 * if (!program.commands.some((c) => c.name() === "pull")) throw new Error();
 * ```
 */
export function registerPullCommand(program: Command): void {
  withRemoteOptions(
    program
      .command("pull")
      .description(
        "Download a namespace manifest into a directory (created if missing; replaced " +
          "as a whole, never left half-written).",
      )
      .argument("<dir>", "target directory: missing, empty, or a manifest directory"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace")
    .option("--version <n>", "download this version (default: the current one)")
    .option(
      "--force",
      "also write into a directory holding other files (they are kept; manifest files " +
        "that the pulled version does not have are removed, and listed)",
    )
    .option("--json", "print {version, closure_hash, dir, files} as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool pull ./flags --tenant acme --namespace checkout\n" +
        "  cfgtool pull ./flags-v3 --tenant acme --namespace checkout --version 3\n",
    )
    .action(async (dir, opts) => {
      const remote = resolveRemote(opts);
      const version = opts.version === undefined
        ? undefined
        : parseWholeNumber(opts.version, "--version");
      await inspectTarget(dir, opts.force === true);
      // lazy: the HTTP client and the archive reader (modern-tar) load only when pull runs
      const [{ ServiceClient }, { unpackArchive }, { closureHash }] = await Promise.all([
        import("../client/api.ts"),
        import("../closure/archive.ts"),
        import("../closure/hash.ts"),
      ]);
      const archive = await new ServiceClient(remote).downloadManifest(
        opts.tenant,
        opts.namespace,
        version === undefined ? {} : { version },
      );
      const files = await unpackArchive(archive.bytes);
      const hash = await closureHash(files);
      if (archive.closure_hash !== null && archive.closure_hash !== hash) {
        throw new CfgtoolError(
          "integrity_error",
          `downloaded files hash to ${hash}, but the service announced ${archive.closure_hash}; ` +
            "nothing was written",
        );
      }
      if (version !== undefined && archive.version !== null && archive.version !== version) {
        throw new CfgtoolError(
          "integrity_error",
          `asked for version ${version}, got version ${archive.version}; nothing was written`,
        );
      }
      const removed = await staleFiles(dir, files);
      await replaceDir(dir, files);
      const result = {
        version: archive.version,
        closure_hash: hash,
        dir,
        files: files.size,
        removed,
      };
      if (opts.json) return printJson(result);
      console.log(
        `pulled version ${archive.version ?? "?"} (${hash}) into ${dir}: ${files.size} file${
          files.size === 1 ? "" : "s"
        }`,
      );
      for (const path of removed) {
        console.log(`removed ${path} (not in version ${archive.version ?? "?"})`);
      }
    });
}

/** Refuses a target that is not a directory, or holds other files without `--force`. */
async function inspectTarget(dir: string, force: boolean): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (!info.isDirectory) throw new UsageError(`${dir} exists and is not a directory`);
  if (force) return;
  // lazy: the manifest reader (TOML, flags/) loads only when pull runs
  const { scanManifestDir } = await import("../flags/files.ts");
  const { problems } = await scanManifestDir(dir);
  if (problems.length > 0) {
    throw new UsageError(
      `${dir} is not empty and not a manifest directory (${problems[0]!.path}: ` +
        `${problems[0]!.message}); pull into an empty or manifest directory, or pass --force`,
    );
  }
}

/**
 * Writes `files` into a temporary sibling of `dir`, moves the entries of
 * `dir` that are not manifest files into it, and swaps it into place. When
 * the working directory is inside `dir` (`cfgtool pull .`), the directory
 * itself stays and its three manifest entries (`namespace.toml`, `flags/`,
 * `segments/`) are swapped instead, each by one rename, so the caller's
 * shell is not left in a deleted directory.
 */
async function replaceDir(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  // lazy: the manifest writer (TOML, flags/) loads only when pull runs
  const [{ writeManifestDir }, { parseManifestPath }] = await Promise.all([
    import("../flags/files.ts"),
    import("../flags/model.ts"),
  ]);
  const target = resolve(dir);
  const parent = dirname(target);
  const tag = crypto.randomUUID().slice(0, 8);
  const tmp = join(parent, `.${basename(target)}.pull-${tag}`);
  const old = join(parent, `.${basename(target)}.old-${tag}`);
  await Deno.mkdir(parent, { recursive: true });
  const real = await Deno.realPath(target).catch(() => null);
  const cwd = await Deno.realPath(Deno.cwd()).catch(() => Deno.cwd());
  const inPlace = real !== null && (cwd === real || cwd.startsWith(real + sep));
  const carried: [from: string, to: string][] = [];
  try {
    await writeManifestDir(tmp, files);
    if (real !== null) {
      for (const rel of await keptEntries(target, parseManifestPath)) {
        if (inPlace && !rel.includes("/")) continue; // top-level entries stay where they are
        const to = join(tmp, rel);
        await Deno.mkdir(dirname(to), { recursive: true });
        await Deno.rename(join(target, rel), to);
        carried.push([join(target, rel), to]);
      }
    }
  } catch (err) {
    for (const [from, to] of carried.reverse()) await Deno.rename(to, from).catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    throw err;
  }
  if (real === null) {
    await Deno.rename(tmp, target);
  } else if (!inPlace) {
    await Deno.rename(target, old);
    try {
      await Deno.rename(tmp, target);
    } catch (err) {
      await Deno.rename(old, target).catch(() => {});
      throw err;
    }
  } else {
    await Deno.mkdir(old);
    for (const name of ["namespace.toml", "flags", "segments"]) {
      await Deno.rename(join(target, name), join(old, name)).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
      await Deno.rename(join(tmp, name), join(target, name)).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
    await Deno.remove(tmp, { recursive: true });
  }
  await Deno.remove(old, { recursive: true }).catch(() => {});
}

/**
 * Manifest files in `dir` (relative paths) that the pulled version does not
 * have: the pull removes them, and says so.
 */
async function staleFiles(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<string[]> {
  // lazy: flags/ loads only when pull runs
  const { parseManifestPath } = await import("../flags/model.ts");
  const present: string[] = [];
  try {
    if ((await Deno.stat(join(dir, "namespace.toml"))).isFile) present.push("namespace.toml");
  } catch {
    // absent
  }
  for (const sub of ["flags", "segments"]) {
    try {
      for await (const e of Deno.readDir(join(dir, sub))) {
        const rel = `${sub}/${e.name}`;
        if (e.isFile && parseManifestPath(rel) !== undefined) present.push(rel);
      }
    } catch {
      // absent
    }
  }
  return present.filter((p) => !files.has(p)).sort();
}

/**
 * Relative paths of the entries of `dir` that are not manifest files: every
 * top-level entry but `namespace.toml`, `flags/` and `segments/`, and every
 * entry of those two directories that is not a manifest file.
 */
async function keptEntries(
  dir: string,
  parseManifestPath: (path: string) => unknown,
): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.name === "namespace.toml" && e.isFile) continue;
    if ((e.name === "flags" || e.name === "segments") && e.isDirectory) {
      for await (const c of Deno.readDir(join(dir, e.name))) {
        const rel = `${e.name}/${c.name}`;
        if (!(c.isFile && parseManifestPath(rel) !== undefined)) out.push(rel);
      }
      continue;
    }
    out.push(e.name);
  }
  return out;
}
