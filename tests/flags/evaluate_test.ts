import fc from "fast-check";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { bucketOf } from "../../lib/flags/bucket.ts";
import {
  type CompiledModel,
  compileManifest,
  evaluateAll,
  evaluateFlag,
  type EvaluationResult,
  flagType,
} from "../../lib/flags/evaluate.ts";
import { readManifestDir } from "../../lib/flags/files.ts";
import type { Manifest } from "../../lib/flags/model.ts";
import { parseManifest } from "../../lib/flags/validate.ts";
import type { Context } from "../../lib/flags/conditions.ts";
import {
  compilePattern,
  EVALUATION_BUDGET,
  type LinearRegex,
  MATCH_OVERHEAD,
  MAX_MATCH_INPUT,
  regexWork,
} from "../../lib/linear_regex.ts";

const enc = new TextEncoder();

const NS = `schema_version = 1
[namespace.environments.production]
[namespace.environments.staging]
`;

function seg(match: "all" | "any", ...preds: [string, string, string][]): string {
  return `schema_version = 1\nmatch = "${match}"\n` +
    preds.map(([a, op, v]) => `[[predicate]]\nattribute = "${a}"\nop = "${op}"\nvalue = ${v}\n`)
      .join("");
}

function compile(files: Record<string, string>, version = 1): CompiledModel {
  const map = new Map<string, Uint8Array>([["namespace.toml", enc.encode(NS)]]);
  for (const [k, v] of Object.entries(files)) map.set(k, enc.encode(v));
  return compileManifest(parseManifest(map), version);
}

const BOOL = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;

const SEGMENTS = {
  "segments/staff.toml": seg("any", ["user.email", "ends_with", '"@example.com"'], [
    "user.role",
    "in",
    '["employee", "contractor"]',
  ]),
  "segments/beta.toml": seg("any", ["user.beta", "eq", "true"], ["segment.staff", "eq", "true"]),
  "segments/paying.toml": seg("all", ["account.plan", "in", '["pro", "enterprise"]']),
  "segments/eu.toml": seg("all", ["account.country", "in", '["DE", "FR"]'], [
    "segment.paying",
    "eq",
    "true",
  ]),
  "segments/eu-or-beta.toml": seg("any", ["segment.eu", "eq", "true"], [
    "segment.beta",
    "eq",
    "true",
  ]),
  "segments/not-staff.toml": seg("all", ["segment.staff", "eq", "false"]),
  "segments/legacy.toml": seg("all", ["user_agent", "matches", '"MSIE |Trident/"']),
  "segments/mobile.toml": seg("all", ["app.platform", "in", '["ios", "android"]'], [
    "app.version",
    "semver_gt",
    '"4.2.0"',
  ]),
  "segments/has-email.toml": seg("all", ["user.email", "exists", "true"]),
  "segments/minor.toml": seg("all", ["user.age", "lt", "18"]),
  "segments/new-users.toml": seg("all", ["user.created_at", "after", '"2026-01-01T00:00:00Z"']),
  "segments/spring-sale.toml": seg(
    "all",
    ["now", "after", "2026-03-01T00:00:00+01:00"], // an unquoted TOML date-time
    ["now", "before", '"2026-04-01"'],
  ),
};

function vr(r: EvaluationResult): [unknown, string | null, string, number | undefined] {
  return [r.value, r.variation, r.reason, r.rule_index];
}

Deno.test("evaluateFlag() gives DEFAULT, TARGETING_MATCH and SPLIT with rule_index", () => {
  const m = compile({
    ...SEGMENTS,
    "flags/f.toml": BOOL + `[[rule]]\nsegment = "beta"\nvariation = "on"\n` +
      `[[rule]]\nsegment = "eu"\nrollout = [{variation = "on", weight = 100}]\n`,
  }, 42);
  const d = evaluateFlag(m, "production", "f", { user: { id: "u" } });
  assertEquals(d, { flag: "f", value: false, variation: "off", reason: "DEFAULT", version: 42 });
  const t = evaluateFlag(m, "production", "f", { user: { beta: true } });
  assertEquals(t, {
    flag: "f",
    value: true,
    variation: "on",
    reason: "TARGETING_MATCH",
    rule_index: 0,
    version: 42,
  });
  const s = evaluateFlag(m, "production", "f", {
    targeting_key: "k",
    account: { country: "DE", plan: "pro" },
  });
  assertEquals(vr(s), [true, "on", "SPLIT", 1]);
  assertEquals(s.version, 42);
});

