/**
 * Test helper: runs the marked blocks of the README's tours, and of the docs
 * that build on them, as written: every marked console block is typed into a
 * bash "terminal" (one per `shell=` name), and its output is compared with
 * the documented one. Markers: tests/docs/doc_blocks.ts.
 *
 * What a {@linkcode Tour} adapts, and nothing else: `/tmp/cfgtool-tour`
 * becomes a fresh temporary directory; `serve` gets `--port 0` and the
 * documented `127.0.0.1:8080` becomes the port it reports; a file a block
 * saves under a bare name (`file=example.ts`) is fed on stdin from the
 * repository's directory (so `./mod.ts` and `@cfgtool/cfgtool` resolve as
 * they would for a file saved there), while one saved under a path
 * (`file=/tmp/cfgtool-tour/app/example.ts`) is written there, for commands
 * that run it where it lies. In documented output a timestamp matches any
 * timestamp and `…` matches any text (an elided secret or id); everything
 * else (hashes included) must match exactly. A block marked `needs=<program>`
 * (`needs=node`) runs only where that program is installed.
 *
 * @module
 */
import { assert, assertEquals } from "../assert.ts";
import { type ConsoleCommand, type DocBlock, parseConsole, parseDocBlocks } from "./doc_blocks.ts";
import { ShellSession } from "./shell_session.ts";

/** The repository's directory, where the tours' terminals start. */
export const ROOT: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const TOUR_DIR = "/tmp/cfgtool-tour";
const DOC_ADDRESS = "127.0.0.1:8080";
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
const ELIDED = "…";

/**
 * Every fenced block of a document of the repository, with its directives.
 *
 * @param doc the document's path from the repository's root
 * @returns its blocks
 *
 * @example
 * ```ts ignore
 * const blocks = await blocksOf("docs/sdk.md");
 * ```
 */
export async function blocksOf(doc: string): Promise<DocBlock[]> {
  return parseDocBlocks(await Deno.readTextFile(`${ROOT}/${doc}`), doc);
}

/**
 * The README's flag-service tour: its marked blocks but the workspace tour,
 * the library example and the skipped ones, in order (three terminals:
 * `first`, the service in `second`, the watcher in `third`).
 *
 * @returns the blocks to run
 *
 * @example
 * ```ts ignore
 * for (const b of await serviceTourBlocks()) await tour.runBlock(b);
 * ```
 */
export async function serviceTourBlocks(): Promise<DocBlock[]> {
  return (await blocksOf("README.md")).filter((b) =>
    b.directives !== null && !b.directives.has("skip") &&
    b.directives.get("shell") !== "workspace" && !b.directives.has("file")
  );
}

/** Fence languages of code a reader runs: each such block of a tested document must run. */
const CODE = new Set(["console", "sh", "bash", "ts", "js", "typescript", "javascript"]);

/**
 * Where a document's blocks fall short of running as a doc test: a block
 * without a `doc-test` marker, or a code block (console, shell, TypeScript,
 * JavaScript) marked `skip`. Output and data shown for reading (`text`,
 * `json`, …) may be skipped, with the reason in the marker.
 *
 * @param blocks the document's blocks
 * @returns `where` of each block that does not run, with why
 *
 * @example
 * ```ts
 * import { parseDocBlocks } from "./doc_blocks.ts";
 * import { blocksThatDoNotRun } from "./tour.ts";
 * const fence = "`".repeat(3);
 * const doc = `${fence}sh\nls\n${fence}\n<!-- doc-test: skip (shown) -->\n${fence}json\n{}\n${fence}\n`;
 * const found = blocksThatDoNotRun(parseDocBlocks(doc, "x.md"));
 * if (found.join() !== "x.md:1 (not marked)") throw new Error(found.join());
 * ```
 */
export function blocksThatDoNotRun(blocks: readonly DocBlock[]): string[] {
  return blocks.flatMap((b) => {
    if (b.directives === null) return [`${b.where} (not marked)`];
    if (b.directives.has("skip") && CODE.has(b.lang)) return [`${b.where} (code, skipped)`];
    return [];
  });
}

