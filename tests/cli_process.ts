/**
 * Test helper: runs `cli.ts` as a real subprocess, as a user would, and
 * checks that no stack trace ever reaches its output.
 *
 * @module
 */
import { assert } from "./assert.ts";

/** The project's cli.ts. */
export const CLI: string = new URL("../cli.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** The result of one run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A config directory that does not exist: the CLI of a test never reads
 * the developer's own saved sign-in profiles (a test that signs in passes
 * its own `XDG_CONFIG_HOME`).
 */
const NO_CONFIG = `/nonexistent/cfgtool-test-config-${Deno.pid}`;

/**
 * Runs `cfgtool <args>` with the project's config (so it works from any
 * cwd), `NO_COLOR=1`, no saved profiles and no stdin.
 *
 * @example
 * ```ts ignore
 * const r = await runCfgtool(["--version"]);
 * ```
 */
export async function runCfgtool(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", XDG_CONFIG_HOME: NO_CONFIG, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  }).output();
  const dec = new TextDecoder();
  const run = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  assert(
    !/^\s+at /m.test(run.stdout + run.stderr) && !run.stderr.includes("Stack backtrace"),
    `stack trace printed:\n${run.stderr}`,
  );
  return run;
}