Deno.test("evaluateFlag() reports unknown flags, unknown environments and bad contexts", () => {
  const m = compile({ "flags/f.toml": BOOL }, 3);
  assertEquals(evaluateFlag(m, "production", "nope", {}), {
    flag: "nope",
    value: null,
    variation: null,
    reason: "ERROR",
    error_code: "FLAG_NOT_FOUND",
    error_message: 'flag "nope" does not exist',
    version: 3,
  });
  assertEquals(evaluateFlag(m, "prod", "f", {}), {
    flag: "f",
    value: null,
    variation: null,
    reason: "ERROR",
    error_code: "GENERAL",
    error_message: 'environment "prod" is not declared in namespace.toml',
    version: 3,
  });
  // The environment is checked before the flag.
  assertEquals(evaluateFlag(m, "prod", "nope", {}).error_code, "GENERAL");
  for (const bad of [null, [], "x", 1]) {
    const r = evaluateFlag(m, "production", "f", bad as unknown as Record<string, unknown>);
    assertEquals([r.reason, r.error_code, r.value], ["ERROR", "PARSE_ERROR", null]);
  }
});

Deno.test("evaluateFlag() applies environment overrides", () => {
  const base = BOOL.replace('default = "off"', 'default = "off"') +
    `[[rule]]\nsegment = "beta"\nvariation = "on"\n`;
  const ctx = { user: { beta: true } };
  // enabled = false: the flag's default with DISABLED, rules ignored.
  let m = compile({
    ...SEGMENTS,
    "flags/f.toml": base + `[environments.staging]\nenabled = false\n`,
  });
  assertEquals(vr(evaluateFlag(m, "staging", "f", ctx)), [false, "off", "DISABLED", undefined]);
  assertEquals(vr(evaluateFlag(m, "production", "f", ctx)), [true, "on", "TARGETING_MATCH", 0]);
  // enabled = false with an override default: that default, DISABLED.
  m = compile({
    ...SEGMENTS,
    "flags/f.toml": base + `[environments.staging]\nenabled = false\ndefault = "on"\n`,
  });
  assertEquals(vr(evaluateFlag(m, "staging", "f", {})), [true, "on", "DISABLED", undefined]);
  // Override default only: the flag's rules still apply.
  m = compile({ ...SEGMENTS, "flags/f.toml": base + `[environments.staging]\ndefault = "on"\n` });
  assertEquals(vr(evaluateFlag(m, "staging", "f", {})), [true, "on", "DEFAULT", undefined]);
  assertEquals(vr(evaluateFlag(m, "production", "f", {})), [false, "off", "DEFAULT", undefined]);
  assertEquals(vr(evaluateFlag(m, "staging", "f", ctx)), [true, "on", "TARGETING_MATCH", 0]);
  // Override rules replace the flag's rules (indices count in the override's list).
  m = compile({
    ...SEGMENTS,
    "flags/f.toml": base +
      `[environments.staging]\n[[environments.staging.rule]]\nsegment = "legacy"\nvariation = "on"\n`,
  });
  assertEquals(vr(evaluateFlag(m, "staging", "f", ctx)), [false, "off", "DEFAULT", undefined]);
  assertEquals(vr(evaluateFlag(m, "staging", "f", { user_agent: "Mozilla MSIE 9" })), [
    true,
    "on",
    "TARGETING_MATCH",
    0,
  ]);
  // rule = [] removes every rule.
  m = compile({ ...SEGMENTS, "flags/f.toml": base + `[environments.staging]\nrule = []\n` });
  assertEquals(vr(evaluateFlag(m, "staging", "f", ctx)), [false, "off", "DEFAULT", undefined]);
  assertEquals(vr(evaluateFlag(m, "production", "f", ctx)), [true, "on", "TARGETING_MATCH", 0]);
  // enabled = true explicitly changes nothing.
  m = compile({ ...SEGMENTS, "flags/f.toml": base + `[environments.staging]\nenabled = true\n` });
  assertEquals(vr(evaluateFlag(m, "staging", "f", ctx)), [true, "on", "TARGETING_MATCH", 0]);
});

Deno.test("evaluateFlag() tries rules in order and the first match wins", () => {
  const flag = `schema_version = 1
type = "string"
default = "none"
[variations]
none = "none"
first = "first"
second = "second"
third = "third"
[[rule]]
segment = "minor"
variation = "first"
[[rule]]
segment = "staff"
variation = "second"
[[rule]]
variation = "third"
`;
  const m = compile({ ...SEGMENTS, "flags/f.toml": flag });
  const staffMinor = { user: { age: 16, role: "employee" } };
  assertEquals(vr(evaluateFlag(m, "production", "f", staffMinor)), [
    "first",
    "first",
    "TARGETING_MATCH",
    0,
  ]);
  assertEquals(vr(evaluateFlag(m, "production", "f", { user: { role: "employee" } })), [
    "second",
    "second",
    "TARGETING_MATCH",
    1,
  ]);
  // A rule without a segment matches every context.
  assertEquals(vr(evaluateFlag(m, "production", "f", {})), [
    "third",
    "third",
    "TARGETING_MATCH",
    2,
  ]);
});

