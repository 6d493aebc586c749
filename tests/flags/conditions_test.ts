import { assert, assertEquals } from "../assert.ts";
import {
  attributeType,
  compileAll,
  compilePredicate,
  type Context,
  lookup,
  OPERATORS,
  type Predicate,
  refName,
  validatePredicate,
} from "../../lib/flags/conditions.ts";

const none = () => false;

function compile(raw: Record<string, unknown>, prefix = "qualifier") {
  const r = validatePredicate(raw, prefix);
  if (!("predicate" in r)) throw new Error(`invalid: ${JSON.stringify(r.problems)}`);
  return compilePredicate(r.predicate, prefix);
}

function problems(raw: unknown, prefix = "qualifier"): string[] {
  const r = validatePredicate(raw, prefix);
  return "problems" in r ? r.problems.map((p) => `${p.key}: ${p.message}`) : [];
}

/** For each operator: a value, contexts where it holds, and where it does not. */
const CASES: Record<
  (typeof OPERATORS)[number],
  { value: unknown; holds: unknown[]; fails: unknown[] }
> = {
  eq: { value: "pro", holds: ["pro"], fails: ["free", 1, true] },
  neq: { value: "pro", holds: ["free", 3], fails: ["pro"] },
  in: { value: ["DE", "FR"], holds: ["DE", "FR"], fails: ["NL", 1] },
  not_in: { value: ["DE", "FR"], holds: ["NL"], fails: ["DE", { a: 1 }] },
  lt: { value: 10, holds: [9, -1.5], fails: [10, 11, "5"] },
  lte: { value: 10, holds: [10, 9], fails: [10.5, "10"] },
  gt: { value: 10, holds: [11, 10.01], fails: [10, 9, "11"] },
  gte: { value: 10, holds: [10, 11], fails: [9.99, "10"] },
  starts_with: { value: "eu-", holds: ["eu-west"], fails: ["us-east", 5] },
  ends_with: { value: ".com", holds: ["a.com"], fails: ["a.org", 1] },
  contains: { value: "beta", holds: ["pre-beta-1", ["alpha", "beta"]], fails: ["alpha", ["x"]] },
  matches: { value: "^[a-z]+@example\\.com$", holds: ["ann@example.com"], fails: ["ann@x.com", 7] },
  exists: { value: true, holds: ["x", 0, false, null], fails: [] },
  semver_eq: { value: "1.2.3", holds: ["1.2.3"], fails: ["1.2.4", "not-a-version", 1] },
  semver_lt: { value: "2.0.0", holds: ["1.9.9", "2.0.0-rc.1"], fails: ["2.0.0", "10.0.0", "x"] },
  semver_gt: { value: "2.0.0", holds: ["2.0.1", "10.0.0"], fails: ["2.0.0", "1.10.0", "x"] },
  before: {
    value: "2026-01-01T00:00:00Z",
    holds: ["2025-12-31T23:59:59.999Z", "2026-01-01T00:59:59+01:00", "2025-12-31"],
    fails: ["2026-01-01T00:00:00Z", "2026-01-01", "2027-01-01", "yesterday", 1767225599999],
  },
  after: {
    value: "2026-01-01",
    holds: ["2026-01-01T00:00:00.001Z", "2025-12-31T23:30:00-00:31", "2026-01-02"],
    fails: ["2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00", "2025-12-31", "tomorrow", true],
  },
};

for (const op of OPERATORS) {
  const c = CASES[op];
  Deno.test(`compilePredicate() ${op} holds and does not hold`, () => {
    const m = compile({ attribute: "a.b", op, value: c.value });
    for (const v of c.holds) assert(m({ a: { b: v } }, none), `${op} ${JSON.stringify(v)} holds`);
    for (const v of c.fails) {
      assert(!m({ a: { b: v } }, none), `${op} ${JSON.stringify(v)} does not hold`);
    }
  });
  Deno.test(`compilePredicate() ${op} does not hold when the attribute is absent`, () => {
    const m = compile({ attribute: "a.b", op, value: c.value });
    for (const ctx of [{}, { a: {} }, { a: "scalar" }, { a: [1] }] as Context[]) {
      assert(!m(ctx, none), `${op} on ${JSON.stringify(ctx)}`);
    }
  });
}

