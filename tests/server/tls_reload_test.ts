/**
 * watchTlsReloads(): each `reload` event reads the pair again and hands a
 * new TLS listener to the running server; a pair that does not load, or a
 * process that cannot bind a second listener, keeps the old one.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { serveBounded } from "../../lib/net/bounded_server.ts";
import { listenTls, readTlsPair, TlsError } from "../../lib/server/tls.ts";
import { watchTlsReloads } from "../../lib/server/tls_reload.ts";
import { HAVE_OPENSSL, installPair, makeCa, makeServerPair } from "./tls_fixture.ts";

const ignore = !HAVE_OPENSSL;

async function status(port: number, caPem: string): Promise<number> {
  using client = Deno.createHttpClient({ caCerts: [caPem] });
  const res = await fetch(`https://127.0.0.1:${port}/`, { client });
  await res.body?.cancel();
  return res.status;
}

Deno.test({
  name: "readTlsPair() checks the pair: PEM certificate, PEM key, the key belongs to it",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    try {
      const ca = await makeCa(dir, "a");
      const [a, b] = [await makeServerPair(dir, ca, "a"), await makeServerPair(dir, ca, "b")];
      const pair = await readTlsPair({ certFile: a.certFile, keyFile: a.keyFile });
      assertEquals(pair.info.subject, "CN=localhost a");
      assertEquals(pair.info.issuer, "CN=cfgtool test CA a");
      assert(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/.test(pair.info.sha256), pair.info.sha256);
      assertEquals(pair.expired, false);
      const later = await readTlsPair(
        { certFile: a.certFile, keyFile: a.keyFile },
        new Date(Date.now() + 10 * 86400_000),
      );
      assertEquals(later.expired, true, "two-day certificate, ten days later");

      const mismatch = await assertRejects(
        () => readTlsPair({ certFile: a.certFile, keyFile: b.keyFile }),
        TlsError,
      );
      assertEquals(mismatch.code, "tls_invalid");
      assertEquals(
        mismatch.message,
        `the private key in ${b.keyFile} does not belong to the certificate in ${a.certFile}`,
      );
      const notCert = await assertRejects(
        () => readTlsPair({ certFile: a.keyFile, keyFile: a.keyFile }),
        TlsError,
      );
      assertEquals(
        notCert.message,
        `${a.keyFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
      );
      const notKey = await assertRejects(
        () => readTlsPair({ certFile: a.certFile, keyFile: a.certFile }),
        TlsError,
      );
      assertEquals(
        notKey.message,
        `${a.certFile} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a reload serves new connections with the new pair; a bad pair or no SO_REUSEPORT keeps the old",
  ignore,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-tls-" });
    const ac = new AbortController();
    let finished: Promise<void> = Promise.resolve();
    try {
      const [caA, caB] = [await makeCa(dir, "a"), await makeCa(dir, "b")];
      const [a, b] = [await makeServerPair(dir, caA, "a"), await makeServerPair(dir, caB, "b")];
      const paths = { certFile: `${dir}/cert.pem`, keyFile: `${dir}/key.pem` };
      await installPair(a, paths.certFile, paths.keyFile);
      const first = listenTls(await readTlsPair(paths), {
        hostname: "127.0.0.1",
        port: 0,
        reusePort: true,
        backlog: 64,
      });
      const port = first.addr.port;
      const server = serveBounded(first, () => new Response("ok"), {
        limits: { headerTimeoutMs: 5000, keepAliveTimeoutMs: 5000, maxConnections: 100 },
        log: () => {},
        signal: ac.signal,
      });
      finished = server.finished;
      const lines: [string, string, Record<string, unknown>][] = [];
      const reloads = new EventTarget();
      const options = {
        paths,
        listen: { hostname: "127.0.0.1", port, backlog: 64 },
        replace: server.replaceListener,
        log: (level: string, msg: string, fields?: Record<string, unknown>) =>
          void lines.push([level, msg, fields ?? {}]),
        reloads,
      };
      const watcher = watchTlsReloads({ ...options, canRebind: true });
      assertEquals(await status(port, caA.pem), 200);

      await installPair(b, paths.certFile, paths.keyFile);
      assert(await watcher.reload());
      assertEquals(lines.at(-1)![1], "tls certificate reloaded");
      assertEquals(lines.at(-1)![2].issuer, "CN=cfgtool test CA b");
      assertEquals(await status(port, caB.pem), 200);
      await assertRejects(() => status(port, caA.pem), TypeError);

      // a `reload` event does the same as reload(); events queue one after the other
      await installPair({ cert: a.cert, key: b.key }, paths.certFile, paths.keyFile);
      reloads.dispatchEvent(new Event("reload"));
      reloads.dispatchEvent(new Event("reload"));
      await watcher.stop();
      const failed = lines.filter((l) => l[1].startsWith("tls certificate reload failed"));
      assertEquals(failed.length, 2);
      assertEquals(failed[0]![0], "error");
      assertEquals(await status(port, caB.pem), 200, "the old pair stays");

      // without SO_REUSEPORT a second listener cannot bind: refused, logged, old pair kept
      await installPair(a, paths.certFile, paths.keyFile);
      const plain = watchTlsReloads({ ...options, canRebind: false });
      assertEquals(await plain.reload(), false);
      assert(String(lines.at(-1)![2].error).includes("--unstable-net"));
      await plain.stop();
      assertEquals(await status(port, caB.pem), 200);
    } finally {
      ac.abort();
      await finished;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
