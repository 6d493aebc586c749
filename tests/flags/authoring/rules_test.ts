/**
 * Authoring rules (lib/flags/authoring/rules.ts): add at a position,
 * replace, remove and move rules of a flag or of an environment's own
 * rules; sections keep their comments; refusals name the form field; the
 * engine then evaluates as the new rules say.
 */
import { assert, assertEquals } from "../../assert.ts";
import { compileManifest, evaluateFlag } from "../../../lib/flags/evaluate.ts";
import { addRule, moveRule, removeRule, replaceRule } from "../../../lib/flags/authoring/rules.ts";
import { applied, changedLines, exampleTexts, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const CHECKOUT = texts.get("flags/new-checkout.toml")!;

const BETA = '[[rule]]\nsegment = "beta-testers"\nvariation = "on"\n';
const EU = '[[rule]]\nsegment = "eu-customers"\nbucket_by = "user.id"\nrollout = [\n' +
  '  { variation = "on", weight = 25 },\n  { variation = "off", weight = 75 },\n]\n';

function model(edits: Map<string, string | null>) {
  return compileManifest(valid(applied(texts, edits)), 1);
}

Deno.test("addRule() puts a rule first, tried before the others", () => {
  const edits = addRule(texts, {
    flag: "new-checkout",
    at: 0,
    rule: { segment: "legacy-browsers", variation: "off" },
  });
  const [, text] = only(edits);
  assertEquals(
    text,
    CHECKOUT.replace(BETA, '[[rule]]\nsegment = "legacy-browsers"\nvariation = "off"\n\n' + BETA),
  );
  const m = model(edits);
  const r = evaluateFlag(m, "production", "new-checkout", {
    user_agent: "Trident/7.0",
    user: { beta_opt_in: true },
  });
  assertEquals([r.variation, r.reason, r.rule_index], ["off", "TARGETING_MATCH", 0]);
});

Deno.test("addRule() between two rules and at the end", () => {
  const [, middle] = only(
    addRule(texts, { flag: "new-checkout", at: 1, rule: { variation: "on" } }),
  );
  assertEquals(middle, CHECKOUT.replace(EU, '[[rule]]\nvariation = "on"\n\n' + EU));
  const [, last] = only(
    addRule(texts, {
      flag: "new-checkout",
      rule: {
        bucket_by: "account.id",
        rollout: [{ variation: "on", weight: 50000 }, { variation: "off", weight: 50000 }],
      },
    }),
  );
  assertEquals(
    last,
    CHECKOUT.replace(
      EU,
      EU + '\n[[rule]]\nbucket_by = "account.id"\nrollout = [\n' +
        '  { variation = "on", weight = 50000 },\n  { variation = "off", weight = 50000 },\n]\n',
    ),
  );
  valid(applied(texts, new Map([["flags/new-checkout.toml", last]])));
});

Deno.test("addRule() to a flag without rules writes them before its overrides", () => {
  const text = texts.get("flags/payment-banner.toml")!.replace(
    '[[rule]]\nsegment = "mobile-app-users"\nvariation = "promo"\n\n',
    "",
  );
  const start = new Map([...texts, ["flags/payment-banner.toml", text]]);
  const [, out] = only(addRule(start, { flag: "payment-banner", rule: { variation: "promo" } }));
  assertEquals(
    out,
    text.replace(
      "[environments.production]",
      '[[rule]]\nvariation = "promo"\n\n[environments.production]',
    ),
  );
});

Deno.test("addRule() in an environment's own rules", () => {
  const edits = addRule(texts, {
    flag: "new-checkout",
    environment: "staging",
    rule: { segment: "beta-testers", variation: "on" },
  });
  const [, text] = only(edits);
  assertEquals(
    text,
    `${CHECKOUT}\n[[environments.staging.rule]]\nsegment = "beta-testers"\nvariation = "on"\n`,
  );
  const r = evaluateFlag(model(edits), "staging", "new-checkout", { user: { beta_opt_in: true } });
  assertEquals([r.variation, r.rule_index], ["on", 1]);
  refused(
    () =>
      addRule(texts, {
        flag: "new-checkout",
        environment: "production",
        rule: { variation: "on" },
      }),
    {
      message:
        "In production, new-checkout serves the flag's own rules: give production rules of its own first",
      field: "environment",
    },
  );
  refused(
    () => addRule(texts, { flag: "new-checkout", environment: "qa", rule: { variation: "on" } }),
    {
      message: 'Unknown environment "qa" (environments: production, staging)',
      field: "environment",
    },
  );
});

Deno.test("replaceRule() edits the rule in place, keeping the comments above it", () => {
  const text = CHECKOUT.replace(BETA, `# always on for beta testers\n${BETA}`);
  const start = new Map([...texts, ["flags/new-checkout.toml", text]]);
  const [, out] = only(
    replaceRule(start, {
      flag: "new-checkout",
      index: 0,
      rule: {
        segment: "beta-testers",
        rollout: [{ variation: "on", weight: 90 }, { variation: "off", weight: 10 }],
      },
    }),
  );
  assertEquals(changedLines(text, out), {
    added: [
      "rollout = [",
      '  { variation = "on", weight = 90 },',
      '  { variation = "off", weight = 10 },',
      "]",
    ],
    removed: ['variation = "on"'],
  });
  assert(out.includes("# always on for beta testers\n[[rule]]\n"), out);
  assertEquals(
    replaceRule(texts, {
      flag: "new-checkout",
      index: 0,
      rule: { segment: "beta-testers", variation: "on" },
    }).size,
    0,
  );
});

Deno.test("removeRule() removes its section; the last of an environment's leaves rule = []", () => {
  const [, text] = only(removeRule(texts, { flag: "new-checkout", index: 0 }));
  assertEquals(text, CHECKOUT.replace(`${BETA}\n`, ""));
  const edits = removeRule(texts, { flag: "new-checkout", environment: "staging", index: 0 });
  const [, staging] = only(edits);
  assertEquals(
    staging,
    CHECKOUT.replace(
      '[environments.staging]\ndefault = "on"\n\n[[environments.staging.rule]]\nsegment = "legacy-browsers"\nvariation = "off"\n',
      '[environments.staging]\ndefault = "on"\nrule = []\n',
    ),
  );
  const r = evaluateFlag(model(edits), "staging", "new-checkout", { user: { beta_opt_in: true } });
  assertEquals([r.variation, r.reason], ["on", "DEFAULT"]);
  // The last of the flag's own rules takes the `rule` key with it.
  const one = texts.get("flags/max-cart-items.toml")!;
  const [, none] = only(removeRule(texts, { flag: "max-cart-items", index: 0 }));
  assertEquals(
    none,
    one.replace('\n[[rule]]\nsegment = "paying-customers"\nvariation = "large"\n', ""),
  );
});

Deno.test("moveRule() moves a rule with its comments", () => {
  const text = CHECKOUT.replace(BETA, `# beta first\n${BETA}`);
  const start = new Map([...texts, ["flags/new-checkout.toml", text]]);
  const [, out] = only(moveRule(start, { flag: "new-checkout", from: 0, to: 1 }));
  assertEquals(out, text.replace(`# beta first\n${BETA}\n${EU}`, `${EU}\n# beta first\n${BETA}`));
  const m = valid(applied(start, new Map([["flags/new-checkout.toml", out]])));
  assertEquals(m.flags["new-checkout"]!.rules.map((r) => r.segment), [
    "eu-customers",
    "beta-testers",
  ]);
  assertEquals(moveRule(texts, { flag: "new-checkout", from: 1, to: 1 }).size, 0);
  refused(() => moveRule(texts, { flag: "new-checkout", from: 0, to: 2 }), {
    message: "There is no rule 3 in the rules of new-checkout (there are 2)",
    field: "to",
  });
});

Deno.test("rule refusals name the form field of the rule's position", () => {
  const add = (rule: Parameters<typeof addRule>[1]["rule"], at = 2) => () =>
    addRule(texts, { flag: "new-checkout", at, rule });
  refused(add({ variation: "maybe" }), {
    message: 'Unknown variation "maybe" (variations: on, off)',
    field: "rules.2.variation",
  });
  refused(add({ segment: "beta-tester", variation: "on" }, 0), {
    message: 'Unknown segment "beta-tester"; did you mean "beta-testers"?',
    field: "rules.0.segment",
  });
  refused(add({ rollout: [{ variation: "on", weight: 50 }, { variation: "off", weight: 40 }] }), {
    message: "The weights sum to 90; they must sum to 100 (percent) or to 100000",
    field: "rules.2.weights",
  });
  refused(add({ rollout: [{ variation: "on", weight: 150 }, { variation: "off", weight: -50 }] }), {
    message: "The weight of off must be a whole number from 0 to 100000, not -50",
    field: "rules.2.rollout.1.weight",
  });
  refused(add({ rollout: [{ variation: "on", weight: 50 }, { variation: "on", weight: 50 }] }), {
    message: "Variation on appears twice in the rollout",
    field: "rules.2.rollout.1.variation",
  });
  refused(add({ rollout: [] }), {
    message: "A rollout needs at least one",
    field: "rules.2.rollout",
  });
  refused(add({ variation: "on", rollout: [{ variation: "on", weight: 100 }] }), {
    message: "not both",
    field: "rules.2.variation",
  });
  refused(add({}), { message: "Choose what the rule serves", field: "rules.2.variation" });
  refused(add({ variation: "on", bucket_by: "user.id" }), {
    message: "bucket_by applies only to a rule with a rollout",
    field: "rules.2.bucket_by",
  });
  refused(add({ bucket_by: "user id", rollout: [{ variation: "on", weight: 100 }] }), {
    message: '"user id" is not a dotted context path',
    field: "rules.2.bucket_by",
  });
  refused(add({ variation: "on" }, 3), {
    message: "A new rule goes at a position from 1 to 3, not 4",
    field: "at",
  });
  refused(() => replaceRule(texts, { flag: "new-checkout", index: 5, rule: { variation: "on" } }), {
    message: "There is no rule 6 in the rules of new-checkout (there are 2)",
    field: "index",
  });
});

Deno.test("a rollout rule splits the contexts of its segment by the flag's buckets", () => {
  const edits = replaceRule(texts, {
    flag: "new-checkout",
    index: 0,
    rule: {
      segment: "beta-testers",
      bucket_by: "user.id",
      rollout: [{ variation: "on", weight: 30 }, { variation: "off", weight: 70 }],
    },
  });
  const m = model(edits);
  let on = 0;
  for (let i = 0; i < 2000; i++) {
    const r = evaluateFlag(m, "production", "new-checkout", {
      user: { beta_opt_in: true, id: `u-${i}` },
    });
    assertEquals([r.reason, r.rule_index], ["SPLIT", 0]);
    if (r.variation === "on") on++;
  }
  assert(on > 500 && on < 700, `${on} of 2000 got on`);
});
