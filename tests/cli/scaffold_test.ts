/**
 * `cfgtool namespace init` and `cfgtool flags new` as a user runs them: the
 * CLI in a real subprocess writes a manifest that `cfgtool flags lint`
 * accepts, as written and with every teaching example uncommented (so the
 * comments cannot rot), and refuses to overwrite a file or take a bad key.
 * The files' data lines are what the console's authoring library writes,
 * and docs/flags.md's "Start a manifest from the terminal" runs as written.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";
import { parseConsole, parseDocBlocks } from "../docs/doc_blocks.ts";
import { ShellSession } from "../docs/shell_session.ts";
import type { Command } from "commander-core";
import { buildProgram } from "../../lib/cli/program.ts";
import { FLAG_TYPES, type FlagType } from "../../lib/flags/model.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { flagScaffold, namespaceScaffold, uncommentExamples } from "../../lib/flags/scaffold.ts";
import {
  addEnvironment,
  addRule,
  addVariation,
  applyFileEdits,
  createFlag,
  filesOf,
  setOverrideEnabled,
} from "../../lib/flags/authoring/mod.ts";

const ROOT = new URL("../../", import.meta.url);
const SEGMENT = 'schema_version = 1\n[[predicate]]\nattribute = "user.beta"\nop = "eq"\n' +
  "value = true\n";
const OTHER: Record<FlagType, string> = {
  boolean: "on",
  string: "treatment",
  number: "high",
  object: "on",
};

/** Every file under `dir` (dot files included), path → text. */
async function readTree(dir: string, prefix = ""): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const rel = `${prefix}${e.name}`;
    if (e.isDirectory) {
      for (const [k, v] of await readTree(dir, `${rel}/`)) out.set(k, v);
    } else out.set(rel, await Deno.readTextFile(`${dir}/${rel}`));
  }
  return out;
}

/** Validates texts with the manifest validator; the problems as lines. */
function problemsOf(texts: Map<string, string>): string[] {
  return validateManifest(filesOf(texts)).problems.map((p) =>
    `${p.path}: ${p.key ?? ""}: ${p.message}`
  );
}

/** A command of the tree by its words, and what its --help prints. */
function command(...words: string[]): { cmd: Command; help: string } {
  let cmd = buildProgram() as unknown as Command;
  for (const w of words) cmd = cmd.commands.find((c) => c.name() === w) as Command;
  let help = "";
  cmd.configureOutput({ getOutHelpWidth: () => 200, writeOut: (s) => help += s });
  cmd.outputHelp();
  return { cmd, help };
}

