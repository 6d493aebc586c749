/**
 * examples/deploy/cfgtool.service and cfgtool.toml, without systemd: the
 * unit's hardening settings, `systemd-analyze verify` where it exists, and
 * its ExecStart and ExecReload run against the real CLI with the example
 * config file (the state directory a temp dir, the port a free one).
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  DEPLOY,
  hasProgram,
  parseUnit,
  rewrite,
  runCommand,
  setting,
  startCli,
} from "./deploy_files.ts";

const BINARY = "/usr/local/bin/cfgtool";
const CONFIG_PATH = "/etc/cfgtool/cfgtool.toml";
const STATE_DIR = "/var/lib/cfgtool";
const unitText = await Deno.readTextFile(new URL("cfgtool.service", DEPLOY));
const unit = parseUnit(unitText);
const service = (key: string) => setting(unit, "Service", key);
const configText = await Deno.readTextFile(new URL("cfgtool.toml", DEPLOY));

/** The example config with the state directory moved to `dir` and port 0. */
async function configIn(dir: string): Promise<string> {
  const path = `${dir}/cfgtool.toml`;
  const text = configText.replaceAll(STATE_DIR, dir).replace(/^port = \d+$/m, "port = 0");
  assert(text !== configText, "the example config names the state directory and a port");
  await Deno.writeTextFile(path, text);
  return path;
}

Deno.test("the unit runs a dedicated user in a hardened sandbox that still lets V8 compile", () => {
  assertEquals(service("User"), "cfgtool");
  assertEquals(service("StateDirectory"), STATE_DIR.split("/").at(-1));
  assertEquals(service("WorkingDirectory"), STATE_DIR);
  const expected: Record<string, string> = {
    NoNewPrivileges: "yes",
    CapabilityBoundingSet: "",
    AmbientCapabilities: "",
    ProtectSystem: "strict",
    ProtectHome: "yes",
    PrivateTmp: "yes",
    PrivateDevices: "yes",
    RestrictNamespaces: "yes",
    RestrictSUIDSGID: "yes",
    LockPersonality: "yes",
    SystemCallArchitectures: "native",
    UMask: "0077",
    KillMode: "mixed",
  };
  for (const [key, value] of Object.entries(expected)) assertEquals(service(key), value, key);
  assertEquals(service("RestrictAddressFamilies")?.split(" ").sort(), [
    "AF_INET",
    "AF_INET6",
    "AF_UNIX",
  ]);
  const filters = unit.Service!.filter(([k]) => k === "SystemCallFilter").map(([, v]) => v);
  assertEquals(filters, ["@system-service @pkey", "~@privileged"]);
  assertEquals(service("SystemCallErrorNumber"), "EPERM", "a call outside the list fails softly");
  assertEquals(service("ProcSubset"), undefined, "the runtime reads /proc/meminfo");
  assert(Number(service("LimitNOFILE")) >= 65536);
  assertEquals(service("MemoryDenyWriteExecute"), "no", "V8's JIT needs W+X memory");
  // secrets come from a root-only environment file, never from the command line
  assertEquals(service("EnvironmentFile"), "-/etc/cfgtool/cfgtool.env");
  assert(!/token|smtp/i.test(service("ExecStart")!), service("ExecStart"));
  assert(!/^(metrics-token|smtp-url)\s*=/m.test(configText), "no secret keys in the config file");
});

Deno.test({
  name: "systemd-analyze verify accepts both units without a warning",
  ignore: !(await hasProgram("systemd-analyze")),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-units-" });
    try {
      // verify wants ExecStart's program to exist: any executable stands in for the binary
      for (const name of ["cfgtool.service", "cfgtool@.service"]) {
        const text = await Deno.readTextFile(new URL(name, DEPLOY));
        await Deno.writeTextFile(`${dir}/${name}`, text.replaceAll(BINARY, Deno.execPath()));
      }
      for (const name of ["cfgtool.service", "cfgtool@8081.service"]) {
        const r = await runCommand(["systemd-analyze", "verify", `${dir}/${name}`]);
        assertEquals([r.code, r.stdout + r.stderr], [0, ""], name);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("ExecStart serves with the example config; ExecReload's SIGHUP keeps it serving", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-unit-state-" });
  try {
    const exec = service("ExecStart")!.split(/\s+/);
    assertEquals(exec[0], BINARY);
    const args = rewrite(exec.slice(1), { [CONFIG_PATH]: await configIn(dir) });
    const server = await startCli(args);
    try {
      assertEquals(new URL(server.url).hostname, "127.0.0.1", "behind the proxy, as configured");
      assertEquals((await fetch(`${server.url}/readyz`)).status, 200);

      const reload = service("ExecReload")!;
      const signal = /^\/bin\/kill -(\w+) \$MAINPID$/.exec(reload)?.[1];
      assertEquals(signal, "HUP", reload);
      Deno.kill(server.pid, `SIG${signal}` as Deno.Signal);
      const end = Date.now() + 5000;
      while (!server.logs().includes("reload requested") && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 25));
      }
      assertStringIncludes(server.logs(), "reload requested");
      assertEquals((await fetch(`${server.url}/readyz`)).status, 200, "still serving");

      assertEquals(await server.stop("SIGTERM"), 0);
    } finally {
      await server.stop("SIGKILL");
    }
    const state = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert(state.includes("kv.sqlite3") && state.includes("token.key"), state.join(" "));
    assertEquals((await Deno.stat(`${dir}/token.key`)).mode! & 0o077, 0, "token.key is private");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
