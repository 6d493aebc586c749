/**
 * `cfgtool init | lint | resolve` as a user runs them: cli.ts in a real
 * subprocess, in a temporary working directory, checking stdout, stderr and
 * the exit status. No stack trace may ever reach stderr.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";
import { workspaceFingerprint } from "../../lib/workspace/fingerprint.ts";
import {
  EXAMPLE_DIR,
  exampleCopy,
  exampleFiles,
  VARIABLE,
  writeTree,
} from "../fixtures/workspace/build.ts";

type Run = CliResult;

async function cfgtool(args: string[], cwd?: string): Promise<Run> {
  return runCfgtool(args, { cwd: cwd ?? await Deno.makeTempDir() });
}

const lines = (s: string) => s.split("\n").filter((l) => l !== "");

const V = "variables/notification-delivery-policy.toml";
const CAT = "catalogs/notification-delivery-policy.toml";
const ENTRY = "catalogs/notification-delivery-policy-entries/default.toml";
const SCHEMA = "schemas/notification-delivery-policy.schema.json";
const CONTRACT = "schemas/context.schema.json";
const files = await exampleFiles();
const variableText = files[V]!;
const qualifier = (body: string) => `schema_version = 1\n[[predicate]]\n${body}\n`;

Deno.test("cfgtool resolve prints the two lines of the spec", async () => {
  const r = await cfgtool([
    "resolve",
    EXAMPLE_DIR,
    "--variable",
    VARIABLE,
    "--context",
    "notification.kind=security_alert",
    "--context",
    "account.plan=standard",
  ]);
  assertEquals(r.code, 0);
  assertEquals(r.stderr, "");
  assertEquals(
    r.stdout,
    "value key: immediate-security\n" +
      'value: {"delivery":"immediate","channels":["email","in_app","slack"],' +
      '"respect_quiet_hours":false,"fallback_channel":"email"}\n',
  );
});

Deno.test("cfgtool resolve takes a relative workspace path and typed --context literals", async () => {
  const dir = await exampleCopy();
  const parent = dir.slice(0, dir.lastIndexOf("/"));
  const name = dir.slice(dir.lastIndexOf("/") + 1);
  const args = ["resolve", name, "--variable", VARIABLE, "--context", "account.plan=enterprise"];
  args.push("--context", "notification.kind=incident_update");
  const on = await cfgtool([...args, "--context", "incident.active=true"], parent);
  assertEquals(lines(on.stdout)[0], "value key: immediate-incident");
  const quoted = await cfgtool([...args, "--context", 'incident.active="true"'], parent);
  assertEquals(lines(quoted.stdout)[0], "value key: default");
});

Deno.test("cfgtool resolve --json prints value_key, value and source_fingerprint", async () => {
  const r = await cfgtool(["resolve", EXAMPLE_DIR, "--variable", VARIABLE, "--json"]);
  assertEquals(r.code, 0);
  assertEquals(lines(r.stdout).length, 1);
  const out = JSON.parse(r.stdout);
  assertEquals(Object.keys(out), ["value_key", "value", "source_fingerprint"]);
  assertEquals(out.value_key, "default");
  assertEquals(out.value.digest_interval_hours, 24);
  assert(/^sha256:[0-9a-f]{64}$/.test(out.source_fingerprint));
});

Deno.test("cfgtool resolve: unknown variable exits 1", async () => {
  const r = await cfgtool(["resolve", EXAMPLE_DIR, "--variable", "nope"]);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  assertEquals(r.stderr, 'error: no variable "nope" in the workspace\n');
});

Deno.test("cfgtool resolve: missing workspace exits 2", async () => {
  const r = await cfgtool(["resolve", "no-such-dir", "--variable", VARIABLE]);
  assertEquals(r.code, 2);
  assertEquals(r.stderr, 'error: workspace "no-such-dir" does not exist\n');
  const lint = await cfgtool(["lint", "no-such-dir"]);
  assertEquals(lint.code, 2);
  assertEquals(lint.stderr, 'error: workspace "no-such-dir" does not exist\n');
});

Deno.test("cfgtool resolve: --context without = exits 2", async () => {
  const r = await cfgtool(["resolve", EXAMPLE_DIR, "--variable", VARIABLE, "--context", "plan"]);
  assertEquals(r.code, 2);
  assertEquals(r.stderr, 'error: --context "plan" must be <dotted.path>=<value>\n');
});

Deno.test("cfgtool resolve: a missing --variable or an unknown flag exits 2", async () => {
  const missing = await cfgtool(["resolve", EXAMPLE_DIR]);
  assertEquals(missing.code, 2);
  assertStringIncludes(missing.stderr, "required option '--variable <name>' not specified");
  const unknown = await cfgtool(["lint", EXAMPLE_DIR, "--frobnicate"]);
  assertEquals(unknown.code, 2);
  assertStringIncludes(unknown.stderr, "unknown option '--frobnicate'");
});

Deno.test("cfgtool resolve on a broken workspace exits 1 with the problems", async () => {
  const dir = await exampleCopy({ [SCHEMA]: null });
  const r = await cfgtool(["resolve", ".", "--variable", VARIABLE], dir);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  assertEquals(lines(r.stderr), [
    `${CAT}: schema: schema file ${SCHEMA} does not exist; entries cannot be checked`,
    "1 problem found",
  ]);
});

Deno.test("cfgtool resolve still works with a stale context contract", async () => {
  const dir = await exampleCopy({ [CONTRACT]: "{}\n" });
  const r = await cfgtool(["resolve", dir, "--variable", VARIABLE]);
  assertEquals(r.code, 0);
  assertEquals(lines(r.stdout)[0], "value key: default");
});

Deno.test("cfgtool lint prints an ok line with counts", async () => {
  const r = await cfgtool(["lint", EXAMPLE_DIR]);
  assertEquals(r.code, 0);
  assertEquals(r.stdout, "ok: 1 variable, 1 catalog, 3 entries, 5 qualifiers\n");
  assertEquals(r.stderr, "");
});

/** One broken workspace per problem kind: the change and the exact stderr problem lines. */
const KINDS: Record<string, { changes: Record<string, string | null>; expect: string[] }> = {
  "entry violates the catalog schema": {
    changes: {
      [ENTRY]: files[ENTRY]!.replace("digest_interval_hours = 24\n", "").replace(
        '"in_app"]',
        '"fax"]',
      ),
    },
    expect: [
      `${ENTRY}: digest_interval_hours: required field is missing`,
      `${ENTRY}: channels[1]: must be one of "email", "in_app", "slack"`,
    ],
  },
  "context contract missing": {
    changes: { [CONTRACT]: null },
    expect: [
      `${CONTRACT}: context contract is missing; regenerate it with "cfgtool init <workspace> --context"`,
    ],
  },
  "context contract differs": {
    changes: { [CONTRACT]: files[CONTRACT]!.replace('"plan"', '"tier"') },
    expect: [
      `${CONTRACT}: differs from the contract generated from the qualifiers (first difference at ` +
      'line 9); regenerate it with "cfgtool init <workspace> --context"',
    ],
  },
  "default names no entry": {
    changes: { [V]: variableText.replace('default = "default"', 'default = "weekly"') },
    expect: [`${V}: resolve.default: no entry "weekly" in catalog "notification-delivery-policy"`],
  },
  "rule value names no entry": {
    changes: { [V]: variableText.replace('value = "immediate-incident"', 'value = "fast"') },
    expect: [
      `${V}: resolve.rule[1].value: no entry "fast" in catalog "notification-delivery-policy"`,
    ],
  },
  "misspelt qualifier, catalog and entry names, with a suggestion": {
    changes: {
      [V]: variableText
        .replace('qualifier = "security-alerts"', 'qualifier = "securty-alerts"')
        .replace('value = "immediate-incident"', 'value = "immediate-incidnet"'),
      "variables/other.toml": variableText.replace(
        /^type = .*$/m,
        'type = "catalog:notification-delivery-polcy"',
      ),
    },
    expect: [
      `${V}: resolve.rule[0].qualifier: no qualifier "securty-alerts"; did you mean ` +
      '"security-alerts"?',
      `${V}: resolve.rule[1].value: no entry "immediate-incidnet" in catalog ` +
      '"notification-delivery-policy"; did you mean "immediate-incident"?',
      'variables/other.toml: type: no catalog "notification-delivery-polcy" ' +
      "(catalogs/notification-delivery-polcy.toml does not exist); did you mean " +
      '"notification-delivery-policy"?',
    ],
  },
  "unknown qualifier": {
    changes: { [V]: variableText.replace('qualifier = "security-alerts"', 'qualifier = "sec"') },
    expect: [`${V}: resolve.rule[0].qualifier: no qualifier "sec"`],
  },
  "qualifier cycle": {
    changes: {
      "qualifiers/active-incidents.toml": files["qualifiers/active-incidents.toml"] +
        '\n[[predicate]]\nattribute = "qualifier.enterprise-incident-updates"\nop = "eq"\nvalue = true\n',
    },
    expect: [
      "qualifiers/enterprise-incident-updates.toml: predicate[1].attribute: qualifier cycle: " +
      "active-incidents -> enterprise-incident-updates -> active-incidents",
    ],
  },
  "dangling qualifier reference": {
    changes: {
      "qualifiers/active-incidents.toml": files["qualifiers/active-incidents.toml"] +
        '\n[[predicate]]\nattribute = "qualifier.incidents"\nop = "eq"\nvalue = true\n',
    },
    expect: ['qualifiers/active-incidents.toml: predicate[1].attribute: no qualifier "incidents"'],
  },
  "invalid predicate": {
    changes: {
      "qualifiers/security-alerts.toml": qualifier(
        'attribute = "notification.kind"\nop = "matches"\nvalue = "(?!x)"',
      ),
    },
    expect: [
      "qualifiers/security-alerts.toml: predicate[0].value: matches accepts the RE2-safe subset: " +
      "no backreferences or lookaround",
    ],
  },
  "wrong schema_version": {
    changes: { [CAT]: files[CAT]!.replace("schema_version = 1", "schema_version = 3") },
    expect: [
      `${CAT}: schema_version: unsupported schema_version 3 (this cfgtool reads schema_version 1)`,
    ],
  },
  "unknown key": {
    changes: { [CAT]: files[CAT]! + 'owner = "ops"\n' },
    expect: [`${CAT}: owner: unknown key "owner" (allowed: schema_version, description, schema)`],
  },
  "missing required field": {
    changes: { [V]: variableText.replace(/^type = .*\n/m, "") },
    expect: [`${V}: type: required field is missing`],
  },
  "wrong type": {
    changes: { [V]: variableText.replace('default = "default"', "default = true") },
    expect: [`${V}: resolve.default: expected a string, found the boolean true`],
  },
  "malformed TOML": {
    changes: {
      "qualifiers/incident-updates.toml": 'schema_version = 1\n[[predicate]]\nop = "eq\n',
    },
    expect: [
      "qualifiers/incident-updates.toml:3:9: invalid TOML: unterminated string: close it on the " +
      'same line ("""…""" strings may span lines)',
    ],
  },
  "missing schema file": {
    changes: { [SCHEMA]: null },
    expect: [`${CAT}: schema: schema file ${SCHEMA} does not exist; entries cannot be checked`],
  },
  "schema file is not valid JSON": {
    changes: { [SCHEMA]: '{\n  "type": "object"\n  "required": []\n}\n' },
    expect: [
      `${CAT}: schema: ${SCHEMA} is not a valid JSON Schema; entries cannot be checked`,
      `${SCHEMA}:3:3: invalid JSON: Expected ',' or '}' after property value in JSON`,
    ],
  },
  "schema file is not a valid JSON Schema": {
    changes: { [SCHEMA]: '{"type": "object", "properties": {"delivery": {"type": "text"}}}\n' },
    expect: [
      `${CAT}: schema: ${SCHEMA} is not a valid JSON Schema; entries cannot be checked`,
      `${SCHEMA}: properties.delivery.type: not a valid JSON Schema: must be equal to one of the allowed values`,
    ],
  },
  "variable type not catalog:<name>": {
    changes: { [V]: variableText.replace(/^type = .*$/m, 'type = "json"') },
    expect: [`${V}: type: unsupported type "json" (a variable's type is "catalog:<catalog_name>")`],
  },
  "variable type names an unknown catalog": {
    changes: { [V]: variableText.replace(/^type = .*$/m, 'type = "catalog:policies"') },
    expect: [`${V}: type: no catalog "policies" (catalogs/policies.toml does not exist)`],
  },
  "file in an unexpected place": {
    changes: { "qualifiers/extra/x.toml": "x = 1\n" },
    expect: [
      "qualifiers/extra/x.toml: unexpected file: a workspace holds only variables/<name>.toml, " +
      "catalogs/<name>.toml, catalogs/<catalog>-entries/<key>.toml, qualifiers/<name>.toml and " +
      "schemas/<name>.schema.json (documentation is ignored: *.md, LICENSE*, and names starting " +
      "with .)",
    ],
  },
  "context contract type conflict": {
    changes: {
      "qualifiers/large-accounts.toml": qualifier(
        'attribute = "account.plan"\nop = "gte"\nvalue = 3',
      ),
    },
    expect: [
      'qualifiers/large-accounts.toml: predicate[0].attribute: "account.plan" is compared as number ' +
      "here but as string in qualifiers/enterprise-accounts.toml (predicate[0].attribute); the " +
      "context contract needs one type",
    ],
  },
};