Deno.test("evaluateFlag() resolves nested segment references with all/any and negation", () => {
  const flags: Record<string, string> = {};
  for (const s of ["beta", "eu", "eu-or-beta", "not-staff"]) {
    flags[`flags/${s}.toml`] = BOOL + `[[rule]]\nsegment = "${s}"\nvariation = "on"\n`;
  }
  const m = compile({ ...SEGMENTS, ...flags });
  const on = (flag: string, ctx: Record<string, unknown>) =>
    evaluateFlag(m, "production", flag, ctx).value === true;
  // beta = any(user.beta, segment.staff); staff = any(email suffix, role in …).
  assert(on("beta", { user: { email: "a@example.com" } }));
  assert(on("beta", { user: { beta: true } }));
  assert(!on("beta", { user: { email: "a@other.com", beta: false } }));
  // eu = all(country in …, segment.paying).
  assert(on("eu", { account: { country: "FR", plan: "pro" } }));
  assert(!on("eu", { account: { country: "FR", plan: "free" } }));
  assert(!on("eu", { account: { country: "US", plan: "pro" } }));
  // eu-or-beta: three levels (eu-or-beta → beta → staff).
  assert(on("eu-or-beta", { user: { role: "contractor" } }));
  assert(on("eu-or-beta", { account: { country: "DE", plan: "enterprise" } }));
  assert(!on("eu-or-beta", { account: { country: "DE" } }));
  // A reference compared with false negates.
  assert(on("not-staff", { user: { role: "customer" } }));
  assert(!on("not-staff", { user: { role: "employee" } }));
  // Shared segments give the same answer for every flag in one evaluateAll.
  const all = evaluateAll(m, "production", { user: { role: "employee" } });
  assertEquals(
    Object.fromEntries(Object.entries(all).map(([k, r]) => [k, r.value])),
    { beta: true, eu: false, "eu-or-beta": true, "not-staff": false },
  );
});

Deno.test("evaluateFlag() applies segment operators through the predicate engine", () => {
  const flags: Record<string, string> = {};
  for (const s of ["legacy", "mobile", "has-email", "minor", "staff", "paying"]) {
    flags[`flags/${s}.toml`] = BOOL + `[[rule]]\nsegment = "${s}"\nvariation = "on"\n`;
  }
  const m = compile({ ...SEGMENTS, ...flags });
  const on = (flag: string, ctx: Record<string, unknown>) =>
    evaluateFlag(m, "production", flag, ctx).value === true;
  assert(on("legacy", { user_agent: "Mozilla/5.0 (Windows NT; Trident/7.0)" })); // matches
  assert(!on("legacy", { user_agent: "Firefox" }));
  assert(on("mobile", { app: { platform: "ios", version: "4.10.0" } })); // in + semver_gt
  assert(!on("mobile", { app: { platform: "ios", version: "4.2.0" } }));
  assert(!on("mobile", { app: { platform: "web", version: "9.0.0" } }));
  assert(on("has-email", { user: { email: "" } })); // exists
  assert(!on("has-email", { user: {} }));
  assert(on("minor", { user: { age: 17 } })); // lt
  assert(!on("minor", { user: { age: 18 } }));
  assert(!on("minor", { user: { age: "17" } })); // types are not coerced
  assert(on("staff", { user: { email: "x@example.com" } })); // ends_with
  assert(on("paying", { "account.plan": "pro" })); // a flat dotted key, as lookup() reads it
  assert(!on("paying", {})); // a missing attribute never holds
});

