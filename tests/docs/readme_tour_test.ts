/**
 * The README's tours, and the docs' examples that build on them, run as
 * written: every marked console block is typed into a bash "terminal" (one
 * per `shell=` name), and its output is compared with the documented one.
 * The flag-service tour starts its own `cfgtool serve` (the README's second
 * terminal) and `cfgtool watch` (the third).
 *
 * What the test adapts, and nothing else: `/tmp/cfgtool-tour` becomes a fresh
 * temporary directory; `serve` gets `--port 0` and the documented
 * `127.0.0.1:8080` becomes the port it reports; a file a block saves
 * (`file=`) is fed on stdin from the repository's directory (so `./mod.ts` and
 * `@cfgtool/cfgtool` resolve as they would for a file saved there).
 * Timestamps in documented output match any timestamp; everything else
 * (hashes included) must match exactly. Markers: tests/docs/doc_blocks.ts.
 */
import { assert, assertEquals } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";
import { type ConsoleCommand, type DocBlock, parseConsole, parseDocBlocks } from "./doc_blocks.ts";
import { ShellSession } from "./shell_session.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const TOUR_DIR = "/tmp/cfgtool-tour";
const DOC_ADDRESS = "127.0.0.1:8080";
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

async function blocksOf(doc: string): Promise<DocBlock[]> {
  return parseDocBlocks(await Deno.readTextFile(`${ROOT}/${doc}`), doc);
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

/** Runs marked blocks of the README (and docs building on it) in their shells. */
class Tour {
  shells = new Map<string, ShellSession>();
  files = new Map<string, string>();
  port: string | null = null;
  /** Documented lines still expected from each shell's background command. */
  pending = new Map<string, string[]>();

  constructor(readonly tmp: string) {}

  /** Documented text with the test's directory and port. */
  adapt(text: string): string {
    return text.replaceAll(TOUR_DIR, this.tmp).replaceAll(
      DOC_ADDRESS,
      `127.0.0.1:${this.port ?? "<PORT>"}`,
    );
  }

  /** A documented output line as a pattern: timestamps and an unknown port by shape. */
  pattern(line: string): RegExp {
    const parts = this.adapt(line).split(TIMESTAMP).map((p) =>
      p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("<PORT>", "(\\d+)")
    );
    return new RegExp(`^${parts.join(TIMESTAMP.source)}$`);
  }

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

  async runBlock(block: DocBlock): Promise<void> {
    const d = block.directives!;
    if (d.has("file")) {
      const path = `${this.tmp}/${d.get("file")}`;
      await Deno.writeTextFile(path, block.text + "\n");
      this.files.set(d.get("file")!, path);
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

Deno.test("every console block of the README says how the doc test runs it", async () => {
  const unmarked = (await blocksOf("README.md")).filter((b) =>
    b.lang === "console" && b.directives === null
  );
  assertEquals(unmarked.map((b) => b.where), []);
});

Deno.test("the README's workspace tour and library example print what they document", async () => {
  const tour = new Tour(await Deno.makeTempDir({ prefix: "cfgtool-tour-" }));
  try {
    const blocks = (await blocksOf("README.md")).filter((b) =>
      b.directives?.get("shell") === "workspace" || b.directives?.has("file")
    );
    assert(blocks.length >= 3);
    for (const b of blocks) await tour.runBlock(b);
  } finally {
    await tour.close();
    await Deno.remove(tour.tmp, { recursive: true });
  }
});

Deno.test("the README's flag-service tour reproduces as written against a real cfgtool serve", async (t) => {
  const tour = new Tour(await Deno.makeTempDir({ prefix: "cfgtool-tour-" }));
  const readme = (await blocksOf("README.md")).filter((b) =>
    b.directives !== null && !b.directives.has("skip") &&
    b.directives.get("shell") !== "workspace" && !b.directives.has("file")
  );
  try {
    const toured = await t.step("README.md: the three terminals", async () => {
      for (const b of readme) await tour.runBlock(b);
    });
    if (!toured) return; // the steps below build on the tour's service

    await t.step("docs/sdk.md: the FlagClient example, against the tour's service", async () => {
      const marked = (await blocksOf("docs/sdk.md")).filter((b) => b.directives !== null);
      assertEquals(marked.length, 2);
      for (const b of marked) await tour.runBlock(b);
    });

    await t.step(
      "docs/events.md: a namespace-read token streams its namespace; two namespaces take a tenant-admin token",
      async () => {
        const env = await tour.shells.get("first")!.exported();
        const server = env.CFGTOOL_SERVER!;
        const admin = { CFGTOOL_SERVER: server, CFGTOOL_TOKEN: env.CFGTOOL_TOKEN! };
        // The example's second namespace and its tenant-admin token.
        const ns = await runCfgtool(["namespace", "create", "search", "--tenant", "acme"], {
          env: admin,
        });
        assertEquals(ns.code, 0, ns.stderr);
        const created = await runCfgtool([
          "token",
          "create",
          "--type",
          "tenant-admin",
          "--name",
          "streams",
          "--tenant",
          "acme",
          "--expires-in",
          "1d",
        ], { env: admin });
        assertEquals(created.code, 0, created.stderr);
        const tokens: Record<string, string> = {
          READ_TOKEN: env.READ_TOKEN!,
          TENANT_TOKEN: created.stdout.trim().split("\n").at(-1)!,
          ADMIN: env.CFGTOOL_TOKEN!,
        };
        const requests = curlsOf((await blocksOf("docs/events.md"))[0]!, tour);
        assertEquals(requests.length, 4);
        for (const r of requests) {
          const token = tokens[r.tokenVar];
          assert(token, `docs/events.md uses an unknown variable $${r.tokenVar}`);
          const first = await firstEvent(r.url, { ...r.headers, Authorization: `Bearer ${token}` });
          assertEquals(first.status, 200, `${r.url} with $${r.tokenVar}: ${first.text}`);
          assert(first.text.startsWith("event: version\nid: checkout:2\n"), first.text);
        }
        // …and what the page says a namespace-read token gets for two namespaces.
        const two = requests.find((r) => r.tokenVar === "TENANT_TOKEN")!;
        const refused = await firstEvent(two.url, { Authorization: `Bearer ${tokens.READ_TOKEN}` });
        assertEquals(refused.status, 403);
        const body = JSON.parse(refused.text);
        assertEquals(body.code, "forbidden");
        assert(
          /^Token tok_\w+ is bound to namespace checkout, not search$/.test(body.message),
          body.message,
        );
      },
    );
  } finally {
    await tour.close();
    await Deno.remove(tour.tmp, { recursive: true });
  }
});

interface CurlRequest {
  tokenVar: string;
  url: string;
  headers: Record<string, string>;
}

/** The `curl -N` commands of an events.md block: bearer variable, extra headers, URL. */
function curlsOf(block: DocBlock, tour: Tour): CurlRequest[] {
  assertEquals(block.lang, "sh");
  return block.text.replaceAll("\\\n", " ").split("\n").filter((l) => l.startsWith("curl ")).map(
    (l) => {
      const headers: Record<string, string> = {};
      for (const [, h] of l.matchAll(/-H '([^']+)'/g)) {
        const [k, v] = h!.split(/:\s*/, 2);
        headers[k!] = v!;
      }
      return {
        tokenVar: l.match(/Bearer \$(\w+)/)![1]!,
        url: tour.adapt(l.match(/'(http[^']+)'/)![1]!),
        headers,
      };
    },
  );
}

/** Status and the first event (or the error body) of an event-stream request. */
async function firstEvent(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(20_000) });
  if (res.status !== 200) return { status: res.status, text: await res.text() };
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return { status: res.status, text };
}
