// Slice timing of one peer-harness engine, for a machine shared with other work. run.sh copies
// this file next to the harness's bench.mjs (in $PEERS_WORK) and runs it with SLICES=1, one process
// per engine and round, as the harness runs bench.mjs. It builds the engine, checks the 4 sample
// contexts, warms up on the harness's 50,000 warm-up contexts, then times the harness's 200,000
// contexts in slices of 10,000 (each slice timed on its own) and prints one line:
//   SLICES {"engine", "slices", "min", "p10", "p50"}    (ns per evaluation)
// The fastest slices are the ones no other process interrupted: on a busy machine they show the
// cost of an evaluation, which the harness's one timing of 200,000 evaluations mixes with the
// time other processes took the CPU.
//   deno run --allow-read=. --allow-env --allow-sys slices.mjs --report <file of SLICES lines>
// prints the table: per engine, the median over the rounds of each figure, and p10 ÷ baseline's.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    engine: { type: "string" },
    report: { type: "string" },
    n: { type: "string", default: "200000" },
    warmup: { type: "string", default: "50000" },
    slice: { type: "string", default: "10000" },
  },
});
if (opt.report !== undefined) {
  report(opt.report);
  Deno.exit(0);
}
// The scenario exists only in the harness copy that run.sh prepares, so it is imported
// dynamically: `deno check bench/` in the repository does not try to resolve it.
const { makeContexts, SAMPLES } = await import(new URL("./scenario.mjs", import.meta.url).href);
const N = Number(opt.n);
const SLICE = Number(opt.slice);
const { default: spec } = await import(`./engines/${opt.engine}.mjs`);
const engine = await spec.create();
if (engine.mode !== "sync") throw new Error(`${spec.name}: slice timing takes sync engines only`);
for (const s of SAMPLES) {
  const v = engine.evaluate(engine.prepare(s.ctx));
  if (!s.expect.includes(v)) throw new Error(`${spec.name}: sample "${s.name}" gave ${v}`);
}
const run = (ctxs, sink) => {
  const evaluate = engine.evaluate;
  for (let i = 0; i < ctxs.length; i++) sink[i] = evaluate(ctxs[i]);
};
run(makeContexts(Number(opt.warmup), 777).map(engine.prepare), []);
const all = makeContexts(N, 20240601).map(engine.prepare);
const slices = [];
for (let at = 0; at + SLICE <= N; at += SLICE) slices.push(all.slice(at, at + SLICE));
const out = new Array(SLICE);
const ns = [];
for (const s of slices) {
  const t = performance.now();
  run(s, out);
  ns.push(((performance.now() - t) * 1e6) / SLICE);
}
ns.sort((a, b) => a - b);
const at = (q) => Math.round(ns[Math.floor(q * (ns.length - 1))]);
console.log(
  "SLICES " +
    JSON.stringify({
      engine: spec.name,
      slices: ns.length,
      min: at(0),
      p10: at(0.1),
      p50: at(0.5),
    }),
);

function report(file) {
  const rows = readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("SLICES "))
    .map((l) => JSON.parse(l.slice(7)));
  const median = (xs) => {
    const v = [...xs].sort((a, b) => a - b);
    const m = v.length >> 1;
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  };
  const byEngine = new Map();
  for (const r of rows) byEngine.set(r.engine, [...(byEngine.get(r.engine) ?? []), r]);
  const fig = (rs, k) => median(rs.map((r) => r[k]));
  const base = byEngine.has("baseline") ? fig(byEngine.get("baseline"), "p10") : NaN;
  console.log("| engine | rounds | min ns | p10 ns | p50 ns | p10 x baseline |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const [engine, rs] of byEngine) {
    const p10 = fig(rs, "p10");
    console.log(
      `| ${engine} | ${rs.length} | ${fig(rs, "min")} | ${p10} | ${fig(rs, "p50")} | ` +
        `${(p10 / base).toFixed(2)}x |`,
    );
  }
}
