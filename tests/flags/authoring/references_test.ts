/**
 * Who refers to what (lib/flags/authoring/references.ts), on the example
 * namespace: segments named by flag rules of every scope and by other
 * segments, environments named by overrides, variations named by
 * defaults, rules and rollouts; and how references read in a refusal.
 */
import { assertEquals } from "../../assert.ts";
import {
  describeReferences,
  environmentReferences,
  segmentReferences,
  variationReferences,
} from "../../../lib/flags/authoring/references.ts";
import { readData } from "../../../lib/flags/authoring/edit_toml.ts";
import { exampleTexts } from "./world.ts";

const texts = await exampleTexts();

Deno.test("segmentReferences() finds flag rules of every scope and segment predicates", () => {
  assertEquals(segmentReferences(texts, "internal-staff"), [
    { kind: "flag", key: "checkout-theme", where: "rule 1", path: "rule[0]" },
    { kind: "segment", key: "beta-testers", where: "predicate 2", path: "predicate[1]" },
  ]);
  assertEquals(segmentReferences(texts, "legacy-browsers"), [
    {
      kind: "override",
      key: "new-checkout",
      where: "rule 1 in staging",
      path: "environments.staging.rule[0]",
    },
  ]);
  assertEquals(segmentReferences(texts, "holiday-shoppers"), []);
});

Deno.test("segmentReferences() skips files that do not parse (the validator reports them)", () => {
  const broken = new Map([...texts, ["flags/broken.toml", "[[rule]\nsegment = "]]);
  assertEquals(segmentReferences(broken, "holiday-shoppers"), []);
});

Deno.test("environmentReferences() names each flag that overrides the environment", () => {
  assertEquals(environmentReferences(texts, "production").map((r) => r.key), [
    "new-checkout",
    "payment-banner",
  ]);
  const dotted = new Map([["flags/a.toml", '[environments."eu.prod"]\nenabled = false\n']]);
  assertEquals(environmentReferences(dotted, "eu.prod"), [
    {
      kind: "override",
      key: "a",
      where: "the override of eu.prod",
      path: 'environments."eu.prod"',
    },
  ]);
});

Deno.test("variationReferences() finds defaults, rules and rollout entries in every scope", () => {
  const doc = readData(texts.get("flags/new-checkout.toml")!, { file: "f", editor: "e" });
  assertEquals(variationReferences("new-checkout", doc, "off").map((r) => r.path), [
    "default",
    "rule[1]",
    "environments.production.default",
    "environments.staging.rule[0]",
  ]);
});

Deno.test("describeReferences() groups places by flag and segment", () => {
  assertEquals(
    describeReferences([
      { kind: "flag", key: "a", where: "rule 1", path: "rule[0]" },
      { kind: "override", key: "a", where: "rule 2 in staging", path: "" },
      { kind: "flag", key: "b", where: "rule 3", path: "rule[2]" },
    ]),
    "flags a (rule 1, rule 2 in staging), b (rule 3)",
  );
  assertEquals(
    describeReferences([
      { kind: "segment", key: "s", where: "predicate 1", path: "predicate[0]" },
      { kind: "segment", key: "t", where: "predicate 2", path: "predicate[1]" },
    ]),
    "segments s (predicate 1), t (predicate 2)",
  );
});
