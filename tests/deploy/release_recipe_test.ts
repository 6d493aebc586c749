/**
 * One build recipe: the release workflow (.github/workflows/release.yml)
 * builds with `deno task compile`, never a `deno compile` flag list of its
 * own, and the task carries what a binary needs at run time: the unstable
 * APIs (`--unstable-net` for `serve --workers`, `--unstable-kv`) and an
 * `--include` for every module the code loads by URL rather than by import
 * (the worker entries, the command tree that lib/cli/dispatch.ts loads on
 * demand, the baked commit file). The include list is read from the code,
 * so a new worker entry without its `--include` fails here, not in a
 * released binary.
 */
import { parse } from "yaml";
import { assert, assertEquals } from "../assert.ts";
import { parseImports } from "../architecture/imports.ts";
import { ENTRY_FILES, resolveLocal } from "../architecture/graph.ts";

const ROOT = new URL("../../", import.meta.url);
const denoJson = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
const TASK: string = denoJson.tasks.compile;
/** The variable through which a caller adds `deno compile` options (the release: `--target`). */
const FLAGS_VAR = "CFGTOOL_COMPILE_FLAGS";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}
interface Workflow {
  jobs: Record<string, { steps: Step[]; strategy?: { matrix?: { target?: string[] } } }>;
}
const workflow = parse(
  await Deno.readTextFile(new URL(".github/workflows/release.yml", ROOT)),
) as Workflow;
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);

/** The `deno compile` command of the task, as words. */
function compileWords(task: string): string[] {
  const commands = task.split("&&").map((c) => c.trim());
  const compile = commands.filter((c) => /^deno compile\b/.test(c));
  assertEquals(compile.length, 1, `one deno compile in the task: ${task}`);
  return compile[0]!.split(/\s+/);
}

/** The values of every `--include` of a command. */
function includes(words: string[]): string[] {
  return words.flatMap((w, i) => w === "--include" ? [words[i + 1]!] : []);
}

/**
 * Every file the code names with `new URL("…", import.meta.url)` (a worker's
 * entry, a module loaded by a computed `import()`, a data file read at run
 * time): `deno compile` follows imports, not these, so each needs an
 * `--include`.
 */
async function filesLoadedByUrl(): Promise<string[]> {
  const paths = [...ENTRY_FILES];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      if (e.isDirectory) await walk(`${dir}${e.name}/`);
      else if (/\.tsx?$/.test(e.name)) paths.push(`${dir}${e.name}`);
    }
  };
  await walk("lib/");
  const found = new Set<string>();
  for (const path of paths) {
    const source = await Deno.readTextFile(new URL(path, ROOT));
    for (const ref of parseImports(source)) {
      if (ref.kind !== "url") continue;
      const file = resolveLocal(path, ref.specifier);
      if (file !== undefined) found.add(file);
    }
  }
  return [...found].sort();
}

Deno.test("the release workflow builds with deno task compile, with no deno compile of its own", () => {
  for (const step of steps) {
    assert(
      !/\bdeno\s+compile\b/.test(step.run ?? ""),
      `release.yml runs its own deno compile; call deno task compile instead:\n${step.run}`,
    );
  }
  const compileJob = workflow.jobs.compile!;
  const build = compileJob.steps.filter((s) => s.run?.trim() === "deno task compile");
  assertEquals(build.length, 1, "the compile job runs deno task compile once");
  assertEquals(build[0]!.env, { [FLAGS_VAR]: "--target ${{ matrix.target }}" });
  assert(compileJob.strategy?.matrix?.target?.includes("x86_64-pc-windows-msvc"));
});

Deno.test("the release workflow uses the Deno that CI pins", async () => {
  const ci = await Deno.readTextFile(new URL(".ci/run", ROOT));
  const pinned = /^DENO_VERSION="([^"]+)"/m.exec(ci)?.[1];
  const setups = steps.filter((s) => s.uses?.startsWith("denoland/setup-deno@"));
  assert(setups.length > 0);
  for (const s of setups) assertEquals(s.with?.["deno-version"], pinned);
});

