/**
 * The predicate engine shared by workspace qualifiers and flag segments: one
 * list of operators, one validator and one compiler that turns a predicate
 * into a fast matcher.
 *
 * A predicate reads a dotted attribute path from a context. An attribute of
 * the form `<refPrefix>.<name>` (`qualifier.x` in workspaces, `segment.x` in
 * flag manifests) reads the truth value of another named condition instead;
 * the caller supplies that lookup. A predicate whose attribute is absent from
 * the context does not hold, whatever the operator, except `exists`.
 *
 * `before` and `after` compare instants: the predicate's value and the
 * context's are RFC 3339 date-times with their zone, or dates (midnight UTC
 * at the start of the day), read by `rfc3339MsOf` (lib/protocol/time_text.ts)
 * to the millisecond. `before` holds when the context's instant is strictly
 * earlier, `after` when strictly later; a context value that is not a string
 * or does not parse does not hold, as an absent attribute.
 *
 * @module
 */
// the engine behind `matches` may load late (compile_pattern.ts); its cache is linear_regex.ts's
import { compilePattern } from "./compile_pattern.ts";
import { compareSemver, parseSemver, type SemVer } from "./semver.ts";
import { rfc3339MsOf } from "../protocol/time_text.ts";

/** Every operator, in documentation order. */
export const OPERATORS = [
  "eq",
  "neq",
  "in",
  "not_in",
  "lt",
  "lte",
  "gt",
  "gte",
  "starts_with",
  "ends_with",
  "contains",
  "matches",
  "exists",
  "semver_eq",
  "semver_lt",
  "semver_gt",
  "before",
  "after",
] as const;

/** One operator name. */
export type Operator = typeof OPERATORS[number];

/** A scalar a predicate can compare with. */
export type Scalar = string | number | boolean;

/** A validated predicate. */
export interface Predicate {
  /** Dotted context path, or `<refPrefix>.<name>` for a reference. */
  attribute: string;
  /** The operator. */
  op: Operator;
  /** The comparison value; its shape depends on `op`. */
  value: Scalar | Scalar[];
}

/** A context: nested JSON object of runtime facts. */
export type Context = Readonly<Record<string, unknown>>;

/** Reads the truth value of a referenced condition by name. */
export type RefLookup = (name: string) => boolean;

/** A compiled predicate or predicate list. */
export type Matcher = (ctx: Context, ref: RefLookup) => boolean;

/** A problem found while validating a predicate: key path and message. */
export interface PredicateProblem {
  /** Key path relative to the predicate table (`op`, `value`, `value[1]`). */
  key: string;
  /** What is wrong. */
  message: string;
}

const PREDICATE_KEYS = new Set(["attribute", "op", "value"]);
const ATTRIBUTE_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Options of {@linkcode validatePredicate}. */
export interface PredicateOptions {
  /**
   * Accept a `matches` pattern that the linear-time engine refuses (not RE2
   * syntax, too long, too complex) as a predicate that never holds, with a
   * warning instead of a problem. For loading data that an earlier release
   * stored; what is written new is always checked strictly.
   */
  lenientPatterns?: boolean;
}

/**
 * Validates a raw predicate table (as parsed from TOML) and returns the typed
 * predicate, or the list of problems. A reference attribute
 * (`<refPrefix>.<name>`) takes only `op = "eq"` with a boolean value. With
 * `lenientPatterns`, a `matches` pattern the engine refuses gives the
 * predicate plus a warning (the compiled predicate never holds).
 *
 * @param raw the parsed table
 * @param refPrefix `qualifier` or `segment`
 * @param options `lenientPatterns`
 * @returns `{predicate, warnings}` when valid, else `{problems}` (key paths relative to the table)
 *
 * @example
 * ```ts
 * import { validatePredicate } from "./conditions.ts";
 * const ok = validatePredicate({ attribute: "account.plan", op: "eq", value: "pro" }, "qualifier");
 * if (!("predicate" in ok)) throw new Error();
 * const bad = validatePredicate({ attribute: "a", op: "lt", value: "x" }, "qualifier");
 * if (!("problems" in bad)) throw new Error();
 * const js = { attribute: "a", op: "matches", value: "(?=a)" };
 * if (!("problems" in validatePredicate(js, "segment"))) throw new Error();
 * const kept = validatePredicate(js, "segment", { lenientPatterns: true });
 * if (!("predicate" in kept) || kept.warnings.length !== 1) throw new Error();
 * ```
 */