for (const [kind, { changes, expect }] of Object.entries(KINDS)) {
  Deno.test(`cfgtool lint reports: ${kind}`, async () => {
    const dir = await exampleCopy(changes);
    const r = await cfgtool(["lint", "."], dir);
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "");
    const n = expect.length;
    assertEquals(lines(r.stderr), [...expect, `${n} problem${n === 1 ? "" : "s"} found`]);
  });
}

/** Deno's own cache, kept when $XDG_CACHE_HOME (its default parent) changes. */
const DENO_DIR: string = JSON.parse(
  new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
      .output())
      .stdout,
  ),
).denoDir;

/** A fresh $XDG_CACHE_HOME, and where cfgtool keeps schema verdicts under it. */
async function freshCache(): Promise<{ env: Record<string, string>; dir: string }> {
  const xdg = await Deno.makeTempDir();
  return { env: { XDG_CACHE_HOME: xdg, DENO_DIR }, dir: `${xdg}/cfgtool/schema-verdicts` };
}

/** The record file a workspace state is looked up by. */
async function recordFor(cacheDir: string, workspace: string): Promise<string> {
  return `${cacheDir}/${(await workspaceFingerprint(workspace)).slice("sha256:".length)}.json`;
}

Deno.test("cfgtool resolve remembers Ajv's verdicts under $XDG_CACHE_HOME and answers alike from them", async () => {
  const cache = await freshCache();
  const dir = await exampleCopy();
  const args = ["resolve", dir, "--variable", VARIABLE, "--context", "account.plan=enterprise"];
  const first = await runCfgtool(args, { env: cache.env });
  const record = await recordFor(cache.dir, dir);
  assertEquals(JSON.parse(await Deno.readTextFile(record)).format, "cfgtool-schema-verdicts/1");
  const second = await runCfgtool(args, { env: cache.env });
  assertEquals(second, first);
  assertEquals(first.code, 0);
  assertEquals(lines(first.stdout)[0], "value key: default");
});

