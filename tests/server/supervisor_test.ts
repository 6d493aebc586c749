import { assert, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { CfgtoolError } from "../../lib/errors.ts";
import type { LogLevel } from "../../lib/log.ts";
import { freePort, selfLauncher, serveWorkers } from "../../lib/server/supervisor.ts";

Deno.test("selfLauncher() reruns deno run with the same flags and script, plus --unstable-net", () => {
  const l = selfLauncher(
    ["deno", "run", "--allow-net", "--config", "deno.json", "cli.ts", "serve", "--workers", "2"],
    ["serve", "--workers", "2"],
    "/usr/local/bin/deno",
  );
  assertEquals(l, {
    command: "/usr/local/bin/deno",
    args: ["run", "--unstable-net", "--allow-net", "--config", "deno.json", "cli.ts"],
  });
});

Deno.test("selfLauncher() runs a compiled binary as itself, by its real path", () => {
  assertEquals(selfLauncher(["cfgtool", "serve"], ["serve"], "/opt/bin/cfgtool"), {
    command: "/opt/bin/cfgtool",
    args: [],
  });
});

Deno.test("selfLauncher() finds no launcher for deno test, deno eval or foreign arguments", () => {
  assertEquals(selfLauncher(["deno", "test", "-A", "x_test.ts"], [], "/bin/deno"), null);
  assertEquals(selfLauncher(["deno", "eval", "code", "serve"], ["serve"], "/bin/deno"), null);
  // the program was given other arguments than the process (runCli called in-process)
  assertEquals(selfLauncher(["deno", "run", "cli.ts", "pull"], ["serve"], "/bin/deno"), null);
  assertEquals(selfLauncher([], [], "/bin/deno"), null);
});

Deno.test("freePort() picks a free port for 0 and refuses a taken one with address_in_use", () => {
  const port = freePort("127.0.0.1", 0);
  assert(port > 0);
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const err = assertThrows(() => freePort("127.0.0.1", taken.addr.port), CfgtoolError);
    assertEquals(err.code, "address_in_use");
  } finally {
    taken.close();
  }
});

/**
 * A stand-in worker: prints the listening line with the port it was given,
 * then behaves as `--mode` says: `fail-start` exits 1 before listening,
 * `crash-1` makes worker 1 exit 3 at once, `term-7` exits 7 on SIGTERM.
 * SIGINT and (otherwise) SIGTERM exit 0.
 */
const FAKE_WORKER = `
const arg = (name) => { const i = Deno.args.indexOf(name); return i < 0 ? "" : Deno.args[i + 1]; };
const mode = arg("--mode");
const index = Number(arg("--worker-index"));
if (mode === "fail-start") Deno.exit(1);
console.log("cfgtool listening on http://127.0.0.1:" + arg("--port"));
if (mode === "crash-1" && index === 1) setTimeout(() => Deno.exit(3), 10);
Deno.addSignalListener("SIGINT", () => Deno.exit(0));
Deno.addSignalListener("SIGTERM", () => Deno.exit(mode === "term-7" ? 7 : 0));
setInterval(() => {}, 1000);
`;

function group(mode: string, signal: AbortSignal, lines: [LogLevel, string, unknown][]) {
  return serveWorkers({
    workers: 2,
    hostname: "127.0.0.1",
    port: 0,
    args: ["--mode", mode],
    signal,
    log: (level, msg, fields) => void lines.push([level, msg, fields]),
    launcher: { command: Deno.execPath(), args: ["eval", FAKE_WORKER] },
    restart: { initialMs: 10, maxMs: 40, maxFailures: 2 },
  });
}

Deno.test("serveWorkers() starts every worker on one port and forwards SIGINT to them", async () => {
  const ac = new AbortController();
  const lines: [LogLevel, string, unknown][] = [];
  let listened: { hostname: string; port: number } | undefined;
  const done = serveWorkers({
    workers: 2,
    hostname: "127.0.0.1",
    port: 0,
    args: ["--mode", "ok"],
    signal: ac.signal,
    log: (level, msg, fields) => void lines.push([level, msg, fields]),
    launcher: { command: Deno.execPath(), args: ["eval", FAKE_WORKER] },
    onListen: (addr) => {
      listened = addr;
      ac.abort("SIGINT");
    },
  });
  await done; // every worker exited 0 on SIGINT
  assert(listened !== undefined && listened.port > 0 && listened.hostname === "127.0.0.1");
  const msgs = lines.map((l) => l[1]);
  assertEquals(msgs.filter((m) => m === "worker listening").length, 2);
  assert(msgs.includes("workers listening"));
  const stopping = lines.find((l) => l[1] === "stopping workers")!;
  assertEquals((stopping[2] as { signal: string }).signal, "SIGINT");
});

Deno.test("serveWorkers() restarts a dying worker, then gives up and stops the others", async () => {
  const lines: [LogLevel, string, unknown][] = [];
  const err = await assertRejects(
    () => group("crash-1", new AbortController().signal, lines),
    CfgtoolError,
    "worker 1 exited 2 times in a row",
  );
  assertEquals(err.code, "worker_failed");
  const restarts = lines.filter((l) => l[1] === "worker exited: restarting it");
  assertEquals(restarts.map((l) => (l[2] as { restart_in_ms: number }).restart_in_ms), [10, 20]);
  assert(lines.some((l) => l[0] === "error" && l[1] === "worker keeps dying: stopping the group"));
});

Deno.test("serveWorkers() fails when a worker exits before listening", async () => {
  const lines: [LogLevel, string, unknown][] = [];
  await assertRejects(
    () => group("fail-start", new AbortController().signal, lines),
    CfgtoolError,
    "before listening",
  );
  assert(!lines.some((l) => l[1] === "worker exited: restarting it"), "no restart at start-up");
});

Deno.test("serveWorkers() reports a worker that stops with an error", async () => {
  const ac = new AbortController();
  const lines: [LogLevel, string, unknown][] = [];
  const done = group("term-7", ac.signal, lines);
  while (!lines.some((l) => l[1] === "workers listening")) {
    await new Promise((r) => setTimeout(r, 10));
  }
  ac.abort("SIGTERM");
  await assertRejects(() => done, CfgtoolError, "exited with code 7 while stopping");
});
