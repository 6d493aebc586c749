/**
 * `cfgtool import` and `cfgtool export` as a real process: a good import
 * lints, bad input is one line naming the file with exit 1 or 2 and
 * nothing written, `--force` lists what it replaces.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";

const FLAGD = new URL("./fixtures/flagd/flags.json", import.meta.url).pathname;
const FLIPT = new URL("./fixtures/flipt/features.yml", import.meta.url).pathname;

async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** One line on stderr, nothing on stdout, the exit status, and nothing written in `dir`. */
async function refused(args: string[], dir: string, code: number, says: string): Promise<void> {
  const before = await entries(dir);
  const r = await runCfgtool(args, { cwd: dir });
  assertEquals(r.code, code, r.stderr);
  assertEquals(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assertEquals(lines.length, 1, r.stderr);
  assertStringIncludes(lines[0]!, says);
  assertEquals(await entries(dir), before, "nothing is written");
}

Deno.test("cfgtool import writes a directory that flags lint accepts, and prints the report", async () => {
  const tmp = await Deno.makeTempDir();
  const r = await runCfgtool([
    "import",
    "--from",
    "flipt",
    FLIPT,
    "--out",
    "out",
    "--env-map",
    "default=production",
  ], {
    cwd: tmp,
  });
  assertEquals(r.code, 0, r.stderr);
  assert(
    r.stdout.startsWith(`imported ${FLIPT} (flipt) into out: 4 flags and 5 segments written`),
    r.stdout,
  );
  assertStringIncludes(
    r.stdout,
    "\nflag colors: written\n  mapped: variants: red, blue, green (string); default red\n",
  );
  const lint = await runCfgtool(["flags", "lint", "out"], { cwd: tmp });
  assertEquals([lint.code, lint.stdout], [0, "out: ok (4 flags, 7 segments, 1 environment)\n"]);
  const ev = await runCfgtool(
    [
      "flags",
      "eval",
      "out",
      "--env",
      "production",
      "--flag",
      "colors",
      "--context",
      "email=a@flipt.io",
    ],
    { cwd: tmp },
  );
  assertEquals(ev.stdout, 'colors: "blue" (blue, TARGETING_MATCH, rule 0)\n');
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("cfgtool import --force replaces a directory, listing each file; --json reports as JSON", async () => {
  const tmp = await Deno.makeTempDir();
  await Deno.mkdir(`${tmp}/out/flags`, { recursive: true });
  await Deno.writeTextFile(`${tmp}/out/flags/old.toml`, "");
  await refused(
    ["import", "--from", "flagd", FLAGD, "--out", "out"],
    tmp,
    2,
    "out: --out is not empty",
  );
  assertEquals(await entries(`${tmp}/out/flags`), ["old.toml"]);
  const r = await runCfgtool([
    "import",
    "--from",
    "flagd",
    FLAGD,
    "--out",
    "out",
    "--force",
    "--json",
  ], {
    cwd: tmp,
  });
  assertEquals(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assertEquals(report.replaced, ["flags/old.toml"]);
  assert(report.written.includes("flags/header-color.toml"));
  assertEquals(
    report.items.find((i: { key: string }) => i.key === "header-color").sourceKey,
    "headerColor",
  );
  assert(!(await entries(`${tmp}/out/flags`)).includes("old.toml"));
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("cfgtool import refuses bad input in one line, writing nothing", async () => {
  const tmp = await Deno.makeTempDir();
  const text = await Deno.readTextFile(FLAGD);
  await Deno.writeTextFile(`${tmp}/truncated.json`, text.slice(0, 300));
  await Deno.writeTextFile(`${tmp}/bad.yml`, "flags: [\n  - key: a\n    name");
  await Deno.writeTextFile(`${tmp}/unleash.json`, '{"version": 1, "features": []}');
  // --from, the file, the exit code, what the one line says, and options after --out.
  const cases: [string, string, number, string, string[]?][] = [
    ["flagd", "truncated.json", 1, "error: truncated.json: not JSON"],
    ["flipt", "bad.yml", 1, "error: bad.yml: not YAML"],
    ["flagd", "unleash.json", 1, 'unleash.json: not a flagd flag definition: no top-level "flags"'],
    ["flagd", "missing.json", 1, "missing.json: no such file"],
    ["optimizely", "bad.yml", 2, 'unknown --from "optimizely"'],
    ["flagd", FLAGD, 2, '"Prod" is not a valid environment key', ["--env-map", "default=Prod"]],
  ];
  for (const [from, file, code, says, more = []] of cases) {
    await refused(["import", "--from", from, file, "--out", "out", ...more], tmp, code, says);
  }
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("cfgtool export --to flagd prints a definition that imports back", async () => {
  const tmp = await Deno.makeTempDir();
  const examples = new URL("../../examples/flags", import.meta.url).pathname;
  const r = await runCfgtool([
    "export",
    "--to",
    "flagd",
    examples,
    "--env",
    "production",
    "--out",
    "flags.json",
  ], {
    cwd: tmp,
  });
  assertEquals(r.code, 0, r.stderr);
  const doc = JSON.parse(await Deno.readTextFile(`${tmp}/flags.json`));
  assertEquals(doc.flags["new-checkout"].defaultVariant, "off");
  const back = await runCfgtool(["import", "--from", "flagd", "flags.json", "--out", "back"], {
    cwd: tmp,
  });
  assertEquals(back.code, 0, back.stderr);
  const again = await runCfgtool(["export", "--to", "flagd", examples, "--out", "flags.json"], {
    cwd: tmp,
  });
  assertEquals(again.code, 1);
  assertStringIncludes(again.stderr, "flags.json exists; give --force");
  const bad = await runCfgtool(["export", "--to", "unleash", examples], { cwd: tmp });
  assertEquals([bad.code, bad.stdout], [2, ""]);
  await Deno.remove(tmp, { recursive: true });
});