Deno.test("cfgtool resolve never resolves a workspace whose schemas or entries fail, whatever the cache holds", async () => {
  const cache = await freshCache();
  const clean = await exampleCopy();
  assertEquals((await runCfgtool(["resolve", clean, "--variable", VARIABLE], cache)).code, 0);
  const cleanRecord = await Deno.readTextFile(await recordFor(cache.dir, clean));
  const kinds = [
    "entry violates the catalog schema",
    "schema file is not valid JSON",
    "schema file is not a valid JSON Schema",
    "missing schema file",
  ];
  const plants: Record<string, string | null> = {
    "no record": null,
    "the clean state's record": cleanRecord,
    "a truncated record": cleanRecord.slice(0, cleanRecord.length / 2),
  };
  for (const kind of kinds) {
    const { changes, expect } = KINDS[kind]!;
    const dir = await exampleCopy(changes);
    const n = expect.length;
    const want = [...expect, `${n} problem${n === 1 ? "" : "s"} found`];
    assertEquals(lines((await cfgtool(["lint", "."], dir)).stderr), want);
    for (const [plant, text] of Object.entries(plants)) {
      if (text !== null) {
        await Deno.mkdir(cache.dir, { recursive: true });
        await Deno.writeTextFile(await recordFor(cache.dir, dir), text);
      }
      const r = await runCfgtool(["resolve", ".", "--variable", VARIABLE], { ...cache, cwd: dir });
      assertEquals([r.code, r.stdout], [1, ""], `${kind}, ${plant}`);
      assertEquals(lines(r.stderr), want, `${kind}, ${plant}`);
    }
  }
});

