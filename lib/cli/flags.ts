/**
 * `cfgtool flags …`: commands on flag manifest directories. `flags lint <dir>`
 * validates a namespace manifest on disk with the same validator as the
 * service's PUT and lint endpoints.
 *
 * @module
 */
import type { Command } from "commander";

/** The output of one `flags lint` run, for tests and callers that print elsewhere. */
export interface LintOutput {
  /** The summary line printed on success. */
  summary: string;
}

/**
 * Lints a manifest directory: reads it (refusing unknown files and links)
 * and validates every file, reporting all problems at once.
 *
 * @param dir the manifest directory
 * @returns the summary line (`<dir>: ok (…)`)
 * @throws {ProblemsError} with every problem, sorted by path then key path
 * @throws {UsageError} when `dir` does not exist or is not a directory
 *
 * @example
 * ```ts
 * import { lintFlagsDir } from "./flags.ts";
 * const dir = await Deno.makeTempDir();
 * const { summary } = await lintFlagsDir(dir);
 * await Deno.remove(dir);
 * if (!summary.includes("ok (0 flags, 0 segments, 0 environments)")) throw new Error(summary);
 * ```
 */
export async function lintFlagsDir(dir: string): Promise<LintOutput> {
  const [{ scanManifestDir }, { compareProblems, validateManifest }, { ProblemsError }] =
    await Promise.all([
      import("../flags/files.ts"),
      import("../flags/validate.ts"),
      import("../errors.ts"),
    ]);
  const scan = await scanManifestDir(dir);
  const result = validateManifest(scan.files);
  const problems = [...scan.problems, ...result.problems].sort(compareProblems);
  if (problems.length > 0 || result.manifest === undefined) throw new ProblemsError(problems);
  const m = result.manifest;
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return {
    summary: `${dir}: ok (${count(Object.keys(m.flags).length, "flag")}, ${
      count(Object.keys(m.segments).length, "segment")
    }, ${count(Object.keys(m.namespace.environments).length, "environment")})`,
  };
}

/**
 * Registers `cfgtool flags` and its subcommands on the program.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerFlagsCommands } from "./flags.ts";
 * const program = new Command().name("cfgtool");
 * registerFlagsCommands(program);
 * if (!program.commands.some((c) => c.name() === "flags")) throw new Error();
 * ```
 */
export function registerFlagsCommands(program: Command): void {
  const flags = program
    .command("flags")
    .description("Work with flag manifests on disk (namespace.toml, flags/, segments/)");

  flags
    .command("lint")
    .summary("Validate a flag manifest directory, reporting every problem")
    .description(
      "Validate a flag manifest directory and report every problem at once.\n\n" +
        "The directory holds namespace.toml, flags/<key>.toml and segments/<key>.toml;\n" +
        "any other file is refused (names starting with . are skipped). The checks are\n" +
        "the service's own (PUT …/manifest and POST …/lint): TOML syntax, unknown and\n" +
        "missing keys, types, variations, rules, rollout weights, segments and their\n" +
        "reference cycles, environment overrides, 1 MiB per file. See docs/flags.md.",
    )
    .argument("<dir>", "manifest directory")
    .addHelpText(
      "after",
      "\nOutput:\n" +
        "  valid    one line on stdout: <dir>: ok (N flags, N segments, N environments)\n" +
        "  invalid  one problem a line on stderr, then the count:\n" +
        "             <path>:<line>:<col>: <message>      (TOML syntax)\n" +
        "             <path>: <key path>: <message>      (everything else)\n\n" +
        "Exit status:\n" +
        "  0  the manifest is valid\n" +
        "  1  problems were found\n" +
        "  2  usage error (no such directory, not a directory, bad arguments)\n\n" +
        "Example:\n" +
        "  cfgtool flags lint examples/flags\n",
    )
    .action(async (dir: string) => {
      const { summary } = await lintFlagsDir(dir);
      console.log(summary);
    });
}
