/**
 * Shared by the load scripts: child processes that print their URL when
 * they listen, and stopping them.
 *
 * @module
 */

/** A started child and the URL it printed. */
export interface StartedChild {
  /** The process. */
  child: Deno.ChildProcess;
  /** Group 1 of the pattern, from its stdout. */
  url: string;
}

/**
 * Starts `cmd args` and waits until its stdout matches `pattern` (group 1:
 * the URL); its stdout keeps being drained afterwards so it never blocks.
 *
 * @param cmd the program
 * @param args its arguments
 * @param pattern matched against stdout; group 1 is returned as the URL
 * @param timeoutMs how long to wait (default 60 s)
 * @returns the child and the URL
 */
export async function startChild(
  cmd: string,
  args: string[],
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<StartedChild> {
  const child = new Deno.Command(cmd, { args, stdout: "piped", stderr: "inherit", stdin: "null" })
    .spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(out)) {
    if (Date.now() > deadline) throw new Error(`${args.join(" ")} did not start:\n${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`${args.join(" ")} exited:\n${out}`);
    out += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* discard */ }
  })().catch(() => {});
  return { child, url: pattern.exec(out)![1]! };
}

/**
 * Sends SIGTERM (when still running) and waits for the exit.
 *
 * @param child the process
 */
export async function stopChild(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch {
    // gone
  }
  await child.status;
}
