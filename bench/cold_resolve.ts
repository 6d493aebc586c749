/**
 * Times N cold `cfgtool resolve` processes (a new Deno process each, as a
 * shell script would run it) on the worked example, each run paired with a
 * bare `deno eval 1` run right after it, and prints median and p90
 * wall-clock times in milliseconds and the median of the per-pair ratios
 * (resolve / bare Deno), which holds better than absolute times on a busy
 * machine. Two cases:
 *
 * - `verdicts cached`: the schema verdict record of the example is in the
 *   cache (as after any earlier resolve of the same files), so Ajv is not loaded;
 * - `no verdicts`: an empty cache directory for every run, so Ajv checks the
 *   entries (the first resolve after an edit).
 *
 *     deno run -A bench/cold_resolve.ts [N=30]
 */
const N = Number(Deno.args[0] ?? 30);
const cli = new URL("../cli.ts", import.meta.url).pathname;
const dir = new URL("../examples/notification-workspace", import.meta.url).pathname;
const resolveArgs = [
  "run",
  "-A",
  cli,
  "resolve",
  dir,
  "--variable",
  "notification-delivery-policy",
  "--context",
  "account.plan=enterprise",
  "--context",
  "incident.active=true",
  "--context",
  "notification.kind=incident_update",
];

/** Deno's own cache, kept when $XDG_CACHE_HOME (its default parent) is changed. */
const denoDir: string = JSON.parse(
  new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
      .output())
      .stdout,
  ),
).denoDir;

async function once(args: string[], env: Record<string, string> = {}): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return ms;
}

function summary(label: string, times: number[], ratios: number[]): string {
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
  };
  return `${label}, ${times.length} runs: median ${pct(times, 0.5).toFixed(1)} ms, ` +
    `p90 ${pct(times, 0.9).toFixed(1)} ms, min ${Math.min(...times).toFixed(1)} ms; ` +
    `median ratio to \`deno eval 1\` ${pct(ratios, 0.5).toFixed(2)}`;
}

const cached = await Deno.makeTempDir({ prefix: "cfgtool-bench-cache-" });
const cachedEnv = { XDG_CACHE_HOME: cached, DENO_DIR: denoDir };
await once(resolveArgs, cachedEnv); // warms the module cache and records the verdicts
await once(["eval", "1"]);

const rows = { cached: [] as number[], none: [] as number[], bare: [] as number[] };
const ratios = { cached: [] as number[], none: [] as number[] };
for (let i = 0; i < N; i++) {
  const a = await once(resolveArgs, cachedEnv);
  const bareA = await once(["eval", "1"]);
  const empty = await Deno.makeTempDir({ prefix: "cfgtool-bench-cache-" });
  const b = await once(resolveArgs, { XDG_CACHE_HOME: empty, DENO_DIR: denoDir });
  const bareB = await once(["eval", "1"]);
  await Deno.remove(empty, { recursive: true });
  rows.cached.push(a);
  rows.none.push(b);
  rows.bare.push(bareA, bareB);
  ratios.cached.push(a / bareA);
  ratios.none.push(b / bareB);
}
await Deno.remove(cached, { recursive: true });
console.log(summary("cold cfgtool resolve, verdicts cached", rows.cached, ratios.cached));
console.log(summary("cold cfgtool resolve, no verdicts", rows.none, ratios.none));
console.log(summary("deno eval 1", rows.bare, rows.bare.map(() => 1)));
