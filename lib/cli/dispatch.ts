/**
 * Runs a `cfgtool` command line. A plain `resolve` invocation
 * (lib/cli/resolve_args.ts) goes straight to its action, so a cold
 * `cfgtool resolve` loads neither commander nor anything that needs Node
 * compatibility; every other command line is parsed by the commander
 * command tree (lib/cli/program.ts), loaded on demand and only then read
 * (see the note on `PROGRAM` below).
 *
 * @module
 */
import { parseResolveArgs } from "./resolve_args.ts";

/**
 * Parses and runs a command line; what the command throws is thrown again
 * (cli.ts turns it into an exit status through lib/cli/exit.ts).
 *
 * @param args the arguments, without the program name
 *
 * @example
 * ```ts
 * import { runCommandLine } from "./dispatch.ts";
 * const lines: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => lines.push(line);
 * try {
 *   await runCommandLine(["resolve", "examples/notification-workspace", "--variable",
 *     "notification-delivery-policy", "--context", "notification.kind=security_alert"]);
 * } finally {
 *   console.log = log;
 * }
 * if (lines[0] !== "value key: immediate-security") throw new Error(lines[0]);
 * ```
 */
export async function runCommandLine(args: string[]): Promise<void> {
  const resolve = parseResolveArgs(args);
  if (resolve !== undefined) {
    // lazy: the workspace loader, without commander
    const { runResolve } = await import("./resolve_action.ts");
    await runResolve(resolve.workspace, resolve);
    return;
  }
  // lazy: commander and the command tree
  const { buildProgram } = await import(PROGRAM) as typeof import("./program.ts");
  await buildProgram().parseAsync(args, { from: "user" });
}

/**
 * The command tree's module, named by a computed URL on purpose: before
 * running anything, Deno reads every module that a string-literal dynamic
 * import can reach, run or not, and for the whole command tree (server,
 * store, SDK) that costs a cold `resolve` about 20 ms. `deno compile` does
 * not see this import either: the compile task includes lib/cli/program.ts
 * by name.
 */
const PROGRAM = new URL("./program.ts", import.meta.url).href;
