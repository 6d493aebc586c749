/**
 * examples/deploy/relays/: two relays from cfgtool-relay@.service (instance
 * name = port) with relay.toml, behind nginx.conf. Without systemd: the
 * unit's settings, `systemd-analyze verify` where it exists, and its
 * ExecStart run for two instances against a real primary (paths in a temp
 * dir, ports free ones). Where nginx is installed, nginx runs with this
 * nginx.conf (TLS and the ports swapped for a loopback port) in front of
 * them: evaluation, the event stream and the SDK go through it, the relays
 * log the client nginx forwards, and a snapshot URL one relay signed is
 * honoured by the other (they share the key file).
 */
import { assert, assertEquals } from "../assert.ts";
import {
  type CliProcess,
  DEPLOY,
  freePort,
  hasProgram,
  parseUnit,
  rewrite,
  runCliOnce,
  runCommand,
  setting,
  startCli,
} from "./deploy_files.ts";
import { startFixture } from "../e2e/evaluation_fixture.ts";
import { FlagClient } from "../../lib/client/flag_client.ts";

const RELAYS = new URL("relays/", DEPLOY);
const BINARY = "/usr/local/bin/cfgtool";
const CONFIG_PATH = "/etc/cfgtool/relay.toml";
const STATE_DIR = "/var/lib/cfgtool-relay";
const unitText = await Deno.readTextFile(new URL("cfgtool-relay@.service", RELAYS));
const unit = parseUnit(unitText);
const service = (key: string) => setting(unit, "Service", key);
const configText = await Deno.readTextFile(new URL("relay.toml", RELAYS));
const nginxText = await Deno.readTextFile(new URL("nginx.conf", RELAYS));

/** nginx's simple directives, `name args…`, with the block path they sit in. */
function nginxDirectives(text: string): { path: string; name: string; args: string[] }[] {
  const out: { path: string; name: string; args: string[] }[] = [];
  const stack: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.includes("#") ? raw.slice(0, raw.indexOf("#")) : raw;
    for (const ch of line + " ") {
      if (ch === ";" || ch === "{" || ch === "}") {
        const words = current.trim().split(/\s+/).filter((w) => w !== "");
        if (ch === "{") stack.push(words.join(" "));
        else if (ch === "}") stack.pop();
        else out.push({ path: stack.join(" > "), name: words[0]!, args: words.slice(1) });
        current = "";
      } else current += ch;
    }
  }
  return out;
}

/** The ports of the upstream servers nginx sends to. */
function upstreamPorts(): number[] {
  return nginxDirectives(nginxText)
    .filter((d) => d.path.startsWith("upstream") && d.name === "server")
    .map((d) => Number(d.args[0]!.split(":")[1]));
}

Deno.test("the relay unit template and its config: per-instance port and state, shared key, no secret", async () => {
  const exec = service("ExecStart")!.split(/\s+/);
  assertEquals(exec.slice(0, 2), [BINARY, "relay"]);
  assertEquals(exec[exec.indexOf("--port") + 1], "%i");
  assertEquals(exec[exec.indexOf("--data-dir") + 1], `${STATE_DIR}/%i`);
  assertEquals(exec[exec.indexOf("--config") + 1], CONFIG_PATH);
  assertEquals(service("StateDirectory"), "cfgtool-relay cfgtool-relay/%i");
  assertEquals(service("User"), "cfgtool-relay");
  assertEquals(service("EnvironmentFile"), "/etc/cfgtool/relay.env");
  assert(!/token|svc_/i.test(service("ExecStart")!), "no token on the command line");
  assert(!/^\s*token\s*=/m.test(configText), "the token is not in the shared config file");
  assertEquals(/^key-file = "(.*)"$/m.exec(configText)?.[1], `${STATE_DIR}/relay.key`);
  // the same hardening as the single relay's unit
  const single = parseUnit(
    await Deno.readTextFile(new URL("cfgtool-relay.service", DEPLOY)),
  ).Service!.filter(([k]) => !["ExecStart", "StateDirectory", "WorkingDirectory"].includes(k));
  for (const [k, v] of single) {
    if (k === "SystemCallFilter") continue;
    assertEquals(service(k), v, k);
  }
  // nginx sends to the instances the unit's comments enable
  const ports = upstreamPorts();
  assertEquals(ports.length, 2);
  for (const p of ports) assert(unitText.includes(`cfgtool-relay@${p}`), `instance ${p}`);
});