Deno.test("cfgtool lint reports several problems at once, sorted by file", async () => {
  const dir = await exampleCopy({
    ...KINDS["malformed TOML"]!.changes,
    ...KINDS["default names no entry"]!.changes,
    ...KINDS["entry violates the catalog schema"]!.changes,
    ...KINDS["file in an unexpected place"]!.changes,
  });
  const r = await cfgtool(["lint", "."], dir);
  assertEquals(r.code, 1);
  assertEquals(lines(r.stderr), [
    ...KINDS["entry violates the catalog schema"]!.expect,
    ...KINDS["file in an unexpected place"]!.expect,
    ...KINDS["malformed TOML"]!.expect,
    ...KINDS["default names no entry"]!.expect,
    "5 problems found",
  ]);
});

Deno.test("cfgtool init writes a workspace that lints clean and resolves", async () => {
  const cwd = await Deno.makeTempDir();
  const c = await cfgtool(["init", "ws", "--catalog", "delivery"], cwd);
  assertEquals(c.code, 0);
  assertEquals(lines(c.stdout), [
    "wrote catalogs/delivery.toml",
    "wrote schemas/delivery.schema.json",
    "wrote catalogs/delivery-entries/default.toml",
    "wrote schemas/context.schema.json",
  ]);
  const v = await cfgtool([
    "init",
    "ws",
    "--variable",
    "delivery-policy",
    "--type",
    "catalog:delivery",
  ], cwd);
  assertEquals(v.code, 0);
  assertEquals(lines(v.stdout), ["wrote variables/delivery-policy.toml"]);
  await writeTree(`${cwd}/ws`, {
    "qualifiers/beta.toml": qualifier('attribute = "user.beta"\nop = "eq"\nvalue = true'),
  });
  const ctx = await cfgtool(["init", "ws", "--context"], cwd);
  assertEquals(lines(ctx.stdout), ["wrote schemas/context.schema.json"]);
  const again = await cfgtool(["init", "ws", "--context"], cwd);
  assertEquals(lines(again.stdout), ["unchanged schemas/context.schema.json"]);
  const lint = await cfgtool(["lint", "ws"], cwd);
  assertEquals(lint.code, 0);
  assertEquals(lint.stdout, "ok: 1 variable, 1 catalog, 1 entry, 1 qualifier\n");
  const r = await cfgtool(["resolve", "ws", "--variable", "delivery-policy"], cwd);
  assertEquals(r.stdout, 'value key: default\nvalue: {"enabled":false}\n');
});

