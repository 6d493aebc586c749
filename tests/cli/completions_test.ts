import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { Command } from "commander-core";
import { completionScript, completionTree } from "../../lib/cli/completions.ts";
import { buildProgram } from "../../lib/cli/program.ts";
import { runCfgtool } from "../cli_process.ts";

const TOP_LEVEL = (buildProgram() as unknown as Command).commands.map((c) => c.name());
/** What completes after `cfgtool `: the commands and commander's implicit `help`. */
const AFTER_PROGRAM = [...TOP_LEVEL, "help"].join(" ");

async function shellAvailable(shell: string): Promise<boolean> {
  try {
    const out = await new Deno.Command(shell, {
      args: ["-c", "exit 0"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.success;
  } catch {
    return false;
  }
}

const HAS_ZSH = await shellAvailable("zsh");
const HAS_FISH = await shellAvailable("fish");

/** Runs a script in a real shell, the completion script given as a file in $1 (bash, zsh) or $argv[1] (fish). */
async function inShell(shell: string, script: string, completion: string): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: `.${shell}` });
  try {
    await Deno.writeTextFile(file, completion);
    const out = await new Deno.Command(shell, {
      // bash and zsh take $0 before $1; fish's $argv starts with the first argument
      args: shell === "fish" ? ["-c", script, file] : ["-c", script, shell, file],
      stdout: "piped",
      stderr: "piped",
      env: { HOME: Deno.env.get("HOME") ?? "/tmp" },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert(out.success, `${shell} failed: ${stderr}`);
    return new TextDecoder().decode(out.stdout);
  } finally {
    await Deno.remove(file);
  }
}

/** bash: completes the words (the last one is being typed) and prints COMPREPLY, one a line. */
const BASH_COMPLETE = `source "$1"
complete -p cfgtool
comp() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _cfgtool; echo "[$*] \${COMPREPLY[*]}"; }
`;

Deno.test("cfgtool completions bash, sourced in bash, registers a completion for cfgtool", async () => {
  const r = await runCfgtool(["completions", "bash"]);
  assertEquals(r.code, 0);
  const out = await inShell("bash", BASH_COMPLETE, r.stdout);
  assertStringIncludes(out, "-F _cfgtool cfgtool");
});

Deno.test("the bash completion offers commands, subcommands, options and argument choices by position", async () => {
  const { stdout } = await runCfgtool(["completions", "bash"]);
  const out = await inShell(
    "bash",
    BASH_COMPLETE + [
      'comp cfgtool ""',
      "comp cfgtool fl",
      "comp cfgtool flags l",
      "comp cfgtool pull --f",
      'comp cfgtool completions ""',
      'comp cfgtool --version namespace admin ""',
      // the value of --tenant is not taken for the command "push"
      "comp cfgtool pull --tenant push --nam",
      'comp cfgtool serve --kv ""',
    ].join("\n"),
    stdout,
  );
  const lines = out.split("\n");
  assertEquals(lines.find((l) => l.startsWith("[cfgtool ]")), `[cfgtool ] ${AFTER_PROGRAM}`);
  assert(lines.includes("[cfgtool fl] flags"), out);
  assert(lines.includes("[cfgtool flags l] lint"), out);
  assert(lines.includes("[cfgtool pull --f] --force"), out);
  assert(lines.includes("[cfgtool completions ] bash zsh fish"), out);
  assert(lines.includes("[cfgtool --version namespace admin ] list add remove help"), out);
  assert(lines.includes("[cfgtool pull --tenant push --nam] --namespace"), out);
  // an option's free-form value: nothing offered, the shell falls back to file names
  assert(lines.includes("[cfgtool serve --kv ] "), out);
});

Deno.test("every completion script names every top-level command", async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runCfgtool(["completions", shell]);
    assertEquals(r.code, 0, r.stderr);
    for (const name of TOP_LEVEL) {
      assert(new RegExp(`\\b${name}\\b`).test(r.stdout), `${shell} script lacks ${name}`);
    }
  }
});

