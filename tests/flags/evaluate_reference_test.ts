/**
 * The compiled engine against a plain interpretation of the same manifest.
 *
 * `compileManifest` turns segments into predicate checks tested in a loop
 * (an own-property check only after a matching read), evaluates a flag
 * whose segments are simple without the segment memo or the regex budget,
 * reads top-level and dotted attributes with separate code, caches the last
 * (environment, flag) it looked up, and hashes rollout values from a
 * precomputed murmur3 state with an ASCII fast path. Each of these is a
 * place where the engine could drift from the rules of docs/flags.md. Here
 * the rules are written out a second time, as directly as they read:
 * predicates over a lookup that checks own properties first, segments
 * decided by recursion, `effective rules → first match → default`, the
 * bucket as the reference murmur3 of the UTF-8 of `<flag>/<value>`. Random
 * manifests and contexts must give the same results through
 * `evaluateFlag`, `evaluateAll` and the reference.
 *
 * The contexts include what a JSON body never holds but a caller of the
 * library can pass: inherited attributes (which never count), own
 * attributes set to `undefined`, a flat `"a.b"` key next to a nested `a.b`,
 * prototype names (`toString`), and non-ASCII bucket values of every
 * length.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { referenceMurmur3 } from "./_murmur3_reference.ts";
import { compileManifest, evaluateAll, evaluateFlag } from "../../lib/flags/evaluate.ts";
import type {
  EnvironmentOverride,
  Flag,
  Manifest,
  Predicate,
  Rule,
  Segment,
  VariationValue,
} from "../../lib/flags/model.ts";
import { compilePattern } from "../../lib/linear_regex.ts";
import { compareSemver, parseSemver } from "../../lib/flags/semver.ts";
import { rfc3339MsOf } from "../../lib/protocol/time_text.ts";

// ---------------------------------------------------------------------------
// The reference: the rules as written, without compilation.

type Ctx = Record<string, unknown>;

function own(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

/** The attribute's value: an own property named by the whole path, else the path step by step. */
function refLookup(ctx: Ctx, path: string): unknown {
  if (own(ctx, path)) return ctx[path];
  let cur: unknown = ctx;
  for (const step of path.split(".")) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    if (!own(cur, step)) return undefined;
    cur = (cur as Ctx)[step];
  }
  return cur;
}

function scalar(v: unknown): boolean {
  return typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v));
}

function refPredicate(p: Predicate, ctx: Ctx, segment: (key: string) => boolean): boolean {
  if (p.attribute.startsWith("segment.")) {
    return segment(p.attribute.slice("segment.".length)) === (p.value === true);
  }
  const v = refLookup(ctx, p.attribute);
  if (p.op === "exists") return (v !== undefined) === p.value;
  if (v === undefined || v === null) return false;
  const want = p.value;
  const list = want as unknown[];
  switch (p.op) {
    case "eq":
      return v === want;
    case "neq":
      return v !== want;
    case "in":
      return list.some((x) => x === v);
    case "not_in":
      return scalar(v) && !list.some((x) => x === v);
    case "lt":
      return typeof v === "number" && v < (want as number);
    case "lte":
      return typeof v === "number" && v <= (want as number);
    case "gt":
      return typeof v === "number" && v > (want as number);
    case "gte":
      return typeof v === "number" && v >= (want as number);
    case "starts_with":
      return typeof v === "string" && v.startsWith(want as string);
    case "ends_with":
      return typeof v === "string" && v.endsWith(want as string);
    case "contains":
      return typeof v === "string"
        ? v.includes(want as string)
        : Array.isArray(v) && v.some((x) => x === want);
    case "matches": {
      const r = compilePattern(want as string);
      return typeof v === "string" && "regex" in r && r.regex.test(v);
    }
    case "semver_eq":
    case "semver_lt":
    case "semver_gt": {
      const a = parseSemver(v);
      if (a === null) return false;
      const c = compareSemver(a, parseSemver(want)!);
      return p.op === "semver_eq" ? c === 0 : p.op === "semver_lt" ? c < 0 : c > 0;
    }
    case "before":
    case "after": {
      if (typeof v !== "string") return false;
      const a = rfc3339MsOf(v), b = rfc3339MsOf(want as string);
      return p.op === "before" ? a < b : a > b;
    }
  }
}

function refSegment(m: Manifest, key: string, ctx: Ctx): boolean {
  const s = m.segments[key]!;
  const one = (p: Predicate) => refPredicate(p, ctx, (k) => refSegment(m, k, ctx));
  return s.match === "all" ? s.predicates.every(one) : s.predicates.some(one);
}

