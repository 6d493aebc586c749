/**
 * Authoring segments (lib/flags/authoring/segments.ts): every operator of
 * the predicate engine, references checked (existing, no cycles), long
 * value lists one value a line so that one id is a one-line diff (and
 * fast), deletion refused while anything refers to the segment.
 */
import { assert, assertEquals } from "../../assert.ts";
import { OPERATORS, validatePredicate } from "../../../lib/flags/conditions.ts";
import { compileManifest, evaluateFlag } from "../../../lib/flags/evaluate.ts";
import {
  createSegment,
  deleteSegment,
  editSegment,
  SEGMENT_OPERATORS,
} from "../../../lib/flags/authoring/segments.ts";
import { addRule } from "../../../lib/flags/authoring/rules.ts";
import { applyFileEdits } from "../../../lib/flags/authoring/texts.ts";
import { applied, changedLines, exampleTexts, only, refused, valid } from "./world.ts";

const texts = await exampleTexts();
const EU = texts.get("segments/eu-customers.toml")!;

Deno.test("createSegment() writes a clean segment file", () => {
  const edits = createSegment(texts, {
    key: "nordics",
    description: "Customers in the Nordics",
    match: "any",
    predicates: [
      { attribute: "account.country", op: "in", value: ["DK", "FI", "NO", "SE"] },
      { attribute: "segment.paying-customers", op: "eq", value: true },
    ],
  });
  const [path, text] = only(edits);
  assertEquals(path, "segments/nordics.toml");
  assertEquals(
    text,
    `schema_version = 1
description = "Customers in the Nordics"
match = "any"

[[predicate]]
attribute = "account.country"
op = "in"
value = ["DK", "FI", "NO", "SE"]

[[predicate]]
attribute = "segment.paying-customers"
op = "eq"
value = true
`,
  );
  const m = valid(applied(texts, edits));
  assertEquals(m.segments.nordics!.match, "any");
});

Deno.test("SEGMENT_OPERATORS are the engine's, and createSegment() takes every one", () => {
  assertEquals([...SEGMENT_OPERATORS], [...OPERATORS]);
  const candidates: unknown[] = [
    "pro",
    3,
    true,
    ["a", "b"],
    "1.2.3",
    "^[a-z]+$",
    "2026-01-01T00:00:00Z",
  ];
  const predicates = SEGMENT_OPERATORS.map((op) => {
    const value = candidates.find((v) =>
      "predicate" in validatePredicate({ attribute: "a.b", op, value: v }, "segment")
    );
    assert(value !== undefined, `no sample value for ${op}`);
    return { attribute: "a.b", op, value };
  });
  const edits = createSegment(texts, { key: "every-op", match: "any", predicates });
  const m = valid(applied(texts, edits));
  assertEquals(m.segments["every-op"]!.predicates.map((p) => p.op), [...OPERATORS]);
});

Deno.test("createSegment() refuses a bad predicate, naming its field", () => {
  const one = (p: Record<string, unknown>) => () =>
    createSegment(texts, {
      key: "x",
      predicates: [{ attribute: "a", op: "eq", value: 1 }, p as never],
    });
  refused(one({ attribute: "a", op: "like", value: "x" }), {
    message: 'Unknown operator "like"',
    field: "predicates.1.op",
  });
  refused(one({ attribute: "a", op: "lt", value: "x" }), {
    message: "Lt compares with a number",
    field: "predicates.1.value",
  });
  refused(one({ attribute: "a", op: "in", value: [] }), {
    message: "In takes a non-empty array",
    field: "predicates.1.value",
  });
  refused(one({ attribute: "a b", op: "eq", value: 1 }), {
    message: "is not a dotted attribute path",
    field: "predicates.1.attribute",
  });
  refused(one({ attribute: "segment.paying-customer", op: "eq", value: true }), {
    message: 'Unknown segment "paying-customer"; did you mean "paying-customers"?',
    field: "predicates.1.attribute",
  });
  refused(one({ attribute: "segment.x", op: "eq", value: true }), {
    message: "A segment cannot refer to itself",
    field: "predicates.1.attribute",
  });
  refused(one({ attribute: "segment.beta-testers", op: "in", value: [true] }), {
    message: 'A segment reference takes op "eq"',
    field: "predicates.1.op",
  });
  refused(() => createSegment(texts, { key: "x", predicates: [] }), {
    message: "at least one predicate",
    field: "predicates",
  });
  refused(
    () =>
      createSegment(texts, {
        key: "x",
        match: "some" as "any",
        predicates: [{ attribute: "a", op: "eq", value: 1 }],
      }),
    { message: 'Match is "all"', field: "match" },
  );
  refused(
    () =>
      createSegment(texts, {
        key: "eu-customers",
        predicates: [{ attribute: "a", op: "eq", value: 1 }],
      }),
    { message: "There is already a segment eu-customers", field: "key" },
  );
});

Deno.test("editSegment() refuses a reference that would close a cycle", () => {
  refused(
    () =>
      editSegment(texts, {
        segment: "paying-customers",
        predicates: [
          { attribute: "account.plan", op: "in", value: ["pro", "enterprise"] },
          { attribute: "segment.eu-customers", op: "eq", value: true },
        ],
      }),
    {
      message: "Segment reference cycle: eu-customers -> paying-customers -> eu-customers",
      field: "predicates.1.attribute",
    },
  );
});

