/**
 * JsonLogic conditions (as flagd's targeting writes them) as the
 * manifest's predicates: `and`, `or`, `!`, `!!`, `==`, `===`, `!=`, `!==`,
 * `<`, `<=`, `>`, `>=` (and the three-argument "between" form), `in` (a
 * list, or a substring), `missing`, `missing_some`, a bare `var`
 * (truthiness), and flagd's `starts_with`, `ends_with` and `sem_ver`.
 *
 * JsonLogic's own semantics are kept where predicates can say them, and the
 * differences are collected as notes otherwise:
 *
 * - `==` compares with type coercion: `{"==": [{"var": "age"}, 29]}` also
 *   holds for `"29"`, so it becomes `eq 29` or `eq "29"` (every value of
 *   the usual kinds that JavaScript's `==` equates); other spellings
 *   (`"29.0"`) are noted.
 * - A missing attribute is `null`: `!=` and `!==` hold for it, so they
 *   become the negation of the equality (`not`), never `neq` (which does
 *   not hold for a missing attribute).
 * - `{"var": ["path", default]}` reads the default for a missing value: a
 *   predicate that holds for the default also holds when the attribute is
 *   missing.
 * - `$flagd.flagKey` is the flag's own key, a constant; `targetingKey` is
 *   the context's `targeting_key`.
 *
 * What has no equivalent (arithmetic, `cat`, `substr`, `if` inside a
 * condition, `$flagd.timestamp`, string ordering, …) throws
 * {@linkcode Unmappable}, naming it and why.
 *
 * @example
 * ```ts
 * import { conditionOf } from "./jsonlogic.ts";
 * const notes = new Set<string>();
 * const c = conditionOf({ ends_with: [{ var: "email" }, "@example.com"] }, { flagKey: "f", notes });
 * if (c.kind !== "pred" || c.op !== "ends_with" || c.attribute !== "email") throw new Error();
 * ```
 *
 * @module
 */
import semver from "semver";
import { compilePredicate, type Operator, type Scalar } from "../flags/conditions.ts";
import { all, always, any, type Cond, not, pred } from "./manifest_builder.ts";
import { ATTRIBUTE_PATH_RE, Unmappable } from "./source.ts";

/** What {@linkcode conditionOf} is told. */
export interface LogicOptions {
  /** The flag's source key (the value of `$flagd.flagKey`). */
  flagKey: string;
  /** The condition of `{"$ref": name}` (a shared evaluator); absent: refused. */
  ref?: ((name: string) => Cond) | undefined;
  /** Collects the semantic differences met (one sentence each). */
  notes: Set<string>;
}

/** An operand: a context attribute (with its `var` default), or a literal. */
type Operand =
  | { kind: "attr"; attribute: string; fallback?: Scalar | null | undefined }
  | { kind: "lit"; value: unknown };

/** How `missing` differs once imported. */
const MISSING_NOTE = 'JsonLogic\'s `missing` also counts null and "" as missing; ' +
  "cfgtool's `exists = false` counts only an attribute that is not there";

/**
 * The manifest attribute of a JsonLogic `var` path.
 *
 * @throws {Unmappable} for `$flagd.timestamp`, `""` (the whole context) and paths the manifest cannot name
 *
 * @example
 * ```ts
 * import { attributeOf } from "./jsonlogic.ts";
 * if (attributeOf("targetingKey") !== "targeting_key" || attributeOf("user.email") !== "user.email") throw new Error();
 * ```
 */
export function attributeOf(path: string): string {
  if (path === "targetingKey") return "targeting_key";
  if (path === "$flagd.timestamp") {
    throw new Unmappable(
      `{"var": "$flagd.timestamp"}`,
      "the time of evaluation is not something a predicate reads",
    );
  }
  if (path === "") {
    throw new Unmappable(`{"var": ""}`, "a predicate reads one attribute, not the whole context");
  }
  if (!ATTRIBUTE_PATH_RE.test(path)) {
    throw new Unmappable(
      `{"var": ${JSON.stringify(path)}}`,
      "an attribute path is letters, digits, `_` and `-` between dots",
    );
  }
  return path;
}

/**
 * The path of a `var` operation (`{"var": "x"}`, `{"var": ["x"]}`, `{"var": ["x", default]}`), or undefined.
 *
 * @example
 * ```ts
 * import { varOf } from "./jsonlogic.ts";
 * if (varOf({ var: ["email", "none"] })?.path !== "email" || varOf("email") !== undefined) throw new Error();
 * ```
 */