Deno.test("the compile task has --unstable-net, --unstable-kv and every unstable API of deno.json", () => {
  const words = compileWords(TASK);
  for (const api of ["kv", "net", ...(denoJson.unstable ?? [])]) {
    assert(words.includes(`--unstable-${api}`), `the compile task lacks --unstable-${api}`);
  }
});

Deno.test("the compile task includes every module the code loads by URL, and each exists", async () => {
  const included = includes(compileWords(TASK));
  const loaded = await filesLoadedByUrl();
  for (
    const must of [
      "lib/workers/_entry.ts",
      "lib/login/saml_check_worker.ts",
      "lib/cli/program.ts",
      "dist/commit.txt",
    ]
  ) {
    assert(loaded.includes(must), `the code no longer loads ${must} by URL: update this test`);
  }
  const missing = loaded.filter((f) => !included.includes(f));
  assertEquals(missing, [], "add an --include to deno.json's compile task for each");
  for (const f of included) {
    // dist/commit.txt is written by the task itself
    if (f.startsWith("dist/")) continue;
    assert(await Deno.stat(new URL(f, ROOT)).then(() => true, () => false), `${f} does not exist`);
  }
});

Deno.test(`${FLAGS_VAR} reaches deno compile before the entry file, and nothing when unset`, async () => {
  // The task as written, with `deno compile` swapped for a script that prints its arguments.
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-recipe-" });
  try {
    await Deno.writeTextFile(`${dir}/args.ts`, "console.log(JSON.stringify(Deno.args));\n");
    await Deno.writeTextFile(
      `${dir}/deno.json`,
      JSON.stringify({ tasks: { compile: TASK.replace("deno compile", "deno run args.ts") } }),
    );
    const run = async (env: Record<string, string>) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["task", "--quiet", "compile"],
        cwd: dir,
        env: { NO_COLOR: "1", ...env },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assertEquals(out.code, 0, stderr);
      return JSON.parse(new TextDecoder().decode(out.stdout).trim()) as string[];
    };
    const plain = await run({});
    assertEquals(plain, compileWords(TASK).slice(2).filter((w) => w !== `$${FLAGS_VAR}`));
    const target = await run({ [FLAGS_VAR]: "--target aarch64-apple-darwin" });
    const at = target.indexOf("--target");
    assert(at >= 0 && target[at + 1] === "aarch64-apple-darwin", target.join(" "));
    assertEquals(target.at(-1), "cli.ts", "options after the entry file would be the binary's own");
    assertEquals(target.filter((w) => w !== "--target" && w !== "aarch64-apple-darwin"), plain);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the release step after the build names each binary after its platform", async () => {
  const compileJob = workflow.jobs.compile!;
  const at = compileJob.steps.findIndex((s) => s.run?.trim() === "deno task compile");
  const rename = compileJob.steps[at + 1]!;
  const upload = compileJob.steps[at + 2]!;
  assert(upload.uses?.startsWith("actions/upload-artifact@"), JSON.stringify(upload));
  const output = /--output (\S+)/.exec(TASK)![1]!;
  assert(rename.run?.includes(output), `the step after the build moves ${output}`);
  const cases: [target: string, built: string, want: string][] = [
    ["x86_64-unknown-linux-gnu", output, "cfgtool-x86_64-unknown-linux-gnu"],
    ["x86_64-pc-windows-msvc", `${output}.exe`, "cfgtool-x86_64-pc-windows-msvc.exe"],
  ];
  for (const [target, built, want] of cases) {
    // what deno compile leaves (with .exe for a Windows target), then the step as CI runs it
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-release-" });
    try {
      await Deno.mkdir(`${dir}/${built.slice(0, built.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${dir}/${built}`, "binary");
      await Deno.writeTextFile(`${dir}/dist/commit.txt`, "abc\n");
      const script = rename.run!.replaceAll("${{ matrix.target }}", target);
      const out = await new Deno.Command("bash", { args: ["-e", "-c", script], cwd: dir }).output();
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      const path = String(upload.with?.path).replace(/\/$/, "");
      const uploaded = [];
      for await (const e of Deno.readDir(`${dir}/${path}`)) uploaded.push(e.name);
      assertEquals(uploaded, [want], `${target}: the artifact holds the binary alone`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});
