/**
 * `cfgtool resolve` reads plain TOML without smol-toml and leaves the rest to
 * it (lib/workspace/toml_reader.ts): a workspace with a file that is not
 * plain TOML resolves the same, first (schemas checked by Ajv) and again
 * (from the schema verdicts recorded by the first run, where the plain
 * reader meets the file first), and a syntax error is worded as everywhere
 * else.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";
import { parseToml } from "../../lib/toml.ts";

const EXAMPLE = new URL("../../examples/notification-workspace", import.meta.url).pathname;
const VARIABLE = "variables/notification-delivery-policy.toml";

/** A copy of the worked example with `VARIABLE` edited, and an empty verdict cache. */
async function copyWith(
  edit: (text: string) => string,
): Promise<{ dir: string; env: Record<string, string>; text: string }> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-resolve-toml-" });
  await new Deno.Command("cp", { args: ["-r", `${EXAMPLE}/.`, `${dir}/ws`] }).output();
  const before = await Deno.readTextFile(`${dir}/ws/${VARIABLE}`);
  const text = edit(before);
  if (text === before) throw new Error(`${VARIABLE} no longer has the expected text`);
  await Deno.writeTextFile(`${dir}/ws/${VARIABLE}`, text);
  return { dir, env: { XDG_CACHE_HOME: `${dir}/cache` }, text };
}

const ARGS = [
  "--variable",
  "notification-delivery-policy",
  "--context",
  "notification.kind=security_alert",
  "--context",
  "account.plan=standard",
];

Deno.test("resolve: a workspace file that is not plain TOML resolves, with and without cached verdicts", async () => {
  // a multi-line string is read by the full reader only
  const { dir, env } = await copyWith((t) =>
    t.replace(/^description = "(.*)"$/m, 'description = """\n$1"""')
  );
  try {
    for (const run of ["first", "cached"]) {
      const r = await runCfgtool(["resolve", `${dir}/ws`, ...ARGS], { env });
      assertEquals(r.code, 0, `${run}: ${r.stderr}`);
      assertEquals(r.stdout.split("\n")[0], "value key: immediate-security", run);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolve: a TOML syntax error is worded by the full reader", async () => {
  const good = await copyWith((t) => t.replace("# Rules are evaluated", "# rules are evaluated"));
  try {
    // records the verdicts of the valid workspace, then breaks one file
    const ok = await runCfgtool(["resolve", `${good.dir}/ws`, ...ARGS], { env: good.env });
    assertEquals(ok.code, 0, ok.stderr);
    const broken = good.text.replace('default = "default"', 'default = "default');
    await Deno.writeTextFile(`${good.dir}/ws/${VARIABLE}`, broken);
    const want = parseToml(broken, VARIABLE);
    if (want.ok) throw new Error("the edit should break the file");
    const r = await runCfgtool(["resolve", `${good.dir}/ws`, ...ARGS], { env: good.env });
    assertEquals(r.code, 1, r.stderr);
    assertStringIncludes(r.stderr, want.problem.message);
    assertStringIncludes(r.stderr, `${VARIABLE}:${want.problem.line}:${want.problem.column}`);
  } finally {
    await Deno.remove(good.dir, { recursive: true });
  }
});
