/**
 * In-process flag evaluation (docs/performance.md, "Flag evaluation
 * (in-process)"): the realistic namespace of bench/fixtures (50 flags, 20
 * segments with nested references, rollouts) compiled once, then one
 * evaluation per iteration over 4096 seeded contexts.
 *
 * Run: deno bench -A bench/evaluate_bench.ts
 */
import { compileManifest, evaluateAll, evaluateFlag } from "../lib/flags/evaluate.ts";
import { parseManifest } from "../lib/flags/validate.ts";
import {
  FLAG_KEYS,
  makeContexts,
  realisticNamespaceFiles,
} from "./fixtures/realistic_namespace.ts";

const files = realisticNamespaceFiles();
const manifest = parseManifest(files);
const model = compileManifest(manifest, 1);
const contexts = makeContexts(4096, 20240601);
const MASK = contexts.length - 1;
let i = 0;
let sink = 0;

Deno.bench("compileManifest (50 flags, 20 segments, 2 environments)", { group: "compile" }, () => {
  sink += compileManifest(manifest, 1).flagKeys.length;
});

Deno.bench("evaluateFlag: one flag, rotating over the 50 flags", {
  group: "single",
  baseline: true,
}, () => {
  const r = evaluateFlag(model, "production", FLAG_KEYS[i % 50]!, contexts[i & MASK]!);
  i++;
  if (r.variation === null) sink++;
});

Deno.bench("evaluateFlag: flag-03 (a rollout-heavy flag)", { group: "single" }, () => {
  const r = evaluateFlag(model, "production", "flag-03", contexts[i++ & MASK]!);
  if (r.variation === null) sink++;
});

Deno.bench("evaluateFlag: staging (overrides, disabled flags)", { group: "single" }, () => {
  const r = evaluateFlag(model, "staging", FLAG_KEYS[i % 50]!, contexts[i & MASK]!);
  i++;
  if (r.variation === null) sink++;
});

Deno.bench("evaluateAll: 50 flags for one context", { group: "all" }, () => {
  const all = evaluateAll(model, "production", contexts[i++ & MASK]!);
  if (all["flag-00"] === undefined) sink++;
});

globalThis.addEventListener("unload", () => {
  if (sink === -1) console.log(sink);
});