Deno.test("namespace init and flags new write a manifest that lints clean, and still does with every example in force", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "cfgtool-scaffold-" });
  const run = (...args: string[]) => runCfgtool(args, { cwd });
  try {
    const init = await run("namespace", "init", "m", "--env", "production", "--env", "eu.beta");
    assertEquals(init.code, 0, init.stderr);
    assertEquals(init.stdout.trimEnd().split("\n"), [
      "wrote m/namespace.toml",
      "wrote m/flags/.gitkeep",
      "wrote m/segments/.gitkeep",
      "next: cfgtool flags new m <key> --type boolean",
    ]);
    await Deno.writeTextFile(`${cwd}/m/segments/beta-testers.toml`, SEGMENT);
    const added = await Promise.all(
      FLAG_TYPES.map((type) =>
        run("flags", "new", "m", `f-${type}`, "--type", type, "--description", type)
      ),
    );
    FLAG_TYPES.forEach((type, i) => {
      const r = added[i]!;
      assertEquals([r.code, r.stdout, r.stderr], [0, `wrote m/flags/f-${type}.toml\n`, ""]);
    });
    const lint = await run("flags", "lint", "m");
    assertEquals([lint.code, lint.stdout], [0, "m: ok (4 flags, 1 segment, 2 environments)\n"]);

    // Every example in force: a rule for the segment, a rollout, two overrides per flag.
    for (const [path, text] of await readTree(`${cwd}/m`)) {
      const inForce = uncommentExamples(text);
      if (path.startsWith("flags/") && path.endsWith(".toml")) {
        assert(inForce !== text, `${path} has no examples`);
        assertStringIncludes(inForce, '\n[environments."eu.beta"]\n');
      }
      await Deno.writeTextFile(`${cwd}/m/${path}`, inForce);
    }
    const again = await run("flags", "lint", "m");
    assertEquals([again.code, again.stdout, again.stderr], [
      0,
      "m: ok (4 flags, 1 segment, 2 environments)\n",
      "",
    ]);

    // …and they do what their comments say.
    const [off, beta, member] = await Promise.all([
      run("flags", "eval", "m", "--env", "production", "--all"),
      run("flags", "eval", "m", "--env", "eu.beta", "--all", "--json"),
      run(
        "flags",
        "eval",
        "m",
        "--env",
        "eu.beta",
        "--flag",
        "f-string",
        "--context",
        "user.beta=true",
      ),
    ]);
    // production: switched off, the default served
    assertEquals(off.stdout.trimEnd().split("\n").map((l) => l.slice(l.lastIndexOf("("))), [
      "(off, DISABLED)",
      "(low, DISABLED)",
      "(off, DISABLED)",
      "(control, DISABLED)",
    ]);
    // eu.beta, a context in no segment and without targeting_key: both rules pass, the
    // override's default serves
    const results = JSON.parse(beta.stdout) as Record<
      string,
      { variation: string; reason: string }
    >;
    for (const type of FLAG_TYPES) {
      const r = results[`f-${type}`]!;
      assertEquals([r.variation, r.reason], [OTHER[type], "DEFAULT"], type);
    }
    // a context in the segment: the segment's rule
    assertEquals(member.stdout, 'f-string: "treatment" (treatment, TARGETING_MATCH, rule 0)\n');
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("namespace init and flags new never overwrite a file and refuse what the manifest refuses", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "cfgtool-scaffold-" });
  const run = (...args: string[]) => runCfgtool(args, { cwd });
  try {
    await Deno.mkdir(`${cwd}/m/flags`, { recursive: true });
    await Deno.writeTextFile(`${cwd}/m/namespace.toml`, "schema_version = 1\n");
    await Deno.writeTextFile(`${cwd}/m/flags/taken.toml`, "mine\n");
    await Deno.writeTextFile(`${cwd}/file`, "");
    const [initAgain, taken, badKey, longKey, noNamespace, twice, badEnv, badType, notDir] =
      await Promise.all([
        run("namespace", "init", "m"),
        run("flags", "new", "m", "taken"),
        run("flags", "new", "m", "Dark_Mode"),
        run("flags", "new", "m", "x".repeat(64)),
        run("flags", "new", "elsewhere", "dark-mode"),
        run("namespace", "init", "n", "--env", "qa", "--env", "qa"),
        run("namespace", "init", "n", "--env", "Prod"),
        run("flags", "new", "m", "dark-mode", "--type", "list"),
        run("namespace", "init", "file"),
      ]);
    assertEquals([initAgain.code, initAgain.stdout], [1, ""]);
    assertEquals(
      initAgain.stderr,
      "error: m/namespace.toml already exists; namespace init never overwrites files\n",
    );
    assertEquals([taken.code, taken.stdout], [1, ""]);
    assertEquals(
      taken.stderr,
      "error: m/flags/taken.toml already exists; flags new never overwrites files\n",
    );
    assertEquals(badKey.code, 2);
    assertStringIncludes(
      badKey.stderr,
      'error: "Dark_Mode" is not a valid flag key: use lower-case',
    );
    assertEquals(longKey.code, 2);
    assertStringIncludes(longKey.stderr, "at most 63 characters");
    assertEquals(noNamespace.code, 2);
    assertEquals(
      noNamespace.stderr,
      "error: elsewhere has no namespace.toml; start the manifest with: " +
        "cfgtool namespace init elsewhere\n",
    );
    assertEquals([twice.code, twice.stderr], [2, "error: --env qa is given twice\n"]);
    assertEquals(badEnv.code, 2);
    assertStringIncludes(badEnv.stderr, '"Prod" is not a valid environment key');
    assertEquals(badType.code, 2);
    assertStringIncludes(badType.stderr, "Allowed choices are boolean, string, number, object");
    assertEquals([notDir.code, notDir.stderr], [2, "error: file is not a directory\n"]);

    // nothing was written or changed by any of them
    assertEquals(
      await readTree(`${cwd}/m`),
      new Map([["namespace.toml", "schema_version = 1\n"], ["flags/taken.toml", "mine\n"]]),
    );
    assert(!(await Deno.stat(`${cwd}/n`).then(() => true, () => false)), "n was created");
    assert(!(await Deno.stat(`${cwd}/elsewhere`).then(() => true, () => false)));
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("--help of namespace init and flags new explains the command, its options and exit statuses", () => {
  const init = command("namespace", "init").help;
  for (const text of ["--env <key>", "production and staging", "--description <text>", "never"]) {
    assertStringIncludes(init, text);
  }
  assertStringIncludes(init, "1  namespace.toml exists (nothing is written)");
  const { cmd: add, help } = command("flags", "new");
  const type = add.options.find((o) => o.long === "--type")!;
  assertEquals(type.argChoices, [...FLAG_TYPES], "flags new takes the manifest's types");
  assertEquals(type.defaultValue, "boolean");
  for (const text of ["<dir> <key>", "--description <text>", "no space", "at most 63 characters"]) {
    assertStringIncludes(help, text);
  }
  assertStringIncludes(help, "1  the flag's file exists (nothing is written)");
});

Deno.test("the data lines of the scaffolds are what the console writes for the same namespace and flag", () => {
  const data = (text: string) => text.split("\n").filter((l) => !l.startsWith("#")).join("\n");
  let texts: Map<string, string> = new Map();
  for (const key of ["production", "staging"]) {
    texts = applyFileEdits(texts, addEnvironment(texts, { key }));
  }
  const ns = namespaceScaffold();
  assertEquals(data(ns), texts.get("namespace.toml"));
  const starters: Record<FlagType, { variations: { name: string; value: unknown }[] }> = {
    boolean: { variations: [{ name: "on", value: true }, { name: "off", value: false }] },
    string: {
      variations: [{ name: "control", value: "control" }, {
        name: "treatment",
        value: "treatment",
      }],
    },
    number: { variations: [{ name: "low", value: 10 }, { name: "high", value: 100 }] },
    object: {
      variations: [{ name: "off", value: { enabled: false } }, {
        name: "on",
        value: { enabled: true, limit: 10 },
      }],
    },
  };
  for (const type of FLAG_TYPES) {
    for (const description of [undefined, "Shown in the console"]) {
      const flag = { key: "k", type, description };
      const console = createFlag(texts, {
        ...flag,
        variations: starters[type].variations as never,
        // the default is the variation the examples do not roll out
        default: starters[type].variations.find((v) => v.name !== OTHER[type])!.name,
      }).get("flags/k.toml")!;
      const text = flagScaffold(texts, flag);
      // the console's file, then the examples after a blank line
      assert(data(text).startsWith(console), `${type}:\n${text}`);
      assertEquals(data(text).slice(console.length).trim(), "", type);
    }
  }
});

Deno.test("flags new takes exactly the flag keys the manifest validator takes", () => {
  const texts = new Map([["namespace.toml", namespaceScaffold()]]);
  const keys = [
    "a",
    "9lives",
    "dark-mode",
    "v1.2_beta",
    "x".repeat(63),
    "x".repeat(64),
    "-x",
    ".x",
    "Dark",
    "a b",
    "ü",
    "a/b",
  ];
  for (const key of keys) {
    let text: string | undefined;
    try {
      text = flagScaffold(texts, { key, type: "boolean" });
    } catch {
      text = undefined;
    }
    // the validator's verdict on the same flag data at that path
    const data =
      'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\noff = false\n';
    const valid = problemsOf(new Map([...texts, [`flags/${key}.toml`, data]])).length === 0;
    assertEquals(text !== undefined, valid, `key ${JSON.stringify(key)}`);
  }
});

Deno.test("every example of flags new lints clean in force, whatever the environments and segments", () => {
  const cases: [string, Map<string, string>][] = [
    ["no environment", new Map([["namespace.toml", "schema_version = 1\n"]])],
    [
      "one environment",
      new Map([["namespace.toml", namespaceScaffold({ environments: ["prod"] })]]),
    ],
    [
      "keys with dots, and a segment",
      new Map([
        ["namespace.toml", namespaceScaffold({ environments: ["eu.prod", "us-prod", "v1.0"] })],
        ["segments/a.b.toml", SEGMENT],
      ]),
    ],
  ];
  for (const [name, texts] of cases) {
    for (const type of FLAG_TYPES) {
      const text = flagScaffold(texts, { key: "f.1", type });
      const all = new Map([...texts, ["flags/f.1.toml", text]]);
      assertEquals(problemsOf(all), [], `${name}, ${type}, as written`);
      all.set("flags/f.1.toml", uncommentExamples(text));
      assertEquals(problemsOf(all), [], `${name}, ${type}, examples in force:\n${text}`);
      const flag = validateManifest(filesOf(all)).manifest!.flags["f.1"]!;
      assertEquals(flag.rules.length, texts.has("segments/a.b.toml") ? 2 : 1, name);
      const envs = Object.keys(flag.environments).sort();
      assertEquals(
        envs,
        name === "no environment"
          ? []
          : name === "one environment"
          ? ["prod"]
          : ["eu.prod", "v1.0"],
      );
      if (name === "no environment") {
        assertStringIncludes(text, "namespace.toml; it declares none yet");
      }
    }
  }
});

Deno.test("a scaffolded flag goes on in the console: its edits keep the comments and the file valid", () => {
  let texts: Map<string, string> = new Map([["namespace.toml", namespaceScaffold()]]);
  texts.set("flags/dark-mode.toml", flagScaffold(texts, { key: "dark-mode", type: "boolean" }));
  texts = applyFileEdits(
    texts,
    addVariation(texts, { flag: "dark-mode", name: "beta", value: true }),
  );
  texts = applyFileEdits(texts, addRule(texts, { flag: "dark-mode", rule: { variation: "beta" } }));
  texts = applyFileEdits(
    texts,
    setOverrideEnabled(texts, { flag: "dark-mode", environment: "staging", enabled: false }),
  );
  texts = applyFileEdits(texts, addEnvironment(texts, { key: "qa" }));
  assertEquals(problemsOf(texts), []);
  const flag = texts.get("flags/dark-mode.toml")!;
  assertStringIncludes(flag, "off = false\nbeta = true\n");
  assertStringIncludes(flag, "# Rules ([[rule]]) are tried in order");
  assertStringIncludes(flag, "#enabled = false\n");
  assert(texts.get("namespace.toml")!.startsWith("# The namespace:"));
});

Deno.test("docs/flags.md: starting a manifest from the terminal works as written", async () => {
  const doc = "docs/flags.md";
  const blocks = parseDocBlocks(await Deno.readTextFile(new URL(doc, ROOT)), doc);
  const session = blocks.filter((b) => b.directives?.get("shell") === "scaffold");
  const written = blocks.filter((b) => b.directives?.has("written"));
  assertEquals([session.length, written.length], [1, 1]);
  const cwd = await Deno.makeTempDir({ prefix: "cfgtool-scaffold-doc-" });
  const denoDir = Deno.execPath().replace(/\/[^/]*$/, "");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!k.startsWith("CFGTOOL_") && k !== "DENO_KV_ACCESS_TOKEN") env[k] = v;
  }
  const sh = new ShellSession("scaffold", cwd, {
    ...env,
    PATH: `${denoDir}:${env.PATH ?? ""}`,
    NO_COLOR: "1",
    XDG_CONFIG_HOME: `${cwd}/no-config`,
  });
  try {
    const cli = new URL("cli.ts", ROOT).pathname;
    const config = new URL("deno.json", ROOT).pathname;
    // the reader's `cfgtool`: the CLI from this checkout
    await sh.run(`cfgtool() { '${Deno.execPath()}' run -A --config '${config}' '${cli}' "$@"; }`);
    for (const c of parseConsole(session[0]!.text)) {
      const { output, code } = await sh.run(c.command);
      assertEquals(output.replace(/\n+$/, ""), c.output, `${session[0]!.where}: $ ${c.command}`);
      assertEquals(code, 0, `${session[0]!.where}: $ ${c.command}`);
    }
    const path = written[0]!.directives!.get("written")!;
    assertEquals(
      await Deno.readTextFile(`${cwd}/${path}`),
      written[0]!.text + "\n",
      `${written[0]!.where} shows ${path} as written`,
    );
  } finally {
    await sh.close();
    await Deno.remove(cwd, { recursive: true });
  }
});
