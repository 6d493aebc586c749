/**
 * The flag evaluation engine (docs/flags.md). {@linkcode compileManifest} turns a
 * validated manifest into an evaluation model once: segments become matchers
 * of the shared predicate engine (`lib/flags/conditions.ts`) with their
 * `segment.<name>` references resolved, rollouts become cumulative weight
 * tables, and every result that does not depend on the context is built in
 * advance. {@linkcode evaluateFlag} and {@linkcode evaluateAll} then walk the
 * rules of the flag for the environment: the first matching rule wins
 * (`TARGETING_MATCH` for a variation rule, `SPLIT` for a rollout), else the
 * default is served (`DEFAULT`); a flag disabled in the environment serves
 * its default with `DISABLED`.
 *
 * The hot path is {@linkcode evaluateFlag} of one flag whose segments are
 * simple (they reference no segment and have no `matches` predicate) and
 * are each used by one rule only, the common case: its rules test their
 * segments' predicates in a loop, with no segment memo, no regex budget and
 * no change to the model beyond a one-entry cache of the last (environment,
 * flag) found. Other flags, and {@linkcode evaluateAll}, which shares
 * segment outcomes between flags, decide segments through a per-evaluation
 * memo. Both give the same results; `tests/flags/evaluate_reference_test.ts`
 * checks both against a plain interpretation of random manifests.
 *
 * Results are shared, frozen objects (the variation values inside them too):
 * a successful evaluation allocates nothing. Copy a result before changing
 * it. Only error results (unknown flag or environment, a context that is not
 * an object) are fresh objects.
 *
 * Evaluation is synchronous and one model may serve any number of callers.
 * One call of {@linkcode evaluateFlag}, and one call of
 * {@linkcode evaluateAll} as a whole, has a bounded amount of `matches` work
 * (`lib/linear_regex.ts`, `EVALUATION_BUDGET`): once it is spent, the
 * remaining `matches` predicates of that evaluation do not hold, so no
 * manifest and context can hold the caller for long. Evaluation never
 * throws for it.
 *
 * @module
 */
import { NotFoundError } from "../errors.ts";
import {
  type Check,
  checksHold,
  compileCheck,
  compileLookup,
  type Context,
  type Matcher,
  readOwn,
  type RefLookup,
  refName,
  topLevelKey,
} from "./conditions.ts";
import { beginRegexEvaluation, endRegexEvaluation } from "../linear_regex.ts";
import { bucketValueOf, murmur3Begin, murmur3Finish, type Murmur3State } from "./bucket.ts";
import {
  type Flag,
  type FlagType,
  type Manifest,
  ROLLOUT_TOTAL,
  type Rule,
  type VariationValue,
} from "./model.ts";

export type { Context } from "./conditions.ts";

/** Why a value was served (OpenFeature resolution reasons). */
export type Reason = "TARGETING_MATCH" | "SPLIT" | "DEFAULT" | "DISABLED" | "ERROR";

/** What went wrong when the reason is `ERROR` (OpenFeature error codes). */
export type EvaluationErrorCode = "FLAG_NOT_FOUND" | "TYPE_MISMATCH" | "PARSE_ERROR" | "GENERAL";

/** The outcome of evaluating one flag for one context. */
export interface EvaluationResult {
  /** The flag key. */
  flag: string;
  /** The variation's value; null when the reason is `ERROR`. */
  value: VariationValue | null;
  /** The variation's name; null when the reason is `ERROR`. */
  variation: string | null;
  /** Why this value was served. */
  reason: Reason;
  /** Index of the matching rule (from 0), for `TARGETING_MATCH` and `SPLIT`. */
  rule_index?: number;
  /** Set when the reason is `ERROR`. */
  error_code?: EvaluationErrorCode;
  /** A human-readable explanation, with `error_code`. */
  error_message?: string;
  /** The namespace manifest version the model was compiled from. */
  version: number;
}

/** A compiled namespace manifest, ready for evaluation. */
export interface CompiledModel {
  /** The namespace manifest version (copied into every result). */
  readonly version: number;
  /** The declared environments, in `namespace.toml` order. */
  readonly environments: readonly string[];
  /** Every flag key, sorted (byte order). */
  readonly flagKeys: readonly string[];
}

