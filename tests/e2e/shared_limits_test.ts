/**
 * The stream limit per token and the namespace-client rate limit hold for
 * the installation, not per process: real `cfgtool serve` processes on one
 * KV file.
 */
import { assert, assertEquals } from "../assert.ts";
import { createAcmeWeb, type Installation, startInstallation } from "./installation.ts";
import { type ServerProcess, startServer } from "./server_process.ts";
import { ALLOWED_ORIGIN, evalPath, startFixture } from "./evaluation_fixture.ts";

/** An open event stream (its body left unread) or the status that refused it. */
interface Opened {
  status: number;
  close: () => Promise<void>;
}

async function openStream(url: string, token: string): Promise<Opened> {
  const ac = new AbortController();
  const res = await fetch(`${url}/api/v1/events?ns=web:*`, {
    headers: { authorization: `Bearer ${token}` },
    signal: ac.signal,
  });
  if (res.status !== 200) await res.body?.cancel();
  return {
    status: res.status,
    close: async () => {
      ac.abort();
      await res.body?.cancel().catch(() => {});
    },
  };
}

/** Tries every 50 ms until a stream opens on `url`; resolves with it and the wait, ms. */
async function openWhenFree(url: string, token: string, withinMs: number) {
  const start = performance.now();
  while (true) {
    const s = await openStream(url, token);
    if (s.status === 200) return { stream: s, waitedMs: performance.now() - start };
    assertEquals(s.status, 429);
    if (performance.now() - start > withinMs) throw new Error(`no slot within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readToken(inst: Installation, name: string): Promise<string> {
  const res = await inst.api("POST", "/api/v1/tokens", inst.admin, {
    type: "namespace-read",
    name,
    tenant_slug: "acme",
    namespace_slug: "web",
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return res.body.secret;
}

Deno.test("two serve processes share the 16-streams-per-token limit", async (t) => {
  const lease = ["--process-lease-ms", "1500"];
  const inst = await startInstallation({ args: lease });
  const servers: ServerProcess[] = [];
  const streams: Opened[] = [];
  const open = async (url: string, token: string) => {
    const s = await openStream(url, token);
    streams.push(s);
    return s.status;
  };
  try {
    await createAcmeWeb(inst);
    const b = await startServer({ kv: inst.kvPath, args: lease });
    servers.push(b);

    await t.step("16 streams through A and 1 through B: the 17th is 429", async () => {
      const token = await readToken(inst, "sixteen");
      for (let i = 0; i < 16; i++) {
        assertEquals(await open(inst.url, token), 200, `stream ${i + 1}`);
      }
      const res = await fetch(`${b.url}/api/v1/events?ns=web:*`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assertEquals(res.status, 429);
      const body = await res.json();
      assertEquals(body.code, "rate_limit_exceeded");
      assertEquals(body.details.limit, 16);
      assertEquals(await open(inst.url, token), 429, "and through A as well");

      // closing one stream on A frees a slot that B can take
      await streams[0]!.close();
      const { stream, waitedMs } = await openWhenFree(b.url, token, 5000);
      streams.push(stream);
      assert(waitedMs < 5000);
      assertEquals(await open(inst.url, token), 429, "16 again: 15 on A, 1 on B");
    });

    await t.step("a killed process's streams stop counting after its lease time", async () => {
      const token = await readToken(inst, "killed");
      const c = await startServer({ kv: inst.kvPath, args: lease });
      servers.push(c);
      for (let i = 0; i < 16; i++) assertEquals(await open(c.url, token), 200, `stream ${i + 1}`);
      assertEquals(await open(b.url, token), 429);
      await c.kill(); // SIGKILL: nothing is cleaned up
      const killedAt = performance.now();
      assertEquals(await open(b.url, token), 429, "its lease still runs");
      const { stream, waitedMs } = await openWhenFree(b.url, token, 6000);
      streams.push(stream);
      const sinceKill = performance.now() - killedAt;
      // the lease was renewed at most 500 ms (a third of 1500) before the kill
      assert(sinceKill >= 900, `slots came back ${Math.round(sinceKill)} ms after the kill`);
      assert(waitedMs < 6000);
    });

    await t.step("a process that stops gracefully frees its slots at once", async () => {
      const token = await readToken(inst, "graceful");
      const d = await startServer({ kv: inst.kvPath, args: ["--process-lease-ms", "600000"] });
      servers.push(d);
      for (let i = 0; i < 16; i++) assertEquals(await open(d.url, token), 200, `stream ${i + 1}`);
      assertEquals(await open(b.url, token), 429);
      assertEquals(await d.stop(), 0);
      const { stream, waitedMs } = await openWhenFree(b.url, token, 2000);
      streams.push(stream);
      assert(waitedMs < 2000, "not the ten-minute lease");
    });
  } finally {
    for (const s of streams) await s.close();
    for (const s of servers) await s.stop();
    await inst.close();
  }
});

Deno.test("the client rate limit is spent across two serve processes", async () => {
  const quota = 100;
  const args = ["--client-rate-limit", String(quota)];
  const f = await startFixture(args);
  const b = await startServer({ kv: f.inst.kvPath, args });
  try {
    const path = evalPath("acme", "web", "staging");
    const call = async (base: string) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${f.tokens.client}`,
          "content-type": "application/json",
          origin: ALLOWED_ORIGIN,
        },
        body: JSON.stringify({ flag: "theme", context: {} }),
      });
      await res.body?.cancel();
      if (res.status === 429) assert(Number(res.headers.get("retry-after")) >= 1);
      else assertEquals(res.status, 200);
      return res.status;
    };
    const start = performance.now();
    let allowed = 0;
    for (let i = 0; i < 2 * quota; i++) {
      if (await call(i % 2 === 0 ? f.inst.url : b.url) === 200) allowed++;
    }
    const elapsedS = (performance.now() - start) / 1000;
    // docs/operations.md: at most N × block over, at most (N - 1) × block under (N = 2, block 2),
    // plus what the bucket refilled during the run
    const block = Math.max(1, Math.floor(quota / 50));
    const refilled = Math.ceil((elapsedS * quota) / 60);
    assert(allowed >= quota - block, `${allowed} allowed, quota ${quota}`);
    assert(
      allowed <= quota + 2 * block + refilled,
      `${allowed} allowed, quota ${quota}, ${refilled} refilled in ${elapsedS.toFixed(1)} s`,
    );
  } finally {
    await b.stop();
    await f.inst.close();
  }
});
