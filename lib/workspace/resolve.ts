/**
 * Resolution from memory (docs/workspace.md, "Resolution"): qualifiers are
 * compiled once into matchers; each call evaluates the variable's rules in
 * file order, computing a qualifier's truth at most once per call (memo), and
 * falls back to the `default` entry. A qualifier reached again while it is
 * being evaluated counts as false, so even a cyclic model never recurses
 * forever (lint refuses cycles before it gets here).
 *
 * @module
 */
import { compileAll, type Context, type Matcher } from "../flags/conditions.ts";
import { NotFoundError, UsageError } from "../errors.ts";
import { didYouMean } from "../suggest.ts";
import type { Resolution, WorkspaceModel } from "./model.ts";

/** Resolves a variable against a context, synchronously. */
export type Resolver = (variable: string, context: Context) => Resolution;

interface CompiledVariable {
  rules: { qualifier: number; result: Resolution }[];
  fallback: Resolution;
}

// Per-call memo states (0 = not evaluated yet).
const TRUE = 1, FALSE = 2, ACTIVE = 3;

/**
 * Compiles a model into a resolver. The model must be free of blocking
 * problems (every default and rule names an existing entry and qualifier);
 * entry values are deep-frozen and shared by every result.
 *
 * @param model a loaded, checked workspace model
 * @returns the resolver; it throws {@linkcode NotFoundError} `variable_not_found`
 *   for an unknown variable and {@linkcode UsageError} when the context is not an object
 *
 * @example
 * ```ts
 * import { compileResolver } from "./resolve.ts";
 * const entry = (key: string) => ({ key, path: `catalogs/c-entries/${key}.toml`, value: { key } });
 * const resolve = compileResolver({
 *   catalogs: new Map([["c", { name: "c", path: "catalogs/c.toml", defined: true,
 *     entries: new Map([["a", entry("a")], ["b", entry("b")]]) }]]),
 *   qualifiers: new Map([["pro", { name: "pro", path: "qualifiers/pro.toml", valid: true, refs: [],
 *     predicates: [{ attribute: "plan", op: "eq", value: "pro" }] }]]),
 *   variables: new Map([["v", { name: "v", path: "variables/v.toml", catalog: "c", defaultKey: "a",
 *     rules: [{ qualifier: "pro", value: "b" }] }]]),
 * });
 * if (resolve("v", { plan: "pro" }).value_key !== "b") throw new Error();
 * if (resolve("v", {}).value_key !== "a") throw new Error();
 * ```
 */
export function compileResolver(model: WorkspaceModel): Resolver {
  const names = [...model.qualifiers.keys()];
  const index = new Map(names.map((n, i) => [n, i]));
  const matchers: Matcher[] = names.map((n) =>
    compileAll(model.qualifiers.get(n)!.predicates, "all", "qualifier")
  );
  const results = new Map<string, Resolution>();
  const resultFor = (catalog: string, key: string): Resolution => {
    const id = `${catalog}\u0000${key}`;
    let r = results.get(id);
    if (r === undefined) {
      const entry = model.catalogs.get(catalog)?.entries.get(key);
      if (entry === undefined) throw new Error(`no entry "${key}" in catalog "${catalog}"`);
      r = Object.freeze({ value_key: key, value: deepFreeze(structuredClone(entry.value)) });
      results.set(id, r);
    }
    return r;
  };
  const variables = new Map<string, CompiledVariable>();
  for (const v of model.variables.values()) {
    if (v.catalog === undefined || v.defaultKey === undefined) {
      throw new Error(`variable "${v.name}" is incomplete`);
    }
    const catalog = v.catalog;
    variables.set(v.name, {
      rules: v.rules.map((r) => ({
        qualifier: index.get(r.qualifier)!,
        result: resultFor(catalog, r.value),
      })),
      fallback: resultFor(catalog, v.defaultKey),
    });
  }

  return function resolve(variable: string, context: Context): Resolution {
    const compiled = variables.get(variable);
    if (compiled === undefined) {
      throw new NotFoundError(
        "variable_not_found",
        `no variable "${variable}" in the workspace${didYouMean(variable, variables.keys())}`,
      );
    }
    if (context === null || typeof context !== "object" || Array.isArray(context)) {
      throw new UsageError("the context must be a JSON object");
    }
    const memo = new Uint8Array(names.length);
    const truth = (i: number): boolean => {
      const m = memo[i];
      if (m === TRUE) return true;
      if (m === FALSE || m === ACTIVE) return false;
      memo[i] = ACTIVE;
      const r = matchers[i]!(context, ref);
      memo[i] = r ? TRUE : FALSE;
      return r;
    };
    const ref = (name: string): boolean => {
      const i = index.get(name);
      return i !== undefined && truth(i);
    };
    for (const rule of compiled.rules) {
      if (truth(rule.qualifier)) return rule.result;
    }
    return compiled.fallback;
  };
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
