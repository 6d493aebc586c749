/**
 * `cfgtool import --from launchdarkly`: flags and segments shaped as
 * LaunchDarkly's REST API returns them (a flag list `{"items": […]}` of
 * FeatureFlag objects with per-environment FeatureFlagConfig; segment
 * lists per environment) are imported, pass lint, and evaluate sample
 * contexts as LaunchDarkly's evaluation defines; the report lists what
 * was not mapped. A property test imports random flags.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { importLaunchDarkly } from "../../lib/import/launchdarkly.ts";
import { ImportError } from "../../lib/import/errors.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { filesOf } from "../../lib/flags/authoring/mod.ts";
import { evaluateFlag } from "../../lib/flags/evaluate.ts";
import { item, modelOf, reportOf, rng } from "./evaluate.ts";

const FIXTURE = new URL("./fixtures/launchdarkly/export.json", import.meta.url);

function imported(text: string, envMap = new Map<string, string>()) {
  const out = importLaunchDarkly(text, { file: "export.json", envMap });
  const model = modelOf(out);
  const value = (flag: string, env: string, ctx: Record<string, unknown>) =>
    evaluateFlag(model, env, flag, ctx).value;
  return { out, value, model };
}

Deno.test("launchdarkly: the documented flags and segments import, lint clean and evaluate as LaunchDarkly does", async () => {
  const { value, model } = imported(await Deno.readTextFile(FIXTURE));
  // Individual targets come before rules: user-1 gets On even outside DE/FR.
  assertEquals(
    value("new-checkout", "production", { targeting_key: "user-1", country: "US" }),
    true,
  );
  // segmentMatch beta-testers: included keys, or the rule (email endsWith) unless excluded.
  assertEquals(value("new-checkout", "production", { targeting_key: "user-vip" }), true);
  assertEquals(
    value("new-checkout", "production", { targeting_key: "u9", email: "a@example.com" }),
    true,
  );
  assertEquals(
    value("new-checkout", "production", { targeting_key: "user-banned", email: "b@example.com" }),
    false,
  );
  // Fallthrough: variation Off.
  assertEquals(value("new-checkout", "production", { targeting_key: "u9", country: "US" }), false);
  // Rule 1 rolls DE/FR out 25000/75000 of 100000 by key: the weights are kept.
  let on = 0;
  for (let i = 0; i < 4000; i++) {
    if (value("new-checkout", "production", { targeting_key: `k${i}`, country: "FR" }) === true) {
      on++;
    }
  }
  assert(on > 4000 * 0.22 && on < 4000 * 0.28, `25% rollout gave ${on}`);
  // Targeting off in test: the offVariation (Off) for everyone.
  assertEquals(
    evaluateFlag(model, "test", "new-checkout", { targeting_key: "user-1" }).reason,
    "DISABLED",
  );
  assertEquals(value("new-checkout", "test", { targeting_key: "user-1" }), false);

  // A negated "in" is false when the attribute is missing: the fallthrough decides.
  assertEquals(value("checkout-theme", "production", { targeting_key: "k1", plan: "pro" }), "dark");
  assertEquals(
    value("checkout-theme", "production", { targeting_key: "k1", plan: "free" }) === "dark",
    false,
  );
  const seen = new Set<unknown>();
  for (let i = 0; i < 200; i++) {
    seen.add(value("checkout-theme", "production", { targeting_key: `k${i}` }));
  }
  assertEquals([...seen].sort(), ["classic", "modern"]);
  // contextTargets of kind organization: the organization's key.
  assertEquals(
    value("checkout-theme", "production", {
      targeting_key: "k1",
      organization: { key: "org-acme" },
    }),
    "dark",
  );
  // In test the fallthrough is the variation modern.
  assertEquals(value("checkout-theme", "test", { targeting_key: "k1" }), "modern");

  // "/account/plan" is the nested attribute account.plan; "2.1" is version 2.1.0.
  assertEquals(
    value("max-items", "production", { account: { plan: "enterprise" }, appVersion: "2.2.0" }),
    200,
  );
  assertEquals(
    value("max-items", "production", { account: { plan: "enterprise" }, appVersion: "2.1.0" }),
    10,
  );
  // An organization-kind attribute lives under organization; "in" and numbers compare strictly.
  assertEquals(
    value("max-items", "production", { organization: { key: "o", employees: 150 } }),
    50,
  );
  assertEquals(
    value("max-items", "production", { organization: { key: "o", employees: "150" } }),
    10,
  );

  // matches runs the pattern unanchored, as LaunchDarkly's regex search does.
  assertEquals(value("corp-tools", "production", { email: "x@example.org" }), true);
  assertEquals(value("corp-tools", "production", { email: "x@example.net" }), false);
});

Deno.test("launchdarkly: the report lists prerequisites, refused patterns, kinds, segment percentages and JSON arrays", async () => {
  const { out } = imported(await Deno.readTextFile(FIXTURE));
  const maxItems = reportOf(out, "max-items");
  assert(maxItems.unmapped.some((u) => u.what.includes("prerequisite on flag new-checkout")));
  const corp = reportOf(out, "corp-tools");
  const what = corp.unmapped.map((u) => `${u.what}: ${u.why}`).join("\n");
  assert(what.includes("rule 1") && what.includes("matches"), what);
  assert(what.includes("rule 2") && what.includes("kind"), what);
  assert(what.includes("rule 3") && what.includes("half-of-eu"), what);
  const half = reportOf(out, "half-of-eu");
  assertEquals(half.written, false);
  assert(half.unmapped.some((u) => u.what.includes("50%")));
  const zones = reportOf(out, "shipping-zones");
  assertEquals(zones.written, false);
  assert(zones.unmapped[0]!.why.includes("JSON array"));
  assert(!out.files.has("flags/shipping-zones.toml"));
  assert(reportOf(out, "checkout-theme").notes.some((n) => n.includes("another bucket")));
  // The beta-testers segment differs between environments: one file each.
  assert(out.files.has("segments/beta-testers-production.toml"));
  assert(out.files.has("segments/beta-testers-test.toml"));
});

Deno.test("launchdarkly: a single flag as GET /flags/{project}/{key} returns it, with --env-map", () => {
  const flag = {
    key: "banner",
    kind: "multivariate",
    variations: [{ value: { show: true } }, { value: { show: false } }],
    environments: {
      "Production EU": {
        on: true,
        offVariation: 1,
        fallthrough: { variation: 1 },
        targets: [],
        rules: [{
          clauses: [{ attribute: "email", op: "startsWith", values: ["admin", 3], negate: true }],
          variation: 0,
        }],
        prerequisites: [],
      },
    },
  };
  const { out, value } = imported(JSON.stringify(flag), new Map([["Production EU", "prod-eu"]]));
  // A negated startsWith: present and starting with none of the string values.
  assertEquals(value("banner", "prod-eu", { email: "bob@x" }), { show: true });
  assertEquals(value("banner", "prod-eu", { email: "admin@x" }), { show: false });
  assertEquals(value("banner", "prod-eu", {}), { show: false });
  assert(reportOf(out, "banner").written);
});

Deno.test("launchdarkly: a file that is not LaunchDarkly JSON is refused with an ImportError", () => {
  const opts = { file: "ld.json", envMap: new Map<string, string>() };
  assertThrows(() => importLaunchDarkly("[1]", opts), ImportError, "not a LaunchDarkly export");
  assertThrows(
    () => importLaunchDarkly('{"hello": 1}', opts),
    ImportError,
    "not a LaunchDarkly export",
  );
  assertThrows(
    () => importLaunchDarkly('{"items": [{"key": 3}]}', opts),
    ImportError,
    "not a LaunchDarkly flag",
  );
});

// --- property ---

const OPS = [
  "in",
  "startsWith",
  "endsWith",
  "contains",
  "matches",
  "lessThan",
  "greaterThanOrEqual",
  "before",
  "after",
  "semVerEqual",
  "semVerLessThan",
  "segmentMatch",
  "nonsense",
];
const VALUES: unknown[] = [
  "a",
  "",
  1,
  2.5,
  true,
  "1.2",
  "2026-01-01T00:00:00Z",
  1767225600000,
  "(?=x)",
  { a: 1 },
  "seg",
];
const ATTRS = ["email", "key", "kind", "/a/b", "a b", "", "x".repeat(70)];

function randomFlag(r: () => number, i: number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const values = pick([[true, false], ["a", "b", "c"], [1, 2], [{ a: 1 }, { b: 2 }], [[1], [2]], [
    "a",
    1,
  ]]);
  const n = values.length;
  const serve = () =>
    r() < 0.6 ? { variation: Math.floor(r() * (n + 1)) } : {
      rollout: {
        variations: values.map((_, j) => ({
          variation: j,
          weight: j === 0 ? 100000 - 1000 * (n - 1) : 1000,
        })),
        bucketBy: pick(["key", "email", "a b"]),
      },
    };
  return {
    key: `${pick(["f", "F G", "ü"])}${i}`,
    kind: "multivariate",
    variations: values.map((value, j) => ({
      value,
      ...(r() < 0.5 ? { name: pick(["On", "x y", "1", ""]) + j } : {}),
    })),
    environments: Object.fromEntries(
      pick([["production"], ["production", "Test Env"]]).map((env) => [env, {
        on: r() < 0.8,
        offVariation: r() < 0.9 ? Math.floor(r() * n) : undefined,
        fallthrough: serve(),
        targets: [{ values: ["u1"], variation: Math.floor(r() * n) }],
        rules: Array.from({ length: Math.floor(r() * 3) }, () => ({
          clauses: Array.from({ length: 1 + Math.floor(r() * 2) }, () => ({
            attribute: pick(ATTRS),
            op: pick(OPS),
            values: [pick(VALUES), pick(VALUES)],
            negate: r() < 0.3,
            contextKind: pick(["user", "organization"]),
          })),
          ...serve(),
        })),
        prerequisites: r() < 0.2 ? [{ key: "other", variation: 0 }] : [],
      }]),
    ),
  };
}

Deno.test("launchdarkly: property — random flags always lint clean, or the report says what was left out", () => {
  const r = rng(7);
  for (let n = 0; n < 150; n++) {
    const flags = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => randomFlag(r, i));
    const segments = [{
      key: "seg",
      included: ["u2"],
      rules: [{ clauses: [{ attribute: "email", op: "in", values: ["a"] }] }],
    }];
    const data = { flags: { items: flags }, segments: { items: segments } };
    const out = importLaunchDarkly(JSON.stringify(data), {
      file: "random.json",
      envMap: new Map(),
    });
    const { problems } = validateManifest(filesOf(out.files));
    assertEquals(problems, [], `case ${n}: ${JSON.stringify(data)}`);
    for (const f of flags) {
      const report = item(out, "flag", f.key);
      if (!report.written) {
        assert(report.unmapped.length > 0, `case ${n}: ${f.key} dropped silently`);
      }
      for (const [env, cfg] of Object.entries(f.environments)) {
        if (!cfg.on || !report.written) continue;
        const sourceRules = cfg.rules.length + cfg.targets.length;
        const rules = report.mapped.filter((m) =>
          m.includes(": rule ") || m.includes(": target ")
        ).length;
        const told = report.unmapped.length + report.notes.length;
        assert(rules >= sourceRules || told > 0, `case ${n}: ${env} lost rules silently`);
      }
    }
  }
});
