import fc from "fast-check";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { ProblemsError } from "../../lib/errors.ts";
import type { Predicate } from "../../lib/flags/conditions.ts";
import { compileManifest, evaluateAll, flagType } from "../../lib/flags/evaluate.ts";
import {
  environmentsAffected,
  environmentsAffectedByFiles,
  manifestOfFiles,
} from "../../lib/flags/impact.ts";
import type {
  EnvironmentOverride,
  Flag,
  FlagType,
  Manifest,
  Rule,
  Segment,
  VariationValue,
} from "../../lib/flags/model.ts";
import { valueChanges } from "../../lib/flags/value_changes.ts";

// ---------------------------------------------------------------------------
// Example-based tests, on manifest files.

const NS = `schema_version = 1
[namespace]
description = "Checkout"
[namespace.environments.production]
[namespace.environments.staging]
public_evaluate = true
[namespace.environments.dev]
`;

const BOOL = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;

function seg(body: string, match = "all"): string {
  return `schema_version = 1\nmatch = "${match}"\n${body}`;
}

function pred(attribute: string, op: string, value: string): string {
  return `[[predicate]]\nattribute = "${attribute}"\nop = "${op}"\nvalue = ${value}\n`;
}

/** A base manifest (three environments) with these files added or replaced. */
function files(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "namespace.toml": NS,
    "flags/checkout.toml": BOOL + '[[rule]]\nsegment = "beta"\nvariation = "on"\n',
    "segments/beta.toml": seg(pred("user.beta", "eq", "true")),
    ...extra,
  };
}

const affected = (before: Record<string, string>, after: Record<string, string>) =>
  environmentsAffectedByFiles(before, after);

Deno.test("environmentsAffected(): an identical manifest affects nothing", () => {
  assertEquals(affected(files(), files()), []);
});

Deno.test("environmentsAffected(): descriptions, comments and formatting affect nothing", () => {
  const after = files({
    "namespace.toml": NS.replace('"Checkout"', '"Checkout service"'),
    "flags/checkout.toml": "# owned by the checkout team\n" +
      BOOL.replace("type", 'description = "New checkout"\ntype') +
      "\n[[rule]]\n  segment   = 'beta'\n  variation = \"on\"\n",
    "segments/beta.toml": 'schema_version = 1\ndescription = "Beta users"\n' +
      pred("user.beta", "eq", "true"),
  });
  assertEquals(affected(files(), after), []);
});

Deno.test("environmentsAffected(): weights in percent or thousandths are the same rollout", () => {
  const rollout = (a: number, b: number) =>
    files({
      "flags/split.toml": BOOL +
        `[[rule]]\nrollout = [{ variation = "on", weight = ${a} }, { variation = "off", weight = ${b} }]\n`,
    });
  assertEquals(affected(rollout(25, 75), rollout(25000, 75000)), []);
  assertEquals(affected(rollout(25, 75), rollout(26, 74)), ["dev", "production", "staging"]);
});

Deno.test("environmentsAffected(): a production override affects production only", () => {
  const withOverride = (o: string) =>
    files({ "flags/checkout.toml": files()["flags/checkout.toml"] + o });
  const before = files();
  assertEquals(affected(before, withOverride("[environments.production]\nenabled = false\n")), [
    "production",
  ]);
  assertEquals(affected(before, withOverride('[environments.production]\ndefault = "on"\n')), [
    "production",
  ]);
  assertEquals(
    affected(before, withOverride("[environments.staging]\nrule = []\n")),
    ["staging"],
  );
  // An override that changes nothing (enabled, no default, no rules) affects nothing.
  assertEquals(affected(before, withOverride("[environments.dev]\nenabled = true\n")), []);
  // Overriding the default with the flag's own default changes nothing either.
  assertEquals(affected(before, withOverride('[environments.dev]\ndefault = "off"\n')), []);
});

Deno.test("environmentsAffected(): a base change skips environments that override that part", () => {
  const before = files({
    "flags/checkout.toml": BOOL + '[[rule]]\nsegment = "beta"\nvariation = "on"\n' +
      '[environments.staging]\ndefault = "on"\n' +
      "[environments.production]\nrule = []\n",
  });
  const newDefault = {
    ...before,
    "flags/checkout.toml": before["flags/checkout.toml"]!.replace(
      'default = "off"\n[variations]',
      'default = "on"\n[variations]',
    ),
  };
  assertEquals(affected(before, newDefault), ["dev", "production"]);
  const newRule = {
    ...before,
    "flags/checkout.toml": before["flags/checkout.toml"]!.replace(
      'variation = "on"\n[environments.staging]',
      'variation = "off"\n[environments.staging]',
    ),
  };
  assertEquals(affected(before, newRule), ["dev", "staging"]);
});

