/**
 * Test helper: runs `cli.ts` with stdin, stdout and stderr on a pseudo
 * terminal (util-linux `script`), typing `input` into it, so prompts that
 * only appear on a terminal can be tested. Tests skip when `script` is
 * missing ({@linkcode hasTerminalRunner}).
 *
 * @module
 */
import { CLI } from "../cli_process.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** What a terminal run printed (stdout and stderr together, `\r\n` made `\n`) and its exit code. */
export interface TerminalResult {
  code: number;
  output: string;
}

/** Whether `script` (util-linux) is available to provide a terminal. */
export const hasTerminalRunner: boolean = (() => {
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `cfgtool <args>` on a terminal and types `input`.
 *
 * @example
 * ```ts ignore
 * const r = await runOnTerminal(["tenant", "delete", "acme"], "acme\n", env);
 * ```
 */
export async function runOnTerminal(
  args: string[],
  input: string,
  env: Record<string, string> = {},
): Promise<TerminalResult> {
  const command = [Deno.execPath(), "run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args]
    .map(quote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-q", "-e", "-c", command, "/dev/null"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    output: (dec.decode(out.stdout) + dec.decode(out.stderr)).replaceAll("\r\n", "\n"),
  };
}