Deno.test("compilePredicate() exists with false holds only when absent", () => {
  const m = compile({ attribute: "a", op: "exists", value: false });
  assert(m({}, none));
  assert(!m({ a: 1 }, none));
});

Deno.test("compilePredicate() null attributes count as absent except for exists", () => {
  assert(!compile({ attribute: "a", op: "neq", value: "x" })({ a: null }, none));
  assert(!compile({ attribute: "a", op: "not_in", value: ["x"] })({ a: null }, none));
  assert(compile({ attribute: "a", op: "exists", value: true })({ a: null }, none));
});

Deno.test("compilePredicate() eq compares booleans and numbers strictly", () => {
  assert(compile({ attribute: "on", op: "eq", value: true })({ on: true }, none));
  assert(!compile({ attribute: "on", op: "eq", value: true })({ on: "true" }, none));
  assert(compile({ attribute: "n", op: "eq", value: 3 })({ n: 3 }, none));
  assert(!compile({ attribute: "n", op: "eq", value: 3 })({ n: "3" }, none));
});

Deno.test("compilePredicate() reads references through the lookup", () => {
  const m = compile({ attribute: "qualifier.beta", op: "eq", value: true });
  assert(m({}, (n) => n === "beta"));
  assert(!m({}, () => false));
  const neg = compile({ attribute: "qualifier.beta", op: "eq", value: false });
  assert(neg({}, () => false));
  assert(!neg({}, () => true));
});

Deno.test("compileAll() all and any", () => {
  const ps: Predicate[] = [
    { attribute: "a", op: "eq", value: 1 },
    { attribute: "b", op: "eq", value: 2 },
  ];
  const all = compileAll(ps, "all", "qualifier");
  const any = compileAll(ps, "any", "qualifier");
  assert(all({ a: 1, b: 2 }, none));
  assert(!all({ a: 1 }, none));
  assert(any({ b: 2 }, none));
  assert(!any({}, none));
  assert(compileAll([], "all", "qualifier")({}, none));
  assert(!compileAll([], "any", "qualifier")({}, none));
});

Deno.test("lookup() reads nested paths and flat dotted keys", () => {
  assertEquals(lookup({ a: { b: { c: 1 } } }, "a.b.c"), 1);
  assertEquals(lookup({ "a.b": 2 }, "a.b"), 2);
  assertEquals(lookup({ a: null }, "a.b"), undefined);
  assertEquals(lookup({}, "constructor"), undefined);
  assertEquals(lookup({ a: {} }, "a.toString"), undefined);
});

Deno.test("refName() recognises references", () => {
  assertEquals(refName("qualifier.x", "qualifier"), "x");
  assertEquals(refName("qualifier.", "qualifier"), undefined);
  assertEquals(refName("qualifiers.x", "qualifier"), undefined);
  assertEquals(refName("segment.x", "qualifier"), undefined);
});

Deno.test("attributeType() follows the compared value", () => {
  const t = (op: Predicate["op"], value: Predicate["value"]) =>
    attributeType({ attribute: "a", op, value });
  assertEquals(t("eq", "x"), "string");
  assertEquals(t("eq", true), "boolean");
  assertEquals(t("eq", 1), "number");
  assertEquals(t("in", [1, 2]), "number");
  assertEquals(t("lt", 1), "number");
  assertEquals(t("matches", "x"), "string");
  assertEquals(t("semver_gt", "1.0.0"), "string");
  assertEquals(t("after", "2026-01-01T00:00:00Z"), "string");
  assertEquals(t("exists", true), undefined);
});