Deno.test("environmentsAffected(): a variation's value counts where it is served", () => {
  const flag = (on: string, spare = "true") =>
    files({
      "flags/checkout.toml": BOOL.replace("[variations]\non = true\noff = false\n", "") +
        `[variations]\non = ${on}\noff = false\nspare = ${spare}\n` +
        '[[rule]]\nsegment = "beta"\nvariation = "on"\n' +
        '[environments.production]\nrule = []\n[environments.staging]\nrule = []\ndefault = "on"\n',
    });
  // Only dev's rules (the flag's) and staging's default name "on".
  assertEquals(affected(flag("true"), flag("false")), ["dev", "staging"]);
  // A variation nothing serves: no environment.
  assertEquals(affected(flag("true"), flag("true", "false")), []);
});

Deno.test("environmentsAffected(): a segment counts where a flag's rules reach it", () => {
  const before = files({
    "flags/checkout.toml": BOOL + '[[rule]]\nsegment = "beta"\nvariation = "on"\n' +
      "[environments.staging]\nrule = []\n",
    "segments/beta.toml": seg(
      pred("user.beta", "eq", "true") + pred("segment.staff", "eq", "true"),
      "any",
    ),
    "segments/staff.toml": seg(pred("user.email", "ends_with", '"@example.com"')),
    "segments/orphan.toml": seg(pred("plan", "eq", '"pro"')),
  });
  // beta is reached in production and dev (staging replaces the rules with none).
  const beta = { ...before, "segments/beta.toml": seg(pred("user.beta", "eq", "false")) };
  assertEquals(affected(before, beta), ["dev", "production"]);
  // staff is reached through beta.
  const staff = {
    ...before,
    "segments/staff.toml": seg(pred("user.email", "ends_with", '"@x.com"')),
  };
  assertEquals(affected(before, staff), ["dev", "production"]);
  // Orphans affect nothing.
  const orphan = { ...before, "segments/orphan.toml": seg(pred("plan", "eq", '"free"')) };
  assertEquals(affected(before, orphan), []);
  const { "segments/orphan.toml": _, ...withoutOrphan } = before;
  assertEquals(affected(before, withoutOrphan), []);
});

Deno.test("environmentsAffected(): a segment reached only by a disabled flag still counts", () => {
  const before = files({
    "flags/checkout.toml": BOOL + '[[rule]]\nsegment = "beta"\nvariation = "on"\n' +
      "[environments.production]\nenabled = false\n" +
      "[environments.staging]\nenabled = false\nrule = []\n" +
      '[environments.dev]\nenabled = false\n[[environments.dev.rule]]\nsegment = "other"\nvariation = "on"\n',
    "segments/other.toml": seg(pred("a", "eq", "1")),
  });
  const after = { ...before, "segments/beta.toml": seg(pred("user.beta", "eq", "false")) };
  // Disabled everywhere, but production's rules still reach beta (what it serves once re-enabled).
  assertEquals(affected(before, after), ["production"]);
});

Deno.test("environmentsAffected(): segment content that evaluation cannot tell apart", () => {
  const before = files({
    "segments/beta.toml": seg(pred("country", "in", '["DE", "FR"]')),
  });
  // One predicate: all and any agree. An in list is a set.
  assertEquals(
    affected(
      before,
      files({ "segments/beta.toml": seg(pred("country", "in", '["FR", "DE", "FR"]'), "any") }),
    ),
    [],
  );
  assertEquals(
    affected(before, files({ "segments/beta.toml": seg(pred("country", "in", '["FR", "NL"]')) })),
    ["dev", "production", "staging"],
  );
  // With two predicates, match counts.
  const two = (m: string) =>
    files({ "segments/beta.toml": seg(pred("a", "eq", "1") + pred("b", "eq", "1"), m) });
  assertEquals(affected(two("all"), two("any")), ["dev", "production", "staging"]);
});

Deno.test("environmentsAffected(): a renamed segment counts, even with the same content", () => {
  const before = files();
  const after = {
    "namespace.toml": NS,
    "flags/checkout.toml": BOOL + '[[rule]]\nsegment = "beta-users"\nvariation = "on"\n',
    "segments/beta-users.toml": seg(pred("user.beta", "eq", "true")),
  };
  assertEquals(affected(before, after), ["dev", "production", "staging"]);
});

Deno.test("environmentsAffected(): rollout details", () => {
  const rollout = (r: string, extra = "") =>
    files({ "flags/split.toml": BOOL + `[[rule]]\n${extra}rollout = [${r}]\n` });
  const base = rollout('{ variation = "on", weight = 100 }');
  // An entry of weight 0 never gets a bucket.
  assertEquals(
    affected(
      base,
      rollout('{ variation = "on", weight = 100 }, { variation = "off", weight = 0 }'),
    ),
    [],
  );
  // bucket_by of a rollout counts.
  assertEquals(
    affected(base, rollout('{ variation = "on", weight = 100 }', 'bucket_by = "user.id"\n')),
    [
      "dev",
      "production",
      "staging",
    ],
  );
  // A rollout of one entry is not a variation rule (it is skipped without a bucket value, reason SPLIT).
  assertEquals(
    affected(base, files({ "flags/split.toml": BOOL + '[[rule]]\nvariation = "on"\n' })),
    ["dev", "production", "staging"],
  );
});