export function varOf(x: unknown): { path: string; fallback?: unknown } | undefined {
  if (!isOp(x) || Object.keys(x)[0] !== "var") return undefined;
  const arg = x.var;
  if (typeof arg === "string") return { path: arg };
  if (typeof arg === "number") return { path: String(arg) };
  if (Array.isArray(arg) && typeof arg[0] === "string") {
    return arg.length > 1 ? { path: arg[0], fallback: arg[1] } : { path: arg[0] };
  }
  return undefined;
}

/** Whether `x` is a JsonLogic operation: an object with exactly one key. */
export function isOp(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === "object" && !Array.isArray(x) && Object.keys(x).length === 1;
}

/** The arguments of an operation (a single argument is a list of one). */
function argsOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [v];
}

function show(x: unknown): string {
  const s = JSON.stringify(x) ?? String(x);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

function isScalar(v: unknown): v is Scalar {
  return typeof v === "string" || typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v));
}

/**
 * A JsonLogic condition (its truthiness) as a {@linkcode Cond}.
 *
 * @param logic the JsonLogic expression
 * @param options the flag key, `$ref` resolution and the notes collected
 * @returns the condition
 * @throws {Unmappable} for what has no equivalent
 *
 * @example
 * ```ts
 * import { conditionOf } from "./jsonlogic.ts";
 * const notes = new Set<string>();
 * const c = conditionOf({ "!=": [{ var: "plan" }, "free"] }, { flagKey: "f", notes });
 * if (c.kind !== "not") throw new Error("a missing plan is != free, as in JsonLogic");
 * ```
 */
export function conditionOf(logic: unknown, options: LogicOptions): Cond {
  return new Converter(options).cond(logic);
}

class Converter {
  constructor(private readonly o: LogicOptions) {}

  cond(x: unknown): Cond {
    if (x === null || typeof x !== "object") return always(truthy(x));
    if (Array.isArray(x)) return always(x.length > 0);
    if (!isOp(x)) {
      throw new Unmappable(show(x), "an object that is not one operation is not a condition");
    }
    const op = Object.keys(x)[0]!;
    const a = argsOf(x[op]);
    switch (op) {
      case "$ref": {
        if (typeof x[op] !== "string" || this.o.ref === undefined) {
          throw new Unmappable(show(x), "a reference names a shared evaluator");
        }
        return this.o.ref(x[op] as string);
      }
      case "var":
        return this.truthiness(this.operand(x));
      case "and":
        return all(a.map((c) => this.cond(c)));
      case "or":
        return any(a.map((c) => this.cond(c)));
      case "!":
        return not(this.cond(a[0]));
      case "!!":
        return this.cond(a[0]);
      case "==":
      case "===":
        return this.equality(op, a);
      case "!=":
      case "!==":
        return not(this.equality(op === "!=" ? "==" : "===", a));
      case "<":
      case "<=":
      case ">":
      case ">=":
        return this.order(op, a);
      case "in":
        return this.inOp(a);
      case "starts_with":
      case "ends_with":
        return this.affix(op, a);
      case "sem_ver":
        return this.semVer(a);
      case "missing":
        this.o.notes.add(MISSING_NOTE);
        return any(this.missingKeys(a).map((k) => pred(k, "exists", false)));
      case "missing_some": {
        this.o.notes.add(MISSING_NOTE);
        const [n, keys] = a;
        const attrs = this.missingKeys(argsOf(keys));
        if (n === 1) return all(attrs.map((k) => pred(k, "exists", false)));
        if (n === attrs.length) return any(attrs.map((k) => pred(k, "exists", false)));
        throw new Unmappable(show(x), "a count of present attributes other than 1 or all");
      }
      case "if":
        throw new Unmappable(show(x), "an `if` inside a condition chooses a value, not a match");
      case "fractional":
        throw new Unmappable(show(x), "a rollout inside a condition");
      default:
        throw new Unmappable(
          `operator ${JSON.stringify(op)}`,
          "it computes a value; predicates compare an attribute with a constant",
        );
    }
  }

  operand(x: unknown): Operand {
    const v = varOf(x);
    if (v !== undefined) {
      if (v.path === "$flagd.flagKey") return { kind: "lit", value: this.o.flagKey };
      const attribute = attributeOf(v.path);
      if (v.fallback === undefined) return { kind: "attr", attribute };
      if (v.fallback !== null && !isScalar(v.fallback)) {
        throw new Unmappable(show(x), "a default that is not a string, number or boolean");
      }
      this.o.notes.add(
        "JsonLogic also reads a `var` default for a null or empty value; cfgtool only for a missing one",
      );
      return { kind: "attr", attribute, fallback: v.fallback };
    }
    if (isOp(x)) {
      throw new Unmappable(
        show(x),
        "an operand computed by an operation; predicates read one attribute",
      );
    }
    return { kind: "lit", value: x };
  }