Deno.test("validatePredicate() accepts every operator with a fitting value", () => {
  for (const op of OPERATORS) {
    assertEquals(problems({ attribute: "a", op, value: CASES[op].value }), []);
  }
});

Deno.test("validatePredicate() refuses malformed predicates", () => {
  assertEquals(problems("x"), [": a predicate must be a table"]);
  assertEquals(problems({ attribute: "a", op: "eq", value: 1, extra: 1 }), [
    'extra: unknown key "extra"',
  ]);
  assertEquals(problems({ attribute: "a b", op: "eq", value: 1 }), [
    'attribute: "a b" is not a dotted attribute path',
  ]);
  assertEquals(problems({ attribute: "a..b", op: "eq", value: 1 }).length, 1);
  assertEquals(problems({ op: "eq", value: 1 }), [
    "attribute: attribute is required and must be a string",
  ]);
  assert(
    problems({ attribute: "a", op: "like", value: 1 })[0]!.startsWith(
      'op: unknown operator "like"',
    ),
  );
  assertEquals(problems({ attribute: "a", op: "eq" }), ["value: value is required"]);
});

Deno.test("validatePredicate() refuses values that do not fit the operator", () => {
  const bad: [string, unknown][] = [
    ["eq", [1]],
    ["eq", { a: 1 }],
    ["neq", null],
    ["in", []],
    ["in", "DE"],
    ["in", ["DE", 1]],
    ["not_in", [{ a: 1 }]],
    ["lt", "1"],
    ["lte", true],
    ["gt", Number.NaN],
    ["gte", [1]],
    ["starts_with", 1],
    ["ends_with", true],
    ["contains", 3],
    ["matches", 1],
    ["exists", "yes"],
    ["semver_eq", 1],
  ];
  for (const [op, value] of bad) {
    const p = problems({ attribute: "a", op, value });
    assertEquals(p.length, 1, `${op} ${JSON.stringify(value)}`);
    assert(p[0]!.startsWith("value: "), p[0]);
  }
});

Deno.test("validatePredicate() refuses RE2-unsafe and invalid regular expressions", () => {
  for (const re of ["(?=a)b", "(?!a)b", "a(?<=b)", "a(?<!b)", "(a)\\1", "(?<n>a)\\k<n>"]) {
    assertEquals(problems({ attribute: "a", op: "matches", value: re }), [
      "value: matches accepts the RE2-safe subset: no backreferences or lookaround",
    ], re);
  }
  const invalid = problems({ attribute: "a", op: "matches", value: "(unclosed" });
  assert(invalid[0]!.startsWith("value: invalid regular expression"), invalid[0]);
  assertEquals(problems({ attribute: "a", op: "matches", value: "^(?<name>[a-z]+)$" }), []);
});

Deno.test("validatePredicate() refuses bad semantic versions", () => {
  for (const op of ["semver_eq", "semver_lt", "semver_gt"]) {
    for (const v of ["1.2", "latest", "1.2.3.4", ""]) {
      assertEquals(problems({ attribute: "a", op, value: v }), [
        `value: ${op} takes a semantic version string such as "1.2.3"`,
      ]);
    }
  }
});

