import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import type {
  EnvironmentOverride,
  Flag,
  Manifest,
  Predicate,
  Rule,
  Segment,
} from "../../lib/flags/model.ts";
import {
  MAX_VALUE_CHARS,
  type ValueChange,
  valueChangeLines,
  valueChanges,
  valueChangesByFiles,
} from "../../lib/flags/value_changes.ts";

const NS = `schema_version = 1
[namespace]
description = "Checkout"
[namespace.environments.production]
[namespace.environments.staging]
`;

const THEME = `schema_version = 1
type = "string"
default = "light"
[variations]
light = "#fff"
dark = "#000"
[[rule]]
segment = "eu"
variation = "dark"
[[rule]]
rollout = [{ variation = "dark", weight = 25 }, { variation = "light", weight = 75 }]
`;

const EU = `schema_version = 1
[[predicate]]
attribute = "country"
op = "in"
value = ["DE"]
`;

function files(extra: Record<string, string> = {}): Record<string, string> {
  return { "namespace.toml": NS, "flags/theme.toml": THEME, "segments/eu.toml": EU, ...extra };
}

/** The lines of the changes between the base files and these. */
function lines(after: Record<string, string>, before = files()): string[] {
  return valueChangeLines(valueChangesByFiles(before, after));
}

Deno.test("valueChanges(): equal models, comments and formatting give nothing", () => {
  assertEquals(valueChangesByFiles(files(), files()), []);
  const reformatted = files({
    "flags/theme.toml": "# colours\n" + THEME.replace('light = "#fff"', "light   =   '#fff'")
      .replace(
        'weight = 25 }, { variation = "light", weight = 75',
        'weight = 25000 }, { variation = "light", weight = 75000',
      ),
  });
  assertEquals(valueChangesByFiles(files(), reformatted), []);
});

Deno.test("valueChanges(): a flag's default, variations and description", () => {
  const after = files({
    "flags/theme.toml": THEME.replace(
      'default = "light"',
      'description = "Colours"\ndefault = "dark"',
    )
      .replace('dark = "#000"', 'dark = "#111"\nblue = "#00f"'),
  });
  assertEquals(valueChangesByFiles(files(), after), [{
    environment: null,
    subject: "flag",
    key: "theme",
    change: "changed",
    what: [
      'description: "" → "Colours"',
      'variation "dark": "#000" → "#111"',
      'variation "blue" added: "#00f"',
      "default: light → dark",
    ],
  }]);
});

Deno.test("valueChanges(): rules, weights in percent, bucket_by", () => {
  const after = files({
    "flags/theme.toml": THEME.replace(
      'rollout = [{ variation = "dark", weight = 25 }, { variation = "light", weight = 75 }]',
      'bucket_by = "user.id"\nrollout = [{ variation = "dark", weight = 50 }, { variation = "light", weight = 50 }]',
    ),
  });
  assertEquals(lines(after), [
    "flag theme: rule 2: bucket_by targeting_key → user.id",
    "flag theme: rule 2: rollout dark 25% → 50%",
    "flag theme: rule 2: rollout light 75% → 50%",
  ]);
  const segmentAndVariation = files({
    "flags/theme.toml": THEME.replace('segment = "eu"\nvariation = "dark"', 'variation = "light"'),
  });
  assertEquals(lines(segmentAndVariation), [
    "flag theme: rule 1: segment eu → every context",
    "flag theme: rule 1: serves dark → serves light",
  ]);
});

Deno.test("valueChanges(): an inserted rule is one line; the rules after it are not listed", () => {
  const after = files({
    "flags/theme.toml": THEME.replace("[[rule]]", '[[rule]]\nvariation = "light"\n[[rule]]'),
  });
  assertEquals(lines(after), ["flag theme: rule 1 added: every context, serves light"]);
  assertEquals(lines(files(), after), ["flag theme: rule 1 removed: every context, serves light"]);
  // A rule that changed and moved names both places.
  const moved = files({
    "flags/theme.toml": THEME.replace("[[rule]]", '[[rule]]\nvariation = "light"\n[[rule]]')
      .replace(
        'rollout = [{ variation = "dark", weight = 25 }, { variation = "light", weight = 75 }]',
        'variation = "dark"',
      ),
  });
  assertEquals(lines(moved), [
    "flag theme: rule 1 added: every context, serves light",
    "flag theme: rule 2 → 3: split dark 25% / light 75% by targeting_key → serves dark",
  ]);
});

