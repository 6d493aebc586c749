/**
 * Promotion (lib/flags/authoring/promotion.ts): after copying what is in
 * force in environment A into B's override, the real engine
 * (lib/flags/evaluate.ts) gives every context in B exactly what it gives
 * in A: checked on random flags (random rules, rollouts and overrides over
 * the example segments) and random contexts.
 */
import fc from "fast-check";
import { assertEquals } from "../../assert.ts";
import { compileManifest, evaluateFlag } from "../../../lib/flags/evaluate.ts";
import { newToml } from "../../../lib/flags/authoring/edit_toml.ts";
import { promote } from "../../../lib/flags/authoring/promotion.ts";
import { applied, exampleTexts, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const SEGMENTS = [
  "beta-testers",
  "eu-customers",
  "internal-staff",
  "legacy-browsers",
  "mobile-app-users",
  "paying-customers",
];
const VARIATIONS = ["a", "b", "c"];
const ENVS = ["production", "staging"] as const;

const variation = fc.constantFrom(...VARIATIONS);
const rollout = fc.uniqueArray(variation, { minLength: 1, maxLength: 3 }).chain((names) =>
  fc.constantFrom(100, 100000).chain((total) =>
    fc.array(fc.nat(total), { minLength: names.length - 1, maxLength: names.length - 1 }).map(
      (cuts) => {
        const sorted = [0, ...cuts.sort((x, y) => x - y), total];
        return names.map((v, i) => ({ variation: v, weight: sorted[i + 1]! - sorted[i]! }));
      },
    )
  )
);
const rule = fc.record(
  {
    segment: fc.constantFrom(...SEGMENTS),
    serve: fc.oneof(
      variation.map((v) => ({ variation: v })),
      fc.record({
        bucket_by: fc.constantFrom("targeting_key", "user.id", "account.id"),
        rollout,
      }, { requiredKeys: ["rollout"] }),
    ),
  },
  { requiredKeys: ["serve"] },
).map(({ segment, serve }) => ({ ...(segment === undefined ? {} : { segment }), ...serve }));
const override = fc.record({
  enabled: fc.boolean(),
  default: variation,
  rule: fc.array(rule, { maxLength: 3 }),
}, { requiredKeys: [] });
const flag = fc.record({
  default: variation,
  rule: fc.array(rule, { maxLength: 4 }),
  environments: fc.record({ production: override, staging: override }, { requiredKeys: [] }),
});
const context = fc.record({
  targeting_key: fc.string({ maxLength: 6 }),
  user: fc.record({
    id: fc.string({ maxLength: 6 }),
    beta_opt_in: fc.boolean(),
    email: fc.constantFrom("a@example.com", "b@elsewhere.org"),
    role: fc.constantFrom("employee", "contractor", "guest"),
  }, { requiredKeys: [] }),
  account: fc.record({
    id: fc.string({ maxLength: 6 }),
    country: fc.constantFrom("DE", "FR", "US", "JP"),
    plan: fc.constantFrom("pro", "enterprise", "free"),
  }, { requiredKeys: [] }),
  user_agent: fc.constantFrom("MSIE 9", "Trident/7.0", "Firefox/120"),
  app: fc.record({
    platform: fc.constantFrom("ios", "android", "web"),
    version: fc.constantFrom("4.0.0", "4.2.0", "5.1.0"),
  }),
}, { requiredKeys: [] });

Deno.test("promote() makes the target environment evaluate as the source, for random flags and contexts", () => {
  fc.assert(
    fc.property(
      flag,
      fc.constantFrom(...ENVS),
      fc.array(context, { minLength: 20, maxLength: 20 }),
      (f, from, contexts) => {
        const to = from === "production" ? "staging" : "production";
        const doc: Record<string, unknown> = {
          schema_version: 1,
          type: "string",
          default: f.default,
          variations: { a: "A", b: "B", c: "C" },
        };
        if (f.rule.length > 0) doc.rule = f.rule;
        if (Object.keys(f.environments).length > 0) doc.environments = f.environments;
        const start = new Map([...texts, ["flags/random.toml", newToml(doc)]]);
        const edits = promote(start, { flag: "random", from, to });
        const before = compileManifest(valid(start), 1);
        const after = compileManifest(valid(applied(start, edits)), 1);
        for (const ctx of contexts) {
          const want = evaluateFlag(before, from, "random", ctx);
          assertEquals(evaluateFlag(after, to, "random", ctx), want);
          assertEquals(evaluateFlag(after, from, "random", ctx), want);
        }
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("promote() writes the target's override explicitly, in place", () => {
  const [, text] = only(
    promote(texts, { flag: "new-checkout", from: "staging", to: "production" }),
  );
  const checkout = texts.get("flags/new-checkout.toml")!;
  assertEquals(
    text,
    checkout.replace(
      '[environments.production]\nenabled = true\ndefault = "off"\n',
      '[environments.production]\nenabled = true\ndefault = "on"\n\n' +
        '[[environments.production.rule]]\nsegment = "legacy-browsers"\nvariation = "off"\n',
    ),
  );
});

Deno.test("promote() refuses unknown environments and promoting to the same one", () => {
  refused(() => promote(texts, { flag: "new-checkout", from: "qa", to: "production" }), {
    message: 'Unknown environment "qa"',
    field: "from",
  });
  refused(() => promote(texts, { flag: "new-checkout", from: "staging", to: "productoin" }), {
    message: 'Unknown environment "productoin"; did you mean "production"?',
    field: "to",
  });
  refused(() => promote(texts, { flag: "new-checkout", from: "staging", to: "staging" }), {
    message: "Choose another environment than staging",
    field: "to",
  });
  refused(() => promote(texts, { flag: "nope", from: "staging", to: "production" }), {
    message: "There is no flag nope",
    field: "flag",
  });
});