Deno.test("cfgtool completions with an unknown shell exits 2 and names the shells it knows", async () => {
  const r = await runCfgtool(["completions", "tcsh"]);
  assertEquals(r.code, 2);
  assertStringIncludes(r.stderr, "'tcsh' is invalid for argument 'shell'");
  assertStringIncludes(r.stderr, "bash, zsh, fish");
  assertEquals(r.stdout, "");
});

Deno.test("cfgtool completions without a shell exits 2", async () => {
  const r = await runCfgtool(["completions"]);
  assertEquals(r.code, 2);
  assertStringIncludes(r.stderr, "missing required argument 'shell'");
});

Deno.test("completion scripts follow the command tree they are generated from", () => {
  const program = new Command("demo");
  program.command("alpha").option("--mode <m>", "mode").command("deep");
  program.command("secret", { hidden: true });
  const tree = completionTree(program);
  assertEquals(tree.commands.map((c) => c.name), ["alpha", "help"]);
  assertEquals(tree.commands[1]?.argumentChoices, ["alpha"]);
  const bash = completionScript("bash", program);
  assertStringIncludes(bash, "'demo alpha deep')");
  assertStringIncludes(bash, "_demo_valued='--mode'");
  assert(!bash.includes("secret"), "hidden commands are not completed");
});

Deno.test(
  { name: "the zsh completion offers subcommands and options by position", ignore: !HAS_ZSH },
  async () => {
    const { stdout } = await runCfgtool(["completions", "zsh"]);
    // stand-ins for the completion system's functions print what would be offered
    const script = `source "$1" 2>/dev/null
_describe() { shift 3; print -r -- "\${(@)\${(P)1}%%:*}"; }
compadd() { shift; print -r -- "\${(P)1}"; }
_files() { print -r -- "<files>"; }
comp() { words=("$@"); CURRENT=\${#words}; PREFIX=\${words[CURRENT]}; print -rn -- "[$*] "; _cfgtool; }
comp cfgtool ""
comp cfgtool flags ""
comp cfgtool pull --f
comp cfgtool completions ""
comp cfgtool serve --kv ""
`;
    const lines = (await inShell("zsh", script, stdout)).split("\n");
    assertEquals(lines[0], `[cfgtool ] ${AFTER_PROGRAM}`);
    assert(lines.includes("[cfgtool flags ] new lint eval help"), lines.join("\n"));
    assert(lines.some((l) => l.startsWith("[cfgtool pull --f] ") && l.includes("--force")));
    assert(lines.includes("[cfgtool completions ] bash zsh fish"), lines.join("\n"));
    assert(lines.includes("[cfgtool serve --kv ] <files>"), lines.join("\n"));
  },
);

Deno.test(
  { name: "the zsh completion registers itself with compdef when sourced", ignore: !HAS_ZSH },
  async () => {
    const { stdout } = await runCfgtool(["completions", "zsh"]);
    const dump = await Deno.makeTempFile();
    try {
      const out = await inShell(
        "zsh",
        `autoload -U compinit; compinit -u -d ${dump}; source "$1"; print -r -- $_comps[cfgtool]`,
        stdout,
      );
      assertEquals(out.trim(), "_cfgtool");
    } finally {
      await Deno.remove(dump).catch(() => {});
    }
  },
);

Deno.test(
  {
    name: "the fish completion offers subcommands, options and choices by position",
    ignore: !HAS_FISH,
  },
  async () => {
    const { stdout } = await runCfgtool(["completions", "fish"]);
    const script = `source $argv[1]
for line in "cfgtool fl" "cfgtool flags " "cfgtool pull --f" "cfgtool completions "
    echo "[$line]" (complete -C "$line" | string replace -r '\\t.*' '')
end`;
    const out = await inShell("fish", script, stdout);
    const lines = out.trim().split("\n");
    assertEquals(lines, [
      "[cfgtool fl] flags",
      "[cfgtool flags ] eval help lint new",
      "[cfgtool pull --f] --force",
      "[cfgtool completions ] bash fish zsh",
    ]);
  },
);
