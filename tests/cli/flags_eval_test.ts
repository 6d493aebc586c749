import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

const EXAMPLE = new URL("../../examples/flags", import.meta.url).pathname;

type Run = CliResult;

function cfgtool(...args: string[]): Promise<Run> {
  return runCfgtool(args);
}

Deno.test("flags eval prints one flag with value, variation, reason and rule", async () => {
  const r = await cfgtool(
    "flags",
    "eval",
    EXAMPLE,
    "--env",
    "production",
    "--flag",
    "new-checkout",
    "--context",
    "user.email=ann@example.com",
  );
  assertEquals([r.code, r.stdout, r.stderr], [
    0,
    "new-checkout: true (on, TARGETING_MATCH, rule 0)\n",
    "",
  ]);
});

Deno.test("flags eval --all prints every flag in key order", async () => {
  const r = await cfgtool(
    "flags",
    "eval",
    EXAMPLE,
    "--env",
    "staging",
    "--all",
    "--context",
    "account.plan=pro",
    "--context",
    "user_agent=Trident/7.0",
  );
  assertEquals(r.code, 0, r.stderr);
  assertEquals(r.stdout.trimEnd().split("\n"), [
    'checkout-theme: "classic" (classic, DEFAULT)',
    "max-cart-items: 50 (standard, DISABLED)",
    "new-checkout: false (off, TARGETING_MATCH, rule 0)",
    'payment-banner: {"show":false} (none, DEFAULT)',
    'search-ranking: "bm25" (bm25, DEFAULT)',
  ]);
});

Deno.test("flags eval reports a SPLIT with the rule index and is sticky", async () => {
  const args = ["flags", "eval", EXAMPLE, "--env", "production", "--flag", "search-ranking"];
  const a = await cfgtool(...args, "--context", "account.id=acct-42");
  const b = await cfgtool(...args, "--context", "account.id=acct-42", "--context", "x=1");
  assertEquals(a.code, 0, a.stderr);
  assert(
    /^search-ranking: "(bm25|hybrid|semantic)" \((bm25|hybrid|semantic), SPLIT, rule 0\)\n$/.test(
      a.stdout,
    ),
    a.stdout,
  );
  assertEquals(a.stdout, b.stdout);
});

Deno.test("flags eval --json prints the result object, --all the record", async () => {
  const one = await cfgtool(
    "flags",
    "eval",
    EXAMPLE,
    "--env",
    "production",
    "--flag",
    "max-cart-items",
    "--json",
    "--context",
    "account.plan=enterprise",
  );
  assertEquals(one.code, 0, one.stderr);
  assertEquals(JSON.parse(one.stdout), {
    flag: "max-cart-items",
    value: 200,
    variation: "large",
    reason: "TARGETING_MATCH",
    rule_index: 0,
    version: 0,
  });
  const all = await cfgtool("flags", "eval", EXAMPLE, "--env", "production", "--all", "--json");
  assertEquals(all.code, 0, all.stderr);
  const parsed = JSON.parse(all.stdout);
  assertEquals(Object.keys(parsed), [
    "checkout-theme",
    "max-cart-items",
    "new-checkout",
    "payment-banner",
    "search-ranking",
  ]);
  assertEquals(parsed["payment-banner"].value, { show: false });
});

Deno.test("flags eval parses --context literals like resolve", async () => {
  // "true" quoted is a string, so the boolean beta_opt_in predicate does not hold.
  const args = ["flags", "eval", EXAMPLE, "--env", "production", "--flag", "new-checkout"];
  const boolean = await cfgtool(...args, "--context", "user.beta_opt_in=true");
  assertEquals(boolean.stdout, "new-checkout: true (on, TARGETING_MATCH, rule 0)\n");
  const quoted = await cfgtool(...args, "--context", 'user.beta_opt_in="true"');
  assertEquals(quoted.stdout, "new-checkout: false (off, DEFAULT)\n");
  const bad = await cfgtool(...args, "--context", "novalue");
  assertEquals(bad.code, 2);
  assertStringIncludes(bad.stderr, "must be <dotted.path>=<value>");
});

