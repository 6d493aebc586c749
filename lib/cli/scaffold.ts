/**
 * Starting a manifest from the terminal: `cfgtool namespace init <dir>`
 * writes `namespace.toml` and empty `flags/` and `segments/` directories,
 * `cfgtool flags new <dir> <key>` writes `flags/<key>.toml`. The texts come
 * from lib/flags/scaffold.ts (what the console writes, with comments that
 * teach the format); this module checks the directory, never overwrites a
 * file and says what it wrote.
 *
 * @module
 */
import { type Command, Option } from "commander";
import { CfgtoolError, InvalidRequestError, UsageError } from "../errors.ts";
import type { FlagType } from "../flags/model.ts";

/** The flag types `flags new --type` takes (the manifest's). */
const TYPES: readonly FlagType[] = ["boolean", "string", "number", "object"];

/** What `namespace init` was asked for. */
export interface NamespaceInitOptions {
  /** Environment keys, in order; none: production and staging. */
  environments?: readonly string[];
  /** The namespace's description. */
  description?: string;
}

/** What `flags new` was asked for. */
export interface FlagNewOptions {
  /** The flag's key. */
  key: string;
  /** Its type. */
  type: FlagType;
  /** Its description. */
  description?: string;
}

/**
 * Writes a new manifest directory: `namespace.toml` declaring the
 * environments, and `flags/` and `segments/` (each with a `.gitkeep` when it
 * is new, so git keeps it; the manifest reader skips dot files). Creates
 * `dir` when it does not exist; directories that exist are kept as they are.
 *
 * @param dir the manifest directory
 * @param opts environments (default production and staging) and description
 * @returns the paths written, relative to `dir`
 * @throws {UsageError} when an environment key is invalid or given twice, or `dir` is a file
 * @throws {CfgtoolError} `file_exists` when `namespace.toml` exists (nothing is written)
 *
 * @example
 * ```ts
 * import { initNamespaceDir } from "./scaffold.ts";
 * const dir = await Deno.makeTempDir();
 * const written = await initNamespaceDir(`${dir}/flags-repo`, { environments: ["prod"] });
 * const text = await Deno.readTextFile(`${dir}/flags-repo/namespace.toml`);
 * await Deno.remove(dir, { recursive: true });
 * if (written.join() !== "namespace.toml,flags/.gitkeep,segments/.gitkeep") throw new Error();
 * if (!text.includes("[namespace.environments.prod]")) throw new Error(text);
 * ```
 */
export async function initNamespaceDir(
  dir: string,
  opts: NamespaceInitOptions = {},
): Promise<string[]> {
  // lazy: the authoring library (TOML) loads only for the scaffold commands
  const { namespaceScaffold } = await import("../flags/scaffold.ts");
  const envs = opts.environments ?? [];
  const twice = envs.find((e, i) => envs.indexOf(e) !== i);
  if (twice !== undefined) throw new UsageError(`--env ${twice} is given twice`);
  const text = asUsage(() =>
    namespaceScaffold({ environments: envs, description: opts.description })
  );
  await makeDir(dir, dir);
  await writeNew(dir, "namespace.toml", text, "namespace init");
  const written = ["namespace.toml"];
  for (const sub of ["flags", "segments"]) {
    if (await makeDir(join(dir, sub), join(dir, sub))) {
      await Deno.writeTextFile(join(dir, `${sub}/.gitkeep`), "");
      written.push(`${sub}/.gitkeep`);
    }
  }
  return written;
}

