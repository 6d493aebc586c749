/**
 * Why a context got a value, in words (lib/flags/explain.ts).
 */
import { assertEquals } from "../assert.ts";
import { explainResult, ruleParts, ruleSummary, weightPercent } from "../../lib/flags/explain.ts";
import type { EvaluationResult } from "../../lib/flags/evaluate.ts";
import type { Flag } from "../../lib/flags/model.ts";

const FLAG: Flag = {
  key: "checkout",
  description: "",
  type: "boolean",
  default: "off",
  variations: { on: true, off: false },
  rules: [
    { segment: "beta", variation: "on", bucket_by: "targeting_key" },
    {
      segment: "eu",
      rollout: [{ variation: "on", weight: 25000 }, { variation: "off", weight: 75000 }],
      bucket_by: "account.id",
    },
  ],
  environments: {
    staging: { enabled: false },
    dev: { enabled: true, rules: [{ variation: "on", bucket_by: "targeting_key" }] },
  },
};

function result(r: Partial<EvaluationResult>): EvaluationResult {
  return { flag: "checkout", value: true, variation: "on", reason: "DEFAULT", version: 1, ...r };
}

Deno.test("weights read as percentages", () => {
  assertEquals(weightPercent(100000), "100%");
  assertEquals(weightPercent(25000), "25%");
  assertEquals(weightPercent(1), "0.001%");
});

Deno.test("a rule is named by its place from 1, its segment and what it serves", () => {
  assertEquals(ruleSummary(FLAG.rules[0]!, 0), "rule 1: segment beta, serves on");
  assertEquals(
    ruleSummary(FLAG.rules[1]!, 1),
    "rule 2: segment eu, split on 25% / off 75% by account.id",
  );
  assertEquals(ruleParts(FLAG.environments.dev!.rules![0]!, 0), {
    label: "rule 1",
    action: "serves on",
  });
  assertEquals(
    ruleSummary(FLAG.environments.dev!.rules![0]!, 0),
    "rule 1: every context, serves on",
  );
});

Deno.test("a targeting match names the rule and its segment", () => {
  const why = explainResult(
    FLAG,
    "production",
    result({ reason: "TARGETING_MATCH", rule_index: 0 }),
  );
  assertEquals(why.text, "rule 1: segment beta, serves on");
  assertEquals(why.rule?.segment, "beta");
  assertEquals(why.outcome, undefined);
});

Deno.test("a split names the rule and the variation the context's bucket got", () => {
  const why = explainResult(
    FLAG,
    "production",
    result({ reason: "SPLIT", rule_index: 1, variation: "off", value: false }),
  );
  assertEquals(
    why.text,
    "rule 2: segment eu, split on 25% / off 75% by account.id: this context's bucket got off",
  );
  assertEquals(why.outcome, "this context's bucket got off");
});

Deno.test("the environment's own rules explain its results", () => {
  const why = explainResult(FLAG, "dev", result({ reason: "TARGETING_MATCH", rule_index: 0 }));
  assertEquals(why.text, "rule 1: every context, serves on");
});

Deno.test("default, disabled and error results say so", () => {
  const off = { variation: "off", value: false };
  assertEquals(
    explainResult(FLAG, "production", result(off)).text,
    "none of 2 rules matched: the default off",
  );
  assertEquals(
    explainResult({ ...FLAG, rules: [] }, "production", result(off)).text,
    "no rules: the default off",
  );
  assertEquals(
    explainResult(FLAG, "staging", result({ ...off, reason: "DISABLED" })).text,
    "disabled in staging: every context gets the default off",
  );
  assertEquals(
    explainResult(
      undefined,
      "production",
      result({
        reason: "ERROR",
        value: null,
        variation: null,
        error_code: "FLAG_NOT_FOUND",
        error_message: 'flag "x" does not exist',
      }),
    ).text,
    'flag "x" does not exist',
  );
});

Deno.test("a rule index the manifest does not have is named without detail", () => {
  const why = explainResult(
    FLAG,
    "production",
    result({ reason: "TARGETING_MATCH", rule_index: 7 }),
  );
  assertEquals(why, { text: "rule 8" });
});