export function validatePredicate(
  raw: unknown,
  refPrefix: string,
  options: PredicateOptions = {},
): { predicate: Predicate; warnings: PredicateProblem[] } | { problems: PredicateProblem[] } {
  const warnings: PredicateProblem[] = [];
  const problems: PredicateProblem[] = [];
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { problems: [{ key: "", message: "a predicate must be a table" }] };
  }
  const t = raw as Record<string, unknown>;
  for (const k of Object.keys(t)) {
    if (!PREDICATE_KEYS.has(k)) problems.push({ key: k, message: `unknown key "${k}"` });
  }
  const { attribute, op, value } = t;
  if (typeof attribute !== "string" || !ATTRIBUTE_RE.test(attribute)) {
    problems.push({
      key: "attribute",
      message: typeof attribute === "string"
        ? `"${attribute}" is not a dotted attribute path`
        : "attribute is required and must be a string",
    });
  }
  if (typeof op !== "string" || !(OPERATORS as readonly string[]).includes(op)) {
    problems.push({
      key: "op",
      message: typeof op === "string"
        ? `unknown operator "${op}" (one of ${OPERATORS.join(", ")})`
        : "op is required and must be a string",
    });
    return { problems };
  }
  if (value === undefined) {
    problems.push({ key: "value", message: "value is required" });
    return { problems };
  }
  const isRef = typeof attribute === "string" && refName(attribute, refPrefix) !== undefined;
  if (isRef) {
    if (op !== "eq") {
      problems.push({ key: "op", message: `a ${refPrefix} reference takes op "eq"` });
    }
    if (typeof value !== "boolean") {
      problems.push({
        key: "value",
        message: `a ${refPrefix} reference compares with true or false`,
      });
    }
  } else {
    const msg = checkValue(op as Operator, value);
    if (msg && op === "matches" && typeof value === "string" && options.lenientPatterns) {
      warnings.push({ key: "value", message: `${msg}; this predicate never holds` });
    } else if (msg) problems.push({ key: "value", message: msg });
  }
  if (problems.length > 0) return { problems };
  return {
    predicate: { attribute: attribute as string, op: op as Operator, value: value as Scalar },
    warnings,
  };
}

/**
 * The referenced name when `attribute` is `<refPrefix>.<name>`, else undefined.
 *
 * @example
 * ```ts
 * import { refName } from "./conditions.ts";
 * if (refName("qualifier.beta", "qualifier") !== "beta") throw new Error();
 * if (refName("account.plan", "qualifier") !== undefined) throw new Error();
 * ```
 */
export function refName(attribute: string, refPrefix: string): string | undefined {
  const p = refPrefix + ".";
  return attribute.startsWith(p) && attribute.length > p.length
    ? attribute.slice(p.length)
    : undefined;
}

/**
 * The JSON Schema type a context attribute must have for a predicate, as the
 * context contract records it: the type of the value (of its items for `in`
 * and `not_in`); `number` for the ordering operators; `string` for the string,
 * semver and time (`before`, `after`) operators; undefined for `exists` (any
 * type).
 *
 * @example
 * ```ts
 * import { attributeType } from "./conditions.ts";
 * if (attributeType({ attribute: "a", op: "in", value: ["x"] }) !== "string") throw new Error();
 * ```
 */
export function attributeType(p: Predicate): "string" | "boolean" | "number" | undefined {
  if (p.op === "exists") return undefined;
  const v = Array.isArray(p.value) ? p.value[0] : p.value;
  return typeof v === "string" ? "string" : typeof v === "boolean" ? "boolean" : "number";
}

/**
 * Reads a dotted path from a context; undefined when any step is absent.
 *
 * @example
 * ```ts
 * import { lookup } from "./conditions.ts";
 * if (lookup({ account: { plan: "pro" } }, "account.plan") !== "pro") throw new Error();
 * ```
 */
