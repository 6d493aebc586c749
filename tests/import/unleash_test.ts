/**
 * `cfgtool import --from unleash`: a feature export shaped as Unleash's
 * export schema documents it (exportResultSchema: features,
 * featureStrategies, featureEnvironments, segments as {id, name},
 * contextFields, tags, dependencies) is imported, passes lint, and
 * evaluates sample contexts as Unleash's evaluator defines; the report
 * lists what was not mapped. A property test imports random exports.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { importUnleash } from "../../lib/import/unleash.ts";
import { ImportError } from "../../lib/import/errors.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { filesOf } from "../../lib/flags/authoring/mod.ts";
import { evaluateFlag } from "../../lib/flags/evaluate.ts";
import { item, modelOf, reportOf, rng } from "./evaluate.ts";

const FIXTURE = new URL("./fixtures/unleash/export.json", import.meta.url);

function imported(text: string, envMap = new Map<string, string>()) {
  const out = importUnleash(text, { file: "export.json", envMap });
  const model = modelOf(out);
  const value = (flag: string, ctx: Record<string, unknown>, env = "production") =>
    evaluateFlag(model, env, flag, ctx).value;
  return { out, value, model };
}

Deno.test("unleash: the documented export imports, lints clean and evaluates as Unleash does", async () => {
  const { out, value, model } = imported(await Deno.readTextFile(FIXTURE));
  assertEquals(
    out.files.get("namespace.toml")?.includes("[namespace.environments.production]"),
    true,
  );

  // userWithId: the listed ids (after trimming "alice, bob") are enabled.
  assertEquals(value("new-checkout", { targeting_key: "alice" }), true);
  assertEquals(value("new-checkout", { targeting_key: "bob" }), true);
  // flexibleRollout with an IN constraint: outside DE/FR the strategy is false.
  assertEquals(value("new-checkout", { targeting_key: "zed", country: "US" }), false);
  // 25% of DE users: the percentage is kept (buckets differ from Unleash's).
  let on = 0;
  for (let i = 0; i < 4000; i++) {
    if (value("new-checkout", { targeting_key: `user-${i}`, country: "DE" }) === true) on++;
  }
  assert(on > 4000 * 0.22 && on < 4000 * 0.28, `25% rollout gave ${on} of 4000`);

  // STR_ENDS_WITH with caseInsensitive: "@Example.com" matches "@EXAMPLE.com".
  // NOT_IN on a field the context lacks is true in Unleash (the value is not in the list).
  assertEquals(value("beta-banner", { email: "ann@EXAMPLE.com" }), true);
  assertEquals(value("beta-banner", { email: "ann@example.com", plan: "free" }), false);
  assertEquals(value("beta-banner", { email: "ann@example.org" }), false);

  // Strategy variants (weights out of 1000) with string payloads: the payload is served;
  // SEMVER_GT 2.0.0 fails for 1.9.0, so the flag is off: the disabled variant.
  const seen = new Set<unknown>();
  for (let i = 0; i < 200; i++) {
    seen.add(value("theme", { targeting_key: `u${i}`, appVersion: "2.1.0" }));
  }
  assertEquals([...seen].sort(), ["dark-theme", "light-theme"]);
  assertEquals(value("theme", { targeting_key: "u1", appVersion: "1.9.0" }), "");

  // Disabled in the environment: off for everyone.
  assertEquals(evaluateFlag(model, "production", "max-items", {}).reason, "DISABLED");
  assertEquals(value("max-items", {}), false);

  // inverted NUM_GTE 18: under 18 and a missing age are both true (inverted false);
  // DATE_AFTER on currentTime reads the context's currentTime.
  const after = "2026-03-02T00:00:00Z";
  assertEquals(value("youth-offer", { age: 16, currentTime: after }), true);
  assertEquals(value("youth-offer", { currentTime: after }), true);
  assertEquals(value("youth-offer", { age: 21, currentTime: after }), false);
  assertEquals(value("youth-offer", { age: 16, currentTime: "2026-02-01T00:00:00Z" }), false);
});

Deno.test("unleash: the report lists every construct left out, with why", async () => {
  const { out } = imported(await Deno.readTextFile(FIXTURE));
  const segment = reportOf(out, "internal-users");
  assertEquals(segment.written, false);
  assert(segment.unmapped[0]!.why.includes("none of its constraints"));
  const banner = reportOf(out, "beta-banner");
  const what = banner.unmapped.map((u) => u.what);
  assert(what.some((w) => w.includes("dependency on feature new-checkout")), what.join("; "));
  assert(what.some((w) => w.includes("segment internal-users")), what.join("; "));
  assert(banner.notes.some((n) => n.includes("disabled in Unleash")));
  const office = reportOf(out, "office-only");
  assert(office.unmapped.some((u) => u.what.includes("10.0.0.0/8") && u.why.includes("CIDR")));
  assert(
    office.unmapped.some((u) =>
      u.what.includes("officeHours") && u.why.includes("custom strategy")
    ),
  );
  // Each rollout says that users may land in another bucket.
  assert(reportOf(out, "new-checkout").notes.some((n) => n.includes("another bucket")));
  assert(reportOf(out, "Theme").notes.some((n) => n.includes("another bucket")));
  assertEquals(reportOf(out, "Theme").key, "theme");
  // Every flag of the export has a report, in source order.
  assertEquals(
    out.items.filter((i) => i.kind === "flag").map((i) => i.sourceKey ?? i.key),
    ["new-checkout", "beta-banner", "Theme", "max-items", "office-only", "youth-offer"],
  );
});

Deno.test("unleash: --env-map renames the exported environment", async () => {
  const { value } = imported(await Deno.readTextFile(FIXTURE), new Map([["production", "prod"]]));
  assertEquals(value("new-checkout", { targeting_key: "alice" }, "prod"), true);
});

Deno.test("unleash: feature variants, payload types and a segment with constraints", () => {
  const text = JSON.stringify({
    features: [{ name: "layout", type: "experiment", project: "default" }],
    featureStrategies: [{
      name: "flexibleRollout",
      featureName: "layout",
      parameters: { groupId: "layout", rollout: "50", stickiness: "accountId" },
      constraints: [],
      segments: [7],
    }],
    featureEnvironments: [{
      enabled: true,
      featureName: "layout",
      environment: "development",
      name: "layout",
      variants: [
        {
          name: "grid",
          weight: 700,
          weightType: "variable",
          stickiness: "default",
          payload: { type: "json", value: '{"cols":3}' },
        },
        {
          name: "list",
          weight: 300,
          weightType: "fix",
          stickiness: "default",
          payload: { type: "json", value: '{"cols":1}' },
        },
      ],
    }],
    // A segment list as the segments API returns it (with its constraints).
    segments: [{
      id: 7,
      name: "Paying",
      constraints: [{
        contextName: "plan",
        operator: "IN",
        values: ["pro"],
        inverted: false,
        caseInsensitive: true,
      }],
    }],
    tagTypes: [],
  });
  const { out, value } = imported(text);
  // IN with caseInsensitive compares lower-cased values.
  const shares = new Map<string, number>();
  for (let i = 0; i < 4000; i++) {
    const v = JSON.stringify(value("layout", { accountId: `a${i}`, plan: "PRO" }, "development"));
    shares.set(v, (shares.get(v) ?? 0) + 1);
  }
  // 50% rollout × 700/300: 35% grid, 15% list, 50% the disabled variant ({}).
  const grid = shares.get('{"cols":3}') ?? 0,
    list = shares.get('{"cols":1}') ?? 0,
    off = shares.get("{}") ?? 0;
  assert(
    Math.abs(grid / 4000 - 0.35) < 0.03 && Math.abs(list / 4000 - 0.15) < 0.03,
    `${grid} ${list} ${off}`,
  );
  assertEquals(value("layout", { accountId: "a1", plan: "free" }, "development"), {});
  assert(out.files.get("flags/layout.toml")!.includes('bucket_by = "accountId"'));
  assertEquals(reportOf(out, "Paying").written, true);
});

Deno.test("unleash: a file that is not an export is refused with an ImportError", () => {
  const opts = { file: "x.json", envMap: new Map<string, string>() };
  assertThrows(() => importUnleash("{", opts), ImportError, "x.json: not JSON");
  assertThrows(
    () => importUnleash('{"flags": []}', opts),
    ImportError,
    "not an Unleash feature export",
  );
});

// --- property: any export either lints clean or the report says why ---

const OPS = [
  "IN",
  "NOT_IN",
  "STR_CONTAINS",
  "STR_STARTS_WITH",
  "STR_ENDS_WITH",
  "NUM_EQ",
  "NUM_GT",
  "NUM_LTE",
  "DATE_BEFORE",
  "DATE_AFTER",
  "SEMVER_EQ",
  "SEMVER_LT",
  "REGEX",
  "BOGUS",
];
const VALUES = [
  "",
  "a",
  "A.b",
  "1",
  "2.5",
  "x y",
  "(",
  "1.2.3",
  "2026-01-01T00:00:00Z",
  "nope",
  "[a-z]+",
];
const STRATEGIES = [
  "default",
  "flexibleRollout",
  "userWithId",
  "remoteAddress",
  "applicationHostname",
  "custom",
];
const NAMES = ["a", "A", "a b", "ä", "-x", "", "a.b", "userId", "x".repeat(70)];

function randomExport(r: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const features = Array.from(
    { length: 1 + Math.floor(r() * 4) },
    (_, i) => ({ name: `${pick(NAMES)}${i}` }),
  );
  const strategies = features.flatMap((f) =>
    Array.from({ length: Math.floor(r() * 3) }, () => ({
      name: pick(STRATEGIES),
      featureName: f.name,
      parameters: {
        rollout: pick(["0", "33", "100", "150", "x"]),
        stickiness: pick(["default", "random", "a b", "plan"]),
        userIds: "u1,u2",
        IPs: pick(["1.2.3.4", "10.0.0.0/8"]),
      },
      constraints: Array.from({ length: Math.floor(r() * 3) }, () => ({
        contextName: pick(NAMES),
        operator: pick(OPS),
        values: [pick(VALUES), pick(VALUES)],
        value: pick(VALUES),
        inverted: r() < 0.3,
        caseInsensitive: r() < 0.3,
      })),
      variants: r() < 0.3
        ? [{
          name: pick(NAMES),
          weight: 1000,
          weightType: "variable",
          stickiness: "default",
          payload: r() < 0.5
            ? { type: pick(["string", "number", "json", "csv"]), value: pick(VALUES) }
            : undefined,
        }]
        : [],
      segments: r() < 0.2 ? [1] : [],
      disabled: r() < 0.1,
    }))
  );
  return {
    features,
    featureStrategies: strategies,
    featureEnvironments: features.map((f) => ({
      featureName: f.name,
      environment: pick(["production", "Dev Env"]) === "production" ? "production" : "production",
      enabled: r() < 0.7,
      variants: [],
    })),
    segments: r() < 0.5 ? [{ id: 1, name: "seg" }] : [{
      id: 1,
      name: "seg",
      constraints: [{ contextName: "plan", operator: pick(OPS), values: ["a"], value: "1" }],
    }],
    tagTypes: [],
  };
}

Deno.test("unleash: property — a random export always lints clean, or the report says what was left out", () => {
  const r = rng(20260301);
  for (let n = 0; n < 150; n++) {
    const data = randomExport(r);
    const out = importUnleash(JSON.stringify(data), { file: "random.json", envMap: new Map() });
    const { problems } = validateManifest(filesOf(out.files));
    assertEquals(problems, [], `export ${n}: ${JSON.stringify(data)}`);
    for (const f of data.features) {
      const report = item(out, "flag", f.name);
      // Each strategy of the feature is a rule, or the report says why it is not.
      const strategies = data.featureStrategies.filter((s) => s.featureName === f.name).length;
      const rules = report.mapped.filter((m) => m.includes("strategy")).length;
      const told = report.unmapped.length + report.notes.length;
      assert(report.written, `${f.name} not written: ${JSON.stringify(report.unmapped)}`);
      assert(rules === strategies || told > 0, `export ${n}: ${f.name} lost strategies silently`);
    }
  }
});
