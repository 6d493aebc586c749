/**
 * `cfgtool import --from <tool> <file> --out <dir>`: another flag tool's
 * export as a manifest directory that `flags lint` accepts, with a report
 * of each flag and segment (what mapped, what did not and why, notes).
 * The manifest is checked with the validator before anything is written;
 * the directory is written all at once (lib/import/write.ts).
 *
 * @module
 */
import type { Command } from "commander";
import { CfgtoolError, UsageError } from "../errors.ts";
import type { ImportRun } from "../import/report.ts";
import { cellText } from "./printable.ts";

/** What `cfgtool import` was asked for. */
export interface ImportCommandOptions {
  /** The tool: flagd, unleash, launchdarkly, growthbook or flipt. */
  from: string;
  /** The export's file. */
  file: string;
  /** The output directory. */
  out: string;
  /** `--env-map a=b` arguments. */
  envMap?: readonly string[];
  /** Replace a directory that is not empty. */
  force?: boolean;
}

/**
 * Parses `--env-map` arguments (`source=target`).
 *
 * @throws {UsageError} on an argument without `=`, or a source given twice
 *
 * @example
 * ```ts
 * import { parseEnvMap } from "./import.ts";
 * if (parseEnvMap(["production=prod"]).get("production") !== "prod") throw new Error();
 * ```
 */
export function parseEnvMap(args: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of args) {
    const eq = a.indexOf("=");
    if (eq <= 0 || eq === a.length - 1) {
      throw new UsageError(`--env-map ${a}: give source=target, such as production=prod`);
    }
    const from = a.slice(0, eq);
    if (out.has(from)) throw new UsageError(`--env-map: ${from} is mapped twice`);
    out.set(from, a.slice(eq + 1));
  }
  return out;
}

/**
 * Imports an export file into a new manifest directory.
 *
 * @param opts the tool, the file, the directory, `--env-map` and `--force`
 * @returns what was imported, written and replaced
 * @throws {UsageError} for an unknown tool, a bad `--env-map`, or an `--out` that is not empty (without `force`)
 * @throws {ImportError} when the file cannot be read or is not an export of that tool
 *
 * @example
 * ```ts
 * import { importToDir } from "./import.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/flags.json`, JSON.stringify({ flags: { a: {
 *   state: "ENABLED", variants: { on: true, off: false }, defaultVariant: "on" } } }));
 * const run = await importToDir({ from: "flagd", file: `${dir}/flags.json`, out: `${dir}/out` });
 * await Deno.remove(dir, { recursive: true });
 * if (run.written.join() !== "flags/a.toml,namespace.toml") throw new Error(run.written.join());
 * ```
 */
export async function importToDir(opts: ImportCommandOptions): Promise<ImportRun> {
  // lazy: the importers, the authoring library and the validator load only for import
  const [{ importerFor }, { ImportError }, { checkImportDir, writeImportDir }] = await Promise.all([
    import("../import/mod.ts"),
    import("../import/errors.ts"),
    import("../import/write.ts"),
  ]);
  const importer = await importerFor(opts.from);
  const envMap = parseEnvMap(opts.envMap ?? []);
  await checkImportDir(opts.out, opts.force === true);
  const text = await readExport(opts.file, (p) => new ImportError(opts.file, p));
  let result;
  try {
    result = importer(text, { file: opts.file, envMap });
  } catch (err) {
    if (err instanceof CfgtoolError) throw err;
    throw new ImportError(
      opts.file,
      `cannot be read as a ${opts.from} export: ${(err as Error).message ?? String(err)}`,
    );
  }
  const [{ validateManifest }, { filesOf }] = await Promise.all([
    import("../flags/validate.ts"),
    import("../flags/authoring/texts.ts"),
  ]);
  const { problems } = validateManifest(filesOf(result.files));
  if (problems.length > 0) {
    const p = problems[0]!;
    throw new ImportError(
      opts.file,
      `the manifest made of it does not lint (${problems.length} problem${
        problems.length === 1 ? "" : "s"
      }; first: ${p.path}${p.key ? ` ${p.key}` : ""}: ${p.message}); nothing is written`,
    );
  }
  const { written, replaced } = await writeImportDir(opts.out, result.files, {
    force: opts.force === true,
  });
  return { source: opts.from, file: opts.file, out: opts.out, written, replaced, result };
}

