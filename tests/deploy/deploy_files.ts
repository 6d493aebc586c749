/**
 * Test helper for the deploy examples (examples/deploy/): reads a Dockerfile's
 * instructions and a systemd unit's settings as the tools would, rewrites the
 * paths and ports of a production host into a temp dir and free ports, and
 * runs the real CLI with the arguments found there (no Docker, no systemd).
 *
 * @module
 */

/** The repository root. */
export const ROOT: URL = new URL("../../", import.meta.url);
/** examples/deploy/. */
export const DEPLOY: URL = new URL("examples/deploy/", ROOT);
const CLI = new URL("cli.ts", ROOT).pathname;
const CONFIG = new URL("deno.json", ROOT).pathname;

/** One Dockerfile instruction: its keyword (upper case) and the rest of the line. */
export interface Instruction {
  keyword: string;
  rest: string;
}

/**
 * The instructions of a Dockerfile, in order: comments and blank lines
 * dropped, lines ending in `\` joined with the next (comment lines inside
 * a continued instruction are skipped, as Docker does).
 *
 * @param text the Dockerfile
 * @returns its instructions
 *
 * @example
 * ```ts
 * import { dockerInstructions } from "./deploy_files.ts";
 * const i = dockerInstructions("# hi\nFROM x AS b\nRUN a \\\n # c\n && b\n");
 * if (i.length !== 2 || i[1]!.rest !== "a && b") throw new Error(JSON.stringify(i));
 * ```
 */
export function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#") || (line === "" && current === "")) continue;
    if (line.endsWith("\\")) {
      current += line.slice(0, -1).trim() + " ";
      continue;
    }
    current += line;
    const m = /^(\S+)\s*(.*)$/.exec(current.trim());
    if (m) out.push({ keyword: m[1]!.toUpperCase(), rest: m[2]!.trim() });
    current = "";
  }
  return out;
}

/**
 * The argument list of an exec-form instruction (`["a", "b"]`, JSON); throws
 * for the shell form, which the examples do not use.
 *
 * @param rest the instruction's text after its keyword
 * @returns the arguments
 *
 * @example
 * ```ts
 * import { execForm } from "./deploy_files.ts";
 * if (execForm('["serve", "--port", "8080"]').join(" ") !== "serve --port 8080") throw new Error();
 * ```
 */
export function execForm(rest: string): string[] {
  const parsed: unknown = JSON.parse(rest);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === "string")) {
    throw new Error(`not an exec-form argument list: ${rest}`);
  }
  return parsed as string[];
}

/**
 * A HEALTHCHECK instruction's options (`--interval=30s` → `interval: "30s"`)
 * and its command in exec form.
 *
 * @param rest the instruction's text after `HEALTHCHECK`
 * @returns the options and the command
 *
 * @example
 * ```ts
 * import { healthcheck } from "./deploy_files.ts";
 * const h = healthcheck('--interval=30s CMD ["curl", "-f", "http://127.0.0.1:8080/readyz"]');
 * if (h.options.interval !== "30s" || h.command[0] !== "curl") throw new Error();
 * ```
 */
export function healthcheck(
  rest: string,
): { options: Record<string, string>; command: string[] } {
  const options: Record<string, string> = {};
  let text = rest;
  for (let m; (m = /^--([a-z-]+)=(\S+)\s+/.exec(text));) {
    options[m[1]!] = m[2]!;
    text = text.slice(m[0].length);
  }
  if (!text.startsWith("CMD ")) throw new Error(`HEALTHCHECK without CMD: ${rest}`);
  return { options, command: execForm(text.slice(4).trim()) };
}

/** A systemd unit: per section, its settings in order (a key may repeat). */
export type Unit = Record<string, [string, string][]>;

/**
 * Parses a systemd unit file: `[Section]` headers, `Key=Value` lines,
 * comments (`#`, `;`) and blank lines skipped.
 *
 * @param text the unit file
 * @returns its sections
 *
 * @example
 * ```ts
 * import { parseUnit, setting } from "./deploy_files.ts";
 * const u = parseUnit("[Service]\n# c\nExecStart=/bin/x a\nCapabilityBoundingSet=\n");
 * if (setting(u, "Service", "ExecStart") !== "/bin/x a") throw new Error();
 * if (setting(u, "Service", "CapabilityBoundingSet") !== "") throw new Error();
 * ```
 */
export function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      unit[section] ??= [];
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0) throw new Error(`not a setting: ${line}`);
    (unit[section] ??= []).push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return unit;
}

/**
 * The last value of a setting (systemd's rule for single-valued keys), or
 * undefined when the section does not set it.
 *
 * @param unit the parsed unit
 * @param section e.g. `Service`
 * @param key e.g. `ExecStart`
 * @returns the value
 *
 * @example
 * ```ts
 * import { parseUnit, setting } from "./deploy_files.ts";
 * const u = parseUnit("[Service]\nUser=a\nUser=b\n");
 * if (setting(u, "Service", "User") !== "b" || setting(u, "Service", "Group") !== undefined) {
 *   throw new Error();
 * }
 * ```
 */