export function lookup(ctx: Context, path: string): unknown {
  if (Object.hasOwn(ctx, path)) return ctx[path];
  let cur: unknown = ctx;
  let start = 0;
  while (true) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    const dot = path.indexOf(".", start);
    const key = dot === -1 ? path.slice(start) : path.slice(start, dot);
    const obj = cur as Record<string, unknown>;
    cur = Object.hasOwn(obj, key) ? obj[key] : undefined;
    if (dot === -1 || cur === undefined) return cur;
    start = dot + 1;
  }
}

/**
 * Compiles one validated predicate into a matcher. Regexes, semver values
 * and the instants of `before`/`after` are prepared once here, not at every
 * evaluation. A `matches` pattern the linear-time engine refuses (accepted
 * only by lenient validation) compiles to a predicate that never holds, so a
 * matcher never throws.
 *
 * @example
 * ```ts
 * import { compilePredicate } from "./conditions.ts";
 * const m = compilePredicate({ attribute: "n", op: "gte", value: 3 }, "segment");
 * if (!m({ n: 4 }, () => false) || m({}, () => false)) throw new Error();
 * const after = compilePredicate(
 *   { attribute: "user.created_at", op: "after", value: "2026-01-01T00:00:00Z" },
 *   "segment",
 * );
 * if (!after({ user: { created_at: "2026-01-01T01:00:00+00:30" } }, () => false)) throw new Error();
 * if (after({ user: { created_at: "2026-01-01" } }, () => false)) throw new Error("equal instants");
 * ```
 */
export function compilePredicate(p: Predicate, refPrefix: string): Matcher {
  const check = compileCheck(p, refPrefix);
  if (check.kind !== CHECK_CALL) return (ctx) => checkHolds(check, ctx, NO_REF);
  return check.matcher!;
}

/** The general form of {@linkcode compilePredicate}. */
function compileMatcher(p: Predicate, refPrefix: string): Matcher {
  const ref = refName(p.attribute, refPrefix);
  if (ref !== undefined) {
    const want = p.value === true;
    return (_ctx, lookupRef) => lookupRef(ref) === want;
  }
  if (p.op !== "exists" && !p.attribute.includes(".")) {
    return compileTopLevel(p.attribute, p.op, p.value);
  }
  const read = compileLookup(p.attribute);
  const test = compileTest(p.op, p.value);
  if (p.op === "exists") return (ctx) => test(read(ctx));
  return (ctx) => {
    const v = read(ctx);
    return v !== undefined && v !== null && test(v);
  };
}

/**
 * A predicate on a top-level attribute (no dot), other than `eq`, `in` (see
 * {@linkcode checkHolds}) and `exists`: reads the value first and checks that
 * it is the context's own property only when it is present, before the test
 * (whose cost or memo, for `matches`, semver and time operators, is not spent
 * on an inherited value). Same outcome as the general path.
 */
function compileTopLevel(attribute: string, op: Operator, value: Scalar | Scalar[]): Matcher {
  const key = internalized(attribute);
  const test = compileTest(op, value);
  return (ctx) => {
    const v = ctx[key];
    return v !== undefined && v !== null && Object.hasOwn(ctx, key) && test(v);
  };
}

/**
 * Compiles a dotted path into a reader that behaves as {@linkcode lookup}
 * but splits the path once, not at every call.
 *
 * @example
 * ```ts
 * import { compileLookup } from "./conditions.ts";
 * const read = compileLookup("account.plan");
 * if (read({ account: { plan: "pro" } }) !== "pro") throw new Error();
 * ```
 */
export function compileLookup(attribute: string): (ctx: Context) => unknown {
  const path = internalized(attribute);
  const steps = path.split(".").map(internalized);
  if (steps.length === 1) return (ctx) => readOwn(ctx, path);
  return (ctx) => {
    // An own property named by the whole path wins, even when undefined. The
    // value is read first: the own-property check is then needed only for a
    // present value, or for an undefined one that the context has at all.
    const whole = ctx[path];
    if (whole !== undefined ? Object.hasOwn(ctx, path) : path in ctx && Object.hasOwn(ctx, path)) {
      return whole;
    }
    let cur: unknown = ctx;
    for (let i = 0; i < steps.length; i++) {
      if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return undefined;
      const obj = cur as Record<string, unknown>;
      const key = steps[i]!;
      const next = obj[key];
      // Absent, inherited or undefined: the path has no value.
      if (next === undefined || !Object.hasOwn(obj, key)) return undefined;
      cur = next;
    }
    return cur;
  };
}