  /** `p`, and also when the attribute is missing if `p` holds for the `var` default. */
  withFallback(a: Operand, p: Cond): Cond {
    if (a.kind !== "attr" || a.fallback === undefined || a.fallback === null) return p;
    if (p.kind !== "pred") return p;
    const holds = compilePredicate(
      { attribute: "v", op: p.op, value: p.value },
      "segment",
    )({ v: a.fallback }, () => false);
    return holds ? any([p, pred(a.attribute, "exists", false)]) : p;
  }

  /** One attribute and one literal, in either order (`flipped` when the literal is first). */
  pair(
    args: unknown[],
    what: string,
  ): { attr: Operand & { kind: "attr" }; lit: unknown; flipped: boolean } | {
    constant: [unknown, unknown];
  } {
    if (args.length !== 2) throw new Unmappable(what, "takes two operands");
    const l = this.operand(args[0]);
    const r = this.operand(args[1]);
    if (l.kind === "attr" && r.kind === "lit") return { attr: l, lit: r.value, flipped: false };
    if (l.kind === "lit" && r.kind === "attr") return { attr: r, lit: l.value, flipped: true };
    if (l.kind === "lit" && r.kind === "lit") return { constant: [l.value, r.value] };
    throw new Unmappable(
      what,
      "compares two attributes; predicates compare an attribute with a constant",
    );
  }

  truthiness(a: Operand): Cond {
    if (a.kind === "lit") return always(truthy(a.value));
    this.o.notes.add("JsonLogic counts an empty list as false; cfgtool counts it as true");
    const present = all([
      pred(a.attribute, "neq", false),
      pred(a.attribute, "neq", 0),
      pred(a.attribute, "neq", ""),
    ]);
    if (a.fallback === undefined || a.fallback === null) return present;
    return truthy(a.fallback) ? any([present, pred(a.attribute, "exists", false)]) : present;
  }

  equality(op: "==" | "===", args: unknown[]): Cond {
    const p = this.pair(args, op);
    if ("constant" in p) {
      // deno-lint-ignore eqeqeq
      return always(
        op === "===" ? p.constant[0] === p.constant[1] : p.constant[0] == p.constant[1],
      );
    }
    const { attr, lit } = p;
    if (lit === null) {
      this.o.notes.add(
        "a comparison with null holds for a missing attribute; an attribute set to null is not told apart",
      );
      return pred(attr.attribute, "exists", false);
    }
    if (!isScalar(lit)) {
      throw new Unmappable(`${op} ${show(lit)}`, "compares with a list or an object");
    }
    if (op === "===") return this.withFallback(attr, pred(attr.attribute, "eq", lit));
    // JavaScript's == between the literal and values of the usual kinds
    const candidates: Scalar[] = [lit, String(lit), true, false, 0, 1, "", "0", "1"];
    if (typeof lit === "string" && lit.trim() !== "" && Number.isFinite(Number(lit))) {
      candidates.push(Number(lit));
    }
    const equal: Scalar[] = [];
    for (const c of candidates) {
      // deno-lint-ignore eqeqeq
      if (c == lit && !equal.some((e) => e === c)) equal.push(c);
    }
    if (equal.length > 1) {
      this.o.notes.add(
        "`==` compares with type coercion: the values equal to it are listed (a number also as its " +
          'decimal text); other spellings such as "29.0" for 29 do not match',
      );
    }
    return this.withFallback(
      attr,
      equal.length === 1
        ? pred(attr.attribute, "eq", lit)
        : any(equal.map((v) => pred(attr.attribute, "eq", v))),
    );
  }

  order(op: "<" | "<=" | ">" | ">=", args: unknown[]): Cond {
    if (args.length === 3 && (op === "<" || op === "<=")) {
      // between: a < x < b
      return all([this.order(op, [args[0], args[1]]), this.order(op, [args[1], args[2]])]);
    }
    const p = this.pair(args, op);
    if ("constant" in p) {
      const [l, r] = p.constant as [number, number];
      return always(op === "<" ? l < r : op === "<=" ? l <= r : op === ">" ? l > r : l >= r);
    }
    if (typeof p.lit !== "number" || !Number.isFinite(p.lit)) {
      throw new Unmappable(
        `${op} ${show(p.lit)}`,
        "orders by something other than a number; cfgtool orders numbers only",
      );
    }
    this.o.notes.add(
      'JsonLogic compares a number sent as text ("5") as a number; cfgtool compares JSON numbers only',
    );
    const flip: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" };
    const eff = p.flipped ? flip[op]! : op;
    const ops: Record<string, Operator> = { "<": "lt", "<=": "lte", ">": "gt", ">=": "gte" };
    return this.withFallback(p.attr, pred(p.attr.attribute, ops[eff]!, p.lit));
  }

