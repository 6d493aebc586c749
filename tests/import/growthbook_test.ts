/**
 * `cfgtool import --from growthbook`: an SDK features payload shaped as
 * GrowthBook documents it (`features.<key>.defaultValue` and `rules` of
 * forced values, rollouts with `coverage`/`hashAttribute` and experiments
 * with `variations`/`weights`; `savedGroups`) is imported, passes lint,
 * and evaluates sample contexts as GrowthBook's SDK defines (its
 * MongoDB-style condition evaluator); the report lists what was not
 * mapped. A property test imports random payloads.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { importGrowthBook } from "../../lib/import/growthbook.ts";
import { ImportError } from "../../lib/import/errors.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { filesOf } from "../../lib/flags/authoring/mod.ts";
import { evaluateFlag } from "../../lib/flags/evaluate.ts";
import { item, modelOf, reportOf, rng } from "./evaluate.ts";

const FIXTURE = new URL("./fixtures/growthbook/features.json", import.meta.url);

function imported(text: string, envMap = new Map<string, string>(), env = "production") {
  const out = importGrowthBook(text, { file: "features.json", envMap });
  const model = modelOf(out);
  const value = (flag: string, ctx: Record<string, unknown>) =>
    evaluateFlag(model, env, flag, ctx).value;
  return { out, value };
}

Deno.test("growthbook: the documented payload imports, lints clean and evaluates as GrowthBook does", async () => {
  const { value } = imported(await Deno.readTextFile(FIXTURE));
  // {"country": {"$in": […]}, "plan": {"$ne": "free"}}: $ne holds on a missing attribute.
  assertEquals(value("dark-mode", { country: "DE" }), true);
  assertEquals(value("dark-mode", { country: "DE", plan: "pro" }), true);
  // Failing the condition, the 25% rollout by id needs an id: without one the rule is skipped.
  assertEquals(value("dark-mode", { country: "DE", plan: "free" }), false);
  let on = 0;
  for (let i = 0; i < 4000; i++) {
    if (value("dark-mode", { targeting_key: `id-${i}` }) === true) on++;
  }
  assert(on > 4000 * 0.22 && on < 4000 * 0.28, `coverage 0.25 gave ${on}`);

  // $inGroup grp_beta: the saved group's ids get "dark"; others enter the 50/50 experiment.
  assertEquals(value("checkout-theme", { targeting_key: "user-1" }), "dark");
  const seen = new Set<unknown>();
  for (let i = 0; i < 200; i++) seen.add(value("checkout-theme", { targeting_key: `id-${i}` }));
  assertEquals([...seen].sort(), ["classic", "modern"]);
  // Without the hash attribute the experiment is skipped: the default value.
  assertEquals(value("checkout-theme", {}), "classic");

  // {"age": {"$lt": 18}}: GrowthBook reads a missing age as null, and null < 18 holds.
  assertEquals(value("max-items", { age: 16 }), 10);
  assertEquals(value("max-items", {}), 10);
  // $or of $vgte 2.1.0 and $regex: either gives 200.
  assertEquals(value("max-items", { age: 30, appVersion: "2.1.0" }), 200);
  assertEquals(value("max-items", { age: 30, email: "ann@example.com" }), 200);
  assertEquals(value("max-items", { age: 30, appVersion: "2.0.9" }), 50);

  // {"country": "US"}: a plain value compares as text.
  assertEquals(value("banner", { country: "US" }), { show: true, text: "Hi" });
});

Deno.test("growthbook: the report lists what was left out and why", async () => {
  const { out } = imported(await Deno.readTextFile(FIXTURE));
  const banner = reportOf(out, "banner");
  const what = banner.unmapped.map((u) => `${u.what}: ${u.why}`).join("\n");
  assert(what.includes("$elemMatch"), what);
  assert(what.includes("prerequisite on feature dark-mode"), what);
  const theme = reportOf(out, "checkout-theme");
  assert(
    theme.unmapped.some((u) =>
      u.what.includes("experiment theme-test") && u.why.includes("not tracked")
    ),
  );
  assert(theme.notes.some((n) => n.includes("another bucket")));
  const tiers = reportOf(out, "price-tiers");
  assertEquals(tiers.written, false);
  assert(tiers.unmapped[0]!.why.includes("JSON array"));
  const group = out.items.find((i) => i.kind === "segment");
  assertEquals(group?.sourceKey, "grp_beta");
  assertEquals(group?.written, true);
});

Deno.test("growthbook: the environment is named by --env-map", async () => {
  const { value } = imported(
    await Deno.readTextFile(FIXTURE),
    new Map([["production", "live"]]),
    "live",
  );
  assertEquals(value("max-items", { age: 16 }), 10);
});

Deno.test("growthbook: plain values compare loosely, $eq strictly, as the SDK does", () => {
  const payload = {
    features: {
      a: {
        defaultValue: "off",
        rules: [{ condition: { n: 5 }, force: "plain" }, {
          condition: { m: { $eq: 5 } },
          force: "strict",
        }],
      },
    },
  };
  const { value } = imported(JSON.stringify(payload));
  // `value * 1 === 5`: "5" matches a plain 5.
  assertEquals(value("a", { n: "5" }), "plain");
  assertEquals(value("a", { n: 5 }), "plain");
  // `actual === 5`: "5" does not match $eq 5.
  assertEquals(value("a", { m: "5" }), "off");
  assertEquals(value("a", { m: 5 }), "strict");
});

Deno.test("growthbook: a file that is not a features payload is refused with an ImportError", () => {
  const opts = { file: "gb.json", envMap: new Map<string, string>() };
  assertThrows(() => importGrowthBook("nope", opts), ImportError, "gb.json: not JSON");
  assertThrows(
    () => importGrowthBook("{}", opts),
    ImportError,
    "not a GrowthBook features payload",
  );
  assertThrows(
    () => importGrowthBook('{"encryptedFeatures": "abc"}', opts),
    ImportError,
    "encrypted",
  );
});

// --- property ---

const OPS = [
  "$eq",
  "$ne",
  "$lt",
  "$gte",
  "$in",
  "$nin",
  "$ini",
  "$exists",
  "$regex",
  "$regexi",
  "$not",
  "$inGroup",
  "$notInGroup",
  "$veq",
  "$vgt",
  "$size",
  "$type",
  "$bogus",
];
const VALUES: unknown[] = [
  "a",
  "",
  1,
  0,
  true,
  null,
  ["a", 1],
  { $eq: 1 },
  "(?=x)",
  "1.2",
  "2026-01-01",
  "g1",
];
const ATTRS = ["id", "country", "a.b", "a b", "x".repeat(70)];

function randomCondition(r: () => number, depth = 0): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < 1 + Math.floor(r() * 2); i++) {
    const k = r();
    if (depth < 2 && k < 0.15) {
      out[pick(["$or", "$and", "$nor"])] = [
        randomCondition(r, depth + 1),
        randomCondition(r, depth + 1),
      ];
    } else if (depth < 2 && k < 0.2) out.$not = randomCondition(r, depth + 1);
    else out[pick(ATTRS)] = r() < 0.3 ? pick(VALUES) : { [pick(OPS)]: pick(VALUES) };
  }
  return out;
}

Deno.test("growthbook: property — random payloads always lint clean, or the report says what was left out", () => {
  const r = rng(11);
  for (let n = 0; n < 150; n++) {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const features: Record<string, unknown> = {};
    for (let i = 0; i < 1 + Math.floor(r() * 3); i++) {
      const values: unknown[] = pick<unknown[]>([
        [true, false],
        ["a", "B c", ""],
        [1, 2.5],
        [{ a: 1 }, { b: 2 }],
        [[1], [2]],
        ["a", 1],
      ]);
      features[`${pick(["f", "F G", "ü"])}${i}`] = {
        defaultValue: values[0],
        rules: Array.from({ length: Math.floor(r() * 3) }, () => {
          const rule: Record<string, unknown> = r() < 0.8 ? { condition: randomCondition(r) } : {};
          if (r() < 0.6) rule.force = pick(values);
          else {
            rule.variations = values;
            rule.weights = values.map(() => 1 / values.length);
          }
          if (r() < 0.4) rule.coverage = pick([0, 0.5, 1]);
          if (r() < 0.3) rule.hashAttribute = pick(ATTRS);
          if (r() < 0.1) rule.namespace = ["ns", 0, 0.5];
          return rule;
        }),
      };
    }
    const data = { features, savedGroups: { g1: ["a", "b"], g2: [] } };
    const out = importGrowthBook(JSON.stringify(data), { file: "random.json", envMap: new Map() });
    const { problems } = validateManifest(filesOf(out.files));
    assertEquals(problems, [], `case ${n}: ${JSON.stringify(data)}`);
    for (const [key, f] of Object.entries(features)) {
      const report = item(out, "flag", key);
      if (!report.written) assert(report.unmapped.length > 0, `case ${n}: ${key} dropped silently`);
      const rules = (f as { rules: unknown[] }).rules.length;
      const mapped = report.mapped.filter((m) => m.includes(": rule ")).length;
      assert(
        mapped >= rules || report.unmapped.length + report.notes.length > 0,
        `case ${n}: ${key} lost rules`,
      );
    }
  }
});