Deno.test("valueChanges(): overrides per environment", () => {
  const after = files({
    "flags/theme.toml": THEME + "[environments.production]\nenabled = false\n" +
      '[environments.staging]\ndefault = "dark"\nrule = []\n',
  });
  assertEquals(valueChangesByFiles(files(), after), [
    {
      environment: "production",
      subject: "flag",
      key: "theme",
      change: "added",
      what: ["enabled: true → false"],
    },
    {
      environment: "staging",
      subject: "flag",
      key: "theme",
      change: "added",
      what: [
        "default: flag's (light) → dark",
        "rules: flag's → own (0 rules)",
        "rule 1 removed: segment eu, serves dark",
        "rule 2 removed: every context, split dark 25% / light 75% by targeting_key",
      ],
    },
  ]);
  assertEquals(lines(files(), after), [
    "flag theme in production removed: enabled: false → true",
    "flag theme in staging removed: default: dark → flag's (light)",
    "flag theme in staging removed: rules: own (0 rules) → flag's",
    "flag theme in staging removed: rule 1 added: segment eu, serves dark",
    "flag theme in staging removed: rule 2 added: every context, split dark 25% / light 75% by targeting_key",
  ]);
  // An override table that changes nothing still shows.
  assertEquals(lines(files({ "flags/theme.toml": THEME + "[environments.staging]\n" })), [
    "flag theme in staging added: no effect",
  ]);
});

Deno.test("valueChanges(): segments, predicates and match", () => {
  const after = files({
    "segments/eu.toml": EU.replace('["DE"]', '["DE", "FR"]').replace(
      "schema_version = 1\n",
      'schema_version = 1\nmatch = "any"\n',
    ) + '[[predicate]]\nattribute = "plan"\nop = "eq"\nvalue = "pro"\n',
  });
  assertEquals(lines(after), [
    "segment eu: match: all → any",
    'segment eu: predicate 1: value ["DE"] → ["DE","FR"]',
    'segment eu: predicate 2 added: plan eq "pro"',
  ]);
  const opChange = files({ "segments/eu.toml": EU.replace('op = "in"', 'op = "not_in"') });
  assertEquals(lines(opChange), ["segment eu: predicate 1: op in → not_in"]);
  const added = files({ "segments/new.toml": EU });
  assertEquals(lines(added), [
    "segment new added: match: all",
    'segment new added: predicate 1: country in ["DE"]',
  ]);
  assertEquals(lines(files(), added), ["segment new removed"]);
});

Deno.test("valueChanges(): environments and the namespace", () => {
  const after = files({
    "namespace.toml": NS.replace('"Checkout"', '"Checkout service"')
      .replace(
        "[namespace.environments.staging]\n",
        "[namespace.environments.qa]\npublic_evaluate = true\n",
      ),
  });
  const prodPublic = files({
    "namespace.toml": NS.replace(
      "[namespace.environments.production]\n",
      "[namespace.environments.production]\npublic_evaluate = true\n",
    ),
  });
  assertEquals(lines(after), [
    'namespace: description: "Checkout" → "Checkout service"',
    "environment qa added: public_evaluate: true",
    "environment staging removed",
  ]);
  assertEquals(valueChangesByFiles(files(), prodPublic), [{
    environment: "production",
    subject: "environment",
    key: "production",
    change: "changed",
    what: ["public_evaluate: false → true"],
  }]);
});

Deno.test("valueChanges(): flags added and removed, in key order", () => {
  const after = files({ "flags/b.toml": THEME, "flags/a.toml": THEME });
  const changes = valueChangesByFiles(files(), after);
  assertEquals(changes.map((c) => [c.key, c.change]), [["a", "added"], ["b", "added"]]);
  assertEquals(changes[0]!.what, [
    "type: string",
    'variations: {"light":"#fff","dark":"#000"}',
    "default: light",
    "rule 1: segment eu, serves dark",
    "rule 2: every context, split dark 25% / light 75% by targeting_key",
  ]);
  assertEquals(lines(files(), after), ["flag a removed", "flag b removed"]);
});

Deno.test("valueChanges(): long values are shortened around their first difference", () => {
  const long = "x".repeat(200);
  const flag = (v: string) =>
    files({
      "flags/theme.toml": THEME.replace('dark = "#000"', `dark = "${v}"`),
    });
  const [line] = lines(flag(long + "B" + long), flag(long + "A" + long));
  assertEquals(
    line,
    `flag theme: variation "dark": …${"x".repeat(10)}A${"x".repeat(47)}… → …${"x".repeat(10)}B${
      "x".repeat(47)
    }…`,
  );
  const [start] = lines(flag("B" + long), flag("A" + long));
  assertEquals(start, `flag theme: variation "dark": "A${"x".repeat(56)}… → "B${"x".repeat(56)}…`);
});

// ---------------------------------------------------------------------------
// Properties

const NAMES = ["a", "b", "c"];
const SEGS = ["s1", "s2"];

const ruleArb: fc.Arbitrary<Rule> = fc.oneof(
  fc.record({
    segment: fc.constantFrom(...SEGS),
    variation: fc.constantFrom(...NAMES),
    bucket_by: fc.constant("targeting_key"),
  }, { requiredKeys: ["variation", "bucket_by"] }),
  fc.record({
    segment: fc.constantFrom(...SEGS),
    bucket_by: fc.constantFrom("targeting_key", "user.id"),
    rollout: fc.shuffledSubarray(NAMES, { minLength: 1 }).chain((vs) =>
      fc.tuple(
        ...vs.map((v) =>
          fc.constantFrom(0, 50000, 100000).map((weight) => ({ variation: v, weight }))
        ),
      )
    ),
  }, { requiredKeys: ["bucket_by", "rollout"] }),
);