/**
 * Compiles a predicate list with `all` (every predicate holds; an empty list
 * holds) or `any` (at least one holds) semantics.
 *
 * @example
 * ```ts
 * import { compileAll } from "./conditions.ts";
 * const m = compileAll([{ attribute: "a", op: "eq", value: 1 }, { attribute: "b", op: "eq", value: 2 }], "any", "segment");
 * if (!m({ b: 2 }, () => false)) throw new Error();
 * ```
 */
export function compileAll(
  preds: readonly Predicate[],
  match: "all" | "any",
  refPrefix: string,
): Matcher {
  const checks = preds.map((p) => compileCheck(p, refPrefix));
  const any = match === "any";
  if (checks.length === 1 && checks[0]!.kind === CHECK_CALL) return checks[0]!.matcher!;
  return (ctx, ref) => checksHold(checks, any, ctx, ref);
}

const CHECK_EQ = 0;
const CHECK_IN = 1;
const CHECK_CALL = 2;

const NO_REF: RefLookup = () => false;

type Reader = (ctx: Context, key: string) => unknown;

// Sixteen copies of one function, on purpose: V8 keeps what a property read
// has seen per function, and a read that has seen one name stays a fast,
// cached load while one that has seen many names looks each up (about 6 ns
// more). readerOf gives each of the first 15 attribute names that `eq` and
// `in` checks compile in this process its own copy; later names share the
// last one, which is then as fast as a read with many names. Each copy reads
// the name it is given, so which copy a name gets never changes a result.
const READERS: readonly Reader[] = [
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
  (c, k) => c[k],
];
const readers = new Map<string, Reader>();

/** The reader of attribute `key` (see {@linkcode READERS}). */
function readerOf(key: string): Reader {
  let r = readers.get(key);
  if (r === undefined) {
    r = READERS[Math.min(readers.size, READERS.length - 1)]!;
    if (readers.size < READERS.length - 1) readers.set(key, r);
  }
  return r;
}

/**
 * A compiled predicate in the form an evaluation loop tests without a call
 * for the two commonest predicates, `eq` and `in` on a top-level attribute
 * (see {@linkcode checkHolds}); any other predicate is a matcher to call.
 */
export class Check {
  /** @internal made by {@linkcode compileCheck} only */
  constructor(
    /** How the check is tested: CHECK_EQ, CHECK_IN or CHECK_CALL. */
    readonly kind: number,
    /** The attribute, for CHECK_EQ and CHECK_IN. */
    readonly key: string,
    /** Reads `key` (see {@linkcode readerOf}), for CHECK_EQ and CHECK_IN. */
    readonly read: Reader,
    /** The value compared, for CHECK_EQ. */
    readonly value: unknown,
    /** The values, for CHECK_IN. */
    readonly set: ReadonlySet<unknown> | null,
    /** The matcher, for CHECK_CALL. */
    readonly matcher: Matcher | null,
  ) {}
}

/**
 * Compiles one validated predicate into a {@linkcode Check}: the same
 * outcome as {@linkcode compilePredicate}, in a form that
 * {@linkcode checkHolds} and {@linkcode checksHold} test without a call
 * when it can.
 *
 * @example
 * ```ts
 * import { checkHolds, compileCheck } from "./conditions.ts";
 * const c = compileCheck({ attribute: "plan", op: "in", value: ["pro", "team"] }, "segment");
 * if (!checkHolds(c, { plan: "pro" }, () => false)) throw new Error();
 * if (checkHolds(c, Object.create({ plan: "pro" }), () => false)) throw new Error("inherited");
 * ```
 */
export function compileCheck(p: Predicate, refPrefix: string): Check {
  const attribute = p.attribute;
  if (refName(attribute, refPrefix) === undefined && !attribute.includes(".")) {
    const v = p.value;
    if (p.op === "eq" && isScalar(v)) {
      const key = internalized(attribute);
      return new Check(
        CHECK_EQ,
        key,
        readerOf(key),
        typeof v === "string" ? internalized(v) : v,
        null,
        null,
      );
    }
    if (p.op === "in" && Array.isArray(v) && v.every(isScalar)) {
      const key = internalized(attribute);
      return new Check(CHECK_IN, key, readerOf(key), undefined, new Set<unknown>(v), null);
    }
  }
  return new Check(CHECK_CALL, "", READERS[0]!, undefined, null, compileMatcher(p, refPrefix));
}