const NO_SEGMENT = -1;
const NO_PREFIX: Murmur3State = Object.freeze({ h: 0, k: 0, shift: 0, len: 0 });
const NO_READ = (_ctx: Context): unknown => undefined;
const NO_CHECKS: readonly Check[] = Object.freeze([]);
/** The `ref` of a direct plan's matchers, which reference no segment. */
const NO_REF: RefLookup = () => false;
/** What the one-entry plan cache of a fresh model holds: equal to no argument. */
const NO_KEY = Symbol("no key");

/** One compiled rule. Every rule has every field so that the rule loop stays monomorphic. */
class CompiledRule {
  constructor(
    /** Segment index, or NO_SEGMENT when the rule matches every context. */
    readonly segment: number,
    /** The segment's predicates, tested directly by a direct plan; empty without a segment. */
    readonly checks: readonly Check[],
    /** Whether one of `checks` suffices (segment `match = "any"`), else all must hold. */
    readonly any: boolean,
    /** The result of a variation rule; null for a rollout. */
    readonly hit: EvaluationResult | null,
    /** Rollout: the property read when `bucket_by` is a top-level attribute, else "". */
    readonly key: string,
    /** Rollout: reads the value at a dotted `bucket_by`. */
    readonly read: (ctx: Context) => unknown,
    /** Rollout: the murmur3 state after `<flag key>/`, the first part of the hashed string. */
    readonly prefix: Murmur3State,
    /** Rollout: cumulative upper bounds (exclusive) of the entries' buckets. */
    readonly bounds: Int32Array,
    /** Rollout: the result of each entry. */
    readonly splits: readonly EvaluationResult[],
  ) {}
}

/** A flag as evaluated in one environment. */
class Plan {
  constructor(
    /** Empty when the flag is disabled. */
    readonly rules: readonly CompiledRule[],
    /** The result when no rule matches (reason DEFAULT or, when disabled, DISABLED). */
    readonly fallback: EvaluationResult,
    /**
     * Whether {@linkcode evaluateFlag} may call the rules' matchers directly:
     * each rule's segment references no segment, has no `matches` predicate
     * (so no regex budget to open) and is used by no other rule of the plan
     * (so no outcome to share). Then an evaluation needs no memo, no budget
     * and no model state.
     */
    readonly direct: boolean,
  ) {}
}

/**
 * Evaluates a direct plan (see {@linkcode Plan.direct}): the first matching
 * rule wins, as in {@linkcode Model.run}.
 */
function runDirect(plan: Plan, ctx: Context): EvaluationResult {
  const rules = plan.rules;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (!checksHold(r.checks, r.any, ctx, NO_REF)) continue;
    if (r.hit !== null) return r.hit;
    const split = rollout(r, ctx);
    if (split !== null) return split;
  }
  return plan.fallback;
}

/** The result of a rollout rule for `ctx`; null when the context has no bucket value. */
function rollout(r: CompiledRule, ctx: Context): EvaluationResult | null {
  const v = bucketValueOf(r.key !== "" ? readOwn(ctx, r.key) : r.read(ctx));
  if (v === undefined) return null;
  const bucket = murmur3Finish(r.prefix, v) % ROLLOUT_TOTAL;
  const bounds = r.bounds;
  let j = 0;
  while (j < bounds.length - 1 && bucket >= bounds[j]!) j++;
  return r.splits[j]!;
}

class Model implements CompiledModel {
  readonly version: number;
  readonly environments: readonly string[];
  readonly flagKeys: readonly string[];
  readonly envIndex: Map<string, number>;
  /** Flag key → plan per environment index. */
  readonly plans: Map<string, readonly Plan[]>;
  readonly types: Map<string, FlagType>;
  /** Segment matchers by index; `ref` resolves `segment.<name>` through the memo. */
  readonly segments: Matcher[] = [];
  /** The segments each segment references, by index (empty for most segments). */
  readonly deps: Int32Array[] = [];
  /** Whether a segment references no segment and has no `matches` predicate, by index. */
  readonly simple: boolean[] = [];
  /** The predicates of each segment, by index, and whether any one of them suffices. */
  readonly checks: Check[][] = [];
  readonly any: boolean[] = [];
  readonly segmentIndex: Map<string, number> = new Map();
  /** Per-evaluation memo of segment outcomes: valid when stamp === epoch. */
  stamps: Uint32Array = new Uint32Array(0);
  values: Uint8Array = new Uint8Array(0);
  epoch = 1;
  /** The context of the evaluation in progress (read by `ref`). */
  ctx: Context = {};
  /** The last (environment, flag) that evaluateFlag found, and its plan. */
  lastEnv: unknown = NO_KEY;
  lastFlag: unknown = NO_KEY;
  lastPlan: Plan | null = null;
  readonly ref: (name: string) => boolean;