/** The export's text; a missing, unreadable or non-UTF-8 file is the export's problem. */
async function readExport(file: string, fail: (problem: string) => Error): Promise<string> {
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(file);
    if (info.isDirectory) throw fail("is a directory, not an export file");
    bytes = await Deno.readFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw fail("no such file");
    if (err instanceof Deno.errors.PermissionDenied) {
      throw fail("cannot be read (permission denied)");
    }
    throw err;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw fail("is not UTF-8 text");
  }
}

const COLLECT = (v: string, prev: string[] = []) => [...prev, v];

/**
 * Registers `cfgtool import`.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerImportCommand } from "./import.ts";
 * const program = new Command();
 * registerImportCommand(program);
 * if (program.commands[0]?.name() !== "import") throw new Error();
 * ```
 */
export function registerImportCommand(program: Command): void {
  program.command("import")
    .summary("Make a manifest directory of another flag tool's export")
    .description(
      "Read another flag tool's export and write a manifest directory that `cfgtool flags\n" +
        "lint` accepts: flagd's flag definition (JSON), Unleash's feature export, LaunchDarkly's\n" +
        "flags and segments as its REST API returns them, GrowthBook's features payload, or\n" +
        "Flipt's features.yml. Every operator with an equivalent is mapped; the report lists\n" +
        "each flag and segment with what mapped, what did not and why. Nothing is left out\n" +
        "without a line in the report. Rollouts keep their weights, but each tool hashes\n" +
        "differently: a user may land in another bucket.\n\n" +
        "The directory is written all at once, after the manifest passes the validator. An\n" +
        "--out that exists and is not empty is refused unless --force is given, which\n" +
        "replaces it and lists every file it held. See docs/import.md.",
    )
    .argument("<file>", "the export file")
    .requiredOption(
      "--from <tool>",
      "the tool that wrote the file: flagd, unleash, launchdarkly, growthbook or flipt",
    )
    .requiredOption("--out <dir>", "the manifest directory to write (absent or empty)")
    .option(
      "--env-map <source=target>",
      "write the source's environment source as environment target (repeatable)",
      COLLECT,
      [] as string[],
    )
    .option(
      "--force",
      "replace a manifest directory at --out (its files are listed); anything else there is refused",
    )
    .option("--json", "print the report as one JSON object")
    .addHelpText(
      "after",
      "\nOutput: a summary line, then per flag and segment its mapped, unmapped and note\n" +
        "lines, then notes on the export, then one replaced: line per file --force replaced.\n\n" +
        "Exit status:\n" +
        "  0  written (unmapped parts are in the report)\n" +
        "  1  the file is missing, malformed, truncated or not an export of that tool\n" +
        "  2  usage error: an unknown --from, a bad --env-map, an --out that is not empty\n" +
        "Nothing is written unless the exit status is 0.\n\n" +
        "Examples:\n" +
        "  cfgtool import --from flagd flags.json --out checkout-flags\n" +
        "  cfgtool import --from flipt features.yml --out checkout-flags --env-map default=production\n",
    )
    .action(async (file: string, opts) => {
      const run = await importToDir({
        from: opts.from,
        file,
        out: opts.out,
        envMap: opts.envMap,
        force: opts.force === true,
      });
      const { reportJson, reportLines } = await import("../import/report.ts");
      if (opts.json === true) console.log(JSON.stringify(reportJson(run)));
      // names in the report come from the export: one line each, no terminal control
      else for (const line of reportLines(run)) console.log(cellText(line));
    });
}
