/**
 * Conditions as the Unleash, LaunchDarkly and GrowthBook importers read
 * them, before they become segment files: predicates of our engine joined
 * by all, any and not, references to named segments, and the constants
 * true and false (a list of values that can never match, a constraint
 * that always holds). The builders simplify as they go (`all` of one
 * condition is that condition, a false in an `all` makes it false), so
 * what reaches the manifest has no needless segment.
 *
 * Our predicates never hold on an absent attribute (except `exists`),
 * where the source tools often answer true (a negated Unleash constraint,
 * GrowthBook's `$ne`): `not` expresses that exactly, since a
 * `segment.<key> = false` reference holds whenever the segment does not.
 *
 * A construct that has no equivalent throws {@linkcode Unmappable}; the
 * importer catches it where a rule or segment starts, leaves that rule or
 * segment out and reports why.
 *
 * @module
 */
import { KEY_RE, VARIATION_NAME_RE } from "../flags/model.ts";
import { type Operator, type Scalar, validatePredicate } from "../flags/conditions.ts";
import { ATTRIBUTE_PATH_RE, Unmappable } from "./source.ts";

/** A condition, before it is written as segments. */
export type Cond =
  | { kind: "pred"; attribute: string; op: Operator; value: Scalar | Scalar[] }
  | { kind: "ref"; segment: string }
  | { kind: "all"; of: Cond[] }
  | { kind: "any"; of: Cond[] }
  | { kind: "not"; of: Cond }
  | { kind: "const"; value: boolean };

/** A condition that always holds. */
export const ALWAYS: Cond = { kind: "const", value: true };
/** A condition that never holds. */
export const NEVER: Cond = { kind: "const", value: false };

/**
 * One predicate, checked by the predicate engine's own validation.
 *
 * @throws {Unmappable} when the engine refuses it (a pattern RE2 cannot run, a bad semver)
 *
 * @example
 * ```ts
 * import { pred } from "./draft_conditions.ts";
 * const c = pred("country", "in", ["DE"]);
 * if (c.kind !== "pred" || c.op !== "in") throw new Error();
 * ```
 */
export function pred(attribute: string, op: Operator, value: Scalar | Scalar[]): Cond {
  const checked = validatePredicate({ attribute, op, value }, "segment");
  if ("problems" in checked) {
    const p = checked.problems[0]!;
    throw new Unmappable(
      `${op} on ${attribute}`,
      `${p.key === "" ? "" : p.key + ": "}${p.message}`,
    );
  }
  return { kind: "pred", attribute, op, value };
}

/**
 * Every condition holds (true for none).
 *
 * @example
 * ```ts
 * import { all, ALWAYS, NEVER, pred } from "./draft_conditions.ts";
 * const p = pred("a", "eq", 1);
 * if (all([p, ALWAYS]) !== p || all([p, NEVER]) !== NEVER) throw new Error();
 * ```
 */
export function all(of: readonly Cond[]): Cond {
  const out: Cond[] = [];
  for (const c of of) {
    if (c.kind === "const") {
      if (!c.value) return NEVER;
      continue;
    }
    if (c.kind === "all") out.push(...c.of);
    else out.push(c);
  }
  if (out.length === 0) return ALWAYS;
  return out.length === 1 ? out[0]! : { kind: "all", of: out };
}

/**
 * At least one condition holds (false for none).
 *
 * @example
 * ```ts
 * import { any, ALWAYS, NEVER, pred } from "./draft_conditions.ts";
 * const p = pred("a", "eq", 1);
 * if (any([p, NEVER]) !== p || any([p, ALWAYS]) !== ALWAYS || any([]) !== NEVER) throw new Error();
 * ```
 */
export function any(of: readonly Cond[]): Cond {
  const out: Cond[] = [];
  for (const c of of) {
    if (c.kind === "const") {
      if (c.value) return ALWAYS;
      continue;
    }
    if (c.kind === "any") out.push(...c.of);
    else out.push(c);
  }
  if (out.length === 0) return NEVER;
  return out.length === 1 ? out[0]! : { kind: "any", of: out };
}

/**
 * The condition does not hold (an absent attribute included).
 *
 * @example
 * ```ts
 * import { ALWAYS, NEVER, not, pred } from "./draft_conditions.ts";
 * const p = pred("a", "eq", 1);
 * if (not(not(p)) !== p || not(ALWAYS) !== NEVER) throw new Error();
 * ```
 */
export function not(of: Cond): Cond {
  if (of.kind === "const") return of.value ? NEVER : ALWAYS;
  if (of.kind === "not") return of.of;
  return { kind: "not", of };
}

/**
 * The attribute equals one of the values, compared strictly (a string is
 * never a number). Values of several types give one `in` per type.
 *
 * @example
 * ```ts
 * import { inValues } from "./draft_conditions.ts";
 * const c = inValues("id", ["a", 1]);
 * if (c.kind !== "any" || c.of.length !== 2) throw new Error();
 * if (inValues("id", []).kind !== "const") throw new Error();
 * ```
 */
export function inValues(attribute: string, values: readonly Scalar[]): Cond {
  const byType = new Map<string, Scalar[]>();
  for (const v of values) {
    const list = byType.get(typeof v) ?? [];
    if (!list.includes(v)) list.push(v);
    byType.set(typeof v, list);
  }
  return any([...byType.values()].map((vs) => pred(attribute, "in", vs)));
}

