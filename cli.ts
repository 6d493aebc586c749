/**
 * `cfgtool` entry point: parses the arguments, runs the command, turns errors
 * into an exit status. The command tree is in lib/cli/.
 *
 * @module
 */
import { buildProgram } from "./lib/cli/program.ts";
import { exitCodeFor } from "./lib/cli/exit.ts";

/**
 * Runs `cfgtool` with the given arguments and returns the exit status.
 *
 * @example
 * ```ts ignore
 * import { runCli } from "./cli.ts";
 * const status = await runCli(["--version"]);
 * ```
 */
export async function runCli(args: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(args, { from: "user" });
    return 0;
  } catch (err) {
    return exitCodeFor(err);
  }
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