/**
 * The blocks of a document that a {@linkcode Tour} runs: marked, not skipped.
 *
 * @param doc the document's path from the repository's root
 * @returns its runnable blocks, in order
 *
 * @example
 * ```ts ignore
 * for (const b of await runnableBlocks("docs/ofrep.md")) await tour.runBlock(b);
 * ```
 */
export async function runnableBlocks(doc: string): Promise<DocBlock[]> {
  return (await blocksOf(doc)).filter((b) => b.directives !== null && !b.directives.has("skip"));
}

/** The environment of a new terminal: the test's, without cfgtool's variables. */
function freshEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!k.startsWith("CFGTOOL_") && k !== "DENO_KV_ACCESS_TOKEN") env[k] = v;
  }
  env.NO_COLOR = "1";
  // The README types `deno`: the one running this test, even when it is not on PATH.
  const denoDir = Deno.execPath().replace(/\/[^/]*$/, "");
  env.PATH = env.PATH ? `${denoDir}:${env.PATH}` : denoDir;
  return env;
}

/** Whether a program is on the PATH (it runs with `--version`). */
function installed(program: string): boolean {
  try {
    return new Deno.Command(program, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** A literal text as a pattern. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Runs marked blocks of the README (and docs building on it) in their shells.
 *
 * @example
 * ```ts ignore
 * const tour = new Tour(await Deno.makeTempDir());
 * try {
 *   for (const b of await serviceTourBlocks()) await tour.runBlock(b);
 * } finally {
 *   await tour.close();
 * }
 * ```
 */
export class Tour {
  /** The terminals by name. */
  shells: Map<string, ShellSession> = new Map();
  /** Files saved under a bare name: name → where the test wrote it. */
  files: Map<string, string> = new Map();
  /** The port `serve` reported, once it did. */
  port: string | null = null;
  /** Documented lines still expected from each shell's background command. */
  pending: Map<string, string[]> = new Map();

  /** @param tmp the directory that stands for `/tmp/cfgtool-tour` */
  constructor(readonly tmp: string) {}

  /** Documented text with the test's directory and port. */
  adapt(text: string): string {
    return text.replaceAll(TOUR_DIR, this.tmp).replaceAll(
      DOC_ADDRESS,
      `127.0.0.1:${this.port ?? "<PORT>"}`,
    );
  }

  /** A documented output line as a pattern: timestamps, elisions and an unknown port by shape. */
  pattern(line: string): RegExp {
    const parts = this.adapt(line).split(TIMESTAMP).map((p) =>
      p.split(ELIDED).map(literal).join(".*").replace("<PORT>", "(\\d+)")
    );
    return new RegExp(`^${parts.join(TIMESTAMP.source)}$`);
  }

  /** A documented command as the test types it. */
  command(text: string): string {
    let cmd = this.adapt(text);
    if (/cli\.ts serve$/.test(cmd)) cmd += " --port 0";
    for (const [name, path] of this.files) {
      cmd = cmd.replace(new RegExp(` ${name.replaceAll(".", "\\.")}$`), ` - < ${path}`);
    }
    return cmd;
  }

  async shell(name: string, block: DocBlock): Promise<ShellSession> {
    const existing = this.shells.get(name);
    if (existing) return existing;
    const env = freshEnv();
    const inherit = block.directives!.get("inherit");
    if (inherit) {
      const [from, vars] = inherit.split(":");
      const exported = await this.shells.get(from!)!.exported();
      for (const v of vars!.split(",")) {
        assert(v in exported, `${block.where}: ${v} is not exported in the ${from} terminal`);
        env[v] = exported[v]!;
      }
    }
    const sh = new ShellSession(name, ROOT, env);
    this.shells.set(name, sh);
    return sh;
  }

  async awaitBackground(name: string, where: string): Promise<void> {
    const lines = this.pending.get(name) ?? [];
    this.pending.delete(name);
    const sh = this.shells.get(name);
    assert(sh, `${where}: no background command in shell ${name}`);
    await sh.waitForLines(lines.map((l) => this.pattern(l)));
  }

  /** Runs one marked block: saves its file, or types its commands into its shell. */
  async runBlock(block: DocBlock): Promise<void> {
    const d = block.directives!;
    const needs = d.get("needs");
    if (needs !== undefined && !installed(needs)) {
      console.log(`${block.where}: not run, ${needs} is not installed`);
      return;
    }
    if (d.has("file")) {
      const file = d.get("file")!;
      if (file.includes("/")) {
        const path = this.adapt(file);
        await Deno.mkdir(path.replace(/\/[^/]*$/, ""), { recursive: true });
        await Deno.writeTextFile(path, block.text + "\n");
        return;
      }
      const path = `${this.tmp}/${file}`;
      await Deno.writeTextFile(path, block.text + "\n");
      this.files.set(file, path);
      return;
    }
    const name = d.get("shell");
    assert(name, `${block.where}: a console block needs shell=<name>`);
    if (d.has("await")) await this.awaitBackground(d.get("await")!, block.where);
    const sh = await this.shell(name, block);
    const commands = parseConsole(block.text);
    const last = d.has("background") ? commands.pop() : undefined;
    for (const c of commands) await this.runCommand(sh, c, block.where);
    if (last) await this.startBackground(sh, last, block.where);
  }

  async runCommand(sh: ShellSession, c: ConsoleCommand, where: string): Promise<void> {
    const { output, code } = await sh.run(this.command(c.command));
    const actual = output.replace(/\n+$/, "");
    const expected = c.output;
    const same = actual.split("\n").length === expected.split("\n").length &&
      actual.split("\n").every((l, i) => this.pattern(expected.split("\n")[i]!).test(l));
    if (!same) assertEquals(actual, this.adapt(expected), `${where}: $ ${c.command}`);
    const fails = /^error: /m.test(expected);
    assert(fails === (code !== 0), `${where}: $ ${c.command} exited with ${code}`);
  }

  /** Starts the command and waits for its first documented line; the rest is awaited later. */
  async startBackground(sh: ShellSession, c: ConsoleCommand, where: string): Promise<void> {
    await sh.start(this.command(c.command));
    const [first, ...rest] = c.output.split("\n");
    assert(first, `${where}: a background command needs documented output`);
    const [line] = await sh.waitForLines([this.pattern(first)]);
    const port = this.port === null ? line!.match(this.pattern(first))?.[1] : undefined;
    if (port !== undefined) this.port = port;
    this.pending.set(sh.name, rest);
  }

  /** Checks every background command printed all its documented lines, then stops everything. */
  async close(): Promise<void> {
    try {
      for (const name of [...this.pending.keys()]) await this.awaitBackground(name, "end");
    } finally {
      // The agent before the service it follows.
      for (const sh of [...this.shells.values()].reverse()) await sh.close();
    }
  }
}

/**
 * Registers the two tests of a document that builds on the README's
 * flag-service tour: every code block of it is marked to run (or to be
 * skipped), and its runnable blocks print what they document when run
 * after the tour, on the tour's own service (in a fresh directory,
 * stopped at the end).
 *
 * @param doc the document's path from the repository's root (`docs/sdk.md`)
 *
 * @example
 * ```ts ignore
 * testDocOnServiceTour("docs/sdk.md");
 * ```
 */
export function testDocOnServiceTour(doc: string): void {
  Deno.test(`every code block of ${doc} runs as a doc test`, async () => {
    assertEquals(blocksThatDoNotRun(await blocksOf(doc)), []);
  });

  Deno.test(`${doc}'s examples print what they document against the README tour's service`, async (t) => {
    const tour = new Tour(await Deno.makeTempDir({ prefix: "cfgtool-tour-" }));
    try {
      const toured = await t.step("README.md: the flag-service tour", async () => {
        for (const b of await serviceTourBlocks()) await tour.runBlock(b);
      });
      if (!toured) return; // the examples build on the tour's service
      await t.step(doc, async () => {
        for (const b of await runnableBlocks(doc)) await tour.runBlock(b);
      });
    } finally {
      await tour.close();
      await Deno.remove(tour.tmp, { recursive: true });
    }
  });
}