  constructor(version: number, environments: string[], flagKeys: string[]) {
    this.version = version;
    this.environments = Object.freeze(environments);
    this.flagKeys = Object.freeze(flagKeys);
    this.envIndex = new Map(environments.map((e, i) => [e, i]));
    this.plans = new Map();
    this.types = new Map();
    this.ref = (name) => {
      const i = this.segmentIndex.get(name);
      if (i === undefined) return false;
      // Settled before the referring matcher runs; decided here only when a
      // re-entrant evaluation moved to a new epoch meanwhile.
      if (this.stamps[i] === this.epoch) return this.values[i] === 1;
      return this.segment(i);
    };
  }

  /** Whether the current context matches segment `i`, memoized for this evaluation. */
  segment(i: number): boolean {
    if (this.stamps[i] === this.epoch) return this.values[i] === 1;
    // Without a walk when the segments it references are decided or
    // reference none themselves (always so for a segment without references).
    const deps = this.deps[i]!;
    let j = 0;
    for (; j < deps.length; j++) {
      const d = deps[j]!;
      if (this.stamps[d] === this.epoch) continue;
      if (this.deps[d]!.length !== 0) break;
      this.decide(d);
    }
    if (j === deps.length) return this.decide(i);
    this.settle(i);
    return this.values[i] === 1;
  }

  /** Runs the matcher of segment `i` and memoizes its outcome. */
  decide(i: number): boolean {
    const hit = this.segments[i]!(this.ctx, this.ref);
    this.stamps[i] = this.epoch;
    this.values[i] = hit ? 1 : 0;
    return hit;
  }

  /**
   * Decides segment `root` and every segment it references, transitively,
   * referenced segments first (an explicit depth-first walk, so a chain of
   * references of any length never deepens the call stack): when a matcher
   * runs, each `segment.<name>` it reads is already in the memo. A segment
   * met again while its own references are being decided (a cycle, which
   * only a hand-built model could hold) is skipped and then reads as false.
   */
  settle(root: number): void {
    // The segments on `stack` are the open ones (being decided).
    const stack = [root];
    const next = [0];
    while (stack.length > 0) {
      const top = stack.length - 1;
      const s = stack[top]!;
      const deps = this.deps[s]!;
      let j = next[top]!;
      while (
        j < deps.length && (this.stamps[deps[j]!] === this.epoch || stack.includes(deps[j]!))
      ) j++;
      if (j < deps.length) {
        next[top] = j + 1;
        stack.push(deps[j]!);
        next.push(0);
        continue;
      }
      stack.pop();
      next.pop();
      this.decide(s);
    }
  }

  /**
   * Starts an evaluation of `ctx` and returns the context of an enclosing
   * evaluation (a context getter may evaluate re-entrantly). The memo is
   * fresh: every evaluation ends by moving to a new epoch, and the first
   * epoch is 1 while stamps start at 0.
   */
  begin(ctx: Context): Context {
    const prev = this.ctx;
    this.ctx = ctx;
    beginRegexEvaluation();
    return prev;
  }

  /** Ends an evaluation: invalidates its memo entries and restores `prev`. */
  end(prev: Context): void {
    endRegexEvaluation();
    this.ctx = prev;
    if (++this.epoch === 0x1_0000_0000) {
      this.epoch = 1;
      this.stamps.fill(0);
    }
  }

  /** Evaluates a plan with the segment memo (between `begin` and `end`). */
  run(plan: Plan, ctx: Context): EvaluationResult {
    const rules = plan.rules;
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i]!;
      if (r.segment !== NO_SEGMENT && !this.segment(r.segment)) continue;
      if (r.hit !== null) return r.hit;
      const split = rollout(r, ctx);
      if (split !== null) return split;
    }
    return plan.fallback;
  }
}

