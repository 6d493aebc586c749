/**
 * The files as written (lib/flags/authoring/as_written.ts): what a form is
 * prefilled with, and what writes back unchanged: every rule, segment and
 * environment of the example namespace, read and written again, edits
 * nothing.
 */
import { assertEquals } from "../../assert.ts";
import {
  environmentsAsWritten,
  flagAsWritten,
  keysAsWritten,
  rulesAsWritten,
  segmentAsWritten,
} from "../../../lib/flags/authoring/as_written.ts";
import { replaceRule } from "../../../lib/flags/authoring/rules.ts";
import { editSegment } from "../../../lib/flags/authoring/segments.ts";
import { setPublicEvaluate } from "../../../lib/flags/authoring/environments.ts";
import { setOverrideDefault, setOverrideEnabled } from "../../../lib/flags/authoring/overrides.ts";
import { setVariationValue } from "../../../lib/flags/authoring/flags.ts";
import { exampleTexts, refused } from "./world.ts";

const texts = await exampleTexts();

Deno.test("flagAsWritten() gives variations, rules and overrides as the file writes them", () => {
  assertEquals(flagAsWritten(texts, "new-checkout"), {
    key: "new-checkout",
    description: "New checkout flow",
    type: "boolean",
    default: "off",
    variations: [{ name: "on", value: true }, { name: "off", value: false }],
    rules: [
      { index: 0, scope: "flag", segment: "beta-testers", variation: "on" },
      {
        index: 1,
        scope: "flag",
        segment: "eu-customers",
        rollout: [{ variation: "on", weight: 25 }, { variation: "off", weight: 75 }],
        bucket_by: "user.id",
      },
    ],
    overrides: [
      { environment: "production", enabled: true, default: "off" },
      {
        environment: "staging",
        default: "on",
        rules: [{ index: 0, scope: "environment", segment: "legacy-browsers", variation: "off" }],
      },
    ],
  });
  assertEquals(flagAsWritten(texts, "payment-banner").variations[1], {
    name: "promo",
    value: {
      show: true,
      text: "Pay in 3 instalments, no fees",
      color: "#0a7d32",
      dismissible: true,
    },
  });
  refused(() => flagAsWritten(texts, "nope"), { message: "There is no flag nope", field: "flag" });
});

Deno.test("rulesAsWritten() gives the rules in force in an environment", () => {
  const text = texts.get("flags/new-checkout.toml")!;
  assertEquals(rulesAsWritten(text, "staging").map((r) => r.scope), ["environment"]);
  assertEquals(rulesAsWritten(text, "production").length, 2);
  assertEquals(rulesAsWritten(text).map((r) => r.segment), ["beta-testers", "eu-customers"]);
});

Deno.test("segmentAsWritten() and environmentsAsWritten() read what forms show", () => {
  assertEquals(segmentAsWritten(texts, "holiday-shoppers"), {
    key: "holiday-shoppers",
    description: "Accounts that ordered during the last holiday season",
    match: "all",
    predicates: [{ attribute: "account.holiday_orders", op: "gt", value: 0 }],
  });
  assertEquals(environmentsAsWritten(texts), {
    description: "Checkout service",
    environments: [
      { key: "production", public_evaluate: false, description: "" },
      { key: "staging", public_evaluate: true, description: "" },
    ],
  });
  assertEquals(environmentsAsWritten(new Map()), { description: "", environments: [] });
  assertEquals(keysAsWritten(texts).flags, [
    "checkout-theme",
    "max-cart-items",
    "new-checkout",
    "payment-banner",
    "search-ranking",
  ]);
});

Deno.test("what is read as written writes back without a change", () => {
  const { flags, segments } = keysAsWritten(texts);
  for (const key of flags) {
    const flag = flagAsWritten(texts, key);
    for (const v of flag.variations) {
      assertEquals(
        setVariationValue(texts, { flag: key, variation: v.name, value: v.value }).size,
        0,
      );
    }
    for (const rule of flag.rules) {
      assertEquals(replaceRule(texts, { flag: key, index: rule.index, rule }).size, 0, key);
    }
    for (const o of flag.overrides) {
      const scope = { flag: key, environment: o.environment };
      assertEquals(setOverrideEnabled(texts, { ...scope, enabled: o.enabled ?? null }).size, 0);
      assertEquals(setOverrideDefault(texts, { ...scope, variation: o.default ?? null }).size, 0);
      for (const rule of o.rules ?? []) {
        assertEquals(replaceRule(texts, { ...scope, index: rule.index, rule }).size, 0);
      }
    }
  }
  for (const key of segments) {
    const s = segmentAsWritten(texts, key);
    assertEquals(
      editSegment(texts, {
        segment: key,
        description: s.description,
        match: s.match as "all",
        predicates: s.predicates,
      }).size,
      0,
    );
  }
  for (const env of environmentsAsWritten(texts).environments) {
    assertEquals(
      setPublicEvaluate(texts, { environment: env.key, public_evaluate: env.public_evaluate }).size,
      0,
    );
  }
});