function refBucketValue(v: unknown): string | undefined {
  if (typeof v === "string") return v === "" ? undefined : v;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : undefined;
  if (typeof v === "boolean") return String(v);
  return undefined;
}

interface RefResult {
  value: VariationValue;
  variation: string;
  reason: string;
  rule_index?: number;
}

function refEvaluate(m: Manifest, env: string, key: string, ctx: Ctx): RefResult {
  const flag = m.flags[key]!;
  const o = own(flag.environments, env) ? flag.environments[env] : undefined;
  const def = o?.default ?? flag.default;
  const served = (variation: string, reason: string, rule_index?: number): RefResult => ({
    value: flag.variations[variation]!,
    variation,
    reason,
    ...(rule_index === undefined ? {} : { rule_index }),
  });
  if (o !== undefined && !o.enabled) return served(def, "DISABLED");
  const rules = o?.rules ?? flag.rules;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (r.segment !== undefined && !refSegment(m, r.segment, ctx)) continue;
    if (r.rollout === undefined) return served(r.variation, "TARGETING_MATCH", i);
    const bv = refBucketValue(refLookup(ctx, r.bucket_by));
    if (bv === undefined) continue;
    const bucket = referenceMurmur3(new TextEncoder().encode(`${key}/${bv}`)) % 100000;
    let upTo = 0;
    let pick = r.rollout[r.rollout.length - 1]!.variation;
    for (const e of r.rollout) {
      upTo += e.weight;
      if (bucket < upTo) {
        pick = e.variation;
        break;
      }
    }
    return served(pick, "SPLIT", i);
  }
  return served(def, "DEFAULT");
}

// ---------------------------------------------------------------------------
// Random manifests and contexts, read from a tape of numbers (shrinks well).

