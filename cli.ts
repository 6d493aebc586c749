/**
 * `cfgtool` entry point: parses the arguments, runs the command, turns errors
 * into an exit status. The command tree is in lib/cli/; it and the error
 * reporting load on demand (lib/cli/dispatch.ts), so a plain `resolve`
 * starts without commander.
 *
 * @module
 */
import { runCommandLine } from "./lib/cli/dispatch.ts";
import { parseResolveArgs } from "./lib/cli/resolve_args.ts";
import { deferPatternEngine } from "./lib/flags/compile_defer.ts";
import { deferFullToml } from "./lib/workspace/toml_defer.ts";

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
    await runCommandLine(args);
    return 0;
  } catch (err) {
    // lazy: exit.ts imports commander's error class
    const { exitCodeFor } = await import("./lib/cli/exit.ts");
    return exitCodeFor(err);
  }
}

if (import.meta.main) {
  // `resolve` loads the `matches` engine only when the workspace has a `matches`
  // predicate (lib/workspace/files.ts), and smol-toml only when a file is not
  // plain TOML (lib/workspace/open.ts); other commands load both with the code
  // that uses them.
  if (parseResolveArgs(Deno.args) !== undefined) {
    deferPatternEngine();
    deferFullToml();
  }
  Deno.exit(await runCli(Deno.args));
}
