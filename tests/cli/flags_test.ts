import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

const EXAMPLE = new URL("../../examples/flags", import.meta.url).pathname;

type Run = CliResult;

function cfgtool(...args: string[]): Promise<Run> {
  return runCfgtool(args);
}

async function withDir(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool_flags_cli_" });
  try {
    for (const [p, c] of Object.entries(files)) {
      const abs = `${dir}/${p}`;
      await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(abs, c);
    }
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("cfgtool flags lint exits 0 with a summary line on a valid manifest", async () => {
  const r = await cfgtool("flags", "lint", EXAMPLE);
  assertEquals(r.stderr, "");
  assertEquals(r.stdout, `${EXAMPLE}: ok (5 flags, 7 segments, 2 environments)\n`);
  assertEquals(r.code, 0);
});

Deno.test("cfgtool flags lint accepts an empty directory (the empty manifest)", async () => {
  await withDir({}, async (dir) => {
    const r = await cfgtool("flags", "lint", dir);
    assertEquals(r.stdout, `${dir}: ok (0 flags, 0 segments, 0 environments)\n`);
    assertEquals(r.code, 0);
  });
});

Deno.test("cfgtool flags lint exits 1 with one problem a line and a count", async () => {
  await withDir({
    "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n",
    "notes.txt": "x",
    "flags/a.toml": `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
segment = "nope"
rollout = [ { variation = "on", weight = 30 }, { variation = "off", weight = 30 } ]
[environments.staging]
enabled = false
`,
    "flags/b.toml": "type = = 1\n",
    "segments/s.toml": 'schema_version = 1\nmatch = "most"\n',
  }, async (dir) => {
    const r = await cfgtool("flags", "lint", dir);
    assertEquals(r.stdout, "");
    const lines = r.stderr.trimEnd().split("\n");
    assert(/^flags\/b\.toml:1:\d+: invalid TOML: \S/.test(lines[3] ?? ""), lines[3]);
    lines[3] = "<syntax error>";
    assertEquals(lines, [
      'flags/a.toml: environments.staging: unknown environment "staging" (namespace.toml declares production)',
      "flags/a.toml: rule[0].rollout: weights sum to 60; they must sum to 100000 or to 100",
      'flags/a.toml: rule[0].segment: unknown segment "nope"',
      "<syntax error>",
      "notes.txt: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      'segments/s.toml: match: unknown match "most" (one of all, any)',
      "segments/s.toml: predicate: missing required key: a segment needs at least one [[predicate]]",
      "7 problems found",
    ]);
    assertEquals(r.code, 1);
  });
});

Deno.test("cfgtool flags lint exits 2 on a missing directory", async () => {
  const r = await cfgtool("flags", "lint", "/nonexistent/cfgtool-flags");
  assertEquals(r.stdout, "");
  assertEquals(r.stderr, "error: manifest directory not found: /nonexistent/cfgtool-flags\n");
  assertEquals(r.code, 2);
});

Deno.test("cfgtool flags lint exits 2 when the path is a file", async () => {
  const r = await cfgtool("flags", "lint", `${EXAMPLE}/namespace.toml`);
  assertEquals(r.stderr, `error: not a directory: ${EXAMPLE}/namespace.toml\n`);
  assertEquals(r.code, 2);
});

Deno.test("cfgtool flags lint exits 2 without a directory argument", async () => {
  const r = await cfgtool("flags", "lint");
  assertStringIncludes(r.stderr, "missing required argument 'dir'");
  assertEquals(r.code, 2);
});

Deno.test("cfgtool flags lint --help documents output and exit status", async () => {
  const r = await cfgtool("flags", "lint", "--help");
  assertEquals(r.code, 0);
  assertStringIncludes(r.stdout, "Usage: cfgtool flags lint [options] <dir>");
  assertStringIncludes(r.stdout, "Exit status:");
  assertStringIncludes(r.stdout, "2  usage error");
  const group = await cfgtool("flags", "--help");
  assertStringIncludes(group.stdout, "lint <dir>");
});