class Tape {
  #i = 0;
  constructor(readonly xs: readonly number[]) {}
  int(n: number): number {
    const x = this.xs[this.#i++ % this.xs.length] ?? 0;
    return n <= 1 ? 0 : x % n;
  }
  bool(): boolean {
    return this.int(2) === 1;
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
}

const ENVS = ["production", "staging", "dev"];
const STRINGS = ["DE", "FR", "pro", "free", "", "é", "a.b"];
const NUMBERS = [0, -0, 1, 1.5, 18, -3];
const VERSIONS = ["1.2.3", "1.10.0", "2.0.0-rc.1", "v1.2.3", "1.2"];
const TIMES = ["2026-01-01T00:00:00Z", "2026-01-01", "2025-12-31T23:59:59.999Z", "soon"];
/** Top-level and dotted attributes, a prototype name among them. */
const ATTRS = ["country", "plan", "n", "beta", "ver", "at", "toString", "user.id", "a.b"];
/** Bucket values: strings of every length mod 4, non-ASCII (2-, 3-, 4-byte, lone surrogate). */
const BUCKET_VALUES = [
  "u",
  "u1",
  "u12",
  "u123",
  "user-1001",
  "é",
  "xé",
  "日本語",
  "a😀",
  "\ud800x",
  "",
  7,
  -0,
  1.5,
  NaN,
  true,
  null,
];

function genPredicate(t: Tape, earlier: readonly string[]): Predicate {
  if (earlier.length > 0 && t.int(5) === 0) {
    return { attribute: `segment.${t.pick(earlier)}`, op: "eq", value: t.int(4) !== 0 };
  }
  const attribute = t.pick(ATTRS);
  const some = <T>(xs: readonly T[]) => Array.from({ length: 1 + t.int(3) }, () => t.pick(xs));
  const kinds: (() => Predicate)[] = [
    () => ({ attribute, op: "eq", value: t.pick([...STRINGS, ...NUMBERS, true, false]) }),
    () => ({ attribute, op: "eq", value: t.pick(STRINGS) }),
    () => ({ attribute, op: "neq", value: t.pick([...STRINGS, 1, true]) }),
    () => ({ attribute, op: "in", value: t.bool() ? some(STRINGS) : some(NUMBERS) }),
    () => ({ attribute, op: "not_in", value: t.bool() ? some(STRINGS) : some([true, false]) }),
    () => ({ attribute, op: t.pick(["lt", "lte", "gt", "gte"] as const), value: t.pick(NUMBERS) }),
    () => ({
      attribute,
      op: t.pick(["starts_with", "ends_with", "contains"] as const),
      value: t.pick(["D", "e", "r", ""]),
    }),
    () => ({ attribute, op: "matches", value: t.pick(["^D", "o$", "é"]) }),
    () => ({ attribute, op: "exists", value: t.bool() }),
    () => ({
      attribute,
      op: t.pick(["semver_eq", "semver_lt", "semver_gt"] as const),
      value: t.pick(["1.2.3", "2.0.0"]),
    }),
    () => ({ attribute, op: t.pick(["before", "after"] as const), value: "2026-01-01T00:00:00Z" }),
  ];
  return t.pick(kinds)();
}

function genRule(t: Tape, names: readonly string[], segs: readonly string[]): Rule {
  const segment = segs.length > 0 && t.int(4) !== 0 ? { segment: t.pick(segs) } : {};
  if (t.bool()) return { ...segment, variation: t.pick(names), bucket_by: "targeting_key" };
  const n = 1 + t.int(3);
  const weights = Array.from({ length: n }, () => t.pick([0, 25000, 50000, 1]));
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum > 100000) weights.fill(0);
  weights[n - 1]! += 100000 - weights.reduce((a, b) => a + b, 0);
  return {
    ...segment,
    bucket_by: t.pick(["targeting_key", "targeting_key", "user.id", "n", "a.b"]),
    rollout: weights.map((weight, i) => ({ variation: names[i % names.length]!, weight })),
  };
}

function genManifest(t: Tape): Manifest {
  const envs = ENVS.slice(0, 1 + t.int(ENVS.length));
  const environments: Manifest["namespace"]["environments"] = {};
  for (const e of envs) environments[e] = { public_evaluate: false };
  const segments: Record<string, Segment> = {};
  const segCount = t.int(5);
  for (let i = 0; i < segCount; i++) {
    const key = `s${i}`;
    segments[key] = {
      key,
      description: "",
      match: t.pick(["all", "any"] as const),
      predicates: Array.from(
        { length: 1 + t.int(3) },
        () => genPredicate(t, Object.keys(segments)),
      ),
    };
  }
  const segs = Object.keys(segments);
  const flags: Record<string, Flag> = {};
  for (let i = 0; i < 1 + t.int(3); i++) {
    const key = `f${i}`;
    const names = ["on", "off", "mid"].slice(0, 1 + t.int(3));
    const variations: Record<string, VariationValue> = {};
    names.forEach((n, j) => variations[n] = `${key}:${j}`);
    const rules = () => Array.from({ length: t.int(4) }, () => genRule(t, names, segs));
    const overrides: Record<string, EnvironmentOverride> = {};
    for (const e of envs) {
      if (t.int(3) !== 0) continue;
      const o: EnvironmentOverride = { enabled: t.int(4) !== 0 };
      if (t.bool()) o.default = t.pick(names);
      if (t.bool()) o.rules = rules();
      overrides[e] = o;
    }
    flags[key] = {
      key,
      description: "",
      type: "string",
      default: t.pick(names),
      variations,
      rules: rules(),
      environments: overrides,
    };
  }
  return { namespace: { description: "", environments }, flags, segments };
}

/** A value some predicate or rollout reads. */
function genValue(t: Tape): unknown {
  switch (t.int(7)) {
    case 0:
      return t.pick(STRINGS);
    case 1:
      return t.pick(NUMBERS);
    case 2:
      return t.pick([true, false, null, undefined]);
    case 3:
      return t.pick(VERSIONS);
    case 4:
      return t.pick(TIMES);
    case 5:
      return t.pick(BUCKET_VALUES);
    default:
      return t.pick([["D", "e"], { id: "u1" }, [], "Dora"]);
  }
}

/** Each top-level attribute a predicate compares, with each value it compares with. */
function aims(m: Manifest): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const s of Object.values(m.segments)) {
    for (const p of s.predicates) {
      if (p.attribute.includes(".")) continue;
      for (const v of Array.isArray(p.value) ? p.value : [p.value]) out.push([p.attribute, v]);
    }
  }
  return out;
}

/**
 * A context: some attributes own, some inherited (which never count), some
 * own and undefined; `user.id` nested or flat, `a.b` flat or nested. Some
 * attributes are set, own or inherited, to a value that a predicate of the
 * manifest compares with (`aimed`), which random values rarely hit.
 */