Deno.test("nginx.conf forwards the client address, streams unbuffered and hides /metrics", () => {
  const ds = nginxDirectives(nginxText);
  const proxied = new Set(ds.filter((d) => d.name === "proxy_pass").map((d) => d.path));
  assertEquals(proxied.size, 2);
  for (const path of proxied) {
    const here = ds.filter((d) => d.path === path);
    assert(
      here.some((d) =>
        d.name === "proxy_set_header" && d.args.join(" ") ===
          "X-Forwarded-For $proxy_add_x_forwarded_for"
      ),
      `${path}: X-Forwarded-For`,
    );
  }
  const stream = ds.filter((d) => d.path.includes("api/v1/events"));
  assert(stream.some((d) => d.name === "proxy_buffering" && d.args[0] === "off"));
  assert(
    ds.some((d) => d.path.includes("location = /metrics") && d.name === "return"),
    "/metrics is not passed on",
  );
  // the relays trust exactly the proxy on this host
  assertEquals(/^trusted-proxy = "(.*)"$/m.exec(configText)?.[1], "127.0.0.1/32");
});

Deno.test({
  name: "systemd-analyze verify accepts the relay template",
  ignore: !(await hasProgram("systemd-analyze")),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-relay-units-" });
    try {
      await Deno.writeTextFile(
        `${dir}/cfgtool-relay@.service`,
        unitText.replaceAll(BINARY, Deno.execPath()),
      );
      const r = await runCommand([
        "systemd-analyze",
        "verify",
        `${dir}/cfgtool-relay@8091.service`,
      ]);
      assertEquals([r.code, r.stdout + r.stderr], [0, ""]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** nginx.conf made runnable here: plain HTTP on `port`, the relays' ports, files in `dir`. */
function localNginx(dir: string, port: number, relayPorts: number[]): string {
  let conf = nginxText
    .replace(/listen 443 ssl http2;.*$/m, `listen 127.0.0.1:${port};`)
    .replace(/^\s*ssl_certificate.*$/gm, "");
  upstreamPorts().forEach((p, i) => conf = conf.replace(`:${p} `, `:${relayPorts[i]} `));
  return [
    Deno.uid() === 0 ? "user root;" : "",
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    "daemon off;",
    "events { worker_connections 256; }",
    "http {",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) =>
      `  ${t}_temp_path ${dir}/${t};`
    ),
    conf,
    "}",
  ].join("\n");
}

Deno.test("two relays from the template serve one installation; behind nginx where installed", async (t) => {
  const f = await startFixture();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-relays-" });
  const relays: CliProcess[] = [];
  let nginx: Deno.ChildProcess | undefined;
  const clients: FlagClient[] = [];
  try {
    const nginxPort = freePort();
    const front = `http://127.0.0.1:${nginxPort}`;
    const config = `${dir}/relay.toml`;
    await Deno.writeTextFile(
      config,
      configText.replaceAll(STATE_DIR, `${dir}/state`)
        .replace("https://flags.example.com", f.inst.url)
        .replace("https://flags-eu.example.com", front),
    );
    const exec = service("ExecStart")!.split(/\s+/);
    const ports = [freePort(), freePort()];
    relays.push(
      ...await Promise.all(ports.map((port) =>
        startCli(
          rewrite(exec.slice(1), {
            [CONFIG_PATH]: config,
            [STATE_DIR]: `${dir}/state`,
            "%i": `${port}`,
          }),
          { CFGTOOL_RELAY_TOKEN: f.inst.admin },
        )
      )),
    );
    const urls = relays.map((r) => r.url);
    assertEquals(urls, ports.map((p) => `http://127.0.0.1:${p}`));
    const health = async (url: string) => await (await fetch(`${url}/healthz`)).json();
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      const hs = await Promise.all(urls.map(health));
      if (hs.every((h) => h.upstream.connected && h.namespaces.length === 3)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const url of urls) assertEquals((await health(url)).upstream.connected, true, url);

    await t.step(
      "one key for both: a snapshot URL signed by one is honoured by the other",
      async () => {
        const key = `${dir}/state/relay.key`;
        assertEquals((await Deno.stat(key)).mode! & 0o077, 0);
        for (const p of ports) {
          assert(
            !(await Array.fromAsync(Deno.readDir(`${dir}/state/${p}`))).some((e) =>
              e.name === "relay.key"
            ),
          );
        }
        const ac = new AbortController();
        const res = await fetch(`${urls[0]}/api/v1/events?ns=web:*`, {
          headers: { authorization: `Bearer ${f.tokens.read}` },
          signal: ac.signal,
        });
        let text = "";
        for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
          text += chunk;
          if (text.includes("snapshot_url")) break;
        }
        ac.abort();
        const signed = new URL(JSON.parse(/^data: (.*)$/m.exec(text)![1]!).snapshot_url);
        assertEquals(signed.origin, front, "the URL names the public origin");
        const other = await fetch(`${urls[1]}${signed.pathname}${signed.search}`);
        assertEquals(other.status, 200);
        await other.body?.cancel();
      },
    );

    if (!(await hasProgram("nginx"))) return;

    await t.step(
      "through nginx: evaluation, the SDK's stream, and the forwarded client",
      async () => {
        const nginxDir = await Deno.makeTempDir({ dir, prefix: "nginx-" });
        await Deno.chmod(dir, 0o755);
        await Deno.chmod(nginxDir, 0o755);
        await Deno.writeTextFile(`${nginxDir}/nginx.conf`, localNginx(nginxDir, nginxPort, ports));
        nginx = new Deno.Command("nginx", {
          args: ["-p", nginxDir, "-c", `${nginxDir}/nginx.conf`],
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).spawn();
        const until = Date.now() + 10_000;
        for (;;) {
          const ok = await fetch(`${front}/healthz`).then(async (r) => {
            await r.body?.cancel();
            return r.ok;
          }, () => false);
          if (ok) break;
          assert(Date.now() < until, "nginx did not start");
          await new Promise((r) => setTimeout(r, 50));
        }
        // a client behind an outer proxy: nginx appends its own peer, the relays skip both hops
        const res = await fetch(`${front}/ofrep/v1/evaluate/flags`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${f.tokens.client}`,
            "content-type": "application/json",
            "x-forwarded-for": "203.0.113.9",
          },
          body: JSON.stringify({ context: { targetingKey: "u7" } }),
        });
        assertEquals(res.status, 200);
        const body = await res.json();
        assert(body.eventStreams[0].url.startsWith(`${front}/ofrep/v1/event-stream`));
        const metrics = await fetch(`${front}/metrics`);
        assertEquals(metrics.status, 404);
        await metrics.body?.cancel();
        const put = await fetch(`${front}/api/v1/tenants/acme/namespaces/web/manifest`, {
          method: "PUT",
          headers: { authorization: `Bearer ${f.inst.admin}` },
          body: "{}",
        });
        assertEquals([put.status, (await put.json()).code], [405, "read_only"]);

        const sdk = new FlagClient({ server: front, token: f.tokens.read, namespaces: ["web:*"] });
        clients.push(sdk);
        await sdk.ready(15_000);
        assertEquals(sdk.closure("web")?.version, 1);

        await new Promise((r) => setTimeout(r, 300)); // the relays batch their log writes
        const lines = relays.flatMap((r) =>
          r.logs().split("\n").filter((l) => l.includes('"msg":"request"')).map((l) =>
            JSON.parse(l)
          )
        );
        const ofrep = lines.find((l) => l.path === "/ofrep/v1/evaluate/flags");
        assertEquals(ofrep?.client_ip, "203.0.113.9");
      },
    );
  } finally {
    for (const c of clients) await c.close();
    if (nginx !== undefined) {
      nginx.kill("SIGTERM");
      await nginx.status;
      await nginx.stderr.cancel();
    }
    for (const r of relays) await r.stop();
    await f.inst.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the relay template's ExecStart with an unknown config key stops with exit 2", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-relay-bad-" });
  try {
    await Deno.writeTextFile(`${dir}/relay.toml`, configText + "\nuptream = 1\n");
    const exec = service("ExecStart")!.split(/\s+/);
    const r = await runCliOnce(
      rewrite(exec.slice(1), {
        [CONFIG_PATH]: `${dir}/relay.toml`,
        [STATE_DIR]: dir,
        "%i": "0",
      }),
      { CFGTOOL_RELAY_TOKEN: "svc_x" },
    );
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes('did you mean "upstream"?'), r.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
