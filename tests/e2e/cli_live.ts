/**
 * Test helper: a `cfgtool` CLI process that keeps running while the test
 * reads its stderr as it comes (for flows that print a URL and wait).
 *
 * @module
 */
import { assert } from "../assert.ts";
import { CLI } from "../cli_process.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** A CLI process still running, its stderr read as it comes. */
export interface LiveCli {
  /** Resolves with the first match of `re` in stderr (waits up to 30 s). */
  waitFor(re: RegExp): Promise<RegExpMatchArray>;
  /** Waits for the exit. */
  done(): Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * Starts `cfgtool <args>` with the project's config and `NO_COLOR=1`.
 *
 * @param args the arguments
 * @param env extra environment
 * @returns the live process
 */
export function spawnCli(args: string[], env: Record<string, string>): LiveCli {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>, isErr: boolean) => {
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      if (isErr) err += text;
      else out += text;
    }
  };
  const pumps = Promise.all([pump(child.stdout, false), pump(child.stderr, true)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  return {
    async waitFor(re) {
      const end = Date.now() + 30_000;
      while (true) {
        const m = err.match(re);
        if (m) return m;
        if (exited) throw new Error(`cfgtool exited before printing ${re}:\n${err}`);
        if (Date.now() > end) {
          child.kill("SIGKILL");
          throw new Error(`cfgtool did not print ${re} in 30 s:\n${err}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async done() {
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const s = await status;
      await pumps;
      clearTimeout(timer);
      assert(!/^\s+at /m.test(out + err), `stack trace printed:\n${err}`);
      return { code: s.code, stdout: out, stderr: err };
    },
  };
}
