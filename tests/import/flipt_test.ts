/**
 * Flipt `features.yml` files (written from Flipt's export format and its
 * schema) imported and evaluated on sample contexts, with the outcome
 * Flipt's evaluation defines.
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { importFlipt } from "../../lib/import/flipt.ts";
import { ImportError } from "../../lib/import/errors.ts";
import { item, modelOf, outcome } from "./evaluate.ts";

const read = (name: string) =>
  Deno.readTextFile(new URL(`./fixtures/flipt/${name}`, import.meta.url));
const result = importFlipt(await read("features.yml"), {
  file: "features.yml",
  envMap: new Map([["default", "production"]]),
});
const model = modelOf(result);
const ev = (flag: string, ctx: Record<string, unknown>) => outcome(model, "production", flag, ctx);

Deno.test("flipt: a namespace is an environment, named with --env-map", () => {
  assertStringIncludes(result.files.get("namespace.toml")!, "[namespace.environments.production]");
});

Deno.test("flipt: a boolean flag's segment rollout, then a threshold, then enabled as the default", () => {
  assertEquals(ev("new_checkout", { email: "ann@flipt.io" }), [true, "TARGETING_MATCH"]);
  assertEquals(
    ev("new_checkout", { targeting_key: "admin-2" })[0],
    true,
    "an entity id constraint",
  );
  assertEquals(ev("new_checkout", { targeting_key: "u1" })[1], "SPLIT");
  assertEquals(ev("new_checkout", {}), [false, "DEFAULT"], "no entity: the flag's enabled (false)");
  let on = 0;
  for (let i = 0; i < 1000; i++) if (ev("new_checkout", { targeting_key: `user-${i}` })[0]) on++;
  assert(on > 400 && on < 600, `50% threshold served true to ${on} of 1000`);
  assert(item(result, "flag", "new_checkout").notes.some((n) => n.includes("another bucket")));
});

Deno.test("flipt: variant rules by segment, AND of segments, and distributions as a rollout", () => {
  assertEquals(ev("colors", { email: "bo@flipt.io" }), ["blue", "TARGETING_MATCH"]);
  assertEquals(ev("colors", { region: "de", paying: true, seats: 120 })[0], "green");
  assertEquals(
    ev("colors", { region: "de", paying: "t", seats: 120 })[0],
    "green",
    "Go's ParseBool",
  );
  const [v, reason] = ev("colors", { region: "de", paying: true, seats: 99, targeting_key: "x" });
  assertEquals(reason, "SPLIT", "not a big account: the 50/30/20 split of everyone");
  assert(["red", "blue", "green"].includes(v as string));
  assertStringIncludes(
    result.files.get("flags/colors.toml")!,
    'variation = "blue", weight = 30000',
  );
});

Deno.test("flipt: attachments are object values; no default variant is a variation none", () => {
  assertEquals(ev("banner", { signed_up: "2026-01-01T00:00:00Z", plan: "pro" })[0], {
    text: "Winter sale",
    discount: 20,
  }, "gte holds for the same instant");
  assertEquals(ev("banner", { signed_up: "2025-12-31T23:59:59Z", plan: "pro" }), [{}, "DEFAULT"]);
  assertEquals(ev("banner", { signed_up: "2026-03-01", plan: "enterprise" })[0], {});
  assertEquals(
    ev("banner", { signed_up: "2026-03-01" })[0],
    {},
    "Flipt: neq on a missing value fails",
  );
  assertEquals(item(result, "flag", "banner").unmapped[0]!.what, "no default variant");
});

Deno.test("flipt: a disabled variant flag serves its default with reason DISABLED", () => {
  assertEquals(ev("old_search", {}), ["on", "DISABLED"]);
});

Deno.test("flipt: a segment without constraints matches everyone, and the report says so", () => {
  const everyone = item(result, "segment", "everyone");
  assert(everyone.written);
  assert(everyone.notes.some((n) => n.includes("every context")));
});

Deno.test("flipt: several namespaces are one flag with per-environment overrides", async () => {
  const r = importFlipt(await read("namespaces.yml"), { file: "n.yml", envMap: new Map() });
  const m = modelOf(r);
  assertEquals(outcome(m, "staging", "search", { email: "a@example.com" })[0], "semantic");
  assertEquals(
    outcome(m, "production", "search", { email: "a@example.com", targeting_key: "k" })[1],
    "SPLIT",
  );
  assertEquals(outcome(m, "production", "search", { email: "a@other.com" })[0], "bm25");
  assertEquals(outcome(m, "staging", "staging_only", {})[0], true);
  assertEquals(outcome(m, "production", "staging_only", {}), [true, "DISABLED"]);
  assert(item(r, "flag", "staging_only").notes.some((n) => n.includes("production")));
  assertEquals(r.items.filter((i) => i.kind === "segment").length, 1, "the same segment once");
});

Deno.test("flipt: a constraint without an equivalent leaves its segment and rules out, reported", () => {
  const r = importFlipt(
    [
      "namespace: default",
      "flags:",
      "  - key: f",
      "    name: F",
      "    enabled: true",
      "    variants: [{key: a, default: true}, {key: b}]",
      "    rules:",
      "      - segment: odd",
      "        distributions: [{variant: b, rollout: 100}]",
      "segments:",
      "  - key: odd",
      "    name: Odd",
      "    match_type: ALL_MATCH_TYPE",
      "    constraints:",
      "      - {type: STRING_COMPARISON_TYPE, property: 'user name', operator: eq, value: x}",
    ].join("\n"),
    { file: "f.yml", envMap: new Map() },
  );
  modelOf(r);
  assertEquals(item(r, "segment", "odd").written, false);
  assertStringIncludes(item(r, "flag", "f").unmapped[0]!.what, "rule 1");
});

Deno.test("flipt: malformed or foreign YAML is an ImportError naming the file", () => {
  for (
    const [input, message] of [
      ["flags: [\n  - key: a\n    name", "f.yml: not YAML"],
      ["- 1\n- 2\n", "f.yml: not a Flipt export"],
      ["features: {}\n", "f.yml: not a Flipt export"],
      ["flags: 3\n", 'f.yml: "flags" is not a list'],
      ["", "f.yml: not a Flipt export: it is empty"],
    ]
  ) {
    const err = assertThrows(
      () => importFlipt(input!, { file: "f.yml", envMap: new Map() }),
      ImportError,
    );
    assertStringIncludes(err.message, message!);
    assert(!err.message.includes("\n"), err.message);
  }
});
