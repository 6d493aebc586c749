/**
 * `cfgtool serve --workers N`: N worker processes on one port and one store,
 * started, supervised and stopped by one parent.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli } from "./installation.ts";
import { startServer } from "./server_process.ts";

/** Which worker answered `GET /healthz` on a fresh connection (its `x-cfgtool-worker`). */
async function workerOnNewConnection(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET /healthz HTTP/1.1\r\nhost: ${hostname}\r\nconnection: close\r\n\r\n`,
      ),
    );
    const text = new TextDecoder().decode(
      await new Response(conn.readable).arrayBuffer().catch(() => new ArrayBuffer(0)),
    );
    assertStringIncludes(text, "HTTP/1.1 200");
    const m = /^x-cfgtool-worker: (\d+)\r$/im.exec(text);
    assert(m, `no x-cfgtool-worker header in:\n${text}`);
    return m[1]!;
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the reader
    }
  }
}

/** The JSON log lines with message `msg` in `logs`. */
function logLines(logs: string, msg: string): Record<string, unknown>[] {
  return logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg);
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("serve --workers 2: both workers answer on one port; SIGTERM stops them all", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-workers-" });
  const server = await startServer({ kv: `${dir}/kv.sqlite3`, args: ["--workers", "2"] });
  let pids: number[] = [];
  try {
    assertEquals(server.stdout().match(/listening on/g)?.length, 1, server.stdout());
    const group = logLines(await server.logsSettled(), "workers listening");
    assertEquals(group.length, 1);
    pids = group[0]!.pids as number[];
    assertEquals(pids.length, 2);
    assert(pids.every(alive));

    const seen = new Set<string>();
    for (let i = 0; i < 60 && seen.size < 2; i++) seen.add(await workerOnNewConnection(server.url));
    assertEquals([...seen].sort(), ["0", "1"], "the kernel spreads connections over both");

    // a worker that dies is started again with the same index
    Deno.kill(pids[1]!, "SIGKILL");
    await until(
      () =>
        logLines(server.logs(), "worker listening").some((l) =>
          l.worker === 1 && l.pid !== pids[1]
        ),
      "worker 1 restarted",
    );
    assert(logLines(server.logs(), "worker exited: restarting it").some((l) => l.worker === 1));
    const restarted = logLines(server.logs(), "worker listening").filter((l) => l.worker === 1)
      .at(-1)!.pid as number;
    seen.clear();
    for (let i = 0; i < 60 && seen.size < 2; i++) seen.add(await workerOnNewConnection(server.url));
    assertEquals([...seen].sort(), ["0", "1"]);
    pids = [pids[0]!, restarted];
  } finally {
    assertEquals(await server.stop(), 0);
    await Deno.remove(dir, { recursive: true });
  }
  // the parent waits for its workers before it exits
  assertEquals(pids.filter(alive), [], "no worker outlives SIGTERM to the parent");
  assertEquals(logLines(server.logs(), "shutting down").length, 2, server.logs());
});

Deno.test("serve --workers: workers stop when their parent is killed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-workers-" });
  const server = await startServer({ kv: `${dir}/kv.sqlite3`, args: ["--workers", "2"] });
  try {
    const pids = logLines(await server.logsSettled(), "workers listening")[0]!.pids as number[];
    await server.kill(); // SIGKILL: the parent cannot pass anything on
    await until(() => !pids.some(alive), "the workers saw their stdin close and stopped");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --workers above 1 with a :memory: KV is a usage error", async () => {
  const r = await runCli(["serve", "--workers", "2", "--kv", ":memory:", "--port", "0"]);
  assertEquals(r.code, 2, r.stderr);
  assertStringIncludes(r.stderr, "--workers above 1 needs a store the processes share");
  const bad = await runCli(["serve", "--workers", "two", "--kv", ":memory:"]);
  assertEquals(bad.code, 2);
  assertStringIncludes(bad.stderr, "--workers must be a positive integer or auto");
});

Deno.test("serve --help explains --workers", async () => {
  const r = await runCli(["serve", "--help"]);
  assertEquals(r.code, 0);
  assertStringIncludes(r.stdout, "--workers <n>");
  assertStringIncludes(r.stdout, "SO_REUSEPORT");
  assert(!r.stdout.includes("--worker-index"), "the workers' own flag stays hidden");
});
