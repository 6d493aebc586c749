/**
 * `cfgtool export --to flagd` then `import --from flagd`: the flags that
 * have no rollout evaluate alike on sample contexts, in each environment;
 * what cannot be exported is reported.
 */
import { assert, assertEquals } from "../assert.ts";
import { readManifestDir } from "../../lib/flags/files.ts";
import { parseManifest } from "../../lib/flags/validate.ts";
import { compileManifest, evaluateFlag } from "../../lib/flags/evaluate.ts";
import { exportFlagd } from "../../lib/import/export_flagd.ts";
import { importFlagd } from "../../lib/import/flagd.ts";
import { modelOf } from "./evaluate.ts";

const manifest = parseManifest(
  await readManifestDir(new URL("../../examples/flags", import.meta.url).pathname),
);
const original = compileManifest(manifest, 0);

/** Contexts that reach every kind of predicate of the examples, with and without each attribute. */
function contexts(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{}];
  for (const email of [undefined, "ann@example.com", "bo@else.test"]) {
    for (const plan of [undefined, "pro", "free"]) {
      for (const country of [undefined, "DE", "US"]) {
        for (const version of [undefined, "4.3.0", "4.1.0"]) {
          out.push({
            targeting_key: `u-${out.length}`,
            user: {
              ...(email ? { email } : {}),
              role: out.length % 3 === 0 ? "employee" : "guest",
              beta_opt_in: out.length % 2 === 0,
            },
            account: {
              ...(plan ? { plan } : {}),
              ...(country ? { country } : {}),
              holiday_orders: out.length % 4,
            },
            app: { platform: out.length % 2 ? "ios" : "web", ...(version ? { version } : {}) },
          });
        }
      }
    }
  }
  return out;
}

for (const env of Object.keys(manifest.namespace.environments)) {
  Deno.test(`export to flagd and import back: flags without a rollout evaluate alike in ${env}`, () => {
    const exported = exportFlagd(manifest, env);
    const back = importFlagd(exported.text, {
      file: "flags.json",
      envMap: new Map([["default", env]]),
    });
    const model = modelOf(back);
    const left = new Set(
      exported.items.filter((i) => i.kind === "flag" && i.unmapped.length > 0).map((i) => i.key),
    );
    let compared = 0;
    for (const flag of Object.values(manifest.flags)) {
      const rules = flag.environments[env]?.rules ?? flag.rules;
      if (rules.some((r) => r.rollout !== undefined) || left.has(flag.key)) continue;
      for (const ctx of contexts()) {
        const a = evaluateFlag(original, env, flag.key, ctx);
        const b = evaluateFlag(model, env, flag.key, ctx);
        assertEquals(b.value, a.value, `${flag.key} ${JSON.stringify(ctx)}`);
        compared++;
      }
    }
    assert(compared > 100, `only ${compared} evaluations compared`);
  });
}

Deno.test("export to flagd: matches has no flagd operator; the rule is left out and reported", () => {
  const exported = exportFlagd(manifest, "staging");
  const doc = JSON.parse(exported.text);
  const reported = exported.items.filter((i) => i.unmapped.length > 0);
  assert(
    reported.some((i) => i.unmapped.some((u) => u.why.includes("matches"))),
    JSON.stringify(reported),
  );
  assertEquals(doc.$schema, "https://flagd.dev/schema/v0/flags.json");
  const production = exportFlagd(manifest, "production");
  const rollout = production.items.find((i) => i.key === "new-checkout")!;
  assert(rollout.notes.some((n) => n.includes("hashes differently")));
});