Deno.test("environmentsAffected(): public_evaluate and environments added or removed", () => {
  assertEquals(
    affected(
      files(),
      files({ "namespace.toml": NS.replace("public_evaluate = true", "public_evaluate = false") }),
    ),
    ["staging"],
  );
  assertEquals(
    affected(files(), files({ "namespace.toml": NS + "[namespace.environments.qa]\n" })),
    ["qa"],
  );
  assertEquals(
    affected(files({ "namespace.toml": NS + "[namespace.environments.qa]\n" }), files()),
    ["qa"],
  );
  // Reordering environments changes nothing.
  const reordered = 'schema_version = 1\n[namespace]\ndescription = "Checkout"\n' +
    "[namespace.environments.dev]\n[namespace.environments.production]\n" +
    "[namespace.environments.staging]\npublic_evaluate = true\n";
  assertEquals(affected(files(), files({ "namespace.toml": reordered })), []);
});

Deno.test("environmentsAffected(): a flag added or removed affects every environment", () => {
  const withFlag = files({ "flags/extra.toml": BOOL });
  assertEquals(affected(files(), withFlag), ["dev", "production", "staging"]);
  assertEquals(affected(withFlag, files()), ["dev", "production", "staging"]);
  // Together with a new environment: the union.
  assertEquals(
    affected(files(), { ...withFlag, "namespace.toml": NS + "[namespace.environments.qa]\n" }),
    ["dev", "production", "qa", "staging"],
  );
  // The empty manifest has no environment.
  assertEquals(affected({}, {}), []);
  assertEquals(affected({}, files()), ["dev", "production", "staging"]);
});

Deno.test("environmentsAffected(): a type change affects every environment", () => {
  const num =
    `schema_version = 1\ntype = "number"\ndefault = "off"\n[variations]\non = 1\noff = 0\n`;
  assertEquals(affected(files({ "flags/x.toml": BOOL }), files({ "flags/x.toml": num })), [
    "dev",
    "production",
    "staging",
  ]);
});

Deno.test("environmentsAffectedByFiles() takes maps of bytes and refuses invalid manifests", () => {
  const enc = new TextEncoder();
  const asMap = (f: Record<string, string>) =>
    new Map(Object.entries(f).map(([k, v]) => [k, enc.encode(v)]));
  const after = files({ "namespace.toml": NS.replace("public_evaluate = true", "") });
  assertEquals(environmentsAffectedByFiles(asMap(files()), asMap(after)), ["staging"]);
  assertEquals(environmentsAffectedByFiles(asMap(files()), after), ["staging"]);
  const err = assertThrows(
    () => environmentsAffectedByFiles(files(), files({ "flags/bad.toml": "type = 1\n" })),
    ProblemsError,
  ) as ProblemsError;
  assert(err.problems.every((p) => p.path === "flags/bad.toml"));
  assertEquals(Object.keys(manifestOfFiles(files()).flags), ["checkout"]);
});

Deno.test("environmentsAffectedByFiles() loads both sides as stored versions by default", () => {
  // A pattern the linear-time engine refuses: only a stored version (from an
  // earlier release) holds one, and it never matches.
  const old = files({ "segments/beta.toml": seg(pred("user.agent", "matches", '"(?=a)"')) });
  const fixed = files({ "segments/beta.toml": seg(pred("user.agent", "matches", '"^a"')) });
  assertEquals(environmentsAffectedByFiles(old, fixed), ["dev", "production", "staging"]);
  assertEquals(environmentsAffectedByFiles(old, old), []);
  assertThrows(() => environmentsAffectedByFiles(old, fixed, {}), ProblemsError);
});

// ---------------------------------------------------------------------------
// Property: an environment reported unaffected evaluates every flag the same.