Deno.test("compilePredicate() before and after compare instants strictly, whatever the zone", () => {
  const at = "2026-01-01T00:00:00Z";
  const before = compile({ attribute: "t", op: "before", value: at });
  const after = compile({ attribute: "t", op: "after", value: at });
  const cases: [string, "before" | "equal" | "after"][] = [
    ["2026-01-01T00:00:00Z", "equal"],
    ["2026-01-01t00:00:00z", "equal"], // RFC 3339 allows lower-case t and z
    ["2026-01-01T01:00:00+01:00", "equal"],
    ["2025-12-31T19:00:00-05:00", "equal"],
    ["2026-01-01T00:00:00-00:00", "equal"],
    ["2026-01-01T00:00:00.000Z", "equal"],
    ["2026-01-01T00:00:00.0009Z", "equal"], // digits beyond the millisecond are dropped
    ["2026-01-01", "equal"], // a date is midnight UTC
    ["2025-12-31T23:59:59.999Z", "before"],
    ["2026-01-01T00:59:59.999+01:00", "before"],
    ["2025-12-31", "before"],
    ["2026-01-01T00:00:00.001Z", "after"],
    ["2025-12-31T19:00:00.5-05:00", "after"],
    ["2026-01-01T00:00:00.123456789Z", "after"],
    ["2026-01-02", "after"],
    ["0001-01-01T00:00:00Z", "before"],
    ["9999-12-31T23:59:59.999Z", "after"],
  ];
  for (const [t, want] of cases) {
    assertEquals(before({ t }, none), want === "before", `${t} before ${at}`);
    assertEquals(after({ t }, none), want === "after", `${t} after ${at}`);
  }
});

Deno.test("compilePredicate() before and after do not hold for values that are not instants", () => {
  const before = compile({ attribute: "t", op: "before", value: "2100-01-01T00:00:00Z" });
  const after = compile({ attribute: "t", op: "after", value: "1900-01-01" });
  const values: unknown[] = [
    "2026-01-01T00:00:00", // no zone: a local time names no instant
    "2026-01-01 00:00:00Z", // RFC 3339's grammar has T, not a space
    "2026-01-01T00:00Z", // seconds are required
    "2026-01-01T00:00:00+0100",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01T00:00:00.Z",
    "2026-02-29", // not a leap year
    "2026-04-31T00:00:00Z",
    "2026-13-01",
    "2026-1-01",
    "+002026-01-01T00:00:00Z",
    "2026-01-01T12:00:60Z", // a leap second only ends a UTC day
    " 2026-01-01",
    "2026-01-01\n",
    "",
    "now",
    1767225600000,
    true,
    ["2026-01-01"],
    { at: "2026-01-01" },
    new Date("2026-01-01T00:00:00Z"),
  ];
  for (const t of values) {
    assertEquals(before({ t }, none), false, `${JSON.stringify(t)} before`);
    assertEquals(after({ t }, none), false, `${JSON.stringify(t)} after`);
  }
  assertEquals(before({ t: null }, none), false);
  assertEquals(after({}, none), false);
});

Deno.test("compilePredicate() before and after read leap years and leap seconds", () => {
  const after = compile({ attribute: "t", op: "after", value: "2024-02-28T23:59:59Z" });
  assert(after({ t: "2024-02-29" }, none));
  const before = compile({ attribute: "t", op: "before", value: "2100-01-01" });
  assert(before({ t: "2000-02-29" }, none)); // 2000 is a leap year (divisible by 400)
  assert(!before({ t: "1900-02-29" }, none)); // 1900 is not (divisible by 100): does not parse
  assert(!before({ t: "2023-02-29" }, none));
  // 23:59:60 UTC is the last millisecond of its day, in any offset
  const endOf2016 = compile({ attribute: "t", op: "before", value: "2017-01-01T00:00:00Z" });
  const lastMs = compile({ attribute: "t", op: "after", value: "2016-12-31T23:59:59.998Z" });
  for (const t of ["2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z", "2017-01-01T00:59:60+01:00"]) {
    assert(endOf2016({ t }, none), t);
    assert(lastMs({ t }, none), t);
  }
});

Deno.test("compilePredicate() before and after of an unvalidated value never hold, and never throw", () => {
  for (const value of ["soon", 20260101, true, "2026-02-30"]) {
    for (const op of ["before", "after"] as const) {
      const m = compilePredicate({ attribute: "t", op, value }, "segment");
      assertEquals(m({ t: "2026-01-01T00:00:00Z" }, none), false, `${op} ${value}`);
    }
  }
});

