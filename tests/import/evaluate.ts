/**
 * Test helpers of the importer tests: an importer's result as a compiled
 * model, checked by the validator first, a short form of evaluation
 * results, an item's report, and the seeded generator of the property
 * tests.
 *
 * @module
 */
import { assertEquals } from "../assert.ts";
import { filesOf } from "../../lib/flags/authoring/texts.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { type CompiledModel, compileManifest, evaluateFlag } from "../../lib/flags/evaluate.ts";
import type { ImportResult, ItemReport } from "../../lib/import/types.ts";

/** The model of an import's files; fails the test when the manifest does not lint. */
export function modelOf(result: ImportResult): CompiledModel {
  const { problems, manifest } = validateManifest(filesOf(result.files));
  assertEquals(problems.map((p) => `${p.path} ${p.key ?? ""}: ${p.message}`), []);
  return compileManifest(manifest!, 0);
}

/** `[value, reason]` of one evaluation. */
export function outcome(
  model: CompiledModel,
  env: string,
  flag: string,
  context: Record<string, unknown>,
): [unknown, string] {
  const r = evaluateFlag(model, env, flag, context);
  return [r.value, r.reason];
}

/** The report of one item by its source key (or key). */
export function item(result: ImportResult, kind: "flag" | "segment", source: string): ItemReport {
  const found = result.items.find((i) => i.kind === kind && (i.sourceKey ?? i.key) === source);
  if (found === undefined) throw new Error(`no report of ${kind} ${source}`);
  return found;
}

/** The report of one item by its key or its source key (either kind). */
export function reportOf(result: ImportResult, key: string): ItemReport {
  const found = result.items.find((i) => i.key === key || i.sourceKey === key);
  if (found === undefined) throw new Error(`no report for ${key}`);
  return found;
}

/** A seeded generator of numbers in [0, 1) (mulberry32), so a failing case can be run again. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