/**
 * Whether a check holds for a context. `eq` and `in` read the value first
 * and check that it is the context's own property only when the value makes
 * the predicate hold, so a context that lacks the attribute, or whose value
 * differs, costs one property read; an inherited value never holds, as in
 * {@linkcode lookup}.
 *
 * @example
 * ```ts
 * import { checkHolds, compileCheck } from "./conditions.ts";
 * const c = compileCheck({ attribute: "plan", op: "eq", value: "pro" }, "segment");
 * if (!checkHolds(c, { plan: "pro" }, () => false) || checkHolds(c, {}, () => false)) throw new Error();
 * ```
 */
export function checkHolds(c: Check, ctx: Context, ref: RefLookup): boolean {
  const kind = c.kind;
  if (kind === CHECK_EQ) return c.read(ctx, c.key) === c.value && Object.hasOwn(ctx, c.key);
  if (kind === CHECK_IN) return c.set!.has(c.read(ctx, c.key)) && Object.hasOwn(ctx, c.key);
  return c.matcher!(ctx, ref);
}

/**
 * Whether a list of checks holds: every one (`any` false; an empty list
 * holds) or at least one (`any` true), tested in order until the answer is
 * known.
 *
 * @example
 * ```ts
 * import { checksHold, compileCheck } from "./conditions.ts";
 * const cs = [compileCheck({ attribute: "a", op: "eq", value: 1 }, "segment")];
 * if (!checksHold([], false, {}, () => false) || checksHold(cs, true, { a: 2 }, () => false)) {
 *   throw new Error();
 * }
 * ```
 */
export function checksHold(
  checks: readonly Check[],
  any: boolean,
  ctx: Context,
  ref: RefLookup,
): boolean {
  if (any) {
    for (let i = 0; i < checks.length; i++) if (checkHolds(checks[i]!, ctx, ref)) return true;
    return false;
  }
  for (let i = 0; i < checks.length; i++) if (!checkHolds(checks[i]!, ctx, ref)) return false;
  return true;
}

/**
 * The value of a context's own property `key`; undefined when the context
 * has no such own property (an inherited value does not count). Reads the
 * value first, so that the own-property check is made only for a present
 * value.
 *
 * @example
 * ```ts
 * import { readOwn } from "./conditions.ts";
 * if (readOwn({ plan: "pro" }, "plan") !== "pro") throw new Error();
 * if (readOwn({}, "toString") !== undefined) throw new Error("inherited");
 * ```
 */
export function readOwn(ctx: Context, key: string): unknown {
  const v = ctx[key];
  return v === undefined || Object.hasOwn(ctx, key) ? v : undefined;
}

/**
 * The property name that a top-level attribute (no dot) reads, for
 * {@linkcode readOwn}; undefined for a dotted path, which
 * {@linkcode compileLookup} reads.
 *
 * @example
 * ```ts
 * import { topLevelKey } from "./conditions.ts";
 * if (topLevelKey("country") !== "country" || topLevelKey("user.id") !== undefined) {
 *   throw new Error();
 * }
 * ```
 */
export function topLevelKey(attribute: string): string | undefined {
  return attribute.includes(".") ? undefined : internalized(attribute);
}

/**
 * The engine's own (internalized) copy of a string: the form of property
 * names. A name or value read from a manifest is a fresh string. A compiled
 * read `ctx[key]` with a fresh key misses the optimizing compiler's name
 * check on every call and is recompiled over and over, and comparing a fresh
 * string with a context's value compares characters; with the engine's copy
 * the read stays a fast, cached property load and equal strings are
 * usually the same string.
 */
function internalized(s: string): string {
  return Object.keys({ [s]: true })[0]!;
}

function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v));
}