/**
 * Compiles a validated manifest into an evaluation model: segment
 * predicates through the shared predicate engine with their references
 * resolved, regexes and semver values prepared, rollouts as cumulative
 * tables, and a frozen result for every (flag, environment, rule,
 * variation). The manifest is not changed and not kept: variation values
 * are deep-copied and frozen.
 *
 * @param manifest a manifest from `validateManifest`/`parseManifest`
 * @param version the namespace manifest version, copied into every result
 * @returns the model
 * @throws {TypeError} when the manifest is inconsistent (a name that does not
 *   exist, a segment reference cycle): only a hand-built manifest can be
 *
 * @example
 * ```ts
 * import { compileManifest, evaluateFlag } from "./evaluate.ts";
 * import { parseManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const manifest = parseManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.production]\n")],
 *   ["flags/dark-mode.toml", enc.encode(
 *     'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n',
 *   )],
 * ]));
 * const model = compileManifest(manifest, 7);
 * const r = evaluateFlag(model, "production", "dark-mode", { targeting_key: "u1" });
 * if (r.value !== false || r.reason !== "DEFAULT" || r.version !== 7) throw new Error();
 * ```
 */
export function compileManifest(manifest: Manifest, version: number): CompiledModel {
  const steps = compileSteps(manifest, version);
  for (let step = steps.next();; step = steps.next()) if (step.done) return step.value;
}

/**
 * {@linkcode compileManifest} in slices of at most about `sliceMs` of the
 * calling thread, yielding to the event loop between them: a server compiles
 * a ten-thousand-flag manifest without making other requests wait for it.
 *
 * @param manifest a manifest from `validateManifest`/`parseManifest`
 * @param version the namespace manifest version
 * @param sliceMs longest run between two yields, in ms (default 8)
 * @returns the same model as {@linkcode compileManifest}
 *
 * @example
 * ```ts
 * import { compileManifestInSlices, evaluateFlag } from "./evaluate.ts";
 * import { parseManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const manifest = parseManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.production]\n")],
 *   ["flags/dark-mode.toml", enc.encode(
 *     'schema_version = 1\ntype = "boolean"\ndefault = "on"\n[variations]\non = true\noff = false\n',
 *   )],
 * ]));
 * const model = await compileManifestInSlices(manifest, 2);
 * if (evaluateFlag(model, "production", "dark-mode", {}).value !== true) throw new Error();
 * ```
 */
export async function compileManifestInSlices(
  manifest: Manifest,
  version: number,
  sliceMs = 8,
): Promise<CompiledModel> {
  const steps = compileSteps(manifest, version);
  let start = performance.now();
  for (let step = steps.next();; step = steps.next()) {
    if (step.done) return step.value;
    if (performance.now() - start >= sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      start = performance.now();
    }
  }
}

/** The compilation, one step per flag, so callers choose where to pause. */
function* compileSteps(manifest: Manifest, version: number): Generator<void, CompiledModel> {
  const envs = Object.keys(manifest.namespace.environments);
  const flagKeys = Object.keys(manifest.flags).sort(byteOrder);
  const model = new Model(version, envs, flagKeys);
  compileSegments(model, manifest);
  yield;
  for (const key of flagKeys) {
    const flag = manifest.flags[key]!;
    const values = new Map<string, VariationValue>();
    for (const [name, value] of Object.entries(flag.variations)) {
      values.set(name, deepFreeze(structuredClone(value)));
    }
    const plans = envs.map((env) => compilePlan(model, flag, key, values, env));
    model.plans.set(key, Object.freeze(plans));
    model.types.set(key, flag.type);
    yield;
  }
  return model;
}