Deno.test("cfgtool init refuses to overwrite existing files", async () => {
  const dir = await exampleCopy();
  const before = await Deno.readTextFile(`${dir}/${V}`);
  const r = await cfgtool(["init", dir, "--variable", VARIABLE]);
  assertEquals(r.code, 1);
  assertEquals(r.stderr, `error: ${V} already exists; init never overwrites files\n`);
  assertEquals(await Deno.readTextFile(`${dir}/${V}`), before);
  const c = await cfgtool(["init", dir, "--catalog", "notification-delivery-policy"]);
  assertEquals(c.code, 1);
  assertStringIncludes(c.stderr, "already exist; init never overwrites files");
});

Deno.test("cfgtool init: usage errors exit 2", async () => {
  const none = await cfgtool(["init", "ws"]);
  assertEquals(none.code, 2);
  assertEquals(none.stderr, "error: init needs --variable <name>, --catalog <name> or --context\n");
  const bad = await cfgtool(["init", "ws", "--variable", "x", "--type", "string"]);
  assertEquals(bad.code, 2);
  assertEquals(bad.stderr, 'error: --type "string" must be catalog:<catalog_name>\n');
  const missing = await cfgtool(["init", "nowhere", "--context"]);
  assertEquals(missing.code, 2);
});

Deno.test("cfgtool --help documents the workspace commands with examples", async () => {
  for (const cmd of ["init", "lint", "resolve"]) {
    const r = await cfgtool([cmd, "--help"]);
    assertEquals(r.code, 0);
    assertStringIncludes(r.stdout, `Usage: cfgtool ${cmd}`);
    assertStringIncludes(r.stdout, "Examples:");
    assertStringIncludes(r.stdout, "Exit status:");
  }
});

