/**
 * The CLI's errors for a rejected credential, an unreachable server, a
 * request the server refuses as malformed and an unopenable KV Connect
 * store, run as a user would (real subprocess; a real server, or a canned
 * one for the 400): which server, which credential prefix, what to check, in
 * plain words and without a stack trace.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { CLI } from "../cli_process.ts";
import { runCli, startInstallation } from "./installation.ts";

function closedPort(): number {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("an unknown credential names the server, the token's public prefix and what to check", async () => {
  const inst = await startInstallation();
  try {
    const unknown = `svc_admin_${"K".repeat(44)}`;
    const r = await runCli(["tenant", "list", "--server", inst.url, "--token", unknown]);
    assertEquals(r.code, 1);
    assertStringIncludes(
      r.stderr,
      `error: ${inst.url} rejected the token svc_admin_KKKK…: Unknown credential\ncheck:\n`,
    );
    assert(!r.stderr.includes(unknown), "the secret is never printed");
    assertStringIncludes(r.stderr, "a token from another server, or from another KV store");
    assertStringIncludes(r.stderr, "`cfgtool admin rekey`");
    assertStringIncludes(r.stderr, "the same --kv or CFGTOOL_KV");
  } finally {
    await inst.close();
  }
});

Deno.test("a revoked token is named and told to be replaced", async () => {
  const inst = await startInstallation();
  try {
    const created = await inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "superadmin",
      name: "soon-revoked",
    });
    const { secret, token } = created.body as { secret: string; token: { id: string } };
    const revoked = await inst.api("DELETE", `/api/v1/tokens/${token.id}`, inst.admin);
    assertEquals(revoked.status, 200);
    const r = await runCli(["tenant", "list"], {
      env: { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: secret },
    });
    assertEquals(r.code, 1);
    assertStringIncludes(
      r.stderr,
      `${inst.url} rejected the token ${secret.slice(0, 14)}…: Token is revoked`,
    );
    assertStringIncludes(r.stderr, "the token was revoked");
  } finally {
    await inst.close();
  }
});

Deno.test("connection refused, an unresolvable name and TLS to a plain-HTTP server are told apart", async () => {
  const token = `svc_read_${"R".repeat(43)}`;
  const refusedUrl = `http://127.0.0.1:${closedPort()}`;
  const refused = await runCli(["tenant", "list", "--server", refusedUrl, "--token", token]);
  assertEquals(refused.code, 1);
  assertStringIncludes(refused.stderr, `error: cannot reach ${refusedUrl}: connection refused`);
  assertStringIncludes(refused.stderr, "`cfgtool serve` is running there");

  const dns = await runCli([
    "tenant",
    "list",
    "--server",
    "http://nonexistent.invalid",
    "--token",
    token,
  ]);
  assertEquals(dns.code, 1);
  assertStringIncludes(
    dns.stderr,
    "error: cannot reach http://nonexistent.invalid: the host name nonexistent.invalid cannot be resolved",
  );

  const ac = new AbortController();
  const plain = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    () => new Response("plain HTTP"),
  );
  try {
    const tlsUrl = `https://127.0.0.1:${plain.addr.port}`;
    const tls = await runCli(["tenant", "list", "--server", tlsUrl, "--token", token]);
    assertEquals(tls.code, 1);
    assertStringIncludes(tls.stderr, `error: cannot reach ${tlsUrl}: TLS handshake failed`);
    assertStringIncludes(tls.stderr, "use an http:// URL");
  } finally {
    ac.abort();
    await plain.finished;
  }
  for (const r of [refused, dns]) {
    assert(!r.stderr.includes("fetch failed"), r.stderr);
    assert(!r.stderr.includes("error sending request"), r.stderr);
  }
});

Deno.test("a 400 invalid_request from the server exits 1 with the server's message, not 2", async () => {
  const token = `svc_admin_${"B".repeat(44)}`;
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    () =>
      Response.json(
        {
          code: "invalid_request",
          message: "Cannot filter by namespace without tenant",
          details: { field: "namespace" },
          request_id: "req_400",
        },
        { status: 400, headers: { server: "cfgtool/0.0.0" } },
      ),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const r = await runCli(["tenant", "list", "--server", url, "--token", token]);
    assertEquals(r.code, 1, r.stderr);
    assertEquals(r.stderr.trim(), "error: Cannot filter by namespace without tenant");
    assertEquals(r.stdout, "");
  } finally {
    ac.abort();
    await server.finished;
  }
});

/** Runs the CLI with DENO_KV_ACCESS_TOKEN removed from (or set in) the environment. */
async function runWithAccessToken(args: string[], token: string | undefined) {
  const env = Deno.env.toObject();
  delete env.DENO_KV_ACCESS_TOKEN;
  if (token !== undefined) env.DENO_KV_ACCESS_TOKEN = token;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", CLI, ...args],
    env: { ...env, NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a KV Connect URL without DENO_KV_ACCESS_TOKEN says what to set (exit 2)", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  for (const args of [["admin", "bootstrap", "--kv", url], ["serve", "--port", "0", "--kv", url]]) {
    const r = await runWithAccessToken(args, undefined);
    assertEquals(r.code, 2, r.stderr);
    assertStringIncludes(
      r.stderr,
      `error: Cannot open the KV Connect store ${url}: DENO_KV_ACCESS_TOKEN is not set. Set it to`,
    );
    assertStringIncludes(r.stderr, "a file path");
  }
  const down = await runWithAccessToken(["admin", "bootstrap", "--kv", url], "some-token");
  assertEquals(down.code, 1);
  assertStringIncludes(
    down.stderr,
    `error: Cannot open the KV Connect store ${url}: connection refused (nothing listens on`,
  );
  assert(!down.stderr.includes("some-token"));
  assert(!/^\s+at /m.test(down.stderr), down.stderr);
});