Deno.test("evaluateFlag() applies before and after through a manifest", () => {
  const flags: Record<string, string> = {};
  for (const s of ["new-users", "spring-sale"]) {
    flags[`flags/${s}.toml`] = BOOL + `[[rule]]\nsegment = "${s}"\nvariation = "on"\n`;
  }
  const m = compile({ ...SEGMENTS, ...flags });
  const result = (flag: string, ctx: Record<string, unknown>) => {
    const r = evaluateFlag(m, "production", flag, ctx);
    return [r.value, r.reason];
  };
  const match = [true, "TARGETING_MATCH"];
  const none = [false, "DEFAULT"];
  assertEquals(result("new-users", { user: { created_at: "2026-01-01T00:00:00.001Z" } }), match);
  assertEquals(result("new-users", { user: { created_at: "2026-01-01T00:30:00+00:15" } }), match);
  assertEquals(result("new-users", { user: { created_at: "2026-01-02" } }), match);
  assertEquals(result("new-users", { user: { created_at: "2026-01-01T00:00:00Z" } }), none);
  assertEquals(result("new-users", { user: { created_at: "2026-01-01" } }), none); // same instant
  assertEquals(result("new-users", { user: { created_at: "2025-12-31T23:59:59Z" } }), none);
  // not an instant: does not hold, as an absent attribute; never an error
  assertEquals(result("new-users", { user: { created_at: "2026-01-02T00:00:00" } }), none);
  assertEquals(result("new-users", { user: { created_at: 1767312000000 } }), none);
  assertEquals(result("new-users", { user: {} }), none);
  // a window: after the start (1 March, 00:00 at +01:00) and before 1 April, midnight UTC
  assertEquals(result("spring-sale", { now: "2026-02-28T23:00:00Z" }), none);
  assertEquals(result("spring-sale", { now: "2026-02-28T23:00:00.001Z" }), match);
  assertEquals(result("spring-sale", { now: "2026-03-31T23:59:59.999Z" }), match);
  assertEquals(result("spring-sale", { now: "2026-04-01T01:00:00+01:00" }), none);
  assertEquals(result("spring-sale", { now: "2026-04-01" }), none);
});

const ROLLOUT = `schema_version = 1
type = "string"
default = "control"
[variations]
control = "control"
a = "a"
b = "b"
[[rule]]
bucket_by = "user.id"
rollout = [{variation = "control", weight = 50000}, {variation = "a", weight = 30000}, {variation = "b", weight = 20000}]
[[rule]]
variation = "b"
`;

Deno.test("evaluateFlag() splits 10,000 keys within 1.5 points of the weights", () => {
  const m = compile({ "flags/exp.toml": ROLLOUT });
  const counts: Record<string, number> = { control: 0, a: 0, b: 0 };
  for (let i = 0; i < 10_000; i++) {
    const r = evaluateFlag(m, "production", "exp", { user: { id: `user-${i}` } });
    assertEquals([r.reason, r.rule_index], ["SPLIT", 0]);
    counts[r.variation!]!++;
  }
  for (const [v, share] of [["control", 0.5], ["a", 0.3], ["b", 0.2]] as const) {
    const got = counts[v]! / 10_000;
    assert(Math.abs(got - share) <= 0.015, `${v}: ${got} vs ${share}`);
  }
});

Deno.test("evaluateFlag() buckets by murmur3 of <flag key>/<bucket value> (sticky)", () => {
  const m = compile({ "flags/exp.toml": ROLLOUT });
  for (let i = 0; i < 500; i++) {
    const id = `user-${i}`;
    const bucket = bucketOf("exp", id);
    const expected = bucket < 50000 ? "control" : bucket < 80000 ? "a" : "b";
    const r1 = evaluateFlag(m, "production", "exp", { user: { id } });
    const r2 = evaluateFlag(m, "production", "exp", { user: { id, plan: "x" }, other: i });
    assertEquals(r1.variation, expected);
    assert(r1 === r2, "same bucket value, same (shared) result");
  }
  // The published vector new-checkout/user-1 → bucket 27752 lands in "off" for a 25/75 split.
  const nc = compile({
    "flags/new-checkout.toml": BOOL +
      `[[rule]]\nrollout = [{variation = "on", weight = 25}, {variation = "off", weight = 75}]\n`,
  });
  assertEquals(bucketOf("new-checkout", "user-1"), 27752);
  assertEquals(
    evaluateFlag(nc, "production", "new-checkout", { targeting_key: "user-1" }).value,
    false,
  );
  assertEquals(bucketOf("new-checkout", "user-2"), 11356);
  assertEquals(
    evaluateFlag(nc, "production", "new-checkout", { targeting_key: "user-2" }).value,
    true,
  );
});