export function setting(unit: Unit, section: string, key: string): string | undefined {
  return unit[section]?.filter(([k]) => k === key).at(-1)?.[1];
}

/**
 * Rewrites production paths and ports in a list of arguments: every
 * occurrence of a `from` text is replaced by its `to`.
 *
 * @param args the arguments
 * @param replacements `from → to`, applied in order
 * @returns the rewritten arguments
 *
 * @example
 * ```ts
 * import { rewrite } from "./deploy_files.ts";
 * const args = rewrite(["--kv", "/var/lib/cfgtool/kv.sqlite3"], { "/var/lib/cfgtool": "/tmp/x" });
 * if (args[1] !== "/tmp/x/kv.sqlite3") throw new Error();
 * ```
 */
export function rewrite(args: readonly string[], replacements: Record<string, string>): string[] {
  return args.map((a) => {
    let out = a;
    for (const [from, to] of Object.entries(replacements)) out = out.replaceAll(from, to);
    return out;
  });
}

/**
 * The value after `--name` in an argument list (undefined when absent).
 *
 * @param args the arguments
 * @param name the option, with its dashes
 * @returns its value
 *
 * @example
 * ```ts
 * import { optionValue } from "./deploy_files.ts";
 * if (optionValue(["serve", "--port", "8080"], "--port") !== "8080") throw new Error();
 * ```
 */
export function optionValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

/** A `cfgtool` process started by {@linkcode startCli}. */
export interface CliProcess {
  /** The URL of its `listening on` line. */
  url: string;
  /** Its process id. */
  pid: number;
  /** Its stderr so far (JSON log lines). */
  logs(): string;
  /** Sends a signal (default SIGTERM) and waits for the exit; returns the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/**
 * Runs `cfgtool <args>` from source (`deno run -A cli.ts`), as the image's
 * binary or the unit's ExecStart would run it, and resolves once it prints
 * `listening on <url>` (rejects when it exits first or takes 30 s).
 *
 * @param args the CLI arguments (`serve …`)
 * @param env extra environment
 * @returns the running process
 *
 * @example
 * ```ts ignore
 * const server = await startCli(["serve", "--port", "0", "--kv", ":memory:"]);
 * await server.stop();
 * ```
 */
export async function startCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CliProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (
    stream: ReadableStream<Uint8Array<ArrayBuffer>>,
    onText: (t: string) => void,
  ) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) onText(text);
  };
  const pumps = Promise.all([
    pump(child.stdout, (t) => out += t),
    pump(child.stderr, (t) => err += t),
  ]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /listening on (https?:\/\/\S+)/.exec(out)?.[1];
    if (url) break;
    if (exited || Date.now() > deadline) {
      if (!exited) child.kill("SIGKILL");
      await status;
      await pumps;
      throw new Error(`cfgtool ${args.join(" ")} did not start:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url,
    pid: child.pid,
    logs: () => err,
    async stop(signal: Deno.Signal = "SIGTERM") {
      if (!exited) child.kill(signal);
      const s = await status;
      await pumps;
      return s.code;
    },
  };
}

/**
 * Runs `cfgtool <args>` from source to completion.
 *
 * @param args the CLI arguments
 * @param env extra environment
 * @returns exit code and output
 *
 * @example
 * ```ts ignore
 * const r = await runCliOnce(["--version"]);
 * ```
 */
export async function runCliOnce(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--config", CONFIG, CLI, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", XDG_CONFIG_HOME: `/nonexistent/cfgtool-deploy-${Deno.pid}`, ...env },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Runs a command (a health check, `systemd-analyze`) to completion.
 *
 * @param cmd the program and its arguments
 * @returns exit code and output
 *
 * @example
 * ```ts
 * import { runCommand } from "./deploy_files.ts";
 * const r = await runCommand([Deno.execPath(), "--version"]);
 * if (r.code !== 0 || !r.stdout.startsWith("deno ")) throw new Error(r.stderr);
 * ```
 */
export async function runCommand(
  cmd: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Whether a program is on the PATH (it runs with `--version`).
 *
 * @param name the program
 * @returns true when it could be started
 *
 * @example
 * ```ts
 * import { hasProgram } from "./deploy_files.ts";
 * if (await hasProgram("no-such-program-cfgtool")) throw new Error();
 * ```
 */
export async function hasProgram(name: string): Promise<boolean> {
  try {
    await new Deno.Command(name, { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1.
 *
 * @returns the port
 *
 * @example
 * ```ts
 * import { freePort } from "./deploy_files.ts";
 * const port = freePort();
 * if (!(port > 0 && port < 65536)) throw new Error(String(port));
 * ```
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