/**
 * A string test that ignores case, as a `matches` pattern: `(?i)` with the
 * values escaped, anchored as the test needs.
 *
 * @example
 * ```ts
 * import { caseless } from "./draft_conditions.ts";
 * const c = caseless("email", "ends_with", ["@Example.com"]);
 * if (c.kind !== "pred" || c.value !== "(?i)(?:@Example\\.com)$") throw new Error(String(c.kind === "pred" && c.value));
 * ```
 */
export function caseless(
  attribute: string,
  test: "eq" | "starts_with" | "ends_with" | "contains",
  values: readonly string[],
): Cond {
  if (values.length === 0) return NEVER;
  const alt = `(?:${values.map(escapeRegex).join("|")})`;
  const source = test === "eq"
    ? `(?i)^${alt}$`
    : test === "starts_with"
    ? `(?i)^${alt}`
    : test === "ends_with"
    ? `(?i)${alt}$`
    : `(?i)${alt}`;
  return pred(attribute, "matches", source);
}

/**
 * Escapes a literal for an RE2 pattern.
 *
 * @example
 * ```ts
 * import { escapeRegex } from "./draft_conditions.ts";
 * if (escapeRegex("a.b*") !== "a\\.b\\*") throw new Error();
 * ```
 */
export function escapeRegex(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/**
 * A key of our manifest (`^[a-z0-9][a-z0-9._-]{0,62}$`) made from a source
 * name: lower case, other characters as `-`, cut to fit with room for a
 * suffix; `taken` keys get `-2`, `-3`, … The key is added to `taken`.
 *
 * @example
 * ```ts
 * import { slugKey } from "./draft_conditions.ts";
 * const taken = new Set<string>();
 * if (slugKey("New Checkout!", taken) !== "new-checkout") throw new Error();
 * if (slugKey("new checkout", taken) !== "new-checkout-2") throw new Error();
 * ```
 */
export function slugKey(name: string, taken: Set<string>): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[._-]+/, "");
  const base = trimEnd(slug.slice(0, 56), "-") || "x";
  let key = base;
  for (let i = 2; taken.has(key) || !KEY_RE.test(key); i++) key = `${base}-${i}`;
  taken.add(key);
  return key;
}

/**
 * A variation name (`^[A-Za-z][A-Za-z0-9._-]{0,62}$`) made from a source
 * name, unique among `taken` (to which it is added).
 *
 * @example
 * ```ts
 * import { variationName } from "./draft_conditions.ts";
 * const taken = new Set<string>();
 * if (variationName("blue group", taken) !== "blue-group") throw new Error();
 * if (variationName("2", taken) !== "v-2") throw new Error();
 * ```
 */
export function variationName(name: string, taken: Set<string>): string {
  let base = trimEnd(name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+/, ""), "-");
  if (!/^[A-Za-z]/.test(base)) base = trimEnd(`v-${base}`, "-");
  base = base.slice(0, 56);
  let out = base;
  for (let i = 2; taken.has(out) || !VARIATION_NAME_RE.test(out); i++) out = `${base}-${i}`;
  taken.add(out);
  return out;
}

/** `s` without the copies of `c` it ends with. */
function trimEnd(s: string, c: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === c) end--;
  return s.slice(0, end);
}

/**
 * An attribute path of our predicates (dotted names of letters, digits,
 * `_` and `-`), or undefined when the source name cannot be one.
 *
 * @example
 * ```ts
 * import { attributePath } from "./draft_conditions.ts";
 * if (attributePath("user.plan") !== "user.plan" || attributePath("a b") !== undefined) throw new Error();
 * ```
 */
export function attributePath(name: string): string | undefined {
  return ATTRIBUTE_PATH_RE.test(name) ? name : undefined;
}

/**
 * {@linkcode attributePath}, or {@linkcode Unmappable} naming the attribute.
 *
 * @example
 * ```ts
 * import { attributeOrThrow } from "./draft_conditions.ts";
 * if (attributeOrThrow("plan") !== "plan") throw new Error();
 * ```
 */
export function attributeOrThrow(name: string): string {
  const path = attributePath(name);
  if (path === undefined) {
    throw new Unmappable(
      `attribute ${JSON.stringify(name)}`,
      "our attribute paths are dotted names of letters, digits, _ and -",
    );
  }
  return path;
}

/**
 * The condition in words, for the report.
 *
 * @example
 * ```ts
 * import { all, describeCond, not, pred } from "./draft_conditions.ts";
 * const c = all([pred("a", "eq", 1), not(pred("b", "in", ["x"]))]);
 * if (describeCond(c) !== 'a eq 1 and not (b in ["x"])') throw new Error(describeCond(c));
 * ```
 */
export function describeCond(c: Cond): string {
  switch (c.kind) {
    case "pred":
      return `${c.attribute} ${c.op} ${JSON.stringify(c.value)}`;
    case "ref":
      return `segment ${c.segment}`;
    case "const":
      return c.value ? "every context" : "no context";
    case "not":
      return `not (${describeCond(c.of)})`;
    case "all":
    case "any":
      return c.of.map((
        x,
      ) => (x.kind === "all" || x.kind === "any" ? `(${describeCond(x)})` : describeCond(x))).join(
        c.kind === "all" ? " and " : " or ",
      );
  }
}