Deno.test("evaluateFlag() skips a rollout without a bucket value; numbers are stringified", () => {
  const m = compile({ "flags/exp.toml": ROLLOUT });
  for (
    const ctx of [{}, { user: {} }, { user: { id: null } }, { user: { id: "" } }, {
      user: { id: {} },
    }]
  ) {
    assertEquals(vr(evaluateFlag(m, "production", "exp", ctx)), ["b", "b", "TARGETING_MATCH", 1]);
  }
  // 42 buckets as "42"; true as "true".
  for (const [v, s] of [[42, "42"], [true, "true"], [1.5, "1.5"]] as const) {
    assert(
      evaluateFlag(m, "production", "exp", { user: { id: v } }) ===
        evaluateFlag(m, "production", "exp", { user: { id: s } }),
    );
  }
  // The default bucket_by is targeting_key.
  const d = compile({
    "flags/d.toml": BOOL + `[[rule]]\nrollout = [{variation = "on", weight = 100}]\n`,
  });
  assertEquals(evaluateFlag(d, "production", "d", { targeting_key: "k" }).reason, "SPLIT");
  assertEquals(evaluateFlag(d, "production", "d", { user: { id: "k" } }).reason, "DEFAULT");
});

Deno.test("evaluateFlag() serves typed variations of all four types, frozen", () => {
  const m = compile({
    "flags/b.toml": BOOL,
    "flags/s.toml":
      `schema_version = 1\ntype = "string"\ndefault = "x"\n[variations]\nx = "héllo"\n`,
    "flags/n.toml": `schema_version = 1\ntype = "number"\ndefault = "x"\n[variations]\nx = 2.5\n`,
    "flags/o.toml":
      `schema_version = 1\ntype = "object"\ndefault = "x"\n[variations.x]\nshow = true\nitems = [1, {a = "b"}]\n`,
  });
  assertEquals(evaluateFlag(m, "production", "b", {}).value, false);
  assertEquals(evaluateFlag(m, "production", "s", {}).value, "héllo");
  assertEquals(evaluateFlag(m, "production", "n", {}).value, 2.5);
  const o = evaluateFlag(m, "production", "o", {});
  assertEquals(o.value, { show: true, items: [1, { a: "b" }] });
  assert(Object.isFrozen(o) && Object.isFrozen(o.value));
  assert(Object.isFrozen((o.value as { items: unknown[] }).items[1]));
  assertThrows(() => {
    (o as { value: unknown }).value = 1;
  }, TypeError);
  assertEquals(
    ["b", "s", "n", "o", "zz"].map((k) => flagType(m, k)),
    ["boolean", "string", "number", "object", undefined],
  );
});

Deno.test("compileManifest() does not keep or freeze the manifest's own values", () => {
  const map = new Map([
    ["namespace.toml", enc.encode(NS)],
    [
      "flags/o.toml",
      enc.encode(`schema_version = 1\ntype = "object"\ndefault = "x"\n[variations.x]\na = 1\n`),
    ],
  ]);
  const manifest = parseManifest(map);
  const m = compileManifest(manifest, 1);
  assert(!Object.isFrozen(manifest.flags.o!.variations.x));
  (manifest.flags.o!.variations.x as Record<string, unknown>).a = 2;
  assertEquals(evaluateFlag(m, "production", "o", {}).value, { a: 1 });
});

Deno.test("compileManifest() refuses a hand-built manifest with a segment cycle", () => {
  const manifest: Manifest = {
    namespace: { description: "", environments: { production: { public_evaluate: false } } },
    flags: {},
    segments: {
      a: {
        key: "a",
        description: "",
        match: "all",
        predicates: [{ attribute: "segment.b", op: "eq", value: true }],
      },
      b: {
        key: "b",
        description: "",
        match: "all",
        predicates: [{ attribute: "segment.a", op: "eq", value: true }],
      },
    },
  };
  assertThrows(
    () => compileManifest(manifest, 1),
    TypeError,
    "segment reference cycle a -> b -> a",
  );
});

Deno.test("evaluateAll() returns every flag in key order and reports a bad environment", () => {
  const m = compile({
    ...SEGMENTS,
    "flags/zeta.toml": BOOL,
    "flags/alpha.toml": BOOL + `[[rule]]\nsegment = "staff"\nvariation = "on"\n`,
    "flags/mid.toml": BOOL + `[environments.staging]\nenabled = false\n`,
  }, 9);
  assertEquals(m.flagKeys, ["alpha", "mid", "zeta"]);
  assertEquals(m.environments, ["production", "staging"]);
  const ctx = { user: { role: "employee" } };
  const all = evaluateAll(m, "staging", ctx);
  assertEquals(Object.keys(all), ["alpha", "mid", "zeta"]);
  for (const k of m.flagKeys) assert(all[k] === evaluateFlag(m, "staging", k, ctx));
  assertEquals(all.mid!.reason, "DISABLED");
  const bad = evaluateAll(m, "qa", ctx);
  assertEquals(Object.keys(bad), ["alpha", "mid", "zeta"]);
  for (const r of Object.values(bad)) {
    assertEquals([r.reason, r.error_code, r.version], ["ERROR", "GENERAL", 9]);
  }
  assertEquals(
    evaluateAll(m, "staging", null as unknown as Record<string, unknown>).alpha!.error_code,
    "PARSE_ERROR",
  );
});