function compileSegments(model: Model, manifest: Manifest): void {
  const keys = Object.keys(manifest.segments).sort(byteOrder);
  keys.forEach((k, i) => model.segmentIndex.set(k, i));
  for (const k of keys) {
    const deps = new Set<number>();
    for (const p of manifest.segments[k]!.predicates) {
      const ref = refName(p.attribute, "segment");
      if (ref === undefined) continue;
      const i = model.segmentIndex.get(ref);
      if (i === undefined) {
        throw new TypeError(
          `Cannot compile manifest: segment "${k}" refers to unknown segment "${ref}"`,
        );
      }
      deps.add(i);
    }
    model.deps.push(Int32Array.from(deps));
  }
  checkAcyclic(keys, model.deps);
  keys.forEach((k, i) => {
    const seg = manifest.segments[k]!;
    const checks = seg.predicates.map((p) => compileCheck(p, "segment"));
    const any = seg.match === "any";
    model.checks.push(checks);
    model.any.push(any);
    model.segments.push((ctx, ref) => checksHold(checks, any, ctx, ref));
    model.simple.push(
      model.deps[i]!.length === 0 && seg.predicates.every((p) => p.op !== "matches"),
    );
  });
  model.stamps = new Uint32Array(keys.length);
  model.values = new Uint8Array(keys.length);
}

/**
 * Throws when segment references form a cycle, so that evaluation never
 * meets one. Iterative depth-first search: a chain of any length is fine.
 */
function checkAcyclic(keys: readonly string[], deps: readonly Int32Array[]): void {
  const state = new Uint8Array(keys.length); // 0: new, 1: on the path, 2: done
  for (let root = 0; root < keys.length; root++) {
    if (state[root] !== 0) continue;
    const path = [root];
    const next = [0];
    state[root] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const v = path[top]!;
      const j = next[top]!;
      if (j < deps[v]!.length) {
        next[top] = j + 1;
        const w = deps[v]![j]!;
        if (state[w] === 1) {
          const cycle = [...path.slice(path.indexOf(w)), w].map((i) => keys[i]);
          throw new TypeError(
            `Cannot compile manifest: segment reference cycle ${cycle.join(" -> ")}`,
          );
        }
        if (state[w] === 0) {
          state[w] = 1;
          path.push(w);
          next.push(0);
        }
        continue;
      }
      state[v] = 2;
      path.pop();
      next.pop();
    }
  }
}

function compilePlan(
  model: Model,
  flag: Flag,
  key: string,
  values: ReadonlyMap<string, VariationValue>,
  env: string,
): Plan {
  const override = Object.hasOwn(flag.environments, env) ? flag.environments[env] : undefined;
  const disabled = override !== undefined && !override.enabled;
  const defaultName = override?.default ?? flag.default;
  const rules = override?.rules ?? flag.rules;
  const result = (variation: string, reason: Reason, ruleIndex?: number): EvaluationResult => {
    if (!values.has(variation)) {
      throw new TypeError(
        `Cannot compile manifest: flag "${key}" names unknown variation "${variation}"`,
      );
    }
    const value = values.get(variation)!;
    const version = model.version;
    // Built in interface order, so that JSON output reads flag, value, …, version.
    return Object.freeze(
      ruleIndex === undefined
        ? { flag: key, value, variation, reason, version }
        : { flag: key, value, variation, reason, rule_index: ruleIndex, version },
    );
  };
  const fallback = result(defaultName, disabled ? "DISABLED" : "DEFAULT");
  const compiled = disabled ? [] : rules.map((rule, i) => compileRule(model, key, rule, i, result));
  const used = new Set<number>();
  let direct = true;
  for (const r of compiled) {
    if (r.segment === NO_SEGMENT) continue;
    if (!model.simple[r.segment] || used.has(r.segment)) direct = false;
    used.add(r.segment);
  }
  return new Plan(Object.freeze(compiled), fallback, direct);
}

