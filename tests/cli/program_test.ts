import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import type { Command } from "commander-core";
import { buildProgram } from "../../lib/cli/program.ts";
import { runCfgtool } from "../cli_process.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** Every command of the tree with its words: `cfgtool flags lint`. */
function* commands(cmd: Command, parent = ""): Generator<[string, Command]> {
  const path = parent === "" ? cmd.name() : `${parent} ${cmd.name()}`;
  yield [path, cmd];
  for (const sub of cmd.commands) yield* commands(sub as Command, path);
}

Deno.test("no option or argument description of any command contains a line break", () => {
  const broken: string[] = [];
  for (const [path, cmd] of commands(buildProgram() as unknown as Command)) {
    for (const o of cmd.options) {
      if (o.description.includes("\n")) {
        broken.push(`${path} ${o.flags}: ${JSON.stringify(o.description)}`);
      }
    }
    for (const a of cmd.registeredArguments) {
      if (a.description.includes("\n")) {
        broken.push(`${path} <${a.name()}>: ${JSON.stringify(a.description)}`);
      }
    }
  }
  assertEquals(broken, [], "commander wraps descriptions itself; write each as one line");
});

Deno.test("command descriptions break lines only between paragraphs, and summaries never", () => {
  const broken: string[] = [];
  for (const [path, cmd] of commands(buildProgram() as unknown as Command)) {
    // a blank line separates paragraphs; any other line break is a hard wrap
    if (/[^\n]\n(?!\n)/.test(cmd.description())) {
      broken.push(`${path}: ${JSON.stringify(cmd.description())}`);
    }
    if (cmd.summary().includes("\n")) {
      broken.push(`${path} (summary): ${JSON.stringify(cmd.summary())}`);
    }
  }
  assertEquals(broken, []);
});

Deno.test("--help wraps option descriptions to the terminal width, not at fixed points", () => {
  const pull = (buildProgram() as unknown as Command).commands.find((c) => c.name() === "pull")!;
  pull.configureOutput({ getOutHelpWidth: () => 200 });
  const force = pull.helpInformation().split("\n").filter((l) => l.includes("--force"));
  assertEquals(force.length, 1);
  assertStringIncludes(
    force[0]!,
    "(they are kept; manifest files that the pulled version does not have are removed, and listed)",
  );
});

Deno.test("cfgtool --version prints the version, the Deno version and says the commit is unknown", async () => {
  const r = await runCfgtool(["--version"], { env: { CFGTOOL_BUILD_COMMIT: "" } });
  assertEquals(r.code, 0);
  const [first, second] = r.stdout.trimEnd().split("\n");
  assertEquals(first, `cfgtool ${denoJson.version} (commit unknown)`);
  assert(second?.startsWith(`deno ${Deno.version.deno} (v8 ${Deno.version.v8}`), second);
});

Deno.test("cfgtool --version names the commit given by CFGTOOL_BUILD_COMMIT to a run from source", async () => {
  const r = await runCfgtool(["-V"], { env: { CFGTOOL_BUILD_COMMIT: "0123abcd4567-dirty" } });
  assertEquals(r.code, 0);
  assertEquals(r.stdout.split("\n")[0], `cfgtool ${denoJson.version} (commit 0123abcd4567-dirty)`);
});

Deno.test("cfgtool --help lists --version and completions", async () => {
  const r = await runCfgtool(["--help"]);
  assertEquals(r.code, 0);
  assertStringIncludes(r.stdout, "-V, --version");
  assertStringIncludes(r.stdout, "completions");
});