Deno.test("evaluateFlag() stays correct when a context getter evaluates re-entrantly", () => {
  const m = compile({
    ...SEGMENTS,
    "flags/f.toml": BOOL + `[[rule]]\nsegment = "beta"\nvariation = "on"\n`,
  });
  const inner = { user: { role: "employee" } };
  const outer = {
    get user() {
      // Evaluates another context in the middle of this evaluation.
      evaluateFlag(m, "production", "f", inner);
      return { role: "customer" };
    },
  };
  assertEquals(evaluateFlag(m, "production", "f", outer).value, false);
  assertEquals(evaluateFlag(m, "production", "f", inner).value, true);
});

Deno.test("examples/flags evaluates as docs/flags.md describes", async () => {
  const manifest = parseManifest(
    await readManifestDir(new URL("../../examples/flags", import.meta.url).pathname),
  );
  const m = compileManifest(manifest, 5);
  const staff = { targeting_key: "u1", user: { email: "ann@example.com", id: "u1" } };
  assertEquals(vr(evaluateFlag(m, "production", "new-checkout", staff)), [
    true,
    "on",
    "TARGETING_MATCH",
    0,
  ]);
  assertEquals(vr(evaluateFlag(m, "staging", "new-checkout", staff)), [
    true,
    "on",
    "DEFAULT",
    undefined,
  ]);
  assertEquals(
    vr(evaluateFlag(m, "staging", "new-checkout", { user_agent: "Mozilla/4.0 (MSIE 6.0)" })),
    [false, "off", "TARGETING_MATCH", 0],
  );
  assertEquals(vr(evaluateFlag(m, "staging", "max-cart-items", { account: { plan: "pro" } })), [
    50,
    "standard",
    "DISABLED",
    undefined,
  ]);
  assertEquals(vr(evaluateFlag(m, "production", "max-cart-items", { account: { plan: "pro" } })), [
    200,
    "large",
    "TARGETING_MATCH",
    0,
  ]);
  assertEquals(evaluateFlag(m, "production", "checkout-theme", staff).value, "dark");
  assertEquals(
    evaluateFlag(m, "production", "checkout-theme", { targeting_key: "x" }).reason,
    "SPLIT",
  );
  assertEquals(evaluateFlag(m, "production", "search-ranking", {}).reason, "DEFAULT");
});

