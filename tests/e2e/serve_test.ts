import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "./installation.ts";
import { readSse } from "../events/sse_client.ts";
import { createNamespace, createTenant, pushManifest } from "./credentials_fixture.ts";
import { startServer } from "./server_process.ts";

Deno.test("cfgtool serve answers /healthz and /readyz on loopback and stops on SIGTERM", async () => {
  const server = await startServer();
  try {
    const health = await fetch(`${server.url}/healthz`);
    assertEquals(health.status, 200);
    assertEquals((await health.json()).status, "ok");
    assert(health.headers.get("x-request-id"));
    const ready = await fetch(`${server.url}/readyz`);
    assertEquals(ready.status, 200);
    assertEquals((await ready.json()).status, "ready");
  } finally {
    assertEquals(await server.stop(), 0);
  }
});

Deno.test("cfgtool serve answers unknown routes with the JSON error envelope", async () => {
  const server = await startServer();
  try {
    const res = await fetch(`${server.url}/nope`, { headers: { "x-request-id": "abc-123" } });
    assertEquals(res.status, 404);
    const body = await res.json();
    assertEquals(body.code, "not_found");
    assertEquals(body.request_id, "abc-123");
    assertEquals(res.headers.get("x-request-id"), "abc-123");
  } finally {
    await server.stop();
  }
});

Deno.test("cfgtool serve on a KV file persists it across restarts of the process", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/nested/kv.sqlite3`;
    const server = await startServer({ kv: kvPath });
    await (await fetch(`${server.url}/readyz`)).body?.cancel();
    await server.stop();
    assert((await Deno.stat(kvPath)).isFile, "the KV file and its parent directory are created");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool serve refuses to start when the token key file of a used store is lost", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(boot.code, 0, boot.stderr);
    await Deno.remove(`${dir}/token.key`);
    const serve = await runCli(["serve", "--port", "0", "--kv", kvPath]);
    assertEquals(serve.code, 1);
    assertStringIncludes(serve.stderr, "token key file");
    assert(!serve.stderr.includes("    at "), "no stack trace");
    const again = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(again.code, 1, "the admin CLI refuses too, instead of minting under a new key");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool admin refuses a :memory: store and serve reports a port in use", async () => {
  const mem = await runCli(["admin", "bootstrap", "--kv", ":memory:"]);
  assertEquals(mem.code, 2);
  assertStringIncludes(mem.stderr, ":memory:");
  const server = await startServer();
  try {
    const port = new URL(server.url).port;
    const second = await runCli(["serve", "--port", port, "--kv", ":memory:"]);
    assertEquals(second.code, 1);
    assertStringIncludes(second.stderr, `Port ${port}`);
  } finally {
    await server.stop();
  }
});

Deno.test("cfgtool admin rekey recovers a store whose key file was lost: old tokens revoked, new ones work", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const first = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    const oldSecret = first.stdout.trim().split("\n").at(-1)!;
    await Deno.remove(`${dir}/token.key`);
    const unconfirmed = await runCli(["admin", "rekey", "--kv", kvPath]);
    assertEquals(unconfirmed.code, 2, "rekey wants --yes");
    const rekey = await runCli(["admin", "rekey", "--kv", kvPath, "--yes", "--json"]);
    assertEquals(rekey.code, 0, rekey.stderr);
    const result = JSON.parse(rekey.stdout);
    assertEquals(result.revoked.length, 1);
    assertEquals(result.previous, null);
    assertEquals((await Deno.stat(`${dir}/token.key`)).mode! & 0o777, 0o600);
    const again = await runCli(["admin", "bootstrap", "--kv", kvPath]);
    assertEquals(again.code, 0, again.stderr);
    const newSecret = again.stdout.trim().split("\n").at(-1)!;
    const server = await startServer({ kv: kvPath });
    try {
      const ok = await fetch(`${server.url}/api/v1/tenants`, {
        headers: { authorization: `Bearer ${newSecret}` },
      });
      assertEquals(ok.status, 200);
      await ok.body?.cancel();
      const old = await fetch(`${server.url}/api/v1/tenants`, {
        headers: { authorization: `Bearer ${oldSecret}` },
      });
      assertEquals(old.status, 401);
      await old.body?.cancel();
    } finally {
      await server.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool admin rekey drops the SAML signing key sealed under the lost key file: the next server makes a new one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    assertEquals((await runCli(["admin", "bootstrap", "--kv", kvPath])).code, 0);
    /** The certificate the server at `url` publishes in a tenant's SAML SP metadata. */
    const spCertificate = async (url: string) => {
      const res = await fetch(`${url}/auth/saml/metadata?tenant=acme`);
      const body = await res.text();
      assertEquals(res.status, 200, body);
      const cert = body.match(/<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/)?.[1];
      assert(cert !== undefined, body);
      return cert;
    };
    const first = await startServer({ kv: kvPath });
    let before: string;
    try {
      before = await spCertificate(first.url);
    } finally {
      await first.stop();
    }
    await Deno.remove(`${dir}/token.key`);
    const rekey = await runCli(["admin", "rekey", "--kv", kvPath, "--yes"]);
    assertEquals(rekey.code, 0, rekey.stderr);
    const second = await startServer({ kv: kvPath });
    try {
      const after = await spCertificate(second.url);
      assert(after !== before, "a new signing pair: the old key cannot be unsealed any more");
      assertEquals(await spCertificate(second.url), after, "and it is kept");
    } finally {
      await second.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool serve on a busy port fails before it creates the KV file or token.key", async () => {
  const dir = await Deno.makeTempDir();
  const server = await startServer();
  try {
    const port = new URL(server.url).port;
    const second = await runCli(["serve", "--port", port, "--kv", `${dir}/data/kv.sqlite3`]);
    assertEquals(second.code, 1);
    assertStringIncludes(second.stderr, "already in use");
    const left = [];
    for await (const e of Deno.readDir(dir)) left.push(e.name);
    assertEquals(left, [], "nothing was created in the data directory");
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool serve logs one shutdown line naming the signal and the streams it closed", async () => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
    const ac = new AbortController();
    const stream = readSse(
      await fetch(`${inst.url}/api/v1/events?ns=acme/web:*`, {
        headers: { authorization: `Bearer ${inst.admin}` },
        signal: ac.signal,
      }),
      ac,
    );
    assertEquals(stream.response.status, 200);
    await stream.next((r) => r.event === "version");
    assertEquals(await inst.server.stop(), 0);
    ac.abort();
    const lines = inst.server.logs().trim().split("\n").map((l) => JSON.parse(l));
    const shutdown = lines.filter((l) => l.msg === "shutting down");
    assertEquals(shutdown.length, 1);
    assertEquals(shutdown[0].signal, "SIGTERM");
    assertEquals(shutdown[0].open_streams_closed, 1);
  } finally {
    await inst.close();
  }
});

Deno.test("cfgtool serve logs its file descriptor limit at start", async () => {
  const server = await startServer();
  try {
    const logs = await server.logsSettled();
    const line = logs.trim().split("\n").map((l) => JSON.parse(l)).find((l) =>
      l.msg === "file descriptor limit"
    );
    assert(line, logs);
    assert(typeof line.soft === "number" && line.soft > 0);
    assert(typeof line.max_connections === "number");
  } finally {
    await server.stop();
  }
});