/** Random choices read from a tape of numbers: shrinking the tape towards 0 simplifies. */
class Tape {
  #i = 0;
  constructor(readonly xs: readonly number[]) {}
  int(n: number): number {
    const x = this.xs[this.#i++] ?? 0;
    return n <= 1 ? 0 : x % n;
  }
  bool(): boolean {
    return this.int(2) === 1;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
}

const ENVS = ["production", "staging", "dev", "qa"];
const NAMES = ["a", "b", "c", "d"];
const COUNTRIES = ["DE", "FR", "NL", "US"];
const TYPES: FlagType[] = ["boolean", "string", "number", "object"];

function genValue(t: Tape, type: FlagType): VariationValue {
  switch (type) {
    case "boolean":
      return t.bool();
    case "string":
      return t.pick(["x", "y", "z"]);
    case "number":
      return t.pick([0, 1, 2.5, -0]);
    case "object":
      return structuredClone(t.pick([{}, { k: 1 }, { k: 2 }, { k: 1, j: 2 }, { j: 2, k: 1 }]));
  }
}

function genPredicate(t: Tape, refTargets: readonly string[]): Predicate {
  const some = () => Array.from({ length: 1 + t.int(3) }, () => t.pick(COUNTRIES));
  const kinds: (() => Predicate)[] = [
    () => ({ attribute: "country", op: "eq", value: t.pick(COUNTRIES) }),
    () => ({ attribute: "country", op: "in", value: some() }),
    () => ({ attribute: "country", op: "not_in", value: some() }),
    () => ({ attribute: "country", op: t.pick(["in", "not_in"] as const), value: some() }),
    () => ({ attribute: "plan", op: "eq", value: t.pick(["free", "pro"]) }),
    () => ({ attribute: "age", op: t.pick(["lt", "gte"] as const), value: t.pick([18, 30, 65]) }),
    () => ({ attribute: "beta", op: "eq", value: t.bool() }),
    () => ({ attribute: "email", op: "ends_with", value: t.pick(["@x.com", "@y.com"]) }),
    () => ({ attribute: "email", op: "exists", value: t.bool() }),
    () => ({ attribute: "email", op: "matches", value: t.pick(["^a", "y\\.com$"]) }),
    () => ({ attribute: "n", op: "eq", value: t.pick([0, -0, 1]) }),
  ];
  if (refTargets.length > 0) {
    for (let i = 0; i < 3; i++) {
      kinds.push(() => ({
        attribute: `segment.${t.pick(refTargets)}`,
        op: "eq",
        value: t.int(4) !== 1,
      }));
    }
  }
  return t.pick(kinds)();
}

/** A new value for a predicate of {@linkcode genPredicate}, same attribute and operator. */
function otherValue(t: Tape, p: Predicate): Predicate["value"] {
  if (Array.isArray(p.value)) {
    return Array.from({ length: 1 + t.int(3) }, () => t.pick(COUNTRIES));
  }
  if (typeof p.value === "boolean") return !p.value;
  if (typeof p.value === "number") return t.pick([18, 30, 65, 0, -0, 1]);
  if (p.attribute === "country") return t.pick(COUNTRIES);
  if (p.attribute === "plan") return t.pick(["free", "pro"]);
  if (p.op === "matches") return t.pick(["^a", "y\\.com$", "^b"]);
  return t.pick(["@x.com", "@y.com", ".com"]);
}

function genSegment(t: Tape, key: string, refTargets: readonly string[]): Segment {
  return {
    key,
    description: "",
    match: t.pick(["all", "any"] as const),
    predicates: Array.from({ length: t.pick([1, 1, 2, 3]) }, () => genPredicate(t, refTargets)),
  };
}

function genWeights(t: Tape, n: number): number[] {
  const out: number[] = [];
  let left = 100000;
  for (let i = 0; i < n - 1; i++) {
    const w = Math.min(left, t.pick([0, 20000, 25000, 50000, 33333, 60000, 1]));
    out.push(w);
    left -= w;
  }
  out.push(left);
  return out;
}

function genRule(t: Tape, names: readonly string[], segs: readonly string[]): Rule {
  const segment = segs.length > 0 && t.bool() ? { segment: t.pick(segs) } : {};
  if (t.int(3) < 2) return { ...segment, variation: t.pick(names), bucket_by: "targeting_key" };
  const start = t.int(names.length);
  const rotated = [...names.slice(start), ...names.slice(0, start)];
  const entries = rotated.slice(0, names.length === 1 ? 1 : 2 + t.int(names.length - 1));
  const weights = genWeights(t, entries.length);
  return {
    ...segment,
    bucket_by: t.pick(["targeting_key", "user.id"]),
    rollout: entries.map((variation, i) => ({ variation, weight: weights[i]! })),
  };
}

function genRules(t: Tape, names: readonly string[], segs: readonly string[]): Rule[] {
  return Array.from({ length: t.int(4) }, () => genRule(t, names, segs));
}

function genOverride(t: Tape, names: readonly string[], segs: readonly string[]) {
  const o: EnvironmentOverride = { enabled: t.int(4) !== 1 };
  if (t.bool()) o.default = t.pick(names);
  if (t.int(3) !== 0) o.rules = genRules(t, names, segs);
  return o;
}

function genFlag(t: Tape, key: string, envs: readonly string[], segs: readonly string[]): Flag {
  const type = t.pick(TYPES);
  let names = NAMES.slice(0, 1 + t.int(3));
  if (t.bool()) names = names.reverse();
  const variations: Record<string, VariationValue> = {};
  for (const n of names) variations[n] = genValue(t, type);
  const environments: Record<string, EnvironmentOverride> = {};
  const rules = genRules(t, names, segs);
  for (const e of envs) if (t.int(3) === 2) environments[e] = genOverride(t, names, segs);
  return { key, description: "", type, default: t.pick(names), variations, rules, environments };
}

function genManifest(t: Tape): Manifest {
  const envs = ENVS.slice(0, 1 + t.int(3));
  const environments: Manifest["namespace"]["environments"] = {};
  for (const e of envs) environments[e] = { public_evaluate: t.bool() };
  const segments: Record<string, Segment> = {};
  const segCount = t.int(5);
  for (let i = 0; i < segCount; i++) {
    segments[`s${i}`] = genSegment(t, `s${i}`, Object.keys(segments));
  }
  const flags: Record<string, Flag> = {};
  const flagCount = 1 + t.int(3);
  for (let i = 0; i < flagCount; i++) {
    flags[`f${i}`] = genFlag(t, `f${i}`, envs, Object.keys(segments));
  }
  return { namespace: { description: "", environments }, flags, segments };
}

/** Every rule list of a manifest: each flag's, and each override's own. */
function ruleLists(m: Manifest): { flag: Flag; env: string | null; rules: Rule[] }[] {
  const out: { flag: Flag; env: string | null; rules: Rule[] }[] = [];
  for (const f of Object.values(m.flags)) {
    out.push({ flag: f, env: null, rules: f.rules });
    for (const [e, o] of Object.entries(f.environments)) {
      if (o.rules) out.push({ flag: f, env: e, rules: o.rules });
    }
  }
  return out;
}

/** Segments that `from` may reference without a cycle. */
function refTargets(m: Manifest, from: string): string[] {
  const reachesFrom = (s: string): boolean => {
    const seen = new Set<string>();
    const stack = [s];
    while (stack.length > 0) {
      const k = stack.pop()!;
      if (k === from) return true;
      if (seen.has(k)) continue;
      seen.add(k);
      for (const p of m.segments[k]?.predicates ?? []) {
        if (p.attribute.startsWith("segment.")) stack.push(p.attribute.slice(8));
      }
    }
    return false;
  };
  return Object.keys(m.segments).filter((s) => !reachesFrom(s));
}

function segmentUsed(m: Manifest, key: string): boolean {
  if (ruleLists(m).some((l) => l.rules.some((r) => r.segment === key))) return true;
  return Object.values(m.segments).some((s) =>
    s.predicates.some((p) => p.attribute === `segment.${key}`)
  );
}

function variationUsed(f: Flag, name: string): boolean {
  const inRules = (rules: Rule[] | undefined) =>
    (rules ?? []).some((r) =>
      r.variation === name || (r.rollout ?? []).some((e) => e.variation === name)
    );
  return f.default === name || inRules(f.rules) ||
    Object.values(f.environments).some((o) => o.default === name || inRules(o.rules));
}

/** Operators swapped by an edit: same attribute, same value. */
const FLIP: Partial<Record<Predicate["op"], Predicate["op"]>> = {
  in: "not_in",
  not_in: "in",
  eq: "neq",
  neq: "eq",
  lt: "gte",
  gte: "lt",
  ends_with: "contains",
  contains: "ends_with",
};

/**
 * Edit kinds (the cases of {@linkcode edit}); the edits that are easy to get
 * subtly wrong (weights, predicates, segment references, rule segments) are
 * drawn more often.
 */
const EDIT_KINDS = [
  ...Array.from({ length: 35 }, (_, i) => i),
  ...[3, 3, 4, 5, 11, 12, 13, 14, 14, 27, 27, 27, 31, 31, 33, 33],
];

/** One random edit of `m` (in place); returns what it did, or undefined when it did not apply. */
function edit(t: Tape, m: Manifest): string | undefined {
  const flags = Object.values(m.flags);
  const segs = Object.keys(m.segments);
  const envs = Object.keys(m.namespace.environments);
  const lists = ruleLists(m);
  const allRules = lists.flatMap((l) => l.rules.map((r) => ({ ...l, rule: r })));
  const flag = flags.length > 0 ? t.pick(flags) : undefined;
  const names = flag ? Object.keys(flag.variations) : [];
  const kind = t.pick(EDIT_KINDS);
  switch (kind) {
    case 0: {
      if (!flag) return;
      const n = t.pick(names);
      flag.variations[n] = genValue(t, flag.type);
      return `${flag.key}: variation ${n} = ${JSON.stringify(flag.variations[n])}`;
    }
    case 1:
      if (!flag) return;
      flag.default = t.pick(names);
      return `${flag.key}: default = ${flag.default}`;
    case 2: {
      const which = t.int(3);
      if (which === 0) m.namespace.description = `words ${t.int(9)}`;
      else if (which === 1 && flag) flag.description = `words ${t.int(9)}`;
      else if (segs.length > 0) m.segments[t.pick(segs)]!.description = `words ${t.int(9)}`;
      return "a description";
    }
    case 3: {
      const ro = allRules.filter((x) => x.rule.rollout !== undefined);
      if (ro.length === 0) return;
      const x = t.pick(ro);
      const weights = genWeights(t, x.rule.rollout!.length);
      x.rule.rollout!.forEach((e, i) => e.weight = weights[i]!);
      return `${x.flag.key}[${x.env}]: weights ${weights}`;
    }
    case 4: {
      if (allRules.length === 0) return;
      const x = t.pick(allRules);
      x.rule.bucket_by = x.rule.bucket_by === "user.id" ? "targeting_key" : "user.id";
      return `${x.flag.key}[${x.env}]: bucket_by ${x.rule.bucket_by}`;
    }
    case 5: {
      if (allRules.length === 0) return;
      const x = t.pick(allRules);
      const s = segs.length > 0 && t.int(3) !== 0 ? t.pick(segs) : undefined;
      if (s === undefined) delete x.rule.segment;
      else x.rule.segment = s;
      return `${x.flag.key}[${x.env}]: rule segment ${s}`;
    }
    case 6: {
      const vr = allRules.filter((x) => x.rule.rollout === undefined);
      if (vr.length === 0) return;
      const x = t.pick(vr);
      x.rule.variation = t.pick(Object.keys(x.flag.variations));
      return `${x.flag.key}[${x.env}]: rule variation ${x.rule.variation}`;
    }
    case 7: {
      if (lists.length === 0) return;
      const l = t.pick(lists);
      l.rules.splice(
        t.int(l.rules.length + 1),
        0,
        genRule(t, Object.keys(l.flag.variations), segs),
      );
      return `${l.flag.key}[${l.env}]: rule added`;
    }
    case 8: {
      const ls = lists.filter((l) => l.rules.length > 0);
      if (ls.length === 0) return;
      const l = t.pick(ls);
      l.rules.splice(t.int(l.rules.length), 1);
      return `${l.flag.key}[${l.env}]: rule removed`;
    }
    case 9:
    case 10:
    case 11: {
      if (!flag || envs.length === 0) return;
      const e = t.pick(envs);
      const o = flag.environments[e] ??= { enabled: true };
      if (kind === 9) o.enabled = !o.enabled;
      else if (kind === 10) {
        if (t.bool()) delete o.default;
        else o.default = t.pick(names);
      } else {
        const how = t.int(3);
        if (how === 0) delete o.rules;
        else if (how === 1) o.rules = structuredClone(flag.rules);
        else o.rules = genRules(t, names, segs);
      }
      return `${flag.key}[${e}]: override ${JSON.stringify(o)}`;
    }
    case 12: {
      if (segs.length === 0) return;
      const s = m.segments[t.pick(segs)]!;
      const i = t.int(s.predicates.length);
      s.predicates[i] = genPredicate(t, refTargets(m, s.key));
      return `${s.key}: predicate ${i} = ${JSON.stringify(s.predicates[i])}`;
    }
    case 13: {
      if (segs.length === 0) return;
      const s = m.segments[t.pick(segs)]!;
      s.match = s.match === "all" ? "any" : "all";
      return `${s.key}: match ${s.match}`;
    }
    case 14: {
      if (segs.length === 0) return;
      const s = m.segments[t.pick(segs)]!;
      const targets = refTargets(m, s.key);
      if (t.bool() && targets.length > 0) {
        const target = t.pick(targets);
        s.predicates.splice(t.int(s.predicates.length + 1), 0, {
          attribute: `segment.${target}`,
          op: "eq",
          value: t.int(4) !== 1,
        });
        return `${s.key}: references ${target}`;
      }
      if (s.predicates.length < 2) return;
      s.predicates.splice(t.int(s.predicates.length), 1);
      return `${s.key}: a predicate removed`;
    }
    case 15: {
      if (envs.length === 0) return;
      const e = m.namespace.environments[t.pick(envs)]!;
      e.public_evaluate = !e.public_evaluate;
      return "public_evaluate flipped";
    }
    case 16: {
      const e = ENVS.find((x) => !envs.includes(x));
      if (e === undefined) return;
      m.namespace.environments[e] = { public_evaluate: t.bool() };
      for (const f of flags) {
        if (t.bool()) f.environments[e] = genOverride(t, Object.keys(f.variations), segs);
      }
      return `environment ${e} added`;
    }
    case 17: {
      if (envs.length === 0) return;
      const e = t.pick(envs);
      delete m.namespace.environments[e];
      for (const f of flags) delete f.environments[e];
      return `environment ${e} removed`;
    }
    case 18: {
      const key = `f${flags.length + t.int(3)}`;
      if (m.flags[key]) return;
      m.flags[key] = genFlag(t, key, envs, segs);
      return `flag ${key} added`;
    }
    case 19:
      if (!flag) return;
      delete m.flags[flag.key];
      return `flag ${flag.key} removed`;
    case 20: {
      const key = `n${t.int(3)}`;
      if (m.segments[key]) return;
      m.segments[key] = genSegment(t, key, segs);
      return `segment ${key} added`;
    }
    case 21: {
      const free = segs.filter((s) => !segmentUsed(m, s));
      if (free.length === 0) return;
      const s = t.pick(free);
      delete m.segments[s];
      return `segment ${s} removed`;
    }
    case 22: {
      if (!flag) return;
      const n = NAMES.find((x) => !names.includes(x));
      if (n === undefined) return;
      flag.variations[n] = genValue(t, flag.type);
      return `${flag.key}: variation ${n} added`;
    }
    case 23: {
      if (!flag) return;
      const free = names.filter((n) => !variationUsed(flag, n));
      if (free.length === 0) return;
      const n = t.pick(free);
      delete flag.variations[n];
      return `${flag.key}: variation ${n} removed`;
    }
    case 24:
      if (!flag) return;
      flag.variations = Object.fromEntries(Object.entries(flag.variations).reverse());
      return `${flag.key}: variations reversed`;
    case 25: {
      const ls = lists.filter((l) => l.rules.length > 1);
      if (ls.length === 0) return;
      const l = t.pick(ls);
      const i = t.int(l.rules.length - 1);
      [l.rules[i], l.rules[i + 1]] = [l.rules[i + 1]!, l.rules[i]!];
      return `${l.flag.key}[${l.env}]: rules ${i} and ${i + 1} swapped`;
    }
    case 26: {
      if (segs.length === 0) return;
      const from = t.pick(segs);
      const to = `r-${from}`;
      if (m.segments[to]) return;
      m.segments[to] = { ...m.segments[from]!, key: to };
      delete m.segments[from];
      for (const s of Object.values(m.segments)) {
        for (const p of s.predicates) {
          if (p.attribute === `segment.${from}`) p.attribute = `segment.${to}`;
        }
      }
      for (const l of lists) for (const r of l.rules) if (r.segment === from) r.segment = to;
      return `segment ${from} renamed ${to}`;
    }
    case 27: {
      const lists = Object.values(m.segments).flatMap((s) =>
        s.predicates.filter((p) => Array.isArray(p.value))
      );
      if (lists.length === 0) return;
      const p = t.pick(lists);
      const v = p.value as string[];
      const how = t.int(4);
      if (how === 0) p.value = [...v].reverse();
      else if (how === 1) p.value = [...v, v[0]!];
      else if (how === 2) p.value = [...v, t.pick(COUNTRIES)];
      else if (v.length > 1) {
        const drop = t.int(v.length);
        p.value = v.filter((_, i) => i !== drop);
      }
      return `in list ${JSON.stringify(v)} → ${JSON.stringify(p.value)}`;
    }
    case 28: {
      if (!flag) return;
      flag.type = t.pick(TYPES);
      for (const n of names) flag.variations[n] = genValue(t, flag.type);
      return `${flag.key}: type ${flag.type}`;
    }
    case 29: {
      const ro = allRules.filter((x) =>
        x.rule.rollout !== undefined &&
        Object.keys(x.flag.variations).some((n) => !x.rule.rollout!.some((e) => e.variation === n))
      );
      if (ro.length === 0) return;
      const x = t.pick(ro);
      const n = Object.keys(x.flag.variations).find((n) =>
        !x.rule.rollout!.some((e) => e.variation === n)
      )!;
      x.rule.rollout!.splice(t.int(x.rule.rollout!.length + 1), 0, { variation: n, weight: 0 });
      return `${x.flag.key}[${x.env}]: rollout entry ${n} of weight 0`;
    }
    case 30: {
      // Move a value between variations: same values, other names.
      if (!flag || names.length < 2) return;
      const [a, b] = [names[0]!, names[1]!];
      [flag.variations[a], flag.variations[b]] = [flag.variations[b]!, flag.variations[a]!];
      return `${flag.key}: values of ${a} and ${b} swapped`;
    }
    case 31: {
      // Another operator on the same attribute and value.
      const preds = Object.values(m.segments).flatMap((s) => s.predicates)
        .filter((p) => !p.attribute.startsWith("segment.") && Object.hasOwn(FLIP, p.op));
      if (preds.length === 0) return;
      const p = t.pick(preds);
      p.op = FLIP[p.op]!;
      return `op ${p.attribute} ${p.op}`;
    }
    case 32: {
      // The sign of a zero: a served value of -0 is not 0, a compared one is.
      const zeros: { get: () => unknown; set: (v: number) => void }[] = [];
      for (const f of flags) {
        for (const n of Object.keys(f.variations)) {
          zeros.push({ get: () => f.variations[n], set: (v) => f.variations[n] = v });
        }
      }
      for (const s of Object.values(m.segments)) {
        for (const p of s.predicates) zeros.push({ get: () => p.value, set: (v) => p.value = v });
      }
      const z = zeros.filter((x) => x.get() === 0);
      if (z.length === 0) return;
      const x = t.pick(z);
      x.set(Object.is(x.get(), -0) ? 0 : -0);
      return `a zero's sign flipped`;
    }
    case 33: {
      // Another value, same attribute and operator.
      const preds = Object.values(m.segments).flatMap((s) => s.predicates)
        .filter((p) => !p.attribute.startsWith("segment."));
      if (preds.length === 0) return;
      const p = t.pick(preds);
      p.value = otherValue(t, p);
      return `value ${p.attribute} ${p.op} ${JSON.stringify(p.value)}`;
    }
    default: {
      if (!flag || envs.length === 0) return;
      const e = t.pick(envs);
      if (flag.environments[e]) delete flag.environments[e];
      else flag.environments[e] = { enabled: true };
      return `${flag.key}[${e}]: override toggled`;
    }
  }
}

/** Mostly present (3 times in 4). */
const often = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** Contexts that the generated predicates and rollouts read. */
const contextArb = fc.record({
  targeting_key: often(fc.constantFrom("u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "")),
  user: often(fc.record({ id: often(fc.constantFrom("a", "b", "c", "d", "e", 7)) })),
  country: often(fc.constantFrom(...COUNTRIES, "XX")),
  plan: often(fc.constantFrom("free", "pro")),
  age: often(fc.constantFrom(10, 18, 30, 70)),
  beta: often(fc.boolean()),
  email: often(fc.constantFrom("a@x.com", "b@y.com", "a@y.com")),
  n: often(fc.constantFrom(0, -0, 1)),
}).map(present);

/**
 * Contexts aimed at the predicates of both manifests: for every value a
 * predicate compares with (each item of a list, a number and one less, a
 * suffix), one of the random contexts with that attribute set to it. Random
 * contexts alone rarely hit the one list item an edit added.
 */
function aimedContexts(
  base: readonly Record<string, unknown>[],
  ...manifests: Manifest[]
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const m of manifests) {
    for (const s of Object.values(m.segments)) {
      for (const p of s.predicates) {
        if (p.attribute.startsWith("segment.")) continue;
        const values: unknown[] = Array.isArray(p.value) ? [...p.value] : [p.value];
        if (typeof p.value === "number") values.push(p.value - 1);
        if (p.op === "ends_with" || p.op === "contains") values.push(`a${p.value}`);
        if (p.op === "exists") values.push(undefined);
        for (const v of values) {
          const ctx = { ...base[out.length % base.length]! };
          if (v === undefined) delete ctx[p.attribute];
          else ctx[p.attribute] = v;
          out.push(ctx);
        }
      }
    }
  }
  return out;
}

/** The object without its undefined members (absent attributes), recursively. */
function present(o: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(o).filter(([, v]) => v !== undefined).map((
      [k, v],
    ) => [k, v !== null && typeof v === "object" ? present(v) : v]),
  );
}

const RUNS = Number(Deno.env.get("IMPACT_RUNS") ?? 1000);

Deno.test("environmentsAffected(): environments called unaffected evaluate the same (property)", () => {
  const tally = { runs: 0, unaffected: 0, affected: 0, affectedButSame: 0 };
  fc.assert(
    fc.property(
      fc.array(fc.nat({ max: 1_000_000 }), { minLength: 300, maxLength: 300 }),
      fc.array(fc.nat({ max: 1_000_000 }), { minLength: 40, maxLength: 40 }),
      fc.array(contextArb, { minLength: 16, maxLength: 16 }),
      (manifestTape, editTape, randomContexts) => {
        const before = genManifest(new Tape(manifestTape));
        const after = structuredClone(before);
        const t = new Tape(editTape);
        const edits: string[] = [];
        for (let n = t.pick([1, 1, 1, 2, 2, 3]); n > 0; n--) {
          const done = edit(t, after);
          if (done !== undefined) edits.push(done);
        }
        const affected = environmentsAffected(before, after);
        const detail = () =>
          `edits: ${edits.join("; ")}\nbefore: ${JSON.stringify(before)}\nafter: ${
            JSON.stringify(after)
          }`;
        assertEquals(environmentsAffected(after, before), affected, "symmetric\n" + detail());
        assertEquals(environmentsAffected(before, structuredClone(before)), []);
        if (affected.length > 0) {
          assert(valueChanges(before, after).length > 0, "a change without words\n" + detail());
        }
        const contexts = [...randomContexts, ...aimedContexts(randomContexts, before, after)];
        const mb = compileManifest(before, 1);
        const ma = compileManifest(after, 1);
        tally.runs++;
        for (const env of Object.keys(before.namespace.environments)) {
          if (!Object.hasOwn(after.namespace.environments, env)) continue;
          const same = () =>
            contexts.every((ctx) =>
              JSON.stringify(evaluateAll(mb, env, ctx)) ===
                JSON.stringify(evaluateAll(ma, env, ctx))
            );
          if (affected.includes(env)) {
            tally.affected++;
            if (same()) tally.affectedButSame++;
            continue;
          }
          tally.unaffected++;
          const why = `environment ${env} called unaffected\n${detail()}`;
          assertEquals(
            after.namespace.environments[env]!.public_evaluate,
            before.namespace.environments[env]!.public_evaluate,
            why,
          );
          assertEquals(ma.flagKeys, mb.flagKeys, why);
          for (const k of mb.flagKeys) assertEquals(flagType(ma, k), flagType(mb, k), why);
          for (const ctx of contexts) {
            assertEquals(
              evaluateAll(ma, env, ctx),
              evaluateAll(mb, env, ctx),
              `${why}\ncontext: ${JSON.stringify(ctx)}`,
            );
          }
        }
      },
    ),
    { numRuns: RUNS },
  );
  if (Deno.env.get("IMPACT_TALLY")) console.log(tally);
  // The property is not vacuous: both answers occur.
  assert(tally.unaffected > RUNS / 4 && tally.affected > RUNS / 4, JSON.stringify(tally));
});