Deno.test("cfgtool resolve suggests the nearest variable name for an unknown one", async () => {
  const r = await cfgtool(["resolve", EXAMPLE_DIR, "--variable", "notification-delivery-polcy"]);
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  assertEquals(
    r.stderr,
    'error: no variable "notification-delivery-polcy" in the workspace; did you mean ' +
      '"notification-delivery-policy"?\n',
  );
});

Deno.test("cfgtool lint prints problem paths relative to the current directory", async () => {
  const dir = await exampleCopy({ [SCHEMA]: null });
  const parent = dir.slice(0, dir.lastIndexOf("/"));
  const name = dir.slice(dir.lastIndexOf("/") + 1);
  const problem = `schema: schema file ${SCHEMA} does not exist; entries cannot be checked`;
  const fromParent = await cfgtool(["lint", name], parent);
  assertEquals(lines(fromParent.stderr), [`${name}/${CAT}: ${problem}`, "1 problem found"]);
  const fromSibling = await cfgtool(["lint", dir], await Deno.makeTempDir());
  assertEquals(lines(fromSibling.stderr)[0], `../${name}/${CAT}: ${problem}`);
  const inside = await cfgtool(["lint", "."], dir);
  assertEquals(lines(inside.stderr)[0], `${CAT}: ${problem}`);
  const fromBelow = await cfgtool(["lint", ".."], `${dir}/variables`);
  assertEquals(lines(fromBelow.stderr)[0], `../${CAT}: ${problem}`);
  const resolve = await cfgtool(["resolve", name, "--variable", VARIABLE], parent);
  assertEquals(lines(resolve.stderr)[0], `${name}/${CAT}: ${problem}`);
});

Deno.test("cfgtool lint --json prints ok, problems, summary, workspace and counts", async () => {
  const ok = await cfgtool(["lint", EXAMPLE_DIR, "--json"]);
  assertEquals(ok.code, 0);
  assertEquals(ok.stderr, "");
  assertEquals(lines(ok.stdout).length, 1);
  assertEquals(JSON.parse(ok.stdout), {
    ok: true,
    problems: [],
    summary: "ok: 1 variable, 1 catalog, 3 entries, 5 qualifiers",
    workspace: EXAMPLE_DIR,
    counts: { variables: 1, catalogs: 1, entries: 3, qualifiers: 5 },
  });
});

Deno.test("cfgtool lint --json lists every problem with path, line, column, key; exit 1", async () => {
  const dir = await exampleCopy({
    ...KINDS["malformed TOML"]!.changes,
    ...KINDS["default names no entry"]!.changes,
  });
  const r = await cfgtool(["lint", ".", "--json"], dir);
  assertEquals(r.code, 1);
  assertEquals(r.stderr, "error: 2 problems found (listed in the JSON on stdout)\n");
  const out = JSON.parse(r.stdout);
  assertEquals(out.ok, false);
  assertEquals(out.summary, "2 problems found");
  assertEquals(out.problems, [
    {
      path: "qualifiers/incident-updates.toml",
      line: 3,
      column: 9,
      message: 'invalid TOML: unterminated string: close it on the same line ("""…""" strings ' +
        "may span lines)",
    },
    {
      path: V,
      key: "resolve.default",
      message: 'no entry "weekly" in catalog "notification-delivery-policy"',
    },
  ]);
  for (const p of out.problems) {
    assertEquals(Object.keys(p)[0], "path");
    assertEquals(Object.keys(p).at(-1), "message");
  }
});

Deno.test("cfgtool lint --json on a missing workspace exits 2 with nothing on stdout", async () => {
  const r = await cfgtool(["lint", "/nonexistent/cfgtool-ws", "--json"]);
  assertEquals(r.code, 2);
  assertEquals(r.stdout, "");
  assertStringIncludes(r.stderr, "does not exist");
});

Deno.test("cfgtool init --json lists the files written", async () => {
  const cwd = await Deno.makeTempDir();
  const r = await cfgtool(["init", "ws", "--catalog", "delivery", "--json"], cwd);
  assertEquals(r.code, 0);
  assertEquals(r.stderr, "");
  assertEquals(JSON.parse(r.stdout), {
    ok: true,
    problems: [],
    summary: "wrote 4 files, 0 unchanged",
    workspace: "ws",
    written: [
      "catalogs/delivery.toml",
      "schemas/delivery.schema.json",
      "catalogs/delivery-entries/default.toml",
      "schemas/context.schema.json",
    ],
    unchanged: [],
    notes: [],
  });
});

