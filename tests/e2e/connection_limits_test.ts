/**
 * `cfgtool serve` against clients that hold connections: half request lines,
 * idle keep-alive connections, and more connections than it has descriptors.
 * Traffic goes to 127.0.0.1 only; every wait is bounded.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startServer } from "./server_process.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const encoder = new TextEncoder();

/** Reads until the server closes the connection; fails after `guardMs`. */
async function readUntilClosed(conn: Deno.Conn, guardMs = 15_000): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  const guard = setTimeout(() => conn.close(), guardMs);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return text;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch (err) {
    if (err instanceof Deno.errors.ConnectionReset) return text;
    throw new Error(`the server did not close the connection within ${guardMs} ms: ${err}`);
  } finally {
    clearTimeout(guard);
  }
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

Deno.test("cfgtool serve closes a connection that sends half a request line once the header timeout passes", async () => {
  const server = await startServer({ args: ["--header-timeout-ms", "300"] });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: portOf(server.url) });
    await conn.write(encoder.encode("GET /heal"));
    assertEquals(await readUntilClosed(conn), "", "closed without an answer");
    const health = await fetch(`${server.url}/healthz`);
    assertEquals(health.status, 200);
    await health.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("cfgtool serve closes a connection that sends nothing once the header timeout passes", async () => {
  const server = await startServer({ args: ["--header-timeout-ms", "300"] });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: portOf(server.url) });
    assertEquals(await readUntilClosed(conn), "");
  } finally {
    await server.stop();
  }
});

Deno.test("cfgtool serve answers a request and then closes the idle keep-alive connection", async () => {
  const server = await startServer({ args: ["--keepalive-timeout-ms", "300"] });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: portOf(server.url) });
    await conn.write(encoder.encode("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"));
    const text = await readUntilClosed(conn);
    assert(text.startsWith("HTTP/1.1 200"), text);
    assertStringIncludes(text, '"status":"ok"');
  } finally {
    await server.stop();
  }
});

/** Starts `cfgtool serve` with a descriptor limit of `nofile` (soft, and hard unless given). */
async function startLimited(nofile: number, args: string[], hard = nofile) {
  const child = new Deno.Command("prlimit", {
    args: [
      `--nofile=${nofile}:${hard}`,
      Deno.execPath(),
      "run",
      "-A",
      "--unstable-kv",
      CLI,
      "serve",
      "--port",
      "0",
      "--kv",
      ":memory:",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  let logs = "";
  const errPump = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) logs += chunk;
  })();
  let out = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  while (!/listening on (\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited before listening:\n${logs}`);
    out += value;
  }
  const url = /listening on (\S+)/.exec(out)![1]!;
  const outPump = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  return {
    url,
    alive: () => !exited,
    logs: () => logs,
    async stop() {
      if (!exited) child.kill("SIGTERM");
      const s = await status;
      await Promise.all([errPump, outPump]);
      return s;
    },
  };
}

/** Sends `GET /healthz` on an open keep-alive connection and reads its answer. */
async function healthzOn(conn: Deno.Conn): Promise<string> {
  await conn.write(encoder.encode("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"));
  const buf = new Uint8Array(4096);
  let text = "";
  const guard = setTimeout(() => conn.close(), 10_000);
  try {
    while (!text.includes("}")) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } finally {
    clearTimeout(guard);
  }
  return text;
}

/** Opens up to `count` idle connections; stops early when the server refuses more. */
async function openIdle(port: number, count: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    try {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch {
      break;
    }
  }
  return conns;
}

async function healthzAnswers(url: string): Promise<number> {
  // Bounded retries: closed connections take a moment to leave the server's books.
  let last = 0;
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      last = res.status;
      if (last === 200) return last;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

Deno.test({
  name:
    "cfgtool serve survives running out of file descriptors and answers again once they are freed",
  ignore: Deno.build.os !== "linux", // prlimit(1) is util-linux
  fn: async () => {
    // A connection cap above the descriptor limit: accept itself runs out of descriptors.
    const server = await startLimited(128, ["--max-connections", "5000"]);
    try {
      // a client that was connected before the flood keeps being served during it
      const kept = await Deno.connect({ hostname: "127.0.0.1", port: portOf(server.url) });
      assertStringIncludes(await healthzOn(kept), '"status":"ok"');
      const conns = await openIdle(portOf(server.url), 300);
      assert(conns.length > 128, `only ${conns.length} connections opened`);
      await new Promise((r) => setTimeout(r, 500));
      assert(server.alive(), `serve exited:\n${server.logs()}`);
      assertStringIncludes(await healthzOn(kept), '"status":"ok"', "served while exhausted");
      kept.close();
      for (const c of conns) c.close();
      assertEquals(await healthzAnswers(server.url), 200);
      assert(server.alive());
      assertStringIncludes(server.logs(), "out of file descriptors");
    } finally {
      const status = await server.stop();
      assertEquals(status.code, 0, server.logs());
    }
  },
});

Deno.test({
  name: "cfgtool serve sheds connections over its limit and keeps serving",
  ignore: Deno.build.os !== "linux", // prlimit(1) is util-linux
  fn: async () => {
    const server = await startLimited(128, []);
    try {
      const conns = await openIdle(portOf(server.url), 300);
      await new Promise((r) => setTimeout(r, 500));
      assert(server.alive(), `serve exited:\n${server.logs()}`);
      for (const c of conns) c.close();
      assertEquals(await healthzAnswers(server.url), 200);
      assertStringIncludes(server.logs(), "connection limit reached");
    } finally {
      const status = await server.stop();
      assertEquals(status.code, 0, server.logs());
    }
  },
});

Deno.test({
  name: "cfgtool serve raises its soft descriptor limit to the hard limit and logs both",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const server = await startLimited(256, [], 4096);
    try {
      let line: Record<string, number> | undefined;
      for (let i = 0; i < 50 && !line; i++) {
        await new Promise((r) => setTimeout(r, 100)); // log lines are batched
        line = server.logs().trim().split("\n").filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l)).find((l) => l.msg === "file descriptor limit");
      }
      assert(line, server.logs());
      assertEquals([line.soft, line.hard, line.max_connections], [4096, 4096, 4096 - 64]);
    } finally {
      await server.stop();
    }
  },
});