Deno.test("flags eval exits 1 for an unknown flag and 2 for usage errors", async () => {
  const nf = await cfgtool("flags", "eval", EXAMPLE, "--env", "production", "--flag", "nope");
  assertEquals(nf.code, 1);
  assertEquals(nf.stdout, 'nope: null (ERROR, FLAG_NOT_FOUND: flag "nope" does not exist)\n');
  assertStringIncludes(nf.stderr, 'flag "nope" does not exist');
  assert(!nf.stderr.includes("did you mean"), nf.stderr);

  const typo = await cfgtool(
    "flags",
    "eval",
    EXAMPLE,
    "--env",
    "production",
    "--flag",
    "new-chekout",
  );
  assertEquals(typo.code, 1);
  assertEquals(
    typo.stderr,
    'error: flag "new-chekout" does not exist; did you mean "new-checkout"?\n',
  );

  const env = await cfgtool("flags", "eval", EXAMPLE, "--env", "prod", "--all");
  assertEquals(env.code, 2);
  assertStringIncludes(
    env.stderr,
    'unknown environment "prod" (namespace.toml declares production, staging)',
  );

  const neither = await cfgtool("flags", "eval", EXAMPLE, "--env", "production");
  assertEquals(neither.code, 2);
  assertStringIncludes(neither.stderr, "exactly one of --flag <key> and --all");
  const both = await cfgtool(
    "flags",
    "eval",
    EXAMPLE,
    "--env",
    "production",
    "--all",
    "--flag",
    "x",
  );
  assertEquals(both.code, 2);

  const noEnv = await cfgtool("flags", "eval", EXAMPLE, "--all");
  assertEquals(noEnv.code, 2);
  assertStringIncludes(noEnv.stderr, "--env");

  const noDir = await cfgtool("flags", "eval", "/nonexistent-cfgtool-dir", "--env", "p", "--all");
  assertEquals(noDir.code, 2);
});

Deno.test("flags eval refuses an invalid manifest with its problems", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool_flags_eval_" });
  try {
    await Deno.mkdir(`${dir}/flags`);
    await Deno.writeTextFile(
      `${dir}/namespace.toml`,
      "schema_version = 1\n[namespace.environments.p]\n",
    );
    await Deno.writeTextFile(
      `${dir}/flags/a.toml`,
      'schema_version = 1\ntype = "boolean"\ndefault = "of"\n[variations]\non = true\n',
    );
    const r = await cfgtool("flags", "eval", dir, "--env", "p", "--all");
    assertEquals(r.code, 1);
    assertStringIncludes(r.stderr, 'flags/a.toml: default: unknown variation "of"');
    assertEquals(r.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("flags eval applies before and after to --context date-times; flags lint refuses bad ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool_flags_eval_" });
  try {
    await Deno.mkdir(`${dir}/flags`);
    await Deno.mkdir(`${dir}/segments`);
    await Deno.writeTextFile(
      `${dir}/namespace.toml`,
      "schema_version = 1\n[namespace.environments.production]\n",
    );
    await Deno.writeTextFile(
      `${dir}/flags/welcome-tour.toml`,
      'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
        '[[rule]]\nsegment = "new-users"\nvariation = "on"\n',
    );
    const segment = (value: string) =>
      'schema_version = 1\n[[predicate]]\nattribute = "user.created_at"\nop = "after"\n' +
      `value = ${value}\n`;
    await Deno.writeTextFile(`${dir}/segments/new-users.toml`, segment('"2026-01-01T00:00:00Z"'));
    const args = ["flags", "eval", dir, "--env", "production", "--flag", "welcome-tour"];
    const cases: [string, string][] = [
      ["2026-03-01T09:30:00+01:00", "welcome-tour: true (on, TARGETING_MATCH, rule 0)\n"],
      ["2026-01-02", "welcome-tour: true (on, TARGETING_MATCH, rule 0)\n"],
      ["2026-01-01T01:00:00+01:00", "welcome-tour: false (off, DEFAULT)\n"], // the same instant
      ["2025-12-31T23:59:59Z", "welcome-tour: false (off, DEFAULT)\n"],
      ["2026-03-01T09:30:00", "welcome-tour: false (off, DEFAULT)\n"], // no zone
    ];
    for (const [at, out] of cases) {
      const r = await cfgtool(...args, "--context", `user.created_at=${at}`);
      assertEquals([r.code, r.stdout, r.stderr], [0, out, ""], at);
    }

    await Deno.writeTextFile(`${dir}/segments/new-users.toml`, segment('"2026-01-01 00:00"'));
    const lint = await cfgtool("flags", "lint", dir);
    assertEquals(lint.code, 1);
    assertStringIncludes(
      lint.stderr,
      'segments/new-users.toml: predicate[0].value: after takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", or a date such as "2026-01-01" (midnight UTC)\n',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
