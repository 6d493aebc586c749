import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

const EXAMPLE = new URL("../../examples/flags", import.meta.url).pathname;

type Run = CliResult;

const lines = (s: string) => s.split("\n").filter((l) => l !== "");

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
    const r = await runCfgtool(["flags", "lint", "."], { cwd: dir });
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
      "segments/s.toml: predicate: required field is missing (add at least one [[predicate]])",
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
  assertStringIncludes(group.stdout, "lint [options] <dir>");
});

/** A copy of examples/flags with `changes` applied (text replacements per file). */
async function exampleWith(changes: Record<string, [string, string]>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool_flags_cli_" });
  for (const sub of ["flags", "segments"]) {
    await Deno.mkdir(`${dir}/${sub}`);
    for await (const e of Deno.readDir(`${EXAMPLE}/${sub}`)) {
      await Deno.copyFile(`${EXAMPLE}/${sub}/${e.name}`, `${dir}/${sub}/${e.name}`);
    }
  }
  await Deno.copyFile(`${EXAMPLE}/namespace.toml`, `${dir}/namespace.toml`);
  for (const [path, [from, to]] of Object.entries(changes)) {
    const text = await Deno.readTextFile(`${dir}/${path}`);
    assert(text.includes(from), `${path} lacks ${from}`);
    await Deno.writeTextFile(`${dir}/${path}`, text.replace(from, to));
  }
  return dir;
}

const MISSPELT_SEGMENT = {
  "flags/new-checkout.toml": ['segment = "eu-customers"', 'segment = "eu-customer"'],
} as Record<string, [string, string]>;
const MISSPELT_PROBLEM = 'rule[1].segment: unknown segment "eu-customer"; did you mean ' +
  '"eu-customers"?';

Deno.test("cfgtool flags lint suggests the nearest segment for an unknown one", async () => {
  const dir = await exampleWith(MISSPELT_SEGMENT);
  try {
    const r = await runCfgtool(["flags", "lint", "."], { cwd: dir });
    assertEquals(r.code, 1);
    assertEquals(r.stderr, `flags/new-checkout.toml: ${MISSPELT_PROBLEM}\n1 problem found\n`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool flags lint prints problem paths relative to the current directory", async () => {
  const dir = await exampleWith(MISSPELT_SEGMENT);
  const parent = dir.slice(0, dir.lastIndexOf("/"));
  const name = dir.slice(dir.lastIndexOf("/") + 1);
  try {
    const r = await runCfgtool(["flags", "lint", name], { cwd: parent });
    assertEquals(r.code, 1);
    assertEquals(lines(r.stderr)[0], `${name}/flags/new-checkout.toml: ${MISSPELT_PROBLEM}`);
    const below = await runCfgtool(["flags", "lint", ".."], { cwd: `${dir}/segments` });
    assertEquals(lines(below.stderr)[0], `../flags/new-checkout.toml: ${MISSPELT_PROBLEM}`);
    const push = await runCfgtool(
      ["push", name, "--tenant", "t", "--namespace", "n", "--server", "http://127.0.0.1:9"],
      { cwd: parent, env: { CFGTOOL_TOKEN: "cft_unused" } },
    );
    assertEquals(push.code, 1);
    assertEquals(lines(push.stderr)[0], `${name}/flags/new-checkout.toml: ${MISSPELT_PROBLEM}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool flags lint --json prints ok, problems, summary, dir and counts", async () => {
  const ok = await cfgtool("flags", "lint", EXAMPLE, "--json");
  assertEquals(ok.code, 0);
  assertEquals(ok.stderr, "");
  assertEquals(JSON.parse(ok.stdout), {
    ok: true,
    problems: [],
    summary: `${EXAMPLE}: ok (5 flags, 7 segments, 2 environments)`,
    dir: EXAMPLE,
    counts: { flags: 5, segments: 7, environments: 2 },
  });
  await withDir({
    "namespace.toml": "schema_version = 1\n",
    "flags/b.toml": 'schema_version = 1\ntype = "bool\n',
    "notes.txt": "x",
  }, async (dir) => {
    const r = await runCfgtool(["flags", "lint", ".", "--json"], { cwd: dir });
    assertEquals(r.code, 1);
    assertEquals(r.stderr, "error: 2 problems found (listed in the JSON on stdout)\n");
    assertEquals(JSON.parse(r.stdout), {
      ok: false,
      problems: [
        {
          path: "flags/b.toml",
          line: 2,
          column: 13,
          message: 'invalid TOML: unterminated string: close it on the same line ("""…""" ' +
            "strings may span lines)",
        },
        {
          path: "notes.txt",
          message: "unknown file: a manifest holds only namespace.toml, flags/<key>.toml and " +
            "segments/<key>.toml",
        },
      ],
      summary: "2 problems found",
      dir: ".",
      counts: null,
    });
  });
});
