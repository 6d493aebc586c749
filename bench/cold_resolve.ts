/**
 * Times N cold `cfgtool resolve` processes (a new Deno process each, as a
 * shell script would run it) on the worked example and prints the median
 * and p90 wall-clock times in milliseconds.
 *
 *     deno run -A bench/cold_resolve.ts [N=30]
 */
const N = Number(Deno.args[0] ?? 30);
const cli = new URL("../cli.ts", import.meta.url).pathname;
const dir = new URL("../examples/notification-workspace", import.meta.url).pathname;
const args = [
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

async function once(): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const ms = performance.now() - start;
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return ms;
}

await once(); // warm the module cache, as any second run would find it
const times: number[] = [];
for (let i = 0; i < N; i++) times.push(await once());
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!;
console.log(
  `cold cfgtool resolve, ${N} runs: median ${pct(0.5).toFixed(1)} ms, ` +
    `p90 ${pct(0.9).toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${
      times[times.length - 1]!.toFixed(1)
    } ms`,
);