function compileRule(
  model: Model,
  key: string,
  rule: Rule,
  index: number,
  result: (variation: string, reason: Reason, ruleIndex?: number) => EvaluationResult,
): CompiledRule {
  let segment = NO_SEGMENT;
  if (rule.segment !== undefined) {
    const i = model.segmentIndex.get(rule.segment);
    if (i === undefined) {
      throw new TypeError(
        `Cannot compile manifest: flag "${key}" rule ${index} names unknown segment "${rule.segment}"`,
      );
    }
    segment = i;
  }
  if (rule.rollout === undefined) {
    return new CompiledRule(
      segment,
      segment === NO_SEGMENT ? NO_CHECKS : model.checks[segment]!,
      segment === NO_SEGMENT ? false : model.any[segment]!,
      result(rule.variation, "TARGETING_MATCH", index),
      "",
      NO_READ,
      NO_PREFIX,
      new Int32Array(0),
      [],
    );
  }
  const bounds = new Int32Array(rule.rollout.length);
  const splits: EvaluationResult[] = [];
  let sum = 0;
  rule.rollout.forEach((entry, j) => {
    sum += entry.weight;
    bounds[j] = sum;
    splits.push(result(entry.variation, "SPLIT", index));
  });
  if (sum !== ROLLOUT_TOTAL) {
    throw new TypeError(
      `Cannot compile manifest: flag "${key}" rule ${index} weights sum to ${sum}, not ${ROLLOUT_TOTAL}`,
    );
  }
  return new CompiledRule(
    segment,
    segment === NO_SEGMENT ? NO_CHECKS : model.checks[segment]!,
    segment === NO_SEGMENT ? false : model.any[segment]!,
    null,
    topLevelKey(rule.bucket_by) ?? "",
    compileLookup(rule.bucket_by),
    Object.freeze(murmur3Begin(key + "/")),
    bounds,
    Object.freeze(splits),
  );
}

/**
 * Evaluates one flag for a context in an environment. The rules of the
 * environment (its override's rules when it has them, else the flag's) are
 * tried in order and the first match wins; a rollout rule whose context has
 * no bucket value is skipped. An unknown environment gives reason `ERROR`
 * with `error_code` `GENERAL`; an unknown flag, `FLAG_NOT_FOUND`; a context
 * that is not an object, `PARSE_ERROR`. Successful results are shared and
 * frozen.
 *
 * @param model a model from {@linkcode compileManifest}
 * @param environment an environment declared in `namespace.toml`
 * @param flagKey the flag key
 * @param context the evaluation context (a JSON object)
 * @returns the result
 *
 * @example
 * ```ts
 * import { compileManifest, evaluateFlag } from "./evaluate.ts";
 * import { parseManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const manifest = parseManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.production]\n")],
 *   ["segments/staff.toml", enc.encode(
 *     'schema_version = 1\n[[predicate]]\nattribute = "user.email"\nop = "ends_with"\nvalue = "@example.com"\n',
 *   )],
 *   ["flags/theme.toml", enc.encode(
 *     'schema_version = 1\ntype = "string"\ndefault = "light"\n[variations]\nlight = "light"\ndark = "dark"\n' +
 *       '[[rule]]\nsegment = "staff"\nvariation = "dark"\n',
 *   )],
 * ]));
 * const model = compileManifest(manifest, 1);
 * const r = evaluateFlag(model, "production", "theme", { user: { email: "a@example.com" } });
 * if (r.value !== "dark" || r.reason !== "TARGETING_MATCH" || r.rule_index !== 0) throw new Error();
 * if (evaluateFlag(model, "production", "nope", {}).error_code !== "FLAG_NOT_FOUND") throw new Error();
 * ```
 */
export function evaluateFlag(
  model: CompiledModel,
  environment: string,
  flagKey: string,
  context: Context,
): EvaluationResult {
  const m = model as Model;
  let plan: Plan;
  if (flagKey === m.lastFlag && environment === m.lastEnv) plan = m.lastPlan!;
  else {
    const env = m.envIndex.get(environment);
    if (env === undefined) return unknownEnvironment(m, flagKey, environment);
    const plans = m.plans.get(flagKey);
    if (plans === undefined) {
      return errorResult(m, flagKey, "FLAG_NOT_FOUND", `flag "${flagKey}" does not exist`);
    }
    plan = plans[env]!;
    m.lastPlan = plan;
    m.lastEnv = environment;
    m.lastFlag = flagKey;
  }
  if (!isContext(context)) return badContext(m, flagKey);
  if (plan.direct) return runDirect(plan, context);
  const prev = m.begin(context);
  try {
    return m.run(plan, context);
  } finally {
    m.end(prev);
  }
}

