/**
 * The per-evaluation `matches` budget through a real server: a manifest of
 * 2,000 segments with a hostile pattern, one flag each, evaluated for a
 * long value through `evaluate/all` and OFREP bulk, answers correctly while
 * the server keeps answering `/healthz`.
 */
import { assert, assertEquals } from "../assert.ts";
import { type Installation, withReadableNamespace } from "./installation.ts";
import { MAX_MATCH_INPUT } from "../../lib/linear_regex.ts";

const BASE = "/api/v1/tenants/acme/namespaces/web";
const NS = "schema_version = 1\n[namespace.environments.production]\n";
const FLAG = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;
const OFREP_HEADERS = {
  "x-cfgtool-tenant": "acme",
  "x-cfgtool-namespace": "web",
  "x-cfgtool-environment": "production",
};

/** 2,000 segments `user.s matches <pattern(i)>`, flag f0000 on segment s0000, and so on. */
function hostile(pattern: (i: number) => string): Record<string, string> {
  const files: Record<string, string> = { "namespace.toml": NS };
  for (let i = 0; i < 2000; i++) {
    const n = String(i).padStart(4, "0");
    files[`segments/s${n}.toml`] =
      `schema_version = 1\n[[predicate]]\nattribute = "user.s"\nop = "matches"\nvalue = ${
        JSON.stringify(pattern(i))
      }\n`;
    files[`flags/f${n}.toml`] = FLAG + `[[rule]]\nsegment = "s${n}"\nvariation = "on"\n`;
  }
  return files;
}

async function push(inst: Installation, files: Record<string, string>): Promise<void> {
  const put = await inst.api("PUT", `${BASE}/manifest`, inst.admin, { files });
  assert(put.status === 200 || put.status === 201, JSON.stringify(put.body).slice(0, 500));
}

/** Runs evaluate/all for `context` and a /healthz request beside it; both must succeed. */
async function evaluateAllBesideHealthz(
  inst: Installation,
  read: string,
  context: unknown,
): Promise<boolean[]> {
  const [all, health] = await Promise.all([
    inst.api("POST", `${BASE}/environments/production/evaluate/all`, read, { context }),
    inst.api("GET", "/healthz", null),
  ]);
  assertEquals(all.status, 200, JSON.stringify(all.body).slice(0, 500));
  assertEquals(health.status, 200);
  const flags = all.body.flags as Record<string, { value: boolean }>;
  const keys = Object.keys(flags).sort();
  assertEquals(keys.length, 2000);
  return keys.map((k) => flags[k]!.value);
}

Deno.test("2,000 hostile matches segments: evaluate/all answers by the budget rules beside /healthz", async (t) => {
  await withReadableNamespace(async (inst, read) => {
    await t.step("one pattern in every segment: a 32 KB value matches nowhere", async () => {
      await push(inst, hostile(() => "^(a|b)*$"));
      // Just under the 32 KiB context limit.
      const big = await evaluateAllBesideHealthz(inst, read, {
        user: { s: "ab".repeat(16_350) },
      });
      assert(big.every((v) => v === false), "a value over 4096 characters does not match");
    });

    await t.step("one pattern in every segment: a 4 KiB value matches everywhere", async () => {
      const values = await evaluateAllBesideHealthz(inst, read, {
        user: { s: "ab".repeat(MAX_MATCH_INPUT / 2) },
      });
      assert(values.every((v) => v === true), "the pattern is tried once and its answer reused");
    });

    await t.step("distinct patterns: flags past the budget do not match", async () => {
      await push(inst, hostile((i) => `^(a|b)*(x${i})?$`));
      const context = { user: { s: "ab".repeat(MAX_MATCH_INPUT / 2) } };
      const values = await evaluateAllBesideHealthz(inst, read, context);
      const first = values.indexOf(false);
      assert(first > 0, "flags within the budget match");
      assert(values.slice(first).every((v) => v === false), "flags past the budget do not match");
      const ofrep = await inst.api(
        "POST",
        "/ofrep/v1/evaluate/flags",
        read,
        { context },
        OFREP_HEADERS,
      );
      assertEquals(ofrep.status, 200, JSON.stringify(ofrep.body).slice(0, 500));
      const on = (ofrep.body.flags as { key: string; value: boolean }[])
        .filter((f) => f.value).map((f) => f.key).sort();
      assertEquals(on.length, first);
      // A single evaluation has a budget of its own: the last flag matches.
      const one = await inst.api("POST", `${BASE}/environments/production/evaluate`, read, {
        flag: "f1999",
        context,
      });
      assertEquals([one.status, one.body.value], [200, true]);
    });
  });
});