/**
 * Writes `flags/<key>.toml` in a manifest directory: the flag with two
 * starter variations of its type and a default, and commented-out examples
 * (rules, a rollout, overrides of the environments `namespace.toml`
 * declares). Creates `flags/` when it is missing.
 *
 * @param dir the manifest directory (it must hold `namespace.toml`)
 * @param opts key, type and description
 * @returns the path written, relative to `dir`
 * @throws {UsageError} when `dir` has no `namespace.toml`, or the key, type or description is refused
 * @throws {CfgtoolError} `file_exists` when the flag's file exists
 *
 * @example
 * ```ts
 * import { initNamespaceDir, newFlagFile } from "./scaffold.ts";
 * const dir = await Deno.makeTempDir();
 * await initNamespaceDir(dir);
 * const path = await newFlagFile(dir, { key: "dark-mode", type: "boolean" });
 * const text = await Deno.readTextFile(`${dir}/${path}`);
 * await Deno.remove(dir, { recursive: true });
 * if (path !== "flags/dark-mode.toml" || !text.includes('\ndefault = "off"\n')) throw new Error(text);
 * ```
 */
export async function newFlagFile(dir: string, opts: FlagNewOptions): Promise<string> {
  // lazy: the authoring library (TOML) loads only for the scaffold commands
  const { flagScaffold } = await import("../flags/scaffold.ts");
  let namespace: string;
  try {
    namespace = await Deno.readTextFile(join(dir, "namespace.toml"));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    throw new UsageError(
      `${dir} has no namespace.toml; start the manifest with: cfgtool namespace init ${dir}`,
    );
  }
  const texts = new Map([["namespace.toml", namespace]]);
  for (const segment of await tomlFiles(join(dir, "segments"))) {
    texts.set(`segments/${segment}`, "");
  }
  const path = `flags/${opts.key}.toml`;
  const text = asUsage(() =>
    flagScaffold(texts, { key: opts.key, type: opts.type, description: opts.description })
  );
  await makeDir(dir, join(dir, "flags"));
  await writeNew(dir, path, text, "flags new");
  return path;
}

/**
 * Registers `namespace init` on the `namespace` command.
 *
 * @param ns the `namespace` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerNamespaceInitCommand } from "./scaffold.ts";
 * const ns = new Command("namespace");
 * registerNamespaceInitCommand(ns);
 * if (ns.commands[0]?.name() !== "init") throw new Error();
 * ```
 */
