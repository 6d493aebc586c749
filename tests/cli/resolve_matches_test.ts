/**
 * `cfgtool resolve` loads the `matches` engine only for a workspace that
 * uses it (a plain `resolve` defers it): a workspace whose qualifier uses
 * `matches`, written plainly or with a TOML `\u` escape, still resolves.
 */
import { assertEquals } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";

const EXAMPLE = new URL("../../examples/notification-workspace", import.meta.url).pathname;
const QUALIFIER = "qualifiers/security-alerts.toml";

async function copyWithMatches(op: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-resolve-matches-" });
  await new Deno.Command("cp", { args: ["-r", `${EXAMPLE}/.`, dir] }).output();
  const text = await Deno.readTextFile(`${dir}/${QUALIFIER}`);
  const changed = text.replace('op = "eq"', `op = "${op}"`)
    .replace('value = "security_alert"', 'value = "^security_al[e]rt$"');
  if (changed === text) throw new Error(`${QUALIFIER} no longer has the expected predicate`);
  await Deno.writeTextFile(`${dir}/${QUALIFIER}`, changed);
  return dir;
}

async function valueKey(dir: string, kind: string): Promise<string> {
  const r = await runCfgtool([
    "resolve",
    dir,
    "--variable",
    "notification-delivery-policy",
    "--context",
    `notification.kind=${kind}`,
    "--context",
    "account.plan=standard",
  ]);
  assertEquals(r.code, 0, r.stderr);
  return r.stdout.split("\n")[0]!;
}

for (const [name, op] of [["plain", "matches"], ["escaped", "m\\u0061tches"]]) {
  Deno.test(`resolve: a workspace with a ${name} matches predicate resolves`, async () => {
    const dir = await copyWithMatches(op!);
    try {
      assertEquals(await valueKey(dir, "security_alert"), "value key: immediate-security");
      const other = await valueKey(dir, "security_alerts");
      assertEquals(other === "value key: immediate-security", false, other);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
