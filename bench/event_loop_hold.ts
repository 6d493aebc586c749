/**
 * Load script: how long a large push holds the server's event loop, seen
 * from outside. A real `cfgtool serve` (temp-dir KV, free loopback port) gets
 * one push of N files (namespace.toml and N-1 distinct flags; 10,000 is
 * the most a manifest may hold) from this process, then what follows a
 * push (the event to a subscriber of every flag, the first evaluation of
 * the new version, its closure and manifest archives, a lint of the same
 * files), while a second loop asks `GET /healthz` one request after
 * another; the slowest `/healthz` answer during each phase is what any
 * other client would have waited. The
 * yardstick printed last is the same probe against the idle server while two
 * busy loops take both cores: what scheduling alone costs on this machine.
 *
 *     deno run -A bench/event_loop_hold.ts [files=10000] [rounds=3]
 *
 * @module
 */
import { probed } from "./healthz_probe.ts";
import { bootstrapSuperadmin } from "./bootstrap.ts";
const CLI = new URL("../cli.ts", import.meta.url).pathname;
const count = Number(Deno.args[0] ?? 10_000);
const rounds = Number(Deno.args[1] ?? 3);
const dir = await Deno.makeTempDir({ prefix: "cfgtool-hold-" });
const kv = `${dir}/kv.sqlite3`;

const token = await bootstrapSuperadmin(kv);

const server = new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--unstable-kv", CLI, "serve", "--kv", kv, "--port", "0"],
  stdout: "piped",
  stderr: "null",
}).spawn();
const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
let out = "";
while (!/listening on (\S+)/.test(out)) {
  const { value, done } = await reader.read();
  if (done) throw new Error("serve exited before listening");
  out += value;
}
const url = /listening on (\S+)/.exec(out)![1]!;
const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const post = (path: string, body: unknown) =>
  fetch(`${url}/api/v1${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) })
    .then((r) => r.body?.cancel());
await post("/tenants", { slug: "acme" });
await post("/tenants/acme/namespaces", { slug: "big" });

const nsPath = `${url}/api/v1/tenants/acme/namespaces/big`;
const everything = btoa("*").replace(/=+$/, "");
// A subscriber of every flag: each push also costs the server the closure, delta or snapshot of the stream.
const stream = await fetch(`${url}/api/v1/events?ns=acme/big:*`, {
  headers: { authorization: auth.authorization },
});
if (stream.status !== 200) throw new Error(`event stream: ${stream.status} ${await stream.text()}`);
const events = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
let eventText = "";
const eventsRead = (async () => {
  for (;;) {
    const { value, done } = await events.read();
    if (done) return;
    eventText += value;
  }
})();

try {
  for (let round = 0; round < rounds; round++) {
    const files: Record<string, string> = {
      "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n",
    };
    for (let i = 0; i < count - 1; i++) {
      files[`flags/f${i}.toml`] =
        `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${round} ${i}\n`;
    }
    const body = JSON.stringify({ files });
    let version = 0;
    const phases: [string, () => Promise<unknown>][] = [
      ["push", async () => {
        const res = await fetch(`${nsPath}/manifest`, { method: "PUT", headers: auth, body });
        if (res.status !== 201) throw new Error(`push: ${res.status} ${await res.text()}`);
        version = (await res.json()).version;
      }],
      ["event to the subscriber", async () => {
        while (!eventText.includes(`"version":${version}`)) {
          await new Promise((r) => setTimeout(r, 5));
        }
      }],
      ["first evaluate", async () => {
        const res = await fetch(`${nsPath}/environments/production/evaluate`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ flag: "f1", context: {} }),
        });
        if ((await res.json()).version !== version) throw new Error("evaluated an older version");
      }],
      ["closure archive", async () => {
        const res = await fetch(`${nsPath}/closure?version=${version}&subscription=${everything}`, {
          headers: { authorization: auth.authorization },
        });
        if (res.status !== 200) throw new Error(`closure: ${res.status}`);
        await res.arrayBuffer();
      }],
      ["manifest archive", async () => {
        const res = await fetch(`${nsPath}/manifest`, {
          headers: { authorization: auth.authorization },
        });
        await res.arrayBuffer();
      }],
      ["lint", async () => {
        const res = await fetch(`${nsPath}/lint`, { method: "POST", headers: auth, body });
        if (!(await res.json()).ok) throw new Error("lint");
      }],
    ];
    for (const [name, work] of phases) {
      const { took, slowest, probes } = await probed(url, work);
      console.log(
        `round ${round + 1}, ${count} files (${(body.length / 1048576).toFixed(1)} MiB JSON), ` +
          `${name}: ${took.toFixed(0)} ms; slowest of ${probes} /healthz ${slowest.toFixed(1)} ms`,
      );
    }
  }
  // The yardstick of the same run: the same probe against the idle server
  // while two busy loops take both cores (the pushes above keep both busy
  // too: the validation worker, this client). Scheduling alone gives this.
  const burners = [1, 2].map(() =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "const end = Date.now() + 3000; while (Date.now() < end) {}"],
    }).spawn()
  );
  let slowest = 0;
  let probes = 0;
  const end = Date.now() + 2800;
  while (Date.now() < end) {
    const t0 = performance.now();
    const r = await fetch(`${url}/healthz`);
    await r.body?.cancel();
    slowest = Math.max(slowest, performance.now() - t0);
    probes++;
  }
  await Promise.all(burners.map((b) => b.status));
  console.log(
    `yardstick, idle server with both cores busy: slowest of ${probes} /healthz ` +
      `${slowest.toFixed(1)} ms`,
  );
} finally {
  await events.cancel().catch(() => {});
  await eventsRead.catch(() => {});
  server.kill("SIGTERM");
  await server.status;
  await reader.cancel().catch(() => {});
  await Deno.remove(dir, { recursive: true });
}