function checkValue(op: Operator, value: unknown): string | undefined {
  switch (op) {
    case "eq":
    case "neq":
      return isScalar(value) ? undefined : `${op} compares with a string, number or boolean`;
    case "in":
    case "not_in": {
      if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar)) {
        return `${op} takes a non-empty array of strings, numbers or booleans`;
      }
      const kinds = new Set(value.map((x) => typeof x));
      return kinds.size === 1 ? undefined : `${op} takes items of one type`;
    }
    case "lt":
    case "lte":
    case "gt":
    case "gte":
      return typeof value === "number" && Number.isFinite(value)
        ? undefined
        : `${op} compares with a number`;
    case "starts_with":
    case "ends_with":
    case "contains":
      return typeof value === "string" ? undefined : `${op} takes a string`;
    case "matches": {
      if (typeof value !== "string") return "matches takes a regular expression string";
      const compiled = compilePattern(value);
      return "problem" in compiled ? compiled.problem : undefined;
    }
    case "exists":
      return typeof value === "boolean" ? undefined : "exists takes true or false";
    case "semver_eq":
    case "semver_lt":
    case "semver_gt":
      return typeof value === "string" && parseSemver(value) !== null
        ? undefined
        : `${op} takes a semantic version string such as "1.2.3"`;
    case "before":
    case "after":
      return typeof value === "string" && !Number.isNaN(rfc3339MsOf(value))
        ? undefined
        : `${op} takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", ` +
          `or a date such as "2026-01-01" (midnight UTC)`;
  }
}

function compileTest(op: Operator, value: Scalar | Scalar[]): (v: unknown) => boolean {
  switch (op) {
    case "eq":
      return (v) => v === value;
    case "neq":
      return (v) => v !== value;
    case "in": {
      const set = new Set(value as Scalar[]);
      return (v) => set.has(v as Scalar);
    }
    case "not_in": {
      const set = new Set(value as Scalar[]);
      return (v) => isScalar(v) && !set.has(v);
    }
    case "lt":
      return (v) => typeof v === "number" && v < (value as number);
    case "lte":
      return (v) => typeof v === "number" && v <= (value as number);
    case "gt":
      return (v) => typeof v === "number" && v > (value as number);
    case "gte":
      return (v) => typeof v === "number" && v >= (value as number);
    case "starts_with":
      return (v) => typeof v === "string" && v.startsWith(value as string);
    case "ends_with":
      return (v) => typeof v === "string" && v.endsWith(value as string);
    case "contains":
      return (v) =>
        typeof v === "string" ? v.includes(value as string) : Array.isArray(v) && v.includes(value);
    case "matches": {
      const compiled = compilePattern(value as string);
      // A pattern the engine refuses reaches here only from a stored
      // manifest loaded leniently: it never holds.
      if ("problem" in compiled) return () => false;
      const re = compiled.regex;
      return (v) => typeof v === "string" && re.test(v);
    }
    case "exists":
      return (v) => (v !== undefined) === value;
    case "semver_eq":
      return semverTest(value as string, (c) => c === 0);
    case "semver_lt":
      return semverTest(value as string, (c) => c < 0);
    case "semver_gt":
      return semverTest(value as string, (c) => c > 0);
    case "before": {
      const at = predicateInstant(value);
      return (v) => typeof v === "string" && rfc3339MsOf(v) < at;
    }
    case "after": {
      const at = predicateInstant(value);
      return (v) => typeof v === "string" && rfc3339MsOf(v) > at;
    }
  }
}

/**
 * The instant of a `before`/`after` value. NaN, which no comparison passes
 * (so the predicate never holds), for what only a predicate built by hand
 * without validation can hold.
 */
function predicateInstant(value: Scalar | Scalar[]): number {
  return typeof value === "string" ? rfc3339MsOf(value) : NaN;
}

function semverTest(target: string, ok: (cmp: number) => boolean): (v: unknown) => boolean {
  const t = parseSemver(target)!;
  return (v) => {
    if (typeof v !== "string") return false;
    const parsed = parseSemverCached(v);
    return parsed !== null && ok(compareSemver(parsed, t));
  };
}

/** Context versions repeat (app versions, OS versions): parse each once. */
const SEMVER_CACHE = new Map<string, SemVer | null>();
const SEMVER_CACHE_MAX = 1024;

function parseSemverCached(v: string): SemVer | null {
  let parsed = SEMVER_CACHE.get(v);
  if (parsed === undefined) {
    parsed = parseSemver(v);
    if (SEMVER_CACHE.size >= SEMVER_CACHE_MAX) SEMVER_CACHE.clear();
    SEMVER_CACHE.set(v, parsed);
  }
  return parsed;
}
