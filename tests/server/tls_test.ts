/**
 * `cfgtool serve --tls-cert/--tls-key`: HTTPS (HTTP/1.1 and HTTP/2 by ALPN)
 * from a real server process, and the reload of the pair on SIGHUP: new
 * connections get the new certificate, a stream opened before keeps
 * receiving, a bad new pair keeps the old one and is logged.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { runCli } from "../e2e/installation.ts";
import { runCfgtool } from "../cli_process.ts";
import { type ServerProcess, startServer } from "../e2e/server_process.ts";
import { readSse } from "../events/sse_client.ts";
import { manifest } from "../e2e/credentials_fixture.ts";
import { HAVE_OPENSSL, installPair, makeCa, makeServerPair } from "./tls_fixture.ts";

const ignore = !HAVE_OPENSSL;

/** The JSON log lines with message `msg`. */
function logLines(logs: string, msg: string): Record<string, unknown>[] {
  return logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg);
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** GET /healthz on a new connection that trusts only `caPem`; its status. */
async function healthOnNewConnection(url: string, caPem: string): Promise<number> {
  using client = Deno.createHttpClient({ caCerts: [caPem] });
  const res = await fetch(`${url}/healthz`, { client });
  await res.body?.cancel();
  return res.status;
}

/** A JSON API call over `client`. */
async function api(
  client: Deno.HttpClient,
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<number> {
  const res = await fetch(`${url}${path}`, {
    client,
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test({
  name: "serve over TLS answers HTTPS on HTTP/1.1 and HTTP/2, and says https:// when it listens",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    try {
      const ca = await makeCa(dir, "a");
      const pair = await makeServerPair(dir, ca, "a");
      server = await startServer({
        args: ["--tls-cert", pair.certFile, "--tls-key", pair.keyFile],
      });
      assert(server.url.startsWith("https://127.0.0.1:"), server.url);
      assertStringIncludes(server.stdout(), `cfgtool listening on ${server.url}`);
      assertEquals(await healthOnNewConnection(server.url, ca.pem), 200);

      const { port } = new URL(server.url);
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: Number(port),
        caCerts: [ca.pem],
        alpnProtocols: ["h2", "http/1.1"],
      });
      assertEquals((await conn.handshake()).alpnProtocol, "h2", "HTTP/2 is offered by ALPN");
      conn.close();
      using h2only = Deno.createHttpClient({ caCerts: [ca.pem], http1: false, http2: true });
      const res = await fetch(`${server.url}/healthz`, { client: h2only });
      assertEquals((await res.json()).status, "ok");

      // a client that does not trust the certificate is refused, and the server goes on
      await assertRejects(() => fetch(`${server!.url}/healthz`));
      assertEquals(await healthOnNewConnection(server.url, ca.pem), 200);

      const logs = await server.logsSettled();
      assertEquals(logLines(logs, "listening")[0]!.url, server.url);
      const cert = logLines(logs, "tls certificate")[0]!;
      assertEquals(cert.cert, pair.certFile);
      assertEquals(cert.subject, "CN=localhost a");
      assertEquals(cert.issuer, "CN=cfgtool test CA a");
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "SIGHUP reloads the pair: new connections get the new certificate, an open stream keeps " +
    "receiving, a bad pair keeps the old one",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    try {
      const [caA, caB] = [await makeCa(dir, "a"), await makeCa(dir, "b")];
      const [pairA, pairB] = [
        await makeServerPair(dir, caA, "a"),
        await makeServerPair(dir, caB, "b"),
      ];
      const certFile = `${dir}/cert.pem`;
      const keyFile = `${dir}/key.pem`;
      await installPair(pairA, certFile, keyFile);
      const kvPath = `${dir}/kv.sqlite3`;
      const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
      assertEquals(boot.code, 0, boot.stderr);
      const admin = boot.stdout.trim().split("\n").at(-1)!;
      server = await startServer({
        kv: kvPath,
        args: ["--tls-cert", certFile, "--tls-key", keyFile, "--keepalive-ms", "200"],
      });
      const url = server.url;

      // an event stream, opened over pair A on its own connection
      using clientA = Deno.createHttpClient({ caCerts: [caA.pem] });
      assertEquals(
        await api(clientA, url, "POST", "/api/v1/tenants", admin, { slug: "acme" }),
        201,
      );
      assertEquals(
        await api(clientA, url, "POST", "/api/v1/tenants/acme/namespaces", admin, { slug: "web" }),
        201,
      );
      const push = `/api/v1/tenants/acme/namespaces/web/manifest`;
      assertEquals(await api(clientA, url, "PUT", push, admin, manifest({ staging: true })), 201);
      using streamClient = Deno.createHttpClient({ caCerts: [caA.pem] });
      const ac = new AbortController();
      const stream = readSse(
        await fetch(`${url}/api/v1/events?ns=acme/web:*`, {
          client: streamClient,
          headers: { authorization: `Bearer ${admin}` },
          signal: ac.signal,
        }),
        ac,
      );
      assertEquals(stream.response.status, 200);
      const first = await stream.next((r) => r.event === "version");

      // replace the pair with one from CA B, then SIGHUP
      await installPair(pairB, certFile, keyFile);
      server.child.kill("SIGHUP");
      await until(
        () => logLines(server!.logs(), "tls certificate reloaded").length === 1,
        "the reload is logged",
      );
      const reloaded = logLines(server.logs(), "tls certificate reloaded")[0]!;
      assertEquals(reloaded.issuer, "CN=cfgtool test CA b");
      assertEquals(await healthOnNewConnection(url, caB.pem), 200);
      // a new connection no longer verifies against CA A
      await assertRejects(() => healthOnNewConnection(url, caA.pem), TypeError);

      // the stream opened before the reload keeps receiving: keepalives, and a new version
      const seen = stream.received.length;
      await stream.next((r) => r.kind === "comment" && stream.received.indexOf(r) >= seen, 3000);
      using clientB = Deno.createHttpClient({ caCerts: [caB.pem] });
      assertEquals(await api(clientB, url, "PUT", push, admin, manifest({ staging: false })), 201);
      const second = await stream.next((r) => r.event === "version");
      assert(second.id !== first.id, "a new version arrived on the old stream");
      assert(!stream.done);

      // a bad pair (B's certificate with A's key): logged at error, B stays
      await installPair({ cert: pairB.cert, key: pairA.key }, certFile, keyFile);
      server.child.kill("SIGHUP");
      await until(
        () =>
          logLines(server!.logs(), "tls certificate reload failed: keeping the current certificate")
            .length === 1,
        "the failed reload is logged",
      );
      const failed = logLines(
        server.logs(),
        "tls certificate reload failed: keeping the current certificate",
      )[0]!;
      assertEquals(failed.level, "error");
      assertStringIncludes(String(failed.error), "does not belong to the certificate");
      assertEquals(await healthOnNewConnection(url, caB.pem), 200);
      await assertRejects(() => healthOnNewConnection(url, caA.pem), TypeError);
      // and a missing file too
      await Deno.remove(keyFile);
      server.child.kill("SIGHUP");
      await until(
        () =>
          logLines(server!.logs(), "tls certificate reload failed: keeping the current certificate")
            .length === 2,
        "the second failed reload is logged",
      );
      assertEquals(await healthOnNewConnection(url, caB.pem), 200);
      assert(!stream.done, "the stream is still open");
      stream.close();
      await stream.ended;
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a TLS connection that sends no request head within --header-timeout-ms is closed",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    try {
      const ca = await makeCa(dir, "a");
      const pair = await makeServerPair(dir, ca, "a");
      server = await startServer({
        args: [
          "--tls-cert",
          pair.certFile,
          "--tls-key",
          pair.keyFile,
          "--header-timeout-ms",
          "300",
        ],
      });
      const { port } = new URL(server.url);
      // the time limit runs from the accept, so it covers the TLS handshake too
      const started = Date.now();
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: Number(port),
        caCerts: [ca.pem],
      });
      await conn.handshake();
      const n = await conn.read(new Uint8Array(16)).catch(() => null);
      assertEquals(n, null, "closed without an answer");
      const waited = Date.now() - started;
      assert(waited >= 250 && waited < 5000, `closed after ${waited} ms`);
      conn.close();
      assertEquals(await healthOnNewConnection(server.url, ca.pem), 200);
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "serve refuses a TLS pair that cannot be used: half a pair (exit 2), a missing file, " +
    "a key of another certificate (exit 1)",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    try {
      const ca = await makeCa(dir, "a");
      const [a, b] = [await makeServerPair(dir, ca, "a"), await makeServerPair(dir, ca, "b")];
      const base = ["serve", "--port", "0", "--kv", ":memory:"];
      const half = await runCli([...base, "--tls-cert", a.certFile]);
      assertEquals(half.code, 2, half.stderr);
      assertStringIncludes(half.stderr, "--tls-cert needs its pair");
      const missing = await runCli([
        ...base,
        "--tls-cert",
        `${dir}/nope.pem`,
        "--tls-key",
        a.keyFile,
      ]);
      assertEquals(missing.code, 1, missing.stderr);
      assertStringIncludes(
        missing.stderr,
        `error: cannot read the TLS certificate (--tls-cert) ${dir}/nope.pem: no such file`,
      );
      const mismatched = await runCli([...base, "--tls-cert", a.certFile, "--tls-key", b.keyFile]);
      assertEquals(mismatched.code, 1, mismatched.stderr);
      assertStringIncludes(
        mismatched.stderr,
        `error: the private key in ${b.keyFile} does not belong to the certificate in ${a.certFile}`,
      );
      const swapped = await runCli([...base, "--tls-cert", a.keyFile, "--tls-key", a.certFile]);
      assertEquals(swapped.code, 1, swapped.stderr);
      assertStringIncludes(swapped.stderr, `${a.keyFile} holds no PEM certificate`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "serve --workers over TLS: SIGHUP to the parent reloads the pair in every worker",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    try {
      const [caA, caB] = [await makeCa(dir, "a"), await makeCa(dir, "b")];
      const [pairA, pairB] = [
        await makeServerPair(dir, caA, "a"),
        await makeServerPair(dir, caB, "b"),
      ];
      const certFile = `${dir}/cert.pem`;
      const keyFile = `${dir}/key.pem`;
      await installPair(pairA, certFile, keyFile);
      server = await startServer({
        kv: `${dir}/kv.sqlite3`,
        args: ["--workers", "2", "--tls-cert", certFile, "--tls-key", keyFile],
      });
      assert(server.url.startsWith("https://"), server.url);
      assertEquals(server.stdout().match(/listening on https:/g)?.length, 1, server.stdout());

      await installPair(pairB, certFile, keyFile);
      server.child.kill("SIGHUP");
      await until(
        () => logLines(server!.logs(), "tls certificate reloaded").length === 2,
        "both workers reloaded",
      );
      assertEquals(logLines(server.logs(), "reloading workers")[0]!.workers, 2);
      // new connections, spread over both workers, all verify against CA B only
      const seen = new Set<string>();
      for (let i = 0; i < 40 && seen.size < 2; i++) {
        using client = Deno.createHttpClient({ caCerts: [caB.pem] });
        const res = await fetch(`${server.url}/healthz`, { client });
        seen.add(res.headers.get("x-cfgtool-worker") ?? "?");
        await res.body?.cancel();
      }
      assertEquals([...seen].sort(), ["0", "1"]);
      await assertRejects(() => healthOnNewConnection(server!.url, caA.pem), TypeError);
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a second TLS server on a port another one holds exits 1 with already in use",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    try {
      const ca = await makeCa(dir, "a");
      const pair = await makeServerPair(dir, ca, "a");
      const tls = ["--tls-cert", pair.certFile, "--tls-key", pair.keyFile];
      server = await startServer({ args: tls });
      const { port } = new URL(server.url);
      const second = await runCfgtool(["serve", "--kv", ":memory:", ...tls, "--port", port]);
      assertEquals(second.code, 1, second.stderr);
      assertStringIncludes(second.stderr, "already in use");
      assertEquals(await healthOnNewConnection(server.url, ca.pem), 200, "the first one serves on");
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a TLS key file readable by group or world is warned about at start and at each reload",
  ignore: ignore || Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    let server: ServerProcess | undefined;
    const warning = "tls key file is readable by its group or everyone: chmod 600 it";
    try {
      const ca = await makeCa(dir, "a");
      const pair = await makeServerPair(dir, ca, "a");
      await Deno.chmod(pair.keyFile, 0o644);
      server = await startServer({
        args: ["--tls-cert", pair.certFile, "--tls-key", pair.keyFile],
      });
      await until(() => logLines(server!.logs(), warning).length === 1, "the start warning");
      assertEquals(logLines(server.logs(), warning)[0]!.level, "warn");
      assertEquals(logLines(server.logs(), warning)[0]!.key, pair.keyFile);
      server.child.kill("SIGHUP");
      await until(() => logLines(server!.logs(), warning).length === 2, "the reload warning");
      await Deno.chmod(pair.keyFile, 0o600);
      server.child.kill("SIGHUP");
      await until(
        () => logLines(server!.logs(), "tls certificate reloaded").length === 2,
        "the second reload",
      );
      assertEquals(
        logLines(await server.logsSettled(), warning).length,
        2,
        "a private key: no warning",
      );
    } finally {
      if (server) assertEquals(await server.stop(), 0);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a --config file holding a secret and readable by group or world is warned about",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const file = `${dir}/cfgtool.toml`;
      await Deno.writeTextFile(
        file,
        `kv = ":memory:"\nport = ${holder.addr.port}\nmetrics-token = "0123456789abcdef0123456789abcdef"\n`,
      );
      await Deno.chmod(file, 0o644);
      // the port is taken: the server stops right after the warning
      const open = await runCfgtool(["serve", "--config", file]);
      assertEquals(open.code, 1, open.stderr);
      const lines = logLines(
        open.stderr,
        "configuration file holds secrets and is readable by its group or everyone: chmod 600 it",
      );
      assertEquals(lines.length, 1, open.stderr);
      assertEquals([lines[0]!.level, lines[0]!.keys], ["warn", "metrics-token"]);
      assert(!open.stderr.includes("0123456789abcdef"), "the secret itself is not logged");
      await Deno.chmod(file, 0o600);
      const private_ = await runCfgtool(["serve", "--config", file]);
      assertEquals(private_.code, 1, private_.stderr);
      assert(!private_.stderr.includes("holds secrets"), private_.stderr);
    } finally {
      holder.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