Deno.test("editSegment() changes only what differs", () => {
  const [, text] = only(
    editSegment(texts, {
      segment: "eu-customers",
      match: "all",
      predicates: [
        {
          attribute: "account.country",
          op: "in",
          value: ["AT", "BE", "DE", "ES", "FR", "IE", "IT", "NL", "PL", "PT", "SE"],
        },
        { attribute: "segment.paying-customers", op: "eq", value: true },
      ],
    }),
  );
  assertEquals(changedLines(EU, text), {
    added: ['value = ["AT", "BE", "DE", "ES", "FR", "IE", "IT", "NL", "PL", "PT", "SE"]'],
    removed: ['value = ["AT", "BE", "DE", "ES", "FR", "IE", "IT", "NL", "PL", "SE"]'],
  });
  const [, described] = only(editSegment(texts, { segment: "eu-customers", description: "" }));
  assertEquals(changedLines(EU, described), {
    added: [],
    removed: ['description = "Paying customers in the EU"'],
  });
  const [, any] = only(editSegment(texts, { segment: "eu-customers", match: "any" }));
  assertEquals(changedLines(EU, any), { added: ['match = "any"'], removed: ['match = "all"'] });
  const [, one] = only(
    editSegment(texts, {
      segment: "eu-customers",
      predicates: [{ attribute: "segment.paying-customers", op: "eq", value: true }],
    }),
  );
  assertEquals(
    one,
    EU.replace(
      '[[predicate]]\nattribute = "account.country"\nop = "in"\n' +
        'value = ["AT", "BE", "DE", "ES", "FR", "IE", "IT", "NL", "PL", "SE"]\n\n',
      "",
    ),
  );
});

/** A manifest with a segment of `n` user ids, and a flag that uses it. */
function withIds(n: number): { texts: Map<string, string>; ids: string[] } {
  const ids = Array.from({ length: n }, (_, i) => `user-${String(i).padStart(6, "0")}`);
  let out = applyFileEdits(
    texts,
    createSegment(texts, {
      key: "early-access",
      description: "Users invited to the early access",
      predicates: [{ attribute: "user.id", op: "in", value: ids }],
    }),
  );
  out = applyFileEdits(
    out,
    addRule(out, {
      flag: "new-checkout",
      at: 0,
      rule: { segment: "early-access", variation: "on" },
    }),
  );
  return { texts: out, ids };
}

Deno.test("a list of 10,000 ids is written one a line, and one id edits as one line, fast", () => {
  const { texts: start, ids } = withIds(10_000);
  const before = start.get("segments/early-access.toml")!;
  assert(before.includes('value = [\n  "user-000000",\n  "user-000001",\n'), before.slice(0, 300));
  assertEquals(before.split("\n").length, 10_000 + 10);
  const edit = (value: string[]) => {
    const t0 = performance.now();
    const [, text] = only(editSegment(start, {
      segment: "early-access",
      predicates: [{ attribute: "user.id", op: "in", value }],
    }));
    return { text, ms: performance.now() - t0 };
  };
  // Nothing changes, nothing is written (and the code is warm).
  assertEquals(
    editSegment(start, {
      segment: "early-access",
      predicates: [{ attribute: "user.id", op: "in", value: ids }],
    }).size,
    0,
  );
  const added = edit([...ids.slice(0, 5000), "user-new", ...ids.slice(5000)]);
  assertEquals(changedLines(before, added.text), { added: ['  "user-new",'], removed: [] });
  const removed = edit([...ids.slice(0, 4000), ...ids.slice(4001)]);
  assertEquals(changedLines(before, removed.text), { added: [], removed: ['  "user-004000",'] });
  const changed = edit(ids.map((id, i) => i === 9999 ? "user-last" : id));
  assertEquals(changedLines(before, changed.text), {
    added: ['  "user-last",'],
    removed: ['  "user-009999",'],
  });
  // A generous bound: the edit takes tens of milliseconds (bench/authoring_bench.ts);
  // an edit quadratic in the list (as toml-patch's own diff is) takes seconds.
  for (const { ms } of [added, removed, changed]) assert(ms < 2000, `${ms.toFixed(0)} ms`);
  console.log(
    `editing a 10,000-id list: ${
      [added, removed, changed].map(({ ms }) => `${ms.toFixed(1)} ms`).join(", ")
    }`,
  );
  const m = compileManifest(
    valid(applyFileEdits(start, new Map([["segments/early-access.toml", added.text]]))),
    1,
  );
  assertEquals(
    evaluateFlag(m, "production", "new-checkout", { user: { id: "user-new" } }).variation,
    "on",
  );
});

Deno.test("deleteSegment() deletes an orphan, and refuses a used segment naming what uses it", () => {
  const edits = deleteSegment(texts, { segment: "holiday-shoppers" });
  assertEquals([...edits], [["segments/holiday-shoppers.toml", null]]);
  applied(texts, edits);
  const err = refused(() => deleteSegment(texts, { segment: "paying-customers" }), {
    message:
      "Segment paying-customers is used by flag max-cart-items (rule 1) and segment eu-customers (predicate 2): " +
      "remove those first",
    field: "segment",
  });
  assertEquals(err.details?.referenced_by, [
    { kind: "flag", key: "max-cart-items", where: "rule 1", path: "rule[0]" },
    { kind: "segment", key: "eu-customers", where: "predicate 2", path: "predicate[1]" },
  ]);
  refused(() => deleteSegment(texts, { segment: "legacy-browsers" }), {
    message:
      "Segment legacy-browsers is used by flag new-checkout (rule 1 in staging): remove that first",
    field: "segment",
  });
});
