/**
 * Load script: how long a large push holds the server's event loop, seen
 * from outside. A real `cfgtool serve` (temp-dir KV, free loopback port) gets
 * one push of N distinct flag files from this process while a second loop
 * asks `GET /healthz` one request after another; the slowest `/healthz`
 * answer during the push is what any other client would have waited. The
 * yardstick printed last is the same probe against the idle server while two
 * busy loops take both cores: what scheduling alone costs on this machine.
 *
 *     deno run -A bench/event_loop_hold.ts [files=10000] [rounds=3]
 *
 * @module
 */
const CLI = new URL("../cli.ts", import.meta.url).pathname;
const count = Number(Deno.args[0] ?? 10_000);
const rounds = Number(Deno.args[1] ?? 3);
const dir = await Deno.makeTempDir({ prefix: "cfgtool-hold-" });
const kv = `${dir}/kv.sqlite3`;

const boot = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", "--unstable-kv", CLI, "admin", "bootstrap", "--kv", kv],
  stdout: "piped",
  stderr: "piped",
}).output();
if (!boot.success) throw new Error(new TextDecoder().decode(boot.stderr));
const token = new TextDecoder().decode(boot.stdout).trim().split("\n").at(-1)!;

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

try {
  for (let round = 0; round < rounds; round++) {
    const files: Record<string, string> = {
      "namespace.toml": "schema_version = 1\n[namespace.environments.production]\n",
    };
    for (let i = 0; i < count; i++) {
      files[`flags/f${i}.toml`] =
        `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${round} ${i}\n`;
    }
    const body = JSON.stringify({ files });
    let pushing = true;
    let slowest = 0;
    let probes = 0;
    const probe = (async () => {
      while (pushing) {
        const t0 = performance.now();
        const r = await fetch(`${url}/healthz`);
        await r.body?.cancel();
        slowest = Math.max(slowest, performance.now() - t0);
        probes++;
      }
    })();
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v1/tenants/acme/namespaces/big/manifest`, {
      method: "PUT",
      headers: auth,
      body,
    });
    await res.body?.cancel();
    const took = performance.now() - t0;
    pushing = false;
    await probe;
    console.log(
      `${count} files (${(body.length / 1048576).toFixed(1)} MiB JSON): push ${res.status} in ` +
        `${took.toFixed(0)} ms; slowest of ${probes} /healthz during it ${slowest.toFixed(1)} ms`,
    );
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
  server.kill("SIGTERM");
  await server.status;
  await reader.cancel().catch(() => {});
  await Deno.remove(dir, { recursive: true });
}