export function registerNamespaceInitCommand(ns: Command): void {
  ns.command("init")
    .summary("Start a manifest directory on disk (namespace.toml, flags/, segments/)")
    .description(
      "Start a flag manifest directory on disk: namespace.toml declaring the environments,\n" +
        "and empty flags/ and segments/ directories (each with a .gitkeep so that git keeps\n" +
        "it). Works offline; nothing is sent to a service. The files carry comments that\n" +
        "explain them, and lint clean with `cfgtool flags lint <dir>`.\n\n" +
        "The directory is created when missing. An existing namespace.toml is never\n" +
        "overwritten; existing flags/ and segments/ directories are kept as they are.\n" +
        "Add flags with `cfgtool flags new <dir> <key>`, then upload with `cfgtool push`.\n" +
        "See docs/flags.md.",
    )
    .argument("<dir>", "the manifest directory")
    .addOption(
      new Option("--env <key>", "declare an environment (repeat for more, in order)")
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "production and staging"),
    )
    .option("--description <text>", "the namespace's description")
    .addHelpText(
      "after",
      "\nOutput: one line per file written (wrote <path>), then what to run next.\n\n" +
        "Exit status:\n" +
        "  0  written\n" +
        "  1  namespace.toml exists (nothing is written)\n" +
        "  2  usage error (an invalid or repeated environment key, <dir> is a file)\n\n" +
        "Examples:\n" +
        "  cfgtool namespace init checkout-flags\n" +
        "  cfgtool namespace init checkout-flags --env production --env staging --env dev \\\n" +
        '    --description "Checkout service"\n',
    )
    .action(async (dir: string, opts) => {
      const written = await initNamespaceDir(dir, {
        environments: opts.env,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      for (const p of written) console.log(`wrote ${join(dir, p)}`);
      console.log(`next: cfgtool flags new ${dir} <key> --type boolean`);
    });
}

/**
 * Registers `flags new` on the `flags` command.
 *
 * @param flags the `flags` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerFlagsNewCommand } from "./scaffold.ts";
 * const flags = new Command("flags");
 * registerFlagsNewCommand(flags);
 * if (flags.commands[0]?.name() !== "new") throw new Error();
 * ```
 */
export function registerFlagsNewCommand(flags: Command): void {
  flags.command("new")
    .summary("Write a new flag file, flags/<key>.toml, with examples to start from")
    .description(
      "Write flags/<key>.toml in a manifest directory: the flag with two variations of its\n" +
        "type and a default (boolean: on, off; string: control, treatment; number: low, high;\n" +
        "object: off, on), as the console writes a new flag. Comments explain each key;\n" +
        "lines that start with # and no space are examples of a rule, a rollout and\n" +
        "per-environment overrides (for the environments namespace.toml declares): remove\n" +
        "that # to use one. The file lints clean as written and with any example in force.\n\n" +
        "The key follows the manifest's rules: lower-case letters, digits, '.', '_' and '-',\n" +
        "starting with a letter or digit, at most 63 characters. An existing file is never\n" +
        "overwritten. Works offline. See docs/flags.md.",
    )
    .argument("<dir>", "the manifest directory (with namespace.toml)")
    .argument("<key>", "the flag's key, the file's name")
    .addOption(
      new Option("--type <type>", "the flag's type").choices(TYPES).default("boolean"),
    )
    .option("--description <text>", "the flag's description")
    .addHelpText(
      "after",
      "\nOutput: one line, wrote <dir>/flags/<key>.toml.\n\n" +
        "Exit status:\n" +
        "  0  written\n" +
        "  1  the flag's file exists (nothing is written)\n" +
        "  2  usage error (no namespace.toml in <dir>, an invalid key or type)\n\n" +
        "Examples:\n" +
        '  cfgtool flags new checkout-flags dark-mode --description "Dark theme"\n' +
        "  cfgtool flags new checkout-flags checkout-theme --type string\n" +
        "  cfgtool flags new checkout-flags max-cart-items --type number\n",
    )
    .action(async (dir: string, key: string, opts) => {
      const path = await newFlagFile(dir, {
        key,
        type: opts.type as FlagType,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      console.log(`wrote ${join(dir, path)}`);
    });
}

/** `dir/rel` without a doubled `/`. */
function join(dir: string, rel: string): string {
  return dir.endsWith("/") ? `${dir}${rel}` : `${dir}/${rel}`;
}

/** A refusal of the authoring library, as the command line's mistake (exit 2). */
function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof InvalidRequestError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

/**
 * Creates `path` (and its parents) when missing.
 *
 * @returns whether it was created
 * @throws {UsageError} when `path` or a parent is not a directory
 */
async function makeDir(shown: string, path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    if (!info.isDirectory) throw new UsageError(`${shown} is not a directory`);
    return false;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  try {
    await Deno.mkdir(path, { recursive: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists || err instanceof Deno.errors.NotADirectory) {
      throw new UsageError(`${shown} is not a directory`, { cause: err });
    }
    throw err;
  }
  return true;
}

/** Writes a file that must not exist yet (never overwrites, even in a race). */
async function writeNew(dir: string, rel: string, text: string, command: string): Promise<void> {
  try {
    await Deno.writeTextFile(join(dir, rel), text, { createNew: true });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) {
      throw new CfgtoolError(
        "file_exists",
        `${join(dir, rel)} already exists; ${command} never overwrites files`,
        { status: 409, details: { paths: [rel] }, cause: err },
      );
    }
    throw err;
  }
}

/** The `*.toml` file names of a directory, sorted; none when it does not exist. */
async function tomlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".toml") && !e.name.startsWith(".")) out.push(e.name);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory)) {
      throw err;
    }
  }
  return out.sort();
}
