/**
 * Authoring overrides (lib/flags/authoring/overrides.ts): `enabled` and
 * `default` set and cleared, an environment given rules of its own (a copy
 * of the flag's, so nothing changes until they are edited) or dropped back
 * to the flag's; an override left empty disappears.
 */
import { assertEquals } from "../../assert.ts";
import { compileManifest, evaluateFlag } from "../../../lib/flags/evaluate.ts";
import {
  dropOwnRules,
  giveOwnRules,
  setOverrideDefault,
  setOverrideEnabled,
} from "../../../lib/flags/authoring/overrides.ts";
import { applied, changedLines, exampleTexts, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const CHECKOUT = texts.get("flags/new-checkout.toml")!;
const ITEMS = texts.get("flags/max-cart-items.toml")!;

/** Contexts that reach every rule of the example flags. */
const CONTEXTS = Array.from({ length: 120 }, (_, i) => ({
  targeting_key: `t-${i}`,
  user: { id: `u-${i}`, beta_opt_in: i % 9 === 0, email: i % 13 === 0 ? "x@example.com" : "x@y.z" },
  account: {
    country: ["DE", "US", "FR"][i % 3],
    plan: ["pro", "free", "enterprise"][i % 3],
    id: `a-${i}`,
  },
  user_agent: i % 4 === 0 ? "MSIE 11" : "Firefox",
  app: { platform: "ios", version: i % 2 === 0 ? "5.0.0" : "4.0.0" },
}));

Deno.test("setOverrideEnabled() adds an override table, and clearing it removes the table", () => {
  const edits = setOverrideEnabled(texts, {
    flag: "max-cart-items",
    environment: "production",
    enabled: false,
  });
  const [, off] = only(edits);
  assertEquals(off, `${ITEMS}\n[environments.production]\nenabled = false\n`);
  const m = compileManifest(valid(applied(texts, edits)), 1);
  assertEquals(evaluateFlag(m, "production", "max-cart-items", {}).reason, "DISABLED");
  const [, cleared] = only(
    setOverrideEnabled(texts, { flag: "max-cart-items", environment: "staging", enabled: null }),
  );
  assertEquals(cleared, ITEMS.replace("\n[environments.staging]\nenabled = false\n", ""));
  assertEquals(
    setOverrideEnabled(texts, { flag: "max-cart-items", environment: "staging", enabled: false })
      .size,
    0,
  );
  refused(
    () => setOverrideEnabled(texts, { flag: "max-cart-items", environment: "qa", enabled: false }),
    { message: 'Unknown environment "qa"', field: "environment" },
  );
  refused(
    () =>
      setOverrideEnabled(texts, {
        flag: "max-cart-items",
        environment: "staging",
        enabled: "no" as unknown as boolean,
      }),
    { message: "enabled must be true or false", field: "enabled" },
  );
});

Deno.test("setOverrideDefault() sets and clears an environment's default", () => {
  const [, on] = only(
    setOverrideDefault(texts, { flag: "new-checkout", environment: "production", variation: "on" }),
  );
  assertEquals(changedLines(CHECKOUT, on), {
    added: ['default = "on"'],
    removed: ['default = "off"'],
  });
  const [, cleared] = only(
    setOverrideDefault(texts, { flag: "new-checkout", environment: "production", variation: null }),
  );
  assertEquals(
    cleared,
    CHECKOUT.replace(
      '[environments.production]\nenabled = true\ndefault = "off"\n',
      "[environments.production]\nenabled = true\n",
    ),
  );
  refused(
    () =>
      setOverrideDefault(texts, {
        flag: "new-checkout",
        environment: "production",
        variation: "maybe",
      }),
    { message: 'Unknown variation "maybe"', field: "variation" },
  );
});

Deno.test("giveOwnRules() copies the flag's rules as written, changing nothing it serves", () => {
  const edits = giveOwnRules(texts, { flag: "new-checkout", environment: "production" });
  const [, text] = only(edits);
  assertEquals(
    text,
    CHECKOUT.replace(
      '[environments.production]\nenabled = true\ndefault = "off"\n',
      '[environments.production]\nenabled = true\ndefault = "off"\n\n' +
        '[[environments.production.rule]]\nsegment = "beta-testers"\nvariation = "on"\n\n' +
        '[[environments.production.rule]]\nsegment = "eu-customers"\nbucket_by = "user.id"\n' +
        'rollout = [\n  { variation = "on", weight = 25 },\n  { variation = "off", weight = 75 },\n]\n',
    ),
  );
  const before = compileManifest(valid(texts), 1);
  const after = compileManifest(valid(applied(texts, edits)), 1);
  for (const ctx of CONTEXTS) {
    assertEquals(
      evaluateFlag(after, "production", "new-checkout", ctx),
      evaluateFlag(before, "production", "new-checkout", ctx),
    );
  }
  refused(() => giveOwnRules(texts, { flag: "new-checkout", environment: "staging" }), {
    message: "staging already has rules of its own for new-checkout",
    field: "environment",
  });
});

Deno.test("dropOwnRules() makes an environment use the flag's rules again", () => {
  const edits = dropOwnRules(texts, { flag: "new-checkout", environment: "staging" });
  const [, text] = only(edits);
  assertEquals(
    text,
    CHECKOUT.replace(
      '\n[[environments.staging.rule]]\nsegment = "legacy-browsers"\nvariation = "off"\n',
      "",
    ),
  );
  const m = valid(applied(texts, edits));
  assertEquals(m.flags["new-checkout"]!.environments.staging, { enabled: true, default: "on" });
  assertEquals(dropOwnRules(texts, { flag: "new-checkout", environment: "production" }).size, 0);
});