  inOp(args: unknown[]): Cond {
    if (args.length !== 2) throw new Unmappable("in", "takes two operands");
    const [needle, hay] = args;
    if (Array.isArray(hay) && hay.every((h) => isScalar(h) || h === null)) {
      const a = this.operand(needle);
      if (a.kind === "lit") return always(hay.includes(a.value));
      const values = hay.filter(isScalar);
      const byType = new Map<string, Scalar[]>();
      for (const v of values) byType.set(typeof v, [...(byType.get(typeof v) ?? []), v]);
      const parts = [...byType.values()].map((vs) => pred(a.attribute, "in", vs));
      if (hay.includes(null)) parts.push(pred(a.attribute, "exists", false));
      return this.withFallback(a, parts.length === 1 ? parts[0]! : any(parts));
    }
    const n = this.operand(needle);
    const h = this.operand(hay);
    if (n.kind === "lit" && typeof n.value === "string" && h.kind === "attr") {
      // a substring of a string, or an item of a list: as `contains`
      return this.withFallback(h, pred(h.attribute, "contains", n.value));
    }
    throw new Unmappable(
      `in ${show(args)}`,
      "only an attribute in a list of constants, or a constant in an attribute",
    );
  }

  affix(op: "starts_with" | "ends_with", args: unknown[]): Cond {
    const p = this.pair(args, op);
    if ("constant" in p) {
      const [s, t] = p.constant;
      if (typeof s !== "string" || typeof t !== "string") return always(false);
      return always(op === "starts_with" ? s.startsWith(t) : s.endsWith(t));
    }
    if (p.flipped || typeof p.lit !== "string") {
      throw new Unmappable(`${op} ${show(args)}`, "compares an attribute with a constant string");
    }
    return this.withFallback(p.attr, pred(p.attr.attribute, op, p.lit));
  }

  semVer(args: unknown[]): Cond {
    if (args.length !== 3) {
      throw new Unmappable("sem_ver", "takes a version, an operator and a version");
    }
    const [l, op, r] = args;
    const a = this.operand(l);
    const t = this.operand(r);
    const what = `sem_ver ${show(args)}`;
    if (a.kind !== "attr" || t.kind !== "lit" || typeof t.value !== "string") {
      throw new Unmappable(what, "compares an attribute with a constant version");
    }
    const v = semver.parse(t.value);
    if (v === null) {
      throw new Unmappable(what, `${JSON.stringify(t.value)} is not a semantic version`);
    }
    this.o.notes.add(
      'flagd also reads partial versions such as "v2" or "1.2" from the context; cfgtool reads full ' +
        "versions (major.minor.patch) only",
    );
    const at = a.attribute;
    const ver = v.version;
    const atLeast = (x: string) => any([pred(at, "semver_gt", x), pred(at, "semver_eq", x)]);
    switch (op) {
      case "=":
        return pred(at, "semver_eq", ver);
      case "!=":
        return any([pred(at, "semver_lt", ver), pred(at, "semver_gt", ver)]);
      case ">":
        return pred(at, "semver_gt", ver);
      case "<":
        return pred(at, "semver_lt", ver);
      case ">=":
        return atLeast(ver);
      case "<=":
        return any([pred(at, "semver_lt", ver), pred(at, "semver_eq", ver)]);
      case "~": // same major and minor
        return all([
          atLeast(`${v.major}.${v.minor}.0-0`),
          pred(at, "semver_lt", `${v.major}.${v.minor + 1}.0-0`),
        ]);
      case "^": // same major
        return all([atLeast(`${v.major}.0.0-0`), pred(at, "semver_lt", `${v.major + 1}.0.0-0`)]);
      default:
        throw new Unmappable(what, `unknown operator ${JSON.stringify(op)}`);
    }
  }

  missingKeys(keys: unknown[]): string[] {
    return keys.map((k) => {
      if (typeof k !== "string") {
        throw new Unmappable(`missing ${show(k)}`, "names attributes by text");
      }
      return attributeOf(k);
    });
  }
}

/** JsonLogic's truthiness of a constant. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}
