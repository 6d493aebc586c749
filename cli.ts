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
 * ```ts
 * import { runCli } from "./cli.ts";
 * // prints the version lines; help and version exit 0
 * if (await runCli(["--version"]) !== 0) throw new Error("--version exits 0");
 * // prints `error: unknown command …`; a usage mistake exits 2
 * if (await runCli(["no-such-command"]) !== 2) throw new Error("an unknown command exits 2");
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