function genContext(t: Tape, aimed: readonly [string, unknown][]): Ctx {
  const proto: Ctx = {};
  const kind = t.int(6);
  const ctx: Ctx = kind === 0 ? Object.create(proto) : kind === 1 ? Object.create(null) : {};
  for (const k of ["country", "plan", "n", "beta", "ver", "at", "toString", "targeting_key"]) {
    const where = t.int(4);
    const v = k === "targeting_key" ? t.pick(BUCKET_VALUES) : genValue(t);
    if (where === 1 || where === 2) ctx[k] = v;
    else if (where === 3 && kind === 0) proto[k] = v;
  }
  for (let i = t.int(3); i > 0 && aimed.length > 0; i--) {
    const [k, v] = t.pick(aimed);
    if (kind === 0 && t.bool()) {
      proto[k] = v;
      delete ctx[k];
    } else ctx[k] = v;
  }
  switch (t.int(5)) {
    case 0:
      ctx.user = { id: t.pick(BUCKET_VALUES) };
      break;
    case 1:
      ctx.user = Object.create({ id: "inherited" });
      break;
    case 2:
      ctx["user.id"] = t.pick(BUCKET_VALUES);
      ctx.user = { id: "nested" };
      break;
    case 3:
      ctx.user = t.pick([null, "u1", ["u1"]]);
  }
  switch (t.int(5)) {
    case 0:
      ctx["a.b"] = genValue(t);
      break;
    case 1:
      ctx["a.b"] = undefined;
      ctx.a = { b: genValue(t) };
      break;
    case 2:
      ctx.a = { b: genValue(t) };
      break;
    case 3:
      ctx.a = { b: undefined };
  }
  return ctx;
}

function view(r: { value: unknown; variation: unknown; reason: unknown; rule_index?: unknown }) {
  return [r.value, r.variation, r.reason, r.rule_index];
}

const tape = fc.array(fc.nat({ max: 1_000_000 }), { minLength: 400, maxLength: 400 });

Deno.test("evaluateFlag() and evaluateAll() agree with a plain interpretation of random manifests (property)", () => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(tape, tape, (ms, cs) => {
      const m = genManifest(new Tape(ms));
      const model = compileManifest(m, 4);
      const t = new Tape(cs);
      const aimed = aims(m);
      const envs = Object.keys(m.namespace.environments);
      const flags = Object.keys(m.flags);
      for (let c = 0; c < 12; c++) {
        const ctx = genContext(t, aimed);
        for (const env of envs) {
          const all = evaluateAll(model, env, ctx);
          for (const key of flags) {
            const want = view(refEvaluate(m, env, key, ctx));
            const got = evaluateFlag(model, env, key, ctx);
            assertEquals(view(got), want, `${env}/${key} ${Deno.inspect(ctx)}`);
            assertEquals(view(all[key]!), want, `evaluateAll ${env}/${key}`);
            assertEquals([got.flag, got.version], [key, 4]);
            seen.add(got.reason);
          }
          // The plan cache never answers for another flag or environment.
          assertEquals(evaluateFlag(model, env, "nope", ctx).error_code, "FLAG_NOT_FOUND");
          assertEquals(evaluateFlag(model, "nope", flags[0]!, ctx).error_code, "GENERAL");
        }
      }
    }),
    { numRuns: Number(Deno.env.get("ENGINE_RUNS") ?? 300) },
  );
  // Not vacuous: every kind of outcome occurred.
  assertEquals([...seen].sort(), ["DEFAULT", "DISABLED", "SPLIT", "TARGETING_MATCH"]);
});

Deno.test("the plan cache of evaluateFlag() follows the flag and the environment asked", () => {
  const files: Manifest = {
    namespace: {
      description: "",
      environments: { production: { public_evaluate: false }, staging: { public_evaluate: false } },
    },
    flags: {},
    segments: {},
  };
  for (const key of ["a", "b"]) {
    files.flags[key] = {
      key,
      description: "",
      type: "string",
      default: "x",
      variations: { x: `${key}-x`, y: `${key}-y` },
      rules: [],
      environments: { staging: { enabled: true, default: "y" } },
    };
  }
  const model = compileManifest(files, 1);
  const seq: [string, string, string][] = [
    ["production", "a", "a-x"],
    ["production", "a", "a-x"],
    ["production", "b", "b-x"],
    ["staging", "b", "b-y"],
    ["staging", "a", "a-y"],
    ["production", "a", "a-x"],
  ];
  for (const [env, key, value] of seq) {
    assertEquals(evaluateFlag(model, env, key, {}).value, value, `${env}/${key}`);
  }
  assert(evaluateFlag(model, "production", "a", null as never).error_code === "PARSE_ERROR");
  assertEquals(evaluateFlag(model, "production", "a", {}).value, "a-x");
});