Deno.test("cfgtool init --json reports files that exist as problems, exit 1", async () => {
  const cwd = await Deno.makeTempDir();
  await cfgtool(["init", "ws", "--catalog", "delivery"], cwd);
  const r = await cfgtool(["init", "ws", "--catalog", "delivery", "--json"], cwd);
  assertEquals(r.code, 1);
  const out = JSON.parse(r.stdout);
  assertEquals(out.ok, false);
  assertEquals(out.written, []);
  assertEquals(out.problems, [
    { path: "ws/catalogs/delivery.toml", message: "already exists; init never overwrites files" },
    {
      path: "ws/schemas/delivery.schema.json",
      message: "already exists; init never overwrites files",
    },
    {
      path: "ws/catalogs/delivery-entries/default.toml",
      message: "already exists; init never overwrites files",
    },
  ]);
  const usage = await cfgtool(["init", "ws", "--json"], cwd);
  assertEquals(usage.code, 2);
  assertEquals(usage.stdout, "");
});

Deno.test("cfgtool init --json --context reports qualifier problems with their paths", async () => {
  const dir = await exampleCopy(KINDS["context contract type conflict"]!.changes);
  const r = await cfgtool(["init", ".", "--context", "--json"], dir);
  assertEquals(r.code, 1);
  const out = JSON.parse(r.stdout);
  assertEquals(out.problems.length, 1);
  assertEquals(out.problems[0].path, "qualifiers/large-accounts.toml");
  assertEquals(out.problems[0].key, "predicate[0].attribute");
});

Deno.test("cfgtool lint ignores README.md, LICENSE and dot-files; the fingerprint is unchanged", async () => {
  const dir = await exampleCopy();
  const args = ["resolve", dir, "--variable", VARIABLE, "--json"];
  const before = JSON.parse((await cfgtool(args)).stdout).source_fingerprint;
  await writeTree(dir, {
    "README.md": "# Notification delivery\n\nReviewed by the messaging team.\n",
    "LICENSE": "MIT\n",
    "catalogs/README.md": "One entry per delivery mode.\n",
    ".editorconfig": "root = true\n",
  });
  const lint = await cfgtool(["lint", dir]);
  assertEquals(lint.code, 0);
  assertEquals(lint.stderr, "");
  assertEquals(lint.stdout, "ok: 1 variable, 1 catalog, 3 entries, 5 qualifiers\n");
  const after = JSON.parse((await cfgtool(args)).stdout).source_fingerprint;
  assertEquals(after, before);
});

Deno.test("cfgtool lint still refuses any other unexpected file and says what a workspace holds", async () => {
  const dir = await exampleCopy({ "notes.txt": "todo\n", "README.md": "# ok\n" });
  const r = await cfgtool(["lint", "."], dir);
  assertEquals(r.code, 1);
  assertEquals(lines(r.stderr), [
    "notes.txt: unexpected file: a workspace holds only variables/<name>.toml, " +
    "catalogs/<name>.toml, catalogs/<catalog>-entries/<key>.toml, qualifiers/<name>.toml and " +
    "schemas/<name>.schema.json (documentation is ignored: *.md, LICENSE*, and names starting " +
    "with .)",
    "1 problem found",
  ]);
});

Deno.test("each workspace command's --help describes its own exit status", async () => {
  const help = async (cmd: string) => {
    const r = await cfgtool([cmd, "--help"]);
    assertEquals(r.code, 0);
    return r.stdout.slice(r.stdout.indexOf("Exit status:")).replace(/\s+/g, " ");
  };
  const init = await help("init");
  assertStringIncludes(init, "1 a file to create already exists");
  assert(!init.includes("resolv"), init);
  assert(!init.includes("lint problems"), init);
  const lint = await help("lint");
  assertStringIncludes(lint, "0 no problems; 1 problems found");
  assert(!lint.includes("variable"), lint);
  const resolve = await help("resolve");
  assertStringIncludes(resolve, "1 unknown variable");
});