const overrideArb: fc.Arbitrary<EnvironmentOverride> = fc.record({
  enabled: fc.boolean(),
  default: fc.constantFrom(...NAMES),
  rules: fc.array(ruleArb, { maxLength: 3 }),
}, { requiredKeys: ["enabled"] });

const valueArb = fc.oneof(
  fc.constantFrom("x", "y"),
  fc.string({ maxLength: 150, unit: "grapheme" }).filter((s) => !s.includes("→")),
);

const flagArb = (key: string): fc.Arbitrary<Flag> =>
  fc.record({
    key: fc.constant(key),
    description: fc.constantFrom("", "d"),
    type: fc.constant("string" as const),
    default: fc.constantFrom(...NAMES),
    variations: fc.record({ a: valueArb, b: valueArb, c: valueArb }, { requiredKeys: ["a"] }),
    rules: fc.array(ruleArb, { maxLength: 4 }),
    environments: fc.record({ production: overrideArb, staging: overrideArb }, {
      requiredKeys: [],
    }),
  });

const predicateArb: fc.Arbitrary<Predicate> = fc.oneof(
  fc.record({
    attribute: fc.constantFrom("country", "plan"),
    op: fc.constantFrom("eq" as const, "neq" as const),
    value: fc.constantFrom("DE", "FR"),
  }),
  fc.record({
    attribute: fc.constant("country"),
    op: fc.constantFrom("in" as const, "not_in" as const),
    value: fc.array(fc.constantFrom("DE", "FR", "NL"), { minLength: 1, maxLength: 3 }),
  }),
);

const segmentArb = (key: string): fc.Arbitrary<Segment> =>
  fc.record({
    key: fc.constant(key),
    description: fc.constantFrom("", "d"),
    match: fc.constantFrom("all" as const, "any" as const),
    predicates: fc.array(predicateArb, { minLength: 1, maxLength: 3 }),
  });

const manifestArb: fc.Arbitrary<Manifest> = fc.record({
  namespace: fc.record({
    description: fc.constantFrom("", "d"),
    environments: fc.record({
      production: fc.record({ public_evaluate: fc.boolean() }),
      staging: fc.record({ public_evaluate: fc.boolean() }),
    }, { requiredKeys: [] }),
  }),
  flags: fc.record({ f: flagArb("f"), g: flagArb("g") }, { requiredKeys: [] }),
  segments: fc.record({ s1: segmentArb("s1"), s2: segmentArb("s2") }, { requiredKeys: [] }),
});

/** Two manifests: unrelated, or equal but for one part drawn again. */
const pairArb: fc.Arbitrary<[Manifest, Manifest]> = fc.oneof(
  fc.tuple(manifestArb, manifestArb),
  fc.tuple(manifestArb, manifestArb, fc.constantFrom("namespace", "flags", "segments"))
    .map(([x, y, part]) => [x, { ...x, [part]: y[part] }] as [Manifest, Manifest]),
  manifestArb.map((x) => [x, structuredClone(x)] as [Manifest, Manifest]),
);

Deno.test("valueChanges() is empty exactly when the models are equal (property)", () => {
  fc.assert(
    fc.property(pairArb, ([x, y]) => {
      const changes = valueChanges(x, y);
      assertEquals(changes.length === 0, JSON.stringify(x) === JSON.stringify(y));
      assertEquals(valueChanges(x, y), changes, "deterministic");
      // Every entry says something, except removals.
      for (const c of changes) assert(c.change === "removed" || c.what.length > 0);
      // Sorted: subjects in order, keys byte-wise, a flag before its overrides.
      const rank = (
        c: ValueChange,
      ) => [
        ["namespace", "environment", "flag", "segment"].indexOf(c.subject),
        c.key,
        c.environment ?? "",
      ];
      const ranks = changes.map((c) => JSON.stringify(rank(c)));
      assertEquals(ranks, [...ranks].sort());
      // One short line per change.
      for (const line of valueChangeLines(changes)) {
        assert(!line.includes("\n"), line);
        assert(line.length < 2 * MAX_VALUE_CHARS + 100, line);
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("valueChanges() shows both sides of a changed value apart (property)", () => {
  fc.assert(
    fc.property(valueArb, valueArb, (b, a) => {
      fc.pre(b !== a);
      const m = (v: string): Manifest => ({
        namespace: { description: "", environments: {} },
        flags: {
          f: {
            key: "f",
            description: "",
            type: "string",
            default: "v",
            variations: { v },
            rules: [],
            environments: {},
          },
        },
        segments: {},
      });
      const [c] = valueChanges(m(b), m(a));
      const [sides] = c!.what;
      const prefix = 'variation "v": ';
      assert(sides!.startsWith(prefix), sides);
      const [left, right] = sides!.slice(prefix.length).split(" → ");
      assert(left !== right, sides);
      assert(!/[\ud800-\udbff]$|^[\udc00-\udfff]/.test(left!.replace(/…$/, "")), sides);
    }),
    { numRuns: 300 },
  );
});
