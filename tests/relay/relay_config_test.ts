/**
 * `cfgtool relay --config` and `--trusted-proxy`, as real processes: the
 * relay's token is a secret of the configuration file (never repeated in
 * a problem report), an unknown key names `cfgtool relay --help`, a file
 * holding the token that others can read is warned about, and behind a
 * trusted proxy the request log names the forwarded client. The relays
 * here have no upstream to reach (port 9 on loopback): they start all the
 * same, as a relay started while its upstream is down does.
 */
import { assert, assertEquals } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";
import { type RelayProcess, startRelay } from "./relay_process.ts";

const SECRET = "svc_tenant_0123456789abcdefghijklmnopqrstuv";

async function withConfig(
  text: string,
  fn: (path: string, dir: string) => Promise<void>,
  mode = 0o600,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-relay-config-" });
  try {
    const path = `${dir}/relay.toml`;
    await Deno.writeTextFile(path, text, { mode });
    await Deno.chmod(path, mode);
    await fn(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("relay --config: the token is never repeated in a problem report", async () => {
  const cases = [
    // a value of the wrong type
    `upstream = "http://127.0.0.1:9"\ntoken = ${SECRET.length}${"7".repeat(8)}\n`,
    // not TOML: an unquoted token
    `upstream = "http://127.0.0.1:9"\ntoken = ${SECRET}\n`,
    // a table where a string goes
    `upstream = "http://127.0.0.1:9"\n[token]\nvalue = "${SECRET}"\n`,
  ];
  for (const text of cases) {
    await withConfig(text, async (path) => {
      const r = await runCfgtool(["relay", "--config", path, "--port", "0"]);
      assertEquals(r.code, 2, r.stderr);
      assert(r.stderr.includes(path), r.stderr);
      assert(r.stderr.includes("token"), r.stderr);
      assert(!r.stderr.includes(SECRET) && !r.stderr.includes("77777777"), r.stderr);
    });
  }
});

Deno.test("relay --config: an unknown key names relay --help or the nearest key", async () => {
  await withConfig(`upstream = "http://127.0.0.1:9"\nzzqqxx = 1\n`, async (path) => {
    const r = await runCfgtool(["relay", "--config", path]);
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes("`cfgtool relay --help`"), r.stderr);
    assert(!r.stderr.includes("serve --help"), r.stderr);
  });
  await withConfig(`upstrem = "http://127.0.0.1:9"\n`, async (path) => {
    const r = await runCfgtool(["relay", "--config", path]);
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes(`did you mean "upstream"?`), r.stderr);
  });
  await withConfig(`trusted-proxy = "10.0.0.0/8 nope"\n`, async (path) => {
    const r = await runCfgtool(["relay", "--config", path, "--upstream", "http://127.0.0.1:9"], {
      env: { CFGTOOL_RELAY_TOKEN: SECRET },
    });
    assertEquals(r.code, 2, r.stderr);
    assert(r.stderr.includes('--trusted-proxy "nope"'), r.stderr);
  });
});

/**
 * Runs `fn` against a relay started with `--config` holding `text` (and no
 * upstream to reach), and stops it.
 */
async function withConfiguredRelay(
  text: string,
  fn: (relay: RelayProcess) => Promise<void>,
  mode = 0o600,
): Promise<void> {
  await withConfig(text, async (path, dir) => {
    const relay = await startRelay({
      upstream: "http://127.0.0.1:9",
      token: "",
      dataDir: `${dir}/data`,
      args: ["--config", path],
    });
    try {
      await fn(relay);
    } finally {
      await relay.stop();
    }
  }, mode);
}

/** Waits (10 s at most) until `done`; the assertions after it say what is missing. */
async function settle(done: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

Deno.test("relay behind a trusted proxy: the log names the forwarded client", async () => {
  await withConfiguredRelay(
    `token = "${SECRET}"\ntrusted-proxy = "127.0.0.1/32"\n`,
    async (relay) => {
      const res = await fetch(`${relay.url}/healthz`, {
        headers: { "x-forwarded-for": "198.51.100.23, 203.0.113.9" },
      });
      assertEquals(res.status, 200);
      await res.body?.cancel();
      // through the proxy, /metrics is not local any more
      const metrics = await fetch(`${relay.url}/metrics`, {
        headers: { "x-forwarded-for": "203.0.113.9" },
      });
      assertEquals(metrics.status, 403);
      await metrics.body?.cancel();
      const malformed = await fetch(`${relay.url}/healthz`, {
        headers: { "x-forwarded-for": "[[[, ,,999.9.9.9" },
      });
      assertEquals(malformed.status, 200);
      await malformed.body?.cancel();
      const lines = (): Record<string, unknown>[] =>
        relay.logs().split("\n").filter((l) => l.includes('"msg":"request"'))
          .map((l) => JSON.parse(l));
      await settle(() => lines().length >= 3);
      assertEquals(lines().map((l) => l.client_ip), [
        "203.0.113.9",
        "203.0.113.9",
        "127.0.0.1",
      ]);
      assert(!relay.logs().includes(SECRET), "the token is never logged");
    },
  );
});

Deno.test("relay --config holding the token, readable by others: a warning", async () => {
  await withConfiguredRelay(
    `token = "${SECRET}"\nport = 0\n`,
    async (relay) => {
      const warned = () => relay.logs().includes("configuration file holds secrets");
      await settle(warned);
      assert(warned(), relay.logs());
      assert(relay.logs().includes('"keys":"token"'), relay.logs());
      assert(!relay.logs().includes(SECRET));
    },
    0o644,
  );
});