Deno.test("validatePredicate() refuses before and after values that are not RFC 3339", () => {
  for (const op of ["before", "after"]) {
    for (
      const v of [
        "2026-01-01T00:00:00", // a TOML local date-time reads so: no zone
        "2026-01-01T00:00:00.000", // unquoted TOML local date-time
        "2026-01-01 00:00:00Z",
        "2026-02-30",
        "00:00:00.000", // unquoted TOML local time
        "2026",
        "yesterday",
        "",
        1767225600000,
        true,
        ["2026-01-01"],
      ]
    ) {
      assertEquals(problems({ attribute: "a", op, value: v }), [
        `value: ${op} takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", ` +
        `or a date such as "2026-01-01" (midnight UTC)`,
      ], `${op} ${JSON.stringify(v)}`);
    }
    for (
      const v of [
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00.000+01:00", // unquoted TOML offset date-time reads so
        "2026-01-01",
        "2016-12-31T23:59:60Z",
      ]
    ) {
      assertEquals(problems({ attribute: "a", op, value: v }), [], `${op} ${v}`);
    }
  }
});

Deno.test("validatePredicate() restricts references to eq with a boolean", () => {
  assertEquals(problems({ attribute: "qualifier.x", op: "eq", value: true }), []);
  assertEquals(problems({ attribute: "qualifier.x", op: "eq", value: "yes" }), [
    "value: a qualifier reference compares with true or false",
  ]);
  assertEquals(problems({ attribute: "qualifier.x", op: "neq", value: true }), [
    'op: a qualifier reference takes op "eq"',
  ]);
  // The same attribute is an ordinary path under another prefix.
  assertEquals(problems({ attribute: "qualifier.x", op: "neq", value: true }, "segment"), []);
});

Deno.test("compilePredicate() matches answers ^(a+)+$ on a long hostile value", () => {
  const m = compile({ attribute: "name", op: "matches", value: "^(a+)+$" });
  assertEquals(m({ name: "a".repeat(4000) + "b" }, none), false);
  assertEquals(m({ name: "a".repeat(4000) }, none), true);
});

Deno.test("validatePredicate() refuses what RE2 cannot compile", () => {
  assertEquals(problems({ attribute: "a", op: "matches", value: "\\u00e9" }), [
    "value: invalid regular expression (RE2 syntax): invalid escape sequence: `\\u`",
  ]);
  assertEquals(problems({ attribute: "a", op: "matches", value: "x".repeat(2000) }), [
    "value: pattern is 2000 characters long; the limit is 1024 characters",
  ]);
  assertEquals(problems({ attribute: "a", op: "matches", value: "\\x{e9}|(?i)caf" }), []);
});

Deno.test("validatePredicate({lenientPatterns}) keeps a pattern RE2 refuses, with a warning", () => {
  const raw: Predicate = { attribute: "name", op: "matches", value: "^\\u0041" };
  const r = validatePredicate(raw, "segment", { lenientPatterns: true });
  assertEquals(r, {
    predicate: raw,
    warnings: [{
      key: "value",
      message: "invalid regular expression (RE2 syntax): invalid escape sequence: `\\u`; " +
        "this predicate never holds",
    }],
  });
  // other mistakes stay problems, leniency or not
  assertEquals(
    "problems" in validatePredicate({ ...raw, value: 3 }, "segment", { lenientPatterns: true }),
    true,
  );
  assertEquals("problems" in validatePredicate(raw, "segment"), true);
});

Deno.test("compilePredicate() of a pattern RE2 refuses never holds, and never throws", () => {
  for (const value of ["^\\u0041", "(?=A)", "(a)\\1", "x".repeat(2000)]) {
    const m = compilePredicate({ attribute: "name", op: "matches", value }, "segment");
    assertEquals(m({ name: "A" }, none), false, value);
    assertEquals(m({ name: "x".repeat(2000) }, none), false, value);
    assertEquals(m({ name: "AA" }, none), false, value);
  }
});
