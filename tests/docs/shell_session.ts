/**
 * Test helper: one bash process playing a terminal. Commands are typed into
 * it one at a time, as a reader would, so variables and `export`s carry over
 * from one command to the next; stderr is merged into stdout in the order it
 * is written. A command may also be started in the background (a server, an
 * agent), and its output awaited line by line.
 *
 * @module
 */

/** The outcome of one command. */
export interface ShellResult {
  /** stdout and stderr, merged, without the trailing newline. */
  output: string;
  code: number;
}

/** How long any single wait may take before the test fails. */
const DEADLINE_MS = 30_000;

/** A bash process fed through its stdin. */
export class ShellSession {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #buf = "";
  #offset = 0;
  #changed: () => void = () => {};
  #closed = false;
  #pump: Promise<void>;
  #background: number | null = null;
  #backgroundFrom = 0;

  /**
   * Starts bash in `cwd` with exactly `env`.
   *
   * @example
   * ```ts ignore
   * const sh = new ShellSession("/tmp", { PATH: Deno.env.get("PATH")! });
   * ```
   */
  constructor(readonly name: string, cwd: string, env: Record<string, string>) {
    const child = new Deno.Command("bash", {
      args: ["--noprofile", "--norc"],
      cwd,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    const decoder = new TextDecoder();
    this.#pump = (async () => {
      for await (const chunk of child.stdout) {
        this.#buf += decoder.decode(chunk, { stream: true });
        this.#changed();
      }
      this.#closed = true;
      this.#changed();
    })();
    this.#type("exec 2>&1");
  }

  #type(text: string): Promise<void> {
    return this.#writer.write(new TextEncoder().encode(text + "\n"));
  }

  /** Resolves with the first non-null value of `probe` over the growing output. */
  async #until<T>(probe: () => T | null, what: string): Promise<T> {
    const deadline = Date.now() + DEADLINE_MS;
    while (true) {
      const found = probe();
      if (found !== null) return found;
      if (this.#closed) throw new Error(`${this.name}: bash ended while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `${this.name}: no ${what} in ${DEADLINE_MS} ms; output so far:\n${
            this.#buf.slice(this.#offset)
          }`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#changed = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  /** Types a command with a sentinel after it and waits for the sentinel. */
  async #sentinel(command: string, value: string): Promise<ShellResult> {
    const tag = `__doc_test_${crypto.randomUUID()}__`;
    await this.#type(`${command}\nprintf '\\n%s %s\\n' ${tag} ${value}`);
    const re = new RegExp(`\\n${tag} (\\S+)\\n`);
    const m = await this.#until(() => this.#buf.slice(this.#offset).match(re), "sentinel");
    const output = this.#buf.slice(this.#offset, this.#offset + m.index!);
    this.#offset += m.index! + m[0].length;
    return { output, code: Number(m[1]) };
  }

  /**
   * Types one command (stdin from /dev/null) and waits for it to finish.
   *
   * @example
   * ```ts ignore
   * const { output, code } = await sh.run("echo hi");
   * ```
   */
  run(command: string): Promise<ShellResult> {
    if (this.#background !== null) throw new Error(`${this.name} runs a background command`);
    return this.#sentinel(`{\n${command}\n} < /dev/null`, "$?");
  }

  /** The variables this shell exports (`env` as its commands see it). */
  async exported(): Promise<Record<string, string>> {
    const { output } = await this.run("env -0 | base64 -w0");
    const text = new TextDecoder().decode(
      Uint8Array.from(atob(output.trim()), (c) => c.charCodeAt(0)),
    );
    const out: Record<string, string> = {};
    for (const entry of text.split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return out;
  }

  /** Starts a command in the background; its output is this shell's from now on. */
  async start(command: string): Promise<void> {
    if (this.#background !== null) throw new Error(`${this.name} runs a background command`);
    const tag = `__doc_test_${crypto.randomUUID()}__`;
    await this.#type(`${command} &\nprintf '\\n%s %s\\n' ${tag} $!`);
    const re = new RegExp(`\\n${tag} (\\d+)\\n`);
    const m = await this.#until(() => this.#buf.slice(this.#offset).match(re), "background pid");
    // The command may already have written: keep its output, drop the sentinel.
    const at = this.#offset + m.index!;
    this.#buf = this.#buf.slice(0, at) + this.#buf.slice(at + m[0].length);
    this.#background = Number(m[1]);
    this.#backgroundFrom = this.#offset;
  }

  /** Output of the background command so far. */
  backgroundOutput(): string {
    return this.#buf.slice(this.#backgroundFrom);
  }

  /**
   * Waits until the background command's output has lines matching every
   * pattern, in order; returns the matching lines.
   */
  waitForLines(patterns: RegExp[]): Promise<string[]> {
    return this.#until(() => {
      const lines = this.backgroundOutput().split("\n");
      const found: string[] = [];
      let at = 0;
      for (const p of patterns) {
        const i = lines.findIndex((l, k) => k >= at && p.test(l));
        if (i < 0) return null;
        found.push(lines[i]!);
        at = i + 1;
      }
      return found;
    }, `lines matching ${patterns.map(String).join(", ")}`);
  }

  /** Stops the background command (SIGTERM, by its pid) and bash; returns its exit code. */
  async close(): Promise<number | null> {
    let code: number | null = null;
    if (this.#background !== null) {
      const pid = this.#background;
      this.#background = null;
      try {
        Deno.kill(pid, "SIGTERM");
      } catch {
        // already gone
      }
      code = Number((await this.#sentinel(`wait ${pid}`, "$?")).code);
    }
    await this.#writer.close();
    await this.#pump;
    await this.#child.status;
    return code;
  }
}