Deno.test("evaluation is deterministic and returns a declared variation or the error shape", async () => {
  const manifest = parseManifest(
    await readManifestDir(new URL("../../examples/flags", import.meta.url).pathname),
  );
  const m = compileManifest(manifest, 1);
  const scalar = fc.oneof(
    fc.constantFrom(
      "pro",
      "enterprise",
      "DE",
      "FR",
      "ios",
      "4.3.0",
      "1.0.0",
      "employee",
      "a@example.com",
    ),
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  const ctxArb = fc.record({
    targeting_key: scalar,
    user: fc.record({ id: scalar, email: scalar, role: scalar, beta_opt_in: scalar }, {
      requiredKeys: [],
    }),
    account: fc.record({ id: scalar, plan: scalar, country: scalar }, { requiredKeys: [] }),
    app: fc.record({ platform: scalar, version: scalar }, { requiredKeys: [] }),
    user_agent: scalar,
  }, { requiredKeys: [] });
  const envArb = fc.constantFrom("production", "staging", "qa");
  const flagArb = fc.constantFrom(...m.flagKeys, "missing");
  fc.assert(
    fc.property(envArb, flagArb, ctxArb, (env, flag, ctx) => {
      const r = evaluateFlag(m, env, flag, ctx);
      const again = evaluateFlag(m, env, flag, structuredClone(ctx));
      assertEquals(again, r);
      assertEquals(evaluateAll(m, env, ctx)[flag], flag === "missing" ? undefined : r);
      assertEquals(r.flag, flag);
      assertEquals(r.version, 1);
      if (r.reason === "ERROR") {
        assertEquals([r.value, r.variation, r.rule_index], [null, null, undefined]);
        assert(r.error_code !== undefined && typeof r.error_message === "string");
        return;
      }
      const def = manifest.flags[flag]!;
      assert(r.variation !== null && Object.hasOwn(def.variations, r.variation));
      assertEquals(r.value, def.variations[r.variation]);
      assertEquals(r.error_code, undefined);
      assertEquals(
        r.rule_index !== undefined,
        r.reason === "TARGETING_MATCH" || r.reason === "SPLIT",
      );
    }),
    { numRuns: 1000 },
  );
});

/** A chain of `n` segments: s0 refers to s1, …, the last one reads `user.beta`. */
function chainSegments(n: number): Manifest["segments"] {
  const segments: Manifest["segments"] = {};
  for (let i = 0; i < n; i++) {
    segments[`s${i}`] = {
      key: `s${i}`,
      description: "",
      match: "all",
      predicates: i < n - 1
        ? [{ attribute: `segment.s${i + 1}`, op: "eq", value: true }]
        : [{ attribute: "user.beta", op: "eq", value: true }],
    };
  }
  return segments;
}

const CHAIN_FLAG = BOOL + `[[rule]]\nsegment = "s0"\nvariation = "on"\n`;

Deno.test("evaluateFlag() and evaluateAll() follow a chain of 32 segments, the limit", () => {
  const files: Record<string, string> = { "flags/f.toml": CHAIN_FLAG };
  for (let i = 0; i < 31; i++) {
    files[`segments/s${i}.toml`] = seg("all", [`segment.s${i + 1}`, "eq", "true"]);
  }
  files["segments/s31.toml"] = seg("all", ["user.beta", "eq", "true"]);
  const m = compile(files);
  assertEquals(evaluateFlag(m, "production", "f", { user: { beta: true } }).value, true);
  assertEquals(evaluateFlag(m, "production", "f", { user: { beta: false } }).value, false);
  assertEquals(evaluateAll(m, "production", { user: { beta: true } }).f!.value, true);
});

Deno.test("a hand-built model with a 20,000-deep segment chain evaluates without overflow", () => {
  // Validation refuses such a chain; the compiled model still must not throw on it.
  const manifest: Manifest = {
    namespace: { description: "", environments: { production: { public_evaluate: false } } },
    flags: parseManifest(
      new Map([["namespace.toml", enc.encode(NS)], ["flags/f.toml", enc.encode(CHAIN_FLAG)], [
        "segments/s0.toml",
        enc.encode(seg("all", ["x", "eq", "1"])),
      ]]),
    ).flags,
    segments: chainSegments(20_000),
  };
  const m = compileManifest(manifest, 1);
  assertEquals(evaluateFlag(m, "production", "f", { user: { beta: true } }).value, true);
  assertEquals(evaluateFlag(m, "production", "f", {}).value, false);
  assertEquals(evaluateAll(m, "production", { user: { beta: true } }).f!.value, true);
});

Deno.test("compileManifest() finds a cycle at the end of a 20,000-deep hand-built chain", () => {
  const segments = chainSegments(20_000);
  segments.s19999!.predicates = [{ attribute: "segment.s19998", op: "eq", value: true }];
  const manifest: Manifest = {
    namespace: { description: "", environments: {} },
    flags: {},
    segments,
  };
  assertThrows(
    () => compileManifest(manifest, 1),
    TypeError,
    "segment reference cycle s19998 -> s19999 -> s19998",
  );
});

Deno.test("evaluateFlag() answers a hostile matches pattern on a long value", () => {
  const m = compile({
    "segments/hostile.toml": seg("all", ["name", "matches", '"^(a+)+$"']),
    "flags/f.toml": BOOL + `[[rule]]\nsegment = "hostile"\nvariation = "on"\n`,
  });
  assertEquals(evaluateFlag(m, "production", "f", { name: "a".repeat(4000) + "b" }).value, false);
  assertEquals(evaluateFlag(m, "production", "f", { name: "a".repeat(4000) }).value, true);
  // Over MAX_MATCH_INPUT characters, a value does not match.
  assertEquals(evaluateFlag(m, "production", "f", { name: "a".repeat(4097) }).value, false);
});

/** 2,000 segments `user.s matches <pattern(i)>`, one flag per segment (s0000 → f0000, …). */
function hostileModel(pattern: (i: number) => string): CompiledModel {
  const files: Record<string, string> = {};
  for (let i = 0; i < 2000; i++) {
    const n = String(i).padStart(4, "0");
    files[`segments/s${n}.toml`] = seg("all", ["user.s", "matches", JSON.stringify(pattern(i))]);
    files[`flags/f${n}.toml`] = BOOL + `[[rule]]\nsegment = "s${n}"\nvariation = "on"\n`;
  }
  return compile(files);
}

/** The flag values of one evaluateAll, in key order, and the regex work it was charged. */
function evaluateAllCharged(m: CompiledModel, ctx: Context): { values: unknown[]; work: number } {
  const before = regexWork();
  const all = evaluateAll(m, "production", ctx);
  const work = regexWork() - before;
  return { values: m.flagKeys.map((k) => all[k]!.value), work };
}

Deno.test("evaluateAll() over 2,000 segments with one hostile pattern runs it once per value", () => {
  const m = hostileModel(() => "^(a|b)*$");
  const size = (compilePattern("^(a|b)*$") as { regex: LinearRegex }).regex.size;
  // The reviewer's 32 KB value is over MAX_MATCH_INPUT: no flag matches, no work is done.
  const big = evaluateAllCharged(m, { user: { s: "ab".repeat(16 * 1024) } });
  assertEquals(big.work, 0);
  assert(big.values.every((v) => v === false));
  // A 4 KiB value that matches: every flag is on, for the price of one match.
  const value = "ab".repeat(MAX_MATCH_INPUT / 2);
  const fits = evaluateAllCharged(m, { user: { s: value } });
  assertEquals(fits.work, (value.length + 1) * size + MATCH_OVERHEAD);
  assert(fits.values.every((v) => v === true));
});

Deno.test("evaluateAll() over 2,000 distinct hostile patterns stops matching when its budget is spent", () => {
  const m = hostileModel((i) => `^(a|b)*(x${i})?$`);
  const ctx = { user: { s: "ab".repeat(MAX_MATCH_INPUT / 2) } };
  const { values, work } = evaluateAllCharged(m, ctx);
  assert(work <= EVALUATION_BUDGET, `charged ${work} steps`);
  const first = values.indexOf(false);
  assert(first > 0, "flags within the budget match");
  assert(values.slice(first).every((v) => v === false), "flags past the budget do not match");
  // Each evaluateFlag call has a budget of its own: the last flag matches alone.
  const last = evaluateFlag(m, "production", "f1999", ctx);
  assertEquals([last.value, last.reason], [true, "TARGETING_MATCH"]);
  // The budget is per evaluation: the next evaluateAll gives the same answer.
  assertEquals(evaluateAllCharged(m, ctx).values, values);
});

Deno.test("the compiled model never throws, whatever JSON context it is given", async () => {
  const examples = compileManifest(
    parseManifest(await readManifestDir(new URL("../../examples/flags", import.meta.url).pathname)),
    1,
  );
  const chainFiles: Record<string, string> = {
    "flags/f.toml": CHAIN_FLAG,
    "flags/g.toml": BOOL +
      `[[rule]]\nsegment = "s5"\nrollout = [{variation = "on", weight = 50}, ` +
      `{variation = "off", weight = 50}]\nbucket_by = "user.id"\n`,
  };
  for (let i = 0; i < 31; i++) {
    chainFiles[`segments/s${i}.toml`] = seg(i % 2 === 0 ? "all" : "any", [
      `segment.s${i + 1}`,
      "eq",
      i % 3 === 0 ? "false" : "true",
    ], ["user.name", "matches", '"^(a+)+$"']);
  }
  chainFiles["segments/s31.toml"] = seg("any", ["user.beta", "eq", "true"], [
    "app.version",
    "semver_gt",
    '"1.2.3"',
  ], ["user.created_at", "after", '"2026-01-01"']);
  const models = [examples, compile({ ...SEGMENTS, "flags/f.toml": BOOL }), compile(chainFiles)];
  const text = fc.string({ unit: "binary", maxLength: 64 });
  const leaf = fc.oneof(
    text,
    fc.constantFrom(
      "a".repeat(300) + "b",
      "1.2.4",
      "2.0.0-rc.1",
      "@example.com",
      "MSIE 6",
      "2026-01-01T00:00:00.5+01:00",
      "2016-12-31T23:59:60Z",
      "2026-02-30",
    ),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  const key = fc.constantFrom(
    "user",
    "account",
    "app",
    "name",
    "beta",
    "version",
    "email",
    "id",
    "targeting_key",
    "user_agent",
    "created_at",
    "__proto__",
    "constructor",
    "a.b",
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 4 }),
    object: fc.dictionary(fc.oneof(key, text), tie("value"), { maxKeys: 5 }),
  }));
  const context = fc.oneof(json.object, fc.jsonValue()) as fc.Arbitrary<unknown>;
  fc.assert(
    fc.property(context, fc.constantFrom(0, 1, 2), (ctx, which) => {
      const m = models[which]!;
      const c = ctx as Record<string, unknown>;
      for (const env of m.environments) {
        const all = evaluateAll(m, env, c);
        for (const k of m.flagKeys) {
          const r = evaluateFlag(m, env, k, c);
          assertEquals(r, all[k]);
        }
      }
    }),
    { numRuns: 500 },
  );
});