/**
 * Evaluates every flag for a context in an environment, sharing segment
 * outcomes between flags. Keys follow {@linkcode CompiledModel.flagKeys}
 * (sorted), except that JavaScript lists integer-like keys (`"42"`) first.
 * An unknown environment, or a context that is not an object, gives every
 * flag an `ERROR` result.
 *
 * @param model a model from {@linkcode compileManifest}
 * @param environment an environment declared in `namespace.toml`
 * @param context the evaluation context
 * @returns flag key → result (a fresh record of shared results)
 *
 * @example
 * ```ts
 * import { compileManifest, evaluateAll } from "./evaluate.ts";
 * import { parseManifest } from "./validate.ts";
 * const enc = new TextEncoder();
 * const manifest = parseManifest(new Map([
 *   ["namespace.toml", enc.encode("schema_version = 1\n[namespace.environments.production]\n")],
 *   ["flags/limit.toml", enc.encode(
 *     'schema_version = 1\ntype = "number"\ndefault = "low"\n[variations]\nlow = 10\nhigh = 99\n',
 *   )],
 * ]));
 * const all = evaluateAll(compileManifest(manifest, 3), "production", {});
 * if (all.limit?.value !== 10 || Object.keys(all).length !== 1) throw new Error();
 * ```
 */
export function evaluateAll(
  model: CompiledModel,
  environment: string,
  context: Context,
): Record<string, EvaluationResult> {
  const m = model as Model;
  const out: Record<string, EvaluationResult> = {};
  const keys = m.flagKeys;
  const env = m.envIndex.get(environment);
  if (env === undefined || !isContext(context)) {
    for (const k of keys) {
      out[k] = env === undefined ? unknownEnvironment(m, k, environment) : badContext(m, k);
    }
    return out;
  }
  const prev = m.begin(context);
  try {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      out[k] = m.run(m.plans.get(k)![env]!, context);
    }
  } finally {
    m.end(prev);
  }
  return out;
}

/**
 * The declared type of a flag, for callers that check a typed request
 * (OpenFeature's `TYPE_MISMATCH`).
 *
 * @param model a model from {@linkcode compileManifest}
 * @param flagKey the flag key
 * @returns `boolean`, `string`, `number` or `object`; undefined for an unknown flag
 *
 * @example
 * ```ts
 * import { compileManifest, flagType } from "./evaluate.ts";
 * import { emptyManifest } from "./model.ts";
 * if (flagType(compileManifest(emptyManifest(), 0), "x") !== undefined) throw new Error();
 * ```
 */
export function flagType(model: CompiledModel, flagKey: string): FlagType | undefined {
  return (model as Model).types.get(flagKey);
}

function isContext(ctx: unknown): ctx is Context {
  return ctx !== null && typeof ctx === "object" && !Array.isArray(ctx);
}

function errorResult(
  m: Model,
  flag: string,
  code: EvaluationErrorCode,
  message: string,
): EvaluationResult {
  return {
    flag,
    value: null,
    variation: null,
    reason: "ERROR",
    error_code: code,
    error_message: message,
    version: m.version,
  };
}

function unknownEnvironment(m: Model, flag: string, env: string): EvaluationResult {
  return errorResult(m, flag, "GENERAL", `environment "${env}" is not declared in namespace.toml`);
}

function badContext(m: Model, flag: string): EvaluationResult {
  return errorResult(m, flag, "PARSE_ERROR", "the evaluation context must be a JSON object");
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * Refuses an environment that a compiled model does not declare: 404
 * `environment_not_found`, naming the namespace and the model's version
 * (the service and the relay answer it alike).
 *
 * @param model the namespace's compiled model
 * @param t the tenant, namespace and environment asked for
 * @throws {NotFoundError} when the model has no such environment
 *
 * @example
 * ```ts
 * import { assertEnvironment } from "./evaluate.ts";
 * const model = { environments: ["prod"], version: 3 } as never;
 * assertEnvironment(model, { tenant: "acme", namespace: "web", environment: "prod" });
 * let code = "";
 * try { assertEnvironment(model, { tenant: "acme", namespace: "web", environment: "qa" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "environment_not_found") throw new Error(code);
 * ```
 */
export function assertEnvironment(
  model: Pick<CompiledModel, "environments" | "version">,
  t: { tenant: string; namespace: string; environment: string },
): void {
  if (!model.environments.includes(t.environment)) {
    throw new NotFoundError(
      "environment_not_found",
      `Namespace ${t.tenant}/${t.namespace} has no environment ${t.environment} ` +
        `in version ${model.version} of its manifest`,
      { details: { environment: t.environment, version: model.version } },
    );
  }
}
